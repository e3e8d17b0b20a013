-- Identities that survive restarts (issue 11). A name is held by its peer while it is active
-- and while it is away (reaped, or offline after a goodbye) within its grace period: only that
-- peer's credentials get it back. A database from before this rule may hold a reaped peer
-- beside an active one of the same name, or several reaped ones: the newest holder keeps the
-- name and the older ones are forgotten, as their grace would have ended them.
UPDATE peers SET state = 'forgotten', ended_at = COALESCE(reaped_at, last_seen)
WHERE state = 'reaped' AND EXISTS (
    SELECT 1 FROM peers newer
    WHERE newer.name = peers.name AND newer.id != peers.id
      AND (newer.state = 'active' OR (newer.state = 'reaped' AND newer.id > peers.id))
);
DELETE FROM deliveries WHERE peer_id IN (SELECT id FROM peers WHERE state = 'forgotten');
DELETE FROM channel_members WHERE peer_id IN (SELECT id FROM peers WHERE state = 'forgotten');
DROP INDEX peers_active_name;
CREATE UNIQUE INDEX peers_held_name ON peers (name) WHERE state IN ('active', 'reaped');

-- When a peer's session ended with a goodbye (it is reaped at once and shows as offline).
ALTER TABLE peers ADD COLUMN offline_at REAL;

-- State handles for MCP clients without a session (2026-07-28): a short server-minted secret
-- that stands for one peer, stored hashed like tokens. They end with the peer.
CREATE TABLE mcp_handles (
    handle_hash BLOB    PRIMARY KEY,
    peer_id     INTEGER NOT NULL,
    created_at  REAL    NOT NULL
) WITHOUT ROWID;
CREATE INDEX mcp_handles_peer ON mcp_handles (peer_id, created_at);
