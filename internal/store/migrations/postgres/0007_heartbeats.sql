-- Heartbeats: jobs that report in by calling a secret URL. heartbeats holds
-- what users edit; heartbeat_runtime what pings and the deadline sweeper
-- write, so an edit never undoes a ping and a ping never undoes an edit.
CREATE TABLE heartbeats (
    id            TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workspace_id  TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    period_s      INTEGER NOT NULL DEFAULT 0,   -- a period schedule, or
    cron          TEXT    NOT NULL DEFAULT '',  -- a cron schedule read in timezone
    timezone      TEXT    NOT NULL DEFAULT 'UTC',
    grace_s       INTEGER NOT NULL,
    max_runtime_s INTEGER NOT NULL DEFAULT 0,   -- 0: no overrun check
    paused        BOOLEAN NOT NULL DEFAULT FALSE,
    token_hash    BYTEA   NOT NULL UNIQUE,      -- SHA-256 of the ping token: what a ping is looked up by
    token_sealed  BYTEA   NOT NULL,             -- the token itself, encrypted, for the ping URL
    created_at    BIGINT  NOT NULL,
    updated_at    BIGINT  NOT NULL,
    CHECK ((period_s > 0) <> (cron <> ''))
);
CREATE INDEX heartbeats_workspace ON heartbeats (workspace_id, id);

-- Times are µs since the epoch, 0 for never. wake_at is when the sweeper
-- must look next: the deadline or the earliest overrun, max int64 for never.
CREATE TABLE heartbeat_runtime (
    seq                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    heartbeat_id       TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES heartbeats (id) ON DELETE CASCADE,
    state              TEXT    NOT NULL,
    state_since        BIGINT  NOT NULL,
    last_ping_at       BIGINT  NOT NULL DEFAULT 0,
    last_start_at      BIGINT  NOT NULL DEFAULT 0,
    last_completion    TEXT    NOT NULL DEFAULT '', -- 'success', 'fail' or '' before the first
    last_exit_code     INTEGER NOT NULL DEFAULT -1,
    last_duration_us   BIGINT  NOT NULL DEFAULT -1,
    open_runs          TEXT    NOT NULL DEFAULT '[]', -- started runs awaiting completion (JSON)
    expected_at        BIGINT  NOT NULL DEFAULT 0,
    deadline_at        BIGINT  NOT NULL DEFAULT 0,
    window_start       BIGINT  NOT NULL DEFAULT 0,    -- since when a ping would have counted
    wake_at            BIGINT  NOT NULL DEFAULT 9223372036854775807,
    sweep_owner        TEXT,
    sweep_until        BIGINT  NOT NULL DEFAULT 0,
    version            BIGINT  NOT NULL DEFAULT 0,    -- bumped by every write: the sweeper's compare-and-set
    maintenance_window TEXT COLLATE "C" NOT NULL DEFAULT ''
) WITH (fillfactor = 80);
CREATE INDEX heartbeat_runtime_wake ON heartbeat_runtime (wake_at);
CREATE INDEX heartbeat_runtime_maintenance ON heartbeat_runtime (seq) WHERE state = 'MAINTENANCE';

-- Every ping, kept as the run's record. No foreign key, as observations.
CREATE TABLE pings (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    heartbeat_seq  BIGINT   NOT NULL,
    at             BIGINT   NOT NULL,
    duration_us    BIGINT,            -- a completion paired with its start
    signal         SMALLINT NOT NULL, -- 1 success, 2 start, 3 fail
    exit_code      SMALLINT,
    body_truncated BOOLEAN  NOT NULL DEFAULT FALSE,
    ignored        BOOLEAN  NOT NULL DEFAULT FALSE, -- received while paused
    run_id         TEXT,
    method         TEXT     NOT NULL,
    client         TEXT     NOT NULL,
    user_agent     TEXT,
    idem_key       TEXT,
    body           BYTEA              -- at most 10 KiB
);
CREATE INDEX pings_heartbeat ON pings (heartbeat_seq, at);

-- ?key= of recent pings, with the acknowledgement to replay: 24 hours.
CREATE TABLE ping_keys (
    heartbeat_seq BIGINT NOT NULL,
    idem_key      TEXT   NOT NULL,
    at            BIGINT NOT NULL,
    ack           TEXT   NOT NULL,
    PRIMARY KEY (heartbeat_seq, idem_key)
);
CREATE INDEX ping_keys_at ON ping_keys (at);

-- When this service was up and receiving pings: each serve process keeps
-- one span (started_at .. last_seen) current and starts a new one after it
-- could not reach the database. A deadline missed in a gap between spans is
-- UNKNOWN, never DOWN.
CREATE TABLE service_spans (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    node       TEXT   NOT NULL,
    started_at BIGINT NOT NULL,
    last_seen  BIGINT NOT NULL
);
CREATE INDEX service_spans_seen ON service_spans (last_seen);

-- Maintenance windows may name heartbeats: deleting one takes it out.
ALTER TABLE maintenance_subjects ADD COLUMN heartbeat_id TEXT COLLATE "C" REFERENCES heartbeats (id) ON DELETE CASCADE;
CREATE INDEX maintenance_subjects_heartbeat ON maintenance_subjects (heartbeat_id);
