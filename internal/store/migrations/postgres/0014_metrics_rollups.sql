-- Rollups: hourly (tier 1) and daily (tier 2) aggregates of what raw rows
-- record, so a year's figures cost about what a day's do, and raw rows can
-- be deleted once rolled up. A bucket is [bucket, bucket + 1 h or 1 d) in
-- UTC, µs since the epoch. Writing a bucket again replaces it: rolling up
-- is idempotent. No foreign keys, as for observations: deleting a subject
-- deletes its rows.

-- Checks of a monitor by result; latency is the encoded latency summary
-- (exact count, sum, min and max, and a DDSketch) of its known checks.
CREATE TABLE observation_rollups (
    monitor_seq BIGINT   NOT NULL,
    bucket      BIGINT   NOT NULL,
    up          INTEGER  NOT NULL,
    degraded    INTEGER  NOT NULL,
    down        INTEGER  NOT NULL,
    unknown     INTEGER  NOT NULL,
    tier        SMALLINT NOT NULL,
    latency     BYTEA    NOT NULL,
    PRIMARY KEY (monitor_seq, tier, bucket)
);

-- Pings of a heartbeat by signal; runs is the encoded summary of the run
-- durations measured from /start.
CREATE TABLE ping_rollups (
    heartbeat_seq BIGINT   NOT NULL,
    bucket        BIGINT   NOT NULL,
    success       INTEGER  NOT NULL,
    start         INTEGER  NOT NULL,
    fail          INTEGER  NOT NULL,
    tier          SMALLINT NOT NULL,
    runs          BYTEA    NOT NULL,
    PRIMARY KEY (heartbeat_seq, tier, bucket)
);

-- How far each rollup has gone: every bucket before done_until is written.
-- A node takes a rollup's turn with a lease, so each bucket is rolled up
-- by one node at a time, and a dead node's turn passes on when it lapses.
CREATE TABLE rollup_progress (
    name        TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    done_until  BIGINT NOT NULL,
    lease_owner TEXT   NOT NULL DEFAULT '',
    lease_until BIGINT NOT NULL DEFAULT 0
);

-- When the certificate a tls monitor's checks last saw expires (µs, 0 for
-- none), for the metrics it is exported in.
ALTER TABLE monitor_runtime ADD COLUMN last_cert_expiry BIGINT NOT NULL DEFAULT 0;
