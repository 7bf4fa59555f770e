-- Every change that can alter what an API key may do notifies the channel
-- tocsin_auth, so each node drops its cached key grants at once, whoever
-- made the change (a node, the CLI, or SQL by hand).
CREATE FUNCTION tocsin_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('tocsin_auth', TG_TABLE_NAME);
	RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_auth_changed
	AFTER UPDATE OF user_id, workspace_id, hash, scopes, revoked_at OR DELETE OR TRUNCATE ON api_keys
	FOR EACH STATEMENT EXECUTE FUNCTION tocsin_auth_changed();

CREATE TRIGGER memberships_auth_changed
	AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON memberships
	FOR EACH STATEMENT EXECUTE FUNCTION tocsin_auth_changed();

CREATE TRIGGER users_auth_changed
	AFTER DELETE OR TRUNCATE ON users
	FOR EACH STATEMENT EXECUTE FUNCTION tocsin_auth_changed();
