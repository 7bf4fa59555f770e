-- The check engine: each monitor's schedule, lease and state machine, the
-- observations its checks produce, and the history of its states.

-- monitor_runtime is the part of a monitor that the engine writes on every
-- check, kept apart from the configuration that users edit (an update
-- rewrites the whole row). seq is a small integer key so that observations
-- stay compact.
CREATE TABLE monitor_runtime (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    monitor_id      TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES monitors (id) ON DELETE CASCADE,
    interval_us     BIGINT  NOT NULL,
    next_due_at     BIGINT  NOT NULL,           -- max int64 while paused
    lease_owner     TEXT,                       -- the node running the due check
    lease_until     BIGINT  NOT NULL DEFAULT 0,
    state           TEXT    NOT NULL,
    state_since     BIGINT  NOT NULL,
    downs           INTEGER NOT NULL DEFAULT 0, -- consecutive down results
    ups             INTEGER NOT NULL DEFAULT 0, -- consecutive up or degraded results
    last_known_at   BIGINT  NOT NULL DEFAULT 0,
    last_known      TEXT    NOT NULL DEFAULT '',
    last_check_at   BIGINT  NOT NULL DEFAULT 0,
    last_result     TEXT    NOT NULL DEFAULT '',
    last_reason     TEXT    NOT NULL DEFAULT '',
    last_latency_us BIGINT  NOT NULL DEFAULT 0,
    last_status     INTEGER NOT NULL DEFAULT 0
) WITH (fillfactor = 80); -- room for HOT updates: a check rewrites the row
CREATE INDEX monitor_runtime_due ON monitor_runtime (next_due_at);

INSERT INTO monitor_runtime (monitor_id, interval_us, next_due_at, state, state_since)
    SELECT id, interval_seconds::bigint * 1000000,
           CASE WHEN paused THEN 9223372036854775807 ELSE 0 END,
           state, state_since
    FROM monitors;
ALTER TABLE monitors DROP COLUMN state;
ALTER TABLE monitors DROP COLUMN state_since;

-- probes names who ran a check, by a small number.
CREATE TABLE probes (
    id     INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name   TEXT NOT NULL,
    region TEXT NOT NULL,
    UNIQUE (name, region)
);

-- One row per check, columns ordered widest first so nothing is padded.
-- Durations are microseconds; a NULL phase did not happen; reason is NULL
-- when the result is up. No foreign key: deleting a monitor deletes its
-- rows, and a batch never fails on a monitor deleted while its check ran.
CREATE TABLE observations (
    monitor_seq BIGINT   NOT NULL,
    at          BIGINT   NOT NULL, -- when the check started
    latency_us  INTEGER  NOT NULL,
    lag_us      INTEGER  NOT NULL, -- start minus due time
    dns_us      INTEGER,
    connect_us  INTEGER,
    tls_us      INTEGER,
    ttfb_us     INTEGER,
    result      SMALLINT NOT NULL, -- 1 up, 2 degraded, 3 down, 4 unknown
    status      SMALLINT,
    probe       SMALLINT NOT NULL,
    reason      TEXT,
    PRIMARY KEY (monitor_seq, at)
);

-- Every change of state of a monitor (and later a heartbeat), with its
-- cause: what metrics integrate.
CREATE TABLE state_changes (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subject_id TEXT COLLATE "C" NOT NULL,
    at         BIGINT NOT NULL,
    from_state TEXT   NOT NULL,
    to_state   TEXT   NOT NULL,
    cause      TEXT   NOT NULL
);
CREATE INDEX state_changes_subject ON state_changes (subject_id, at);
