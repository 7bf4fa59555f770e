-- The web app's accounts: signed-in browsers, invitations to a workspace,
-- and two-factor sign-in. Tokens and codes are stored as SHA-256 hashes
-- only, so a copy of the database signs nobody in.

-- The sealed TOTP secret, NULL while two-factor sign-in is off.
ALTER TABLE users ADD COLUMN totp_secret BYTEA;
ALTER TABLE users ADD COLUMN totp_enabled_at BIGINT;

CREATE TABLE web_sessions (
    id                    TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    user_id               TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash            BYTEA   NOT NULL UNIQUE, -- looked up on every page
    workspace_id          TEXT COLLATE "C" REFERENCES workspaces (id) ON DELETE SET NULL, -- NULL: none yet
    second_factor_pending BOOLEAN NOT NULL DEFAULT FALSE,
    user_agent            TEXT    NOT NULL DEFAULT '',
    client_addr           TEXT    NOT NULL DEFAULT '',
    created_at            BIGINT  NOT NULL,
    last_seen_at          BIGINT  NOT NULL
);
-- A person's sessions, newest first; signing out everywhere.
CREATE INDEX web_sessions_user ON web_sessions (user_id, created_at);
-- The expiry sweep: idle too long, or too old whatever its use.
CREATE INDEX web_sessions_last_seen ON web_sessions (last_seen_at);
CREATE INDEX web_sessions_created ON web_sessions (created_at);
-- ON DELETE SET NULL of a workspace looks these up.
CREATE INDEX web_sessions_workspace ON web_sessions (workspace_id);

CREATE TABLE invites (
    id           TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workspace_id TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    token_hash   BYTEA  NOT NULL UNIQUE,
    role         TEXT   NOT NULL,
    created_by   TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    accepted_at  BIGINT,
    accepted_by  TEXT COLLATE "C" REFERENCES users (id) ON DELETE SET NULL,
    revoked_at   BIGINT
);
CREATE INDEX invites_workspace ON invites (workspace_id, created_at);
-- ON DELETE of the users referenced looks these up.
CREATE INDEX invites_created_by ON invites (created_by);
CREATE INDEX invites_accepted_by ON invites (accepted_by);

-- A person's single-use recovery codes for when their authenticator is lost.
CREATE TABLE recovery_codes (
    user_id   TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash BYTEA NOT NULL,
    used_at   BIGINT, -- NULL: still usable
    PRIMARY KEY (user_id, code_hash)
);
