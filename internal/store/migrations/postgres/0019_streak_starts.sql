-- A confirmed outage counts from the first failed check of the streak that
-- confirmed it, and a recovery from the first passing check of its streak:
-- each monitor's runtime keeps when its streaks began (0: no streak, or
-- one begun before this migration, which then counts from its next check).
ALTER TABLE monitor_runtime ADD COLUMN downs_from BIGINT NOT NULL DEFAULT 0;
ALTER TABLE monitor_runtime ADD COLUMN ups_from BIGINT NOT NULL DEFAULT 0;
-- A state change dated before it was confirmed keeps both times: at, when
-- the state began, and confirmed_at, when it was confirmed (0: at at).
ALTER TABLE state_changes ADD COLUMN confirmed_at BIGINT NOT NULL DEFAULT 0;
