-- Issue 47: who may read a message is decided by identity, never by a name (ADR 0033).
-- A direct message keeps the id of the peer it was routed to; search and a thread's messages
-- read it instead of the names in `delivered_to`, which a rename can take over.
ALTER TABLE messages ADD COLUMN recipient_id BIGINT;

-- What is known exactly of the messages stored before: a copy still in an inbox names its
-- recipient, and a task's items go to its worker (the task, its cancelation) or to its sender
-- (result, failure, question). Other old direct messages stay readable by their sender and
-- the operator only: their names cannot tell who held them.
UPDATE messages m SET recipient_id = d.peer_id
FROM (SELECT seq, min(peer_id) AS peer_id FROM deliveries GROUP BY seq HAVING count(*) = 1) d
WHERE d.seq = m.seq AND m.target <> 'all' AND left(m.target, 1) <> '#';

UPDATE messages m SET recipient_id =
    CASE WHEN m.kind IN ('task', 'task_canceled') THEN t.worker_id ELSE t.sender_id END
FROM tasks t
WHERE m.recipient_id IS NULL AND m.meta IS NOT NULL AND m.meta LIKE '{%'
  AND m.kind IN ('task', 'task_canceled', 'result', 'failure', 'input_request')
  AND t.id = CAST(m.meta AS jsonb) ->> 'task_id';

-- Private channels: joining one takes the operator's invitation; its members alone see it.
ALTER TABLE channels ADD COLUMN private INTEGER NOT NULL DEFAULT 0;

CREATE TABLE channel_invites (
    channel    TEXT             NOT NULL,
    peer_id    BIGINT           NOT NULL,
    invited_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (channel, peer_id)
);
CREATE INDEX channel_invites_peer ON channel_invites (peer_id);

-- An agent's approvals channel carries whole tool calls and the operator's answers: private
-- from now on, whoever is in it now (the operator removes a stranger).
UPDATE channels SET private = 1 WHERE name LIKE '#approve-%';
