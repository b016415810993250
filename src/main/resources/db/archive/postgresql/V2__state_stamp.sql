-- The state's stamp, so a late copy never replaces a newer one.
ALTER TABLE ${table} ADD COLUMN state_updated bigint;
ALTER TABLE ${table} ADD COLUMN state_rev bigint;
