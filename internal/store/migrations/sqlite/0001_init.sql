-- Accounts, keys, monitors, idempotency. Timestamps are unix microseconds
-- (UTC); booleans are 0/1. STRICT tables make a wrongly typed write fail
-- instead of being stored as something else.

CREATE TABLE users (
    id                   TEXT    NOT NULL PRIMARY KEY,
    email                TEXT    NOT NULL UNIQUE, -- lower-cased by the code
    password_hash        TEXT    NOT NULL,
    must_change_password INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL
) STRICT;

CREATE TABLE workspaces (
    id                   TEXT    NOT NULL PRIMARY KEY,
    name                 TEXT    NOT NULL,
    slug                 TEXT    NOT NULL UNIQUE,
    max_monitors         INTEGER NOT NULL,
    min_interval_seconds INTEGER NOT NULL,
    created_at           INTEGER NOT NULL
) STRICT;

CREATE TABLE memberships (
    workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
) STRICT;
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE api_keys (
    id           TEXT    NOT NULL PRIMARY KEY,
    user_id      TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    workspace_id TEXT    REFERENCES workspaces (id) ON DELETE CASCADE, -- NULL: account-wide
    name         TEXT    NOT NULL,
    hash         BLOB    NOT NULL UNIQUE, -- looked up on every request
    prefix       TEXT    NOT NULL,
    scopes       TEXT    NOT NULL, -- space-separated
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
) STRICT;
CREATE INDEX api_keys_user ON api_keys (user_id);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE monitors (
    id               TEXT    NOT NULL PRIMARY KEY,
    workspace_id     TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    type             TEXT    NOT NULL,
    name             TEXT    NOT NULL,
    config           TEXT    NOT NULL, -- JSON of monitor.Config, without auth
    auth_sealed      BLOB,             -- sealed monitor.Auth, NULL when none
    interval_seconds INTEGER NOT NULL,
    state            TEXT    NOT NULL,
    state_since      INTEGER NOT NULL,
    paused           INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
) STRICT;
-- Keyset pages and quota counts within a workspace.
CREATE INDEX monitors_workspace ON monitors (workspace_id, id);

CREATE TABLE idempotency_keys (
    workspace_id TEXT    NOT NULL,
    key_id       TEXT    NOT NULL,
    idem_key     TEXT    NOT NULL,
    fingerprint  BLOB    NOT NULL,
    done         INTEGER NOT NULL DEFAULT 0,
    status       INTEGER NOT NULL DEFAULT 0,
    header       BLOB,
    body         BLOB,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, key_id, idem_key)
) STRICT;
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- Unused on SQLite (one node keeps its buckets in memory); kept so both
-- engines have the same schema.
CREATE TABLE rate_limits (
    bucket TEXT    NOT NULL PRIMARY KEY,
    tat    INTEGER NOT NULL
) STRICT;
