-- Status pages: what a workspace shows its customers, by slug (unique in
-- the installation) or by its own domain. The page's groups are ordered
-- by group_names (a JSON array of names; a group may be empty), its
-- components by (group_position, position). The password is an argon2id
-- hash; password_version changes with it, so public sessions signed under
-- an old password can be told apart. The logo is kept here, never
-- hot-linked: logo_version changes with its bytes.
CREATE TABLE status_pages (
    id                TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    workspace_id      TEXT COLLATE "C" NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    slug              TEXT COLLATE "C" NOT NULL UNIQUE,
    title             TEXT    NOT NULL,
    description       TEXT    NOT NULL DEFAULT '',
    visibility        TEXT    NOT NULL DEFAULT 'public',
    password_hash     TEXT    NOT NULL DEFAULT '',
    password_version  BIGINT  NOT NULL DEFAULT 0,
    custom_domain     TEXT COLLATE "C" UNIQUE,          -- NULL: none
    show_uptime       BOOLEAN NOT NULL DEFAULT TRUE,
    uptime_days       BIGINT  NOT NULL DEFAULT 90,
    paused_components TEXT    NOT NULL DEFAULT 'hide',
    show_incidents    BOOLEAN NOT NULL DEFAULT TRUE,
    show_maintenance  BOOLEAN NOT NULL DEFAULT TRUE,
    accent            TEXT    NOT NULL,
    footer_links      TEXT    NOT NULL DEFAULT '[]', -- JSON [{label, url}]
    group_names       TEXT    NOT NULL DEFAULT '[]', -- JSON ["name", …]
    logo              BYTEA,                   -- NULL: no logo
    logo_type         TEXT    NOT NULL DEFAULT '',
    logo_version      TEXT    NOT NULL DEFAULT '',
    logo_updated_at   BIGINT,
    created_at        BIGINT  NOT NULL,
    updated_at        BIGINT  NOT NULL,
    CHECK (visibility IN ('public', 'password')),
    CHECK (visibility = 'public' OR password_hash <> ''),
    CHECK (paused_components IN ('hide', 'show'))
);
-- Keyset pages and quota counts within a workspace.
CREATE INDEX status_pages_workspace ON status_pages (workspace_id, id);

-- A monitor or heartbeat shown on a page under its public name. Deleting
-- the subject takes it off every page.
CREATE TABLE status_page_components (
    id             TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    page_id        TEXT COLLATE "C" NOT NULL REFERENCES status_pages (id) ON DELETE CASCADE,
    group_position BIGINT  NOT NULL,
    position       BIGINT  NOT NULL,
    monitor_id     TEXT COLLATE "C" REFERENCES monitors (id) ON DELETE CASCADE,
    heartbeat_id   TEXT COLLATE "C" REFERENCES heartbeats (id) ON DELETE CASCADE,
    name           TEXT    NOT NULL,
    description    TEXT    NOT NULL DEFAULT '',
    UNIQUE (page_id, monitor_id),
    UNIQUE (page_id, heartbeat_id),
    CHECK ((monitor_id IS NULL) <> (heartbeat_id IS NULL))
);
CREATE INDEX status_page_components_page ON status_page_components (page_id, group_position, position);
CREATE INDEX status_page_components_monitor ON status_page_components (monitor_id);
CREATE INDEX status_page_components_heartbeat ON status_page_components (heartbeat_id);

-- The workspace's override of the status-page quota, NULL: the default.
ALTER TABLE workspaces ADD COLUMN quota_status_pages INTEGER;
