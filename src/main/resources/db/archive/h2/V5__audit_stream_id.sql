-- The auditX stream id of each entry the drain wrote (AuditDrain): unique, so an entry written twice (a leader that
-- died between the write and the drop from auditX) is skipped, not doubled. NULL for entries written before.
ALTER TABLE ${table}_audit ADD COLUMN stream_id VARCHAR(64);
CREATE UNIQUE INDEX ${table}_audit_stream_id ON ${table}_audit (stream_id);
