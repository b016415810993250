-- The audit log of admin acts (README, Audit log): append-only. The trigger refuses UPDATE, TRUNCATE and DELETE;
-- ${table}_audit_prune alone deletes (what is older than audit.retention), flagging its own transaction. It is
-- SECURITY DEFINER so that where the table belongs to another role, the node's role needs only INSERT, SELECT
-- and EXECUTE on it (docs/decisions.md, "The audit log is append-only").
CREATE TABLE ${table}_audit (id bigserial PRIMARY KEY, at timestamptz NOT NULL, key_id text NOT NULL,
  owner text NOT NULL, action text NOT NULL, target text NOT NULL, outcome text NOT NULL, status integer NOT NULL,
  error text, remote text NOT NULL, via text NOT NULL, node text NOT NULL, params jsonb NOT NULL);
CREATE INDEX ${table}_audit_at ON ${table}_audit (at);

CREATE FUNCTION ${table}_audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('conveyor.audit_prune', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'the audit log % is append-only: % refused (entries go only by audit.retention)',
    TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER ${table}_audit_append_only BEFORE UPDATE OR DELETE ON ${table}_audit
  FOR EACH ROW EXECUTE FUNCTION ${table}_audit_refuse();
CREATE TRIGGER ${table}_audit_no_truncate BEFORE TRUNCATE ON ${table}_audit
  FOR EACH STATEMENT EXECUTE FUNCTION ${table}_audit_refuse();

CREATE FUNCTION ${table}_audit_prune(before timestamptz, max_rows integer) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  n integer;
BEGIN
  PERFORM set_config('conveyor.audit_prune', 'on', true);
  DELETE FROM ${table}_audit WHERE id IN (SELECT id FROM ${table}_audit WHERE at < before ORDER BY at LIMIT max_rows);
  GET DIAGNOSTICS n = ROW_COUNT;
  PERFORM set_config('conveyor.audit_prune', 'off', true);
  RETURN n;
END $$;
