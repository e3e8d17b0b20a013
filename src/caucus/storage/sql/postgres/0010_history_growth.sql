-- Issue 53: what a read costs does not grow with the history kept.
-- The operator's task list (most recently changed first) and retention's ended tasks; each
-- party's tasks newest first; the job board and the forms newest first.
CREATE INDEX tasks_updated ON tasks (updated_at);
CREATE INDEX tasks_state ON tasks (state, updated_at);
DROP INDEX tasks_sender;
CREATE INDEX tasks_sender ON tasks (sender_id, created_at);
DROP INDEX tasks_worker;
CREATE INDEX tasks_worker ON tasks (worker_id, created_at);
CREATE INDEX offers_created ON offers (created_at);
CREATE INDEX offers_updated ON offers (updated_at);
CREATE INDEX forms_created ON forms (created_at);
CREATE INDEX forms_updated ON forms (updated_at);

-- Messages each agent sent, by name: counted once as the log grows (the maintenance round
-- follows it), never over the whole log at a read.
CREATE TABLE sent_counts (
    sender TEXT   PRIMARY KEY,
    sent   BIGINT NOT NULL
);

INSERT INTO sent_counts (sender, sent)
SELECT sender, count(*) FROM messages WHERE sender_id IS NOT NULL GROUP BY sender;

INSERT INTO room_state (key, value)
SELECT 'sent_counts', json_build_object('upto', COALESCE(MAX(seq), 0))::text FROM messages
ON CONFLICT (key) DO UPDATE SET value = excluded.value;
