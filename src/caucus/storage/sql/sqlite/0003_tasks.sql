-- Tasks (issue 5): a message with a lifecycle. States follow A2A: pending = submitted,
-- in_progress = working, input_required = input-required, completed, failed, canceled,
-- plus expired (an unclaimed or parked task past its TTL).
CREATE TABLE tasks (
    id          TEXT    PRIMARY KEY,
    sender_id   INTEGER NOT NULL,
    sender      TEXT    NOT NULL,
    worker_id   INTEGER NOT NULL,
    worker      TEXT    NOT NULL,
    subject     TEXT,
    payload     TEXT    NOT NULL,
    thread      TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('pending', 'in_progress', 'input_required',
                                                  'completed', 'failed', 'canceled', 'expired')),
    created_at  REAL    NOT NULL,
    updated_at  REAL    NOT NULL,
    expires_at  REAL    NOT NULL,
    visible_at  REAL,               -- unused: a claim lapses by updated_at (ADR 0005)
    result      TEXT,
    error       TEXT,
    question    TEXT,
    answer      TEXT
) WITHOUT ROWID;
CREATE INDEX tasks_sender ON tasks (sender_id, state);
CREATE INDEX tasks_worker ON tasks (worker_id, state);
CREATE INDEX tasks_open ON tasks (state, expires_at) WHERE state IN ('pending', 'in_progress', 'input_required');

-- Every change of a task, in order: its history.
CREATE TABLE task_events (
    task_id TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    ts      REAL    NOT NULL,
    state   TEXT    NOT NULL,
    actor   TEXT    NOT NULL,
    detail  TEXT,
    PRIMARY KEY (task_id, n)
) WITHOUT ROWID;
