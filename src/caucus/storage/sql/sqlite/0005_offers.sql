-- The job board (issue 5): offers of work no particular peer was chosen for.
CREATE TABLE offers (
    id              TEXT    PRIMARY KEY,
    poster_id       INTEGER NOT NULL,
    poster          TEXT    NOT NULL,
    subject         TEXT,
    payload         TEXT    NOT NULL,
    required_skills TEXT    NOT NULL DEFAULT '[]',
    state           TEXT    NOT NULL CHECK (state IN ('open', 'assigned', 'completed',
                                                      'withdrawn', 'expired')),
    created_at      REAL    NOT NULL,
    updated_at      REAL    NOT NULL,
    expires_at      REAL    NOT NULL,
    winner          TEXT,
    task_id         TEXT
) WITHOUT ROWID;
CREATE INDEX offers_poster ON offers (poster_id, state);
CREATE INDEX offers_open ON offers (state, expires_at);

CREATE TABLE offer_claims (
    offer_id     TEXT    NOT NULL,
    claimant_id  INTEGER NOT NULL,
    claimant     TEXT    NOT NULL,
    note         TEXT,
    ts           REAL    NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('pending', 'selected', 'rejected',
                                                   'withdrawn')),
    PRIMARY KEY (offer_id, claimant_id)
) WITHOUT ROWID;

-- The task a selected offer became: its ending completes or re-opens the offer.
ALTER TABLE tasks ADD COLUMN offer_id TEXT;
