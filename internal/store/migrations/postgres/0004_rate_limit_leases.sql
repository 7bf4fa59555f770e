-- The size of the last lease taken from a bucket, returned with its new
-- TAT (see store.TakeToken).
ALTER TABLE rate_limits ADD COLUMN lease BIGINT NOT NULL DEFAULT 1;
