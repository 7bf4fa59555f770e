-- Deliveries (DESIGN §6): one row per event per channel that hears it,
-- written in the transaction that writes the event, so a crash loses
-- none. Nodes claim due deliveries with a lease (SKIP LOCKED); every
-- attempt is kept. Deliveries of one channel that share an order key (the
-- incident, or the subject of a state change) go out in order. Times are
-- µs since the epoch, 0 for never.
CREATE TABLE deliveries (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               TEXT COLLATE "C" NOT NULL UNIQUE,
    workspace_id     TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    channel_id       TEXT COLLATE "C" NOT NULL REFERENCES notification_channels (id) ON DELETE CASCADE,
    event_id         TEXT COLLATE "C" NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    event_type       TEXT    NOT NULL,
    order_key        TEXT COLLATE "C" NOT NULL DEFAULT '',
    status           TEXT    NOT NULL,            -- pending, succeeded, failed, held
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT  NOT NULL,
    give_up_at       BIGINT  NOT NULL,            -- retries end here: failed
    lease_owner      TEXT    NOT NULL DEFAULT '',
    lease_until      BIGINT  NOT NULL DEFAULT 0,
    last_status_code INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT    NOT NULL DEFAULT '',
    held_by          TEXT    NOT NULL DEFAULT '', -- held: the summary delivery that told of it
    created_at       BIGINT  NOT NULL,
    updated_at       BIGINT  NOT NULL,
    completed_at     BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_order ON deliveries (channel_id, order_key, seq) WHERE status = 'pending';
CREATE INDEX deliveries_channel ON deliveries (channel_id, id);
CREATE INDEX deliveries_event ON deliveries (event_id);
-- A channel's deliveries waiting out a failure: a success brings them forward.
CREATE INDEX deliveries_waiting ON deliveries (channel_id, next_attempt_at) WHERE status = 'pending' AND attempts > 0;

CREATE TABLE delivery_attempts (
    delivery_id TEXT COLLATE "C" NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    n           INTEGER NOT NULL,
    node        TEXT    NOT NULL,
    started_at  BIGINT  NOT NULL,
    duration_us BIGINT  NOT NULL,
    status_code INTEGER NOT NULL DEFAULT 0,       -- 0: no HTTP answer
    error       TEXT    NOT NULL DEFAULT '',      -- '' for a success
    PRIMARY KEY (delivery_id, n)
);

-- Each channel's rate bound (notify.RateBound): how many events it took in
-- the window that started at rate_window_start. Past the bound, deliveries
-- are held, and told of in one summary delivery once the window ends.
ALTER TABLE notification_channels ADD COLUMN rate_window_start BIGINT NOT NULL DEFAULT 0;
ALTER TABLE notification_channels ADD COLUMN rate_count INTEGER NOT NULL DEFAULT 0;
CREATE INDEX deliveries_held ON deliveries (channel_id) WHERE status = 'held' AND held_by = '';
