-- A task's parties find their tasks by their own id; the state is filtered from there. With the
-- state in these keys every move rewrote both index entries (issue 14: a claim and a move were
-- the slowest statements of a task's round trip).
DROP INDEX tasks_sender;
DROP INDEX tasks_worker;
CREATE INDEX tasks_sender ON tasks (sender_id);
CREATE INDEX tasks_worker ON tasks (worker_id);
