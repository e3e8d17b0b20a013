-- Issue 47: who may read a message is decided by identity, never by a name (ADR 0033).
-- A direct message keeps the id of the peer it was routed to; search and a thread's messages
-- read it instead of the names in `delivered_to`, which a rename can take over.
ALTER TABLE messages ADD COLUMN recipient_id INTEGER;

-- What is known exactly of the messages stored before: a copy still in an inbox names its
-- recipient, and a task's items go to its worker (the task, its cancelation) or to its sender
-- (result, failure, question). Other old direct messages stay readable by their sender and
-- the operator only: their names cannot tell who held them.
UPDATE messages SET recipient_id = (SELECT d.peer_id FROM deliveries d WHERE d.seq = messages.seq)
WHERE target <> 'all' AND substr(target, 1, 1) <> '#'
  AND (SELECT count(*) FROM deliveries d WHERE d.seq = messages.seq) = 1;

UPDATE messages SET recipient_id = (
    SELECT CASE WHEN messages.kind IN ('task', 'task_canceled') THEN t.worker_id
                ELSE t.sender_id END
    FROM tasks t WHERE t.id = json_extract(messages.meta, '$.task_id')
)
WHERE recipient_id IS NULL AND meta IS NOT NULL AND json_valid(meta)
  AND kind IN ('task', 'task_canceled', 'result', 'failure', 'input_request');

-- Private channels: joining one takes the operator's invitation; its members alone see it.
ALTER TABLE channels ADD COLUMN private INTEGER NOT NULL DEFAULT 0;

CREATE TABLE channel_invites (
    channel    TEXT    NOT NULL,
    peer_id    INTEGER NOT NULL,
    invited_at REAL    NOT NULL,
    PRIMARY KEY (channel, peer_id)
) WITHOUT ROWID;

CREATE INDEX channel_invites_peer ON channel_invites (peer_id);

-- An agent's approvals channel carries whole tool calls and the operator's answers: private
-- from now on, whoever is in it now (the operator removes a stranger).
UPDATE channels SET private = 1 WHERE name LIKE '#approve-%';
