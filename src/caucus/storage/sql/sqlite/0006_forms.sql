-- Operator forms (issue 6): a bounded question to the operator, its answer or cancellation, and
-- the ledger record the answer became (decision_hash, set once the record is written).
CREATE TABLE forms (
    id            TEXT    PRIMARY KEY,
    asker_id      INTEGER NOT NULL,
    asker         TEXT    NOT NULL,
    audience      TEXT    NOT NULL,  -- 'all' or '#channel'
    title         TEXT    NOT NULL,
    fields        TEXT    NOT NULL,  -- JSON list of {key, label, type, options, required, allow_other}
    state         TEXT    NOT NULL CHECK (state IN ('pending', 'answered', 'canceled')),
    created_at    REAL    NOT NULL,
    updated_at    REAL    NOT NULL,
    answer        TEXT,              -- JSON object of field key to answer
    reason        TEXT,
    decision_hash TEXT
) WITHOUT ROWID;
CREATE INDEX forms_asker ON forms (asker_id, state);
CREATE INDEX forms_pending ON forms (created_at) WHERE state = 'pending';
CREATE INDEX forms_unrecorded ON forms (updated_at) WHERE state = 'answered' AND decision_hash IS NULL;
