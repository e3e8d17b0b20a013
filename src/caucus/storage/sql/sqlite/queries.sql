-- Named statements of the SQLite store (storage/queries.py loads them by name). Repositories
-- move here noun by noun (issue 14); the numbered files beside this one are migrations.

-- name: watch_credential_insert
INSERT INTO watch_credentials (hash, peer_id, kind, created_at, expires_at)
VALUES (:hash, :peer_id, :kind, :created_at, :expires_at);

-- name: watch_credential_keep_newest
-- Keeps the peer's `keep` newest credentials of one kind (a ticket's keep is 1).
DELETE FROM watch_credentials
WHERE peer_id = :peer_id AND kind = :kind AND hash NOT IN (
    SELECT hash FROM watch_credentials WHERE peer_id = :peer_id AND kind = :kind
    ORDER BY created_at DESC LIMIT :keep
);

-- name: watch_tickets_expire
DELETE FROM watch_credentials WHERE kind = 'ticket' AND expires_at <= :now;

-- name: watch_ticket_peer
SELECT peer_id FROM watch_credentials WHERE hash = :hash AND kind = 'ticket';

-- name: watch_credential_delete
DELETE FROM watch_credentials WHERE hash = :hash;

-- name: watch_key_peer
SELECT peer_id FROM watch_credentials WHERE hash = :hash AND kind = 'key';

-- name: watch_credentials_of_peer_delete
DELETE FROM watch_credentials WHERE peer_id = :peer_id;
