-- Pings move into blocks: one row per heartbeat per write, its pings a JSON
-- array oldest first (ping_blocks.go). The rows of pings are converted by
-- the Go step of this migration (convertPingRows), which then drops pings.
CREATE TABLE ping_blocks (
    heartbeat_seq BIGINT NOT NULL,
    first_id      BIGINT NOT NULL,  -- ping ids, growing; a heartbeat's blocks never overlap
    last_id       BIGINT NOT NULL,
    first_at      BIGINT NOT NULL,  -- µs since the epoch
    last_at       BIGINT NOT NULL,
    n             INT    NOT NULL,
    pings         TEXT   NOT NULL,
    PRIMARY KEY (heartbeat_seq, first_id)
);
CREATE INDEX ping_blocks_last_at ON ping_blocks (last_at);

-- Ping ids, taken while the heartbeat's runtime row is locked.
CREATE SEQUENCE ping_ids;
