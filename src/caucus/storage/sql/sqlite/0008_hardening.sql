-- Names that differ only by case are one name to the people reading a roster (issue 12): the
-- hub refuses a case twin of a held name, and finds one through this index.
CREATE INDEX peers_held_name_nocase ON peers (name COLLATE NOCASE) WHERE state IN ('active', 'reaped');

-- What the hub is about to append to the decision ledger, written (durably) before the ledger
-- line is: after a crash between the line's fsync and the checkpoint's move, the records past
-- the checkpoint whose hashes are here are the hub's own, and the checkpoint moves on by itself.
CREATE TABLE ledger_intents (
    hash       TEXT PRIMARY KEY,
    created_at REAL NOT NULL
) WITHOUT ROWID;
