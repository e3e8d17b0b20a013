-- The operator control plane (issue 3).
-- lane 0 carries operator and control traffic, which pierces a pause; lane 1 carries chatter.
ALTER TABLE deliveries ADD COLUMN lane INTEGER NOT NULL DEFAULT 1;
-- Ephemeral deliveries (interrupt, reset) are dropped, not replayed, when the peer reconnects.
ALTER TABLE deliveries ADD COLUMN ephemeral INTEGER NOT NULL DEFAULT 0;
-- The operator paused delivery to this peer: only lane 0 reaches it.
ALTER TABLE peers ADD COLUMN delivery_paused INTEGER NOT NULL DEFAULT 0;
-- A closed channel refuses joins and sends.
ALTER TABLE channels ADD COLUMN closed_at REAL;
-- Room-wide operator state (mode, send budget), one JSON value per key.
CREATE TABLE room_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
