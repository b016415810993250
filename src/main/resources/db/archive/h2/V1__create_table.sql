-- The archive table; ${table} is archive.table. Each row is a finished transaction's full stateH as JSON.
CREATE TABLE ${table} (tx_id VARCHAR(64) PRIMARY KEY, owner VARCHAR(1024) NOT NULL, external_id VARCHAR(4096),
  type VARCHAR(1024) NOT NULL, status VARCHAR(32) NOT NULL, created TIMESTAMP WITH TIME ZONE NOT NULL,
  completed TIMESTAMP WITH TIME ZONE, state CHARACTER LARGE OBJECT NOT NULL, webhook CHARACTER LARGE OBJECT,
  archived TIMESTAMP WITH TIME ZONE NOT NULL);
CREATE INDEX ${table}_owner_external_id ON ${table} (owner, external_id);
CREATE INDEX ${table}_completed ON ${table} (completed);
