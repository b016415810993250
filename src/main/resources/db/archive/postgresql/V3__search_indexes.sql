-- The transaction search (newest first, by pipeline and status, or by owner), and the retention's walk by time.
CREATE INDEX ${table}_created ON ${table} (created DESC, tx_id DESC);
CREATE INDEX ${table}_type_status_created ON ${table} (type, status, created DESC, tx_id DESC);
CREATE INDEX ${table}_owner_created ON ${table} (owner, created DESC, tx_id DESC);
