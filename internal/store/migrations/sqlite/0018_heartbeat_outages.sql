-- The state an outage of this service interrupted, while a heartbeat is
-- UNKNOWN for it ('' otherwise): the first verdict after the outage that
-- returns to it does so quietly, for nobody was told it had been left.
ALTER TABLE heartbeat_runtime ADD COLUMN interrupted TEXT NOT NULL DEFAULT '';
