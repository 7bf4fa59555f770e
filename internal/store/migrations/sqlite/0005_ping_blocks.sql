-- Pings move into blocks: one row per heartbeat per write, its pings a JSON
-- array oldest first (ping_blocks.go). The rows of pings are converted by
-- the Go step of this migration (convertPingRows), which then drops pings.
CREATE TABLE ping_blocks (
    id            INTEGER PRIMARY KEY,
    heartbeat_seq INTEGER NOT NULL,
    first_id      INTEGER NOT NULL,  -- ping ids, growing; a heartbeat's blocks never overlap
    last_id       INTEGER NOT NULL,
    first_at      INTEGER NOT NULL,  -- µs since the epoch
    last_at       INTEGER NOT NULL,
    n             INTEGER NOT NULL,
    pings         TEXT    NOT NULL
) STRICT;
CREATE UNIQUE INDEX ping_blocks_heartbeat ON ping_blocks (heartbeat_seq, first_id);
CREATE INDEX ping_blocks_last_at ON ping_blocks (last_at);

-- Acknowledged pings not yet written into blocks (ping_journal.go): one
-- row per batch, deleted when the batch is applied. AUTOINCREMENT: a
-- batch's id numbers its pings, so an id is never used twice.
CREATE TABLE ping_journal (
    id    INTEGER PRIMARY KEY AUTOINCREMENT,
    batch BLOB NOT NULL  -- binary (journal_codec.go)
) STRICT;
