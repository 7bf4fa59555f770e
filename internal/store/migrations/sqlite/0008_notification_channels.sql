-- Notification channels (internal/notify): where events go. config,
-- events and subjects are JSON; the secrets (signing secrets, hook URLs,
-- keys, tokens) are sealed under the keyring and never read back out
-- through the API.
CREATE TABLE notification_channels (
    id              TEXT    NOT NULL PRIMARY KEY,
    workspace_id    TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name            TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    enabled         INTEGER NOT NULL DEFAULT 1,
    config          TEXT    NOT NULL DEFAULT '{}',
    events          TEXT    NOT NULL DEFAULT '[]',  -- event types heard; [] for all
    subjects        TEXT    NOT NULL DEFAULT '[]',  -- monitors and heartbeats heard; [] for all
    secrets_sealed  BLOB    NOT NULL,
    disabled_reason TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX notification_channels_workspace ON notification_channels (workspace_id, id);
