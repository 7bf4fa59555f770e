-- The ping journal moves out of the database into append-only files beside
-- it (journal_files.go), so that applying it does not hold up the pings
-- being journaled. The tables record here, in the transaction that applies
-- them, the last batch they hold: a restart replays only the batches after
-- it. ping_journal stays for the batches a process of the version before
-- left in it, which the next start replays and deletes.
CREATE TABLE ping_journal_applied (
    only  INTEGER PRIMARY KEY CHECK (only = 1),
    batch INTEGER NOT NULL
) STRICT;
INSERT INTO ping_journal_applied (only, batch)
    VALUES (1, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'ping_journal'), 0));
