-- A workspace's quotas are overrides of the server's defaults (flags of
-- serve), NULL where the default applies: a server started with a higher
-- default raises every workspace that has no override of its own.
ALTER TABLE workspaces ADD COLUMN quota_monitors INTEGER;
ALTER TABLE workspaces ADD COLUMN quota_heartbeats INTEGER;
ALTER TABLE workspaces ADD COLUMN quota_min_interval_seconds INTEGER;
ALTER TABLE workspaces ADD COLUMN quota_maintenance_windows INTEGER;
ALTER TABLE workspaces ADD COLUMN quota_channels INTEGER;

-- Earlier versions copied the defaults of the day (1000 monitors, which
-- also bounded heartbeats, and 10 s) into every workspace; values other
-- than those were set on purpose and stay as overrides.
UPDATE workspaces SET
    quota_monitors = NULLIF(max_monitors, 1000),
    quota_heartbeats = NULLIF(max_monitors, 1000),
    quota_min_interval_seconds = NULLIF(min_interval_seconds, 10);

ALTER TABLE workspaces DROP COLUMN max_monitors;
ALTER TABLE workspaces DROP COLUMN min_interval_seconds;
