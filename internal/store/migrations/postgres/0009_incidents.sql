-- Incidents and the event outbox (internal/incident; DESIGN §6). An
-- automatic incident is opened by its subject going DOWN and resolved by
-- its recovery, in the transaction that records the state change, which
-- also writes the events: a crash loses none. Times are µs since the
-- epoch, 0 for never.
CREATE TABLE incidents (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workspace_id    TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    title           TEXT    NOT NULL,
    status          TEXT    NOT NULL,
    origin          TEXT    NOT NULL,           -- 'automatic' or 'manual'
    subject_id      TEXT COLLATE "C" NOT NULL DEFAULT '', -- automatic ones: the monitor or heartbeat
    subject_name    TEXT    NOT NULL DEFAULT '',
    cause           TEXT    NOT NULL DEFAULT '',
    started_at      BIGINT  NOT NULL,
    acknowledged_at BIGINT  NOT NULL DEFAULT 0,
    resolved_at     BIGINT  NOT NULL DEFAULT 0,
    created_at      BIGINT  NOT NULL,
    updated_at      BIGINT  NOT NULL
);
CREATE INDEX incidents_workspace ON incidents (workspace_id, id);
-- One open incident per subject.
CREATE UNIQUE INDEX incidents_open_subject ON incidents (subject_id) WHERE resolved_at = 0 AND subject_id <> '';

CREATE TABLE incident_updates (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    incident_id TEXT COLLATE "C" NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    status      TEXT    NOT NULL,
    message     TEXT    NOT NULL,
    at          BIGINT  NOT NULL
);
CREATE INDEX incident_updates_incident ON incident_updates (incident_id, id);

CREATE TABLE incident_monitors (
    incident_id TEXT COLLATE "C" NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
    subject_id  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (incident_id, subject_id)
);

-- The outbox: every event, in the order written (seq). Delivery to the
-- channels that hear it starts from here.
CREATE TABLE events (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           TEXT COLLATE "C" NOT NULL UNIQUE,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    type         TEXT    NOT NULL,
    subject_id   TEXT COLLATE "C" NOT NULL DEFAULT '',
    incident_id  TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at   BIGINT  NOT NULL,
    payload      TEXT    NOT NULL  -- the event as receivers get it (JSON)
);
CREATE INDEX events_workspace ON events (workspace_id, seq);
