-- A monitor's request headers can carry credentials, so their values are
-- sealed like auth_sealed (config keeps only their names). Values that
-- earlier versions kept in config are sealed by a step that runs after
-- the migrations (it needs the keyring, which SQL does not have).
ALTER TABLE monitors ADD COLUMN headers_sealed BYTEA; -- sealed header values, NULL when none
