-- Issue 34: task dependencies and ready work. A task may wait on others (`blocked_by`); until
-- they are done it is stored blocked, its item not yet sent to its worker, and it does not
-- expire (its time to live starts when it is released). `dependents` counts the tasks that
-- wait on this one, so a move of a task nobody waits on asks nothing more.
ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 2;
ALTER TABLE tasks ADD COLUMN blocked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN on_failure TEXT NOT NULL DEFAULT 'cancel';
ALTER TABLE tasks ADD COLUMN waits_on INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN dependents INTEGER NOT NULL DEFAULT 0;

CREATE TABLE task_dependencies (
    task_id    TEXT NOT NULL,  -- the task that waits
    depends_on TEXT NOT NULL,  -- the task it waits on
    PRIMARY KEY (task_id, depends_on)
) WITHOUT ROWID;

CREATE INDEX task_dependencies_on ON task_dependencies (depends_on);

CREATE INDEX tasks_ready ON tasks (worker_id, priority, created_at)
    WHERE state = 'pending' AND blocked = 0;

-- An offer may wait on tasks too: posted but not announced, nor open to claims, until they
-- are done (its time to live then starts).
ALTER TABLE offers ADD COLUMN priority INTEGER NOT NULL DEFAULT 2;
ALTER TABLE offers ADD COLUMN blocked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE offers ADD COLUMN on_failure TEXT NOT NULL DEFAULT 'cancel';

CREATE TABLE offer_dependencies (
    offer_id   TEXT NOT NULL,
    depends_on TEXT NOT NULL,
    PRIMARY KEY (offer_id, depends_on)
) WITHOUT ROWID;
CREATE INDEX offer_dependencies_on ON offer_dependencies (depends_on);
