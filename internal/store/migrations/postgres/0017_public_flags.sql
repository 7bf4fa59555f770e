-- Incidents and maintenance windows a workspace publishes on its status
-- pages. A public incident shows on the pages that hold one of the
-- monitors or heartbeats it touches (its subject or an affected one),
-- under public_title when set; a public window shows on the pages that
-- hold one of its subjects. Both default to private.
ALTER TABLE incidents ADD COLUMN public BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE incidents ADD COLUMN public_title TEXT NOT NULL DEFAULT '';
-- A page reads a workspace's public incidents newest first, or by month.
CREATE INDEX incidents_public ON incidents (workspace_id, started_at, id) WHERE public;
-- …and asks which of them touch its components.
CREATE INDEX incident_monitors_subject ON incident_monitors (subject_id, incident_id);
-- The updates Tocsin writes itself on an automatic incident (its cause,
-- its recovery) name internal things: pages never show them. Earlier
-- ones are told by their times; a resolving update a person wrote at the
-- same instant is hidden too, which errs on the side of not showing.
ALTER TABLE incident_updates ADD COLUMN automatic BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE incident_updates SET automatic = TRUE WHERE EXISTS (SELECT 1 FROM incidents i
    WHERE i.id = incident_updates.incident_id AND i.origin = 'automatic'
      AND (incident_updates.at = i.started_at OR (incident_updates.status = 'resolved' AND incident_updates.at = i.resolved_at)));

ALTER TABLE maintenance_windows ADD COLUMN public BOOLEAN NOT NULL DEFAULT FALSE;
-- Which windows hold a page's components; a workspace's own are few (a
-- quota bounds them), so its existing index finds the public ones.
CREATE INDEX maintenance_subjects_subject ON maintenance_subjects (subject_id, window_id);
