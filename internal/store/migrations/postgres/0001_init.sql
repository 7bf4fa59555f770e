-- Accounts, keys, monitors, idempotency. Timestamps are unix microseconds
-- (UTC) in BIGINT, as on SQLite. Ids use the "C" collation: they are ASCII,
-- sort byte-wise like on SQLite (keyset pagination relies on that), and
-- compare faster than under a linguistic collation.

CREATE TABLE users (
    id                   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    email                TEXT    NOT NULL UNIQUE, -- lower-cased by the code
    password_hash        TEXT    NOT NULL,
    must_change_password BOOLEAN NOT NULL DEFAULT FALSE,
    created_at           BIGINT  NOT NULL
);

CREATE TABLE workspaces (
    id                   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    name                 TEXT    NOT NULL,
    slug                 TEXT    NOT NULL UNIQUE,
    max_monitors         INTEGER NOT NULL,
    min_interval_seconds INTEGER NOT NULL,
    created_at           BIGINT  NOT NULL
);

CREATE TABLE memberships (
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE api_keys (
    id           TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    user_id      TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    workspace_id TEXT COLLATE "C" REFERENCES workspaces (id) ON DELETE CASCADE, -- NULL: account-wide
    name         TEXT   NOT NULL,
    hash         BYTEA  NOT NULL UNIQUE, -- looked up on every request
    prefix       TEXT   NOT NULL,
    scopes       TEXT   NOT NULL, -- space-separated
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX api_keys_user ON api_keys (user_id);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE monitors (
    id               TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workspace_id     TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    type             TEXT    NOT NULL,
    name             TEXT    NOT NULL,
    config           TEXT    NOT NULL, -- JSON of monitor.Config, without auth
    auth_sealed      BYTEA,            -- sealed monitor.Auth, NULL when none
    interval_seconds INTEGER NOT NULL,
    state            TEXT    NOT NULL,
    state_since      BIGINT  NOT NULL,
    paused           BOOLEAN NOT NULL DEFAULT FALSE,
    created_at       BIGINT  NOT NULL,
    updated_at       BIGINT  NOT NULL
);
-- Keyset pages and quota counts within a workspace.
CREATE INDEX monitors_workspace ON monitors (workspace_id, id);

CREATE TABLE idempotency_keys (
    workspace_id TEXT COLLATE "C" NOT NULL,
    key_id       TEXT COLLATE "C" NOT NULL,
    idem_key     TEXT COLLATE "C" NOT NULL,
    fingerprint  BYTEA   NOT NULL,
    done         BOOLEAN NOT NULL DEFAULT FALSE,
    status       INTEGER NOT NULL DEFAULT 0,
    header       BYTEA,
    body         BYTEA,
    created_at   BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL,
    PRIMARY KEY (workspace_id, key_id, idem_key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- GCRA buckets shared by every node (see store.TakeToken).
CREATE TABLE rate_limits (
    bucket TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tat    BIGINT NOT NULL
);
