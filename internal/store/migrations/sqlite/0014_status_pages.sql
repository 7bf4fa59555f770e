-- Status pages: what a workspace shows its customers, by slug (unique in
-- the installation) or by its own domain. The page's groups are ordered
-- by group_names (a JSON array of names; a group may be empty), its
-- components by (group_position, position). The password is an argon2id
-- hash; password_version changes with it, so public sessions signed under
-- an old password can be told apart. The logo is kept here, never
-- hot-linked: logo_version changes with its bytes.
CREATE TABLE status_pages (
    id                TEXT    NOT NULL PRIMARY KEY,
    workspace_id      TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    slug              TEXT    NOT NULL UNIQUE,
    title             TEXT    NOT NULL,
    description       TEXT    NOT NULL DEFAULT '',
    visibility        TEXT    NOT NULL DEFAULT 'public',
    password_hash     TEXT    NOT NULL DEFAULT '',
    password_version  INTEGER NOT NULL DEFAULT 0,
    custom_domain     TEXT    UNIQUE,          -- NULL: none
    show_uptime       INTEGER NOT NULL DEFAULT 1,
    uptime_days       INTEGER NOT NULL DEFAULT 90,
    paused_components TEXT    NOT NULL DEFAULT 'hide',
    show_incidents    INTEGER NOT NULL DEFAULT 1,
    show_maintenance  INTEGER NOT NULL DEFAULT 1,
    accent            TEXT    NOT NULL,
    footer_links      TEXT    NOT NULL DEFAULT '[]', -- JSON [{label, url}]
    group_names       TEXT    NOT NULL DEFAULT '[]', -- JSON ["name", …]
    logo              BLOB,                    -- NULL: no logo
    logo_type         TEXT    NOT NULL DEFAULT '',
    logo_version      TEXT    NOT NULL DEFAULT '',
    logo_updated_at   INTEGER,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    CHECK (visibility IN ('public', 'password')),
    CHECK (visibility = 'public' OR password_hash <> ''),
    CHECK (paused_components IN ('hide', 'show'))
) STRICT;
-- Keyset pages and quota counts within a workspace.
CREATE INDEX status_pages_workspace ON status_pages (workspace_id, id);

-- A monitor or heartbeat shown on a page under its public name. Deleting
-- the subject takes it off every page.
CREATE TABLE status_page_components (
    id             TEXT    NOT NULL PRIMARY KEY,
    page_id        TEXT    NOT NULL REFERENCES status_pages (id) ON DELETE CASCADE,
    group_position INTEGER NOT NULL,
    position       INTEGER NOT NULL,
    monitor_id     TEXT    REFERENCES monitors (id) ON DELETE CASCADE,
    heartbeat_id   TEXT    REFERENCES heartbeats (id) ON DELETE CASCADE,
    name           TEXT    NOT NULL,
    description    TEXT    NOT NULL DEFAULT '',
    UNIQUE (page_id, monitor_id),
    UNIQUE (page_id, heartbeat_id),
    CHECK ((monitor_id IS NULL) <> (heartbeat_id IS NULL))
) STRICT;
CREATE INDEX status_page_components_page ON status_page_components (page_id, group_position, position);
CREATE INDEX status_page_components_monitor ON status_page_components (monitor_id);
CREATE INDEX status_page_components_heartbeat ON status_page_components (heartbeat_id);

-- The workspace's override of the status-page quota, NULL: the default.
ALTER TABLE workspaces ADD COLUMN quota_status_pages INTEGER;
