-- The audit log's prune cannot wipe it (README, Audit log; docs/decisions.md, "The audit log's prune has a floor").
-- ${table}_audit_floor holds the youngest age an entry may be pruned at (1 day unless the table's owner changes it):
-- the prune function never deletes younger entries, whatever bound its caller passes. And the trigger lets a DELETE
-- through only inside the prune function, running as the table's owner (SECURITY DEFINER): a session that sets
-- conveyor.audit_prune itself, as another role, is refused. Where the node's role owns the table, it can still change
-- the floor or drop the triggers: the protection there is against accidents only.
CREATE TABLE ${table}_audit_floor (one boolean PRIMARY KEY DEFAULT true CHECK (one),
  min_age interval NOT NULL CHECK (min_age >= interval '0'));
INSERT INTO ${table}_audit_floor (min_age) VALUES (interval '1 day');

CREATE OR REPLACE FUNCTION ${table}_audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('conveyor.audit_prune', true) = 'on'
     AND current_user = (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = TG_RELID) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'the audit log % is append-only: % refused (entries go only by audit.retention)',
    TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE OR REPLACE FUNCTION ${table}_audit_prune(before timestamptz, max_rows integer) RETURNS integer
  LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  bound timestamptz;
  n integer;
BEGIN
  -- no floor row (the owner deleted it): nothing is pruned
  SELECT least(before, now() - min_age) INTO bound FROM ${table}_audit_floor;
  PERFORM set_config('conveyor.audit_prune', 'on', true);
  DELETE FROM ${table}_audit WHERE id IN (SELECT id FROM ${table}_audit WHERE at < bound ORDER BY at
    LIMIT greatest(0, least(max_rows, 10000)));
  GET DIAGNOSTICS n = ROW_COUNT;
  PERFORM set_config('conveyor.audit_prune', 'off', true);
  RETURN n;
END $$;
