-- Rate-limit buckets are soft state: losing them in a crash only refills
-- them. UNLOGGED spares every API request a WAL flush.
ALTER TABLE rate_limits SET UNLOGGED;
