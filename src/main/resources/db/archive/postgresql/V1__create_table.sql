-- The archive table; ${table} is archive.table. Each row is a finished transaction's full stateH as JSON.
CREATE TABLE ${table} (tx_id text PRIMARY KEY, owner text NOT NULL, external_id text, type text NOT NULL,
  status text NOT NULL, created timestamptz NOT NULL, completed timestamptz, state jsonb NOT NULL, webhook jsonb,
  archived timestamptz NOT NULL);
CREATE INDEX ${table}_owner_external_id ON ${table} (owner, external_id);
CREATE INDEX ${table}_completed ON ${table} (completed);
