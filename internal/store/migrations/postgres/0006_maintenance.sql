-- Maintenance windows: while one is active its monitors are MAINTENANCE
-- (checks run and are recorded; nothing alerts). A window is one-off
-- (starts_at, ends_at) or recurring (cron or rrule read in timezone, each
-- occurrence open for duration_us, none before starts_at — also the RRULE's
-- DTSTART — nor after until_at).
CREATE TABLE maintenance_windows (
    id           TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         TEXT   NOT NULL,
    description  TEXT   NOT NULL DEFAULT '',
    starts_at    BIGINT NOT NULL,
    ends_at      BIGINT,                    -- one-off only
    cron         TEXT   NOT NULL DEFAULT '',
    rrule        TEXT   NOT NULL DEFAULT '',
    timezone     TEXT   NOT NULL DEFAULT 'UTC',
    duration_us  BIGINT NOT NULL DEFAULT 0, -- recurring only
    until_at     BIGINT,                    -- recurring only; NULL: no end
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    CHECK ((cron = '' AND rrule = '' AND ends_at IS NOT NULL AND duration_us = 0)
        OR ((cron = '') <> (rrule = '') AND ends_at IS NULL AND duration_us > 0))
);
-- Keyset pages and quota counts within a workspace.
CREATE INDEX maintenance_windows_workspace ON maintenance_windows (workspace_id, id);

-- What a window covers. subject_id names the monitor (later also a
-- heartbeat); monitor_id repeats it for monitors, so that deleting a monitor
-- takes it out of every window.
CREATE TABLE maintenance_subjects (
    window_id  TEXT COLLATE "C" NOT NULL REFERENCES maintenance_windows (id) ON DELETE CASCADE,
    subject_id TEXT COLLATE "C" NOT NULL,
    monitor_id TEXT COLLATE "C" REFERENCES monitors (id) ON DELETE CASCADE,
    PRIMARY KEY (window_id, subject_id),
    CHECK (monitor_id IS NULL OR monitor_id = subject_id)
);
CREATE INDEX maintenance_subjects_monitor ON maintenance_subjects (monitor_id);

-- The window that holds a monitor in MAINTENANCE (its id, '' otherwise), so
-- the state history can say which window ended; written by the maintenance
-- sweep only. A constant default adds the column without rewriting the table.
ALTER TABLE monitor_runtime ADD COLUMN maintenance_window TEXT COLLATE "C" NOT NULL DEFAULT '';
-- The sweep looks up the monitors in maintenance every few seconds.
CREATE INDEX monitor_runtime_maintenance ON monitor_runtime (seq) WHERE state = 'MAINTENANCE';
