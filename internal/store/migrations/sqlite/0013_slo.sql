-- Objectives: a monitor or heartbeat may carry a service level objective,
-- the share of known time it should be UP or DEGRADED (slo_target) over a
-- rolling period (slo_period_days); both NULL: none.
ALTER TABLE monitors ADD COLUMN slo_target REAL;
ALTER TABLE monitors ADD COLUMN slo_period_days INTEGER;
ALTER TABLE heartbeats ADD COLUMN slo_target REAL;
ALTER TABLE heartbeats ADD COLUMN slo_period_days INTEGER;

-- The open burn-rate alert of each subject: written when a rule starts
-- firing and deleted when it is resolved, so a restart neither sends it
-- again nor forgets to resolve it. No foreign key: the evaluation removes
-- the alert of a subject that is gone.
CREATE TABLE slo_alerts (
    subject_id   TEXT    NOT NULL PRIMARY KEY,
    workspace_id TEXT    NOT NULL,
    rule         TEXT    NOT NULL,
    opened_at    INTEGER NOT NULL
) STRICT;
