-- The SQLite schema the numbered migrations beside this file arrive at (issue 14): what a new
-- database looks like after the last one. tests/migration/test_schema_files.py proves that
-- migrating an empty file converges to it; a new migration updates this file too.

CREATE TABLE announcements (
    seq       INTEGER PRIMARY KEY,   -- the routed message's seq
    sender_id INTEGER,               -- NULL for the operator
    sender    TEXT    NOT NULL,
    ts        REAL    NOT NULL
);

CREATE INDEX announcements_sender ON announcements (sender_id, ts);

CREATE INDEX announcements_ts ON announcements (ts);

CREATE TABLE channel_members (
    channel   TEXT    NOT NULL,
    peer_id   INTEGER NOT NULL,
    joined_at REAL    NOT NULL,
    PRIMARY KEY (channel, peer_id)
) WITHOUT ROWID;

CREATE INDEX channel_members_peer ON channel_members (peer_id);

CREATE TABLE channel_invites (
    channel    TEXT    NOT NULL,
    peer_id    INTEGER NOT NULL,
    invited_at REAL    NOT NULL,
    PRIMARY KEY (channel, peer_id)
) WITHOUT ROWID;

CREATE INDEX channel_invites_peer ON channel_invites (peer_id);

CREATE TABLE channels (
    name       TEXT PRIMARY KEY,
    topic      TEXT NOT NULL DEFAULT '',
    topic_by   TEXT,
    topic_at   REAL,
    created_at REAL NOT NULL,
    closed_at  REAL,
    private    INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE deliveries (
    peer_id        INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    delivery_count INTEGER NOT NULL DEFAULT 0,
    visible_at     REAL    NOT NULL DEFAULT 0,
    lease          INTEGER NOT NULL DEFAULT 0,
    lane           INTEGER NOT NULL DEFAULT 1,
    ephemeral      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (peer_id, seq)
) WITHOUT ROWID;

CREATE INDEX deliveries_seq ON deliveries (seq);

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
    decision_hash TEXT,
    tool_call     TEXT               -- JSON {tool, arguments, files, annotations}: an approval's call
) WITHOUT ROWID;

CREATE INDEX forms_asker ON forms (asker_id, state);

CREATE INDEX forms_created ON forms (created_at);

CREATE INDEX forms_updated ON forms (updated_at);

CREATE INDEX forms_pending ON forms (created_at) WHERE state = 'pending';

CREATE INDEX forms_unrecorded ON forms (updated_at)
    WHERE state IN ('answered', 'canceled') AND decision_hash IS NULL;

CREATE TABLE idempotency (
    sender_id  INTEGER NOT NULL,
    key        TEXT    NOT NULL,
    created_at REAL    NOT NULL,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (sender_id, key)
) WITHOUT ROWID;

CREATE INDEX idempotency_created ON idempotency (created_at);

CREATE INDEX idempotency_seq ON idempotency (seq);

CREATE TABLE ledger_intents (
    hash       TEXT PRIMARY KEY,
    created_at REAL NOT NULL
) WITHOUT ROWID;

CREATE TABLE mcp_handles (
    handle_hash BLOB    PRIMARY KEY,
    peer_id     INTEGER NOT NULL,
    created_at  REAL    NOT NULL
) WITHOUT ROWID;

CREATE INDEX mcp_handles_peer ON mcp_handles (peer_id, created_at);

CREATE TABLE messages (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT    NOT NULL UNIQUE,
    ts           REAL    NOT NULL,
    sender_id    INTEGER,
    sender       TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    meta         TEXT,
    thread       TEXT,
    reply_to     TEXT,
    reply_seq    INTEGER,         -- the number of the message replied to, and its sender
    reply_sender TEXT,
    delivered_to TEXT    NOT NULL DEFAULT '[]',
    missed       TEXT    NOT NULL DEFAULT '[]',
    recipient_id INTEGER           -- a direct message's recipient (ADR 0033)
);

CREATE INDEX messages_thread ON messages (thread) WHERE thread IS NOT NULL;

CREATE INDEX messages_ts ON messages (ts);

CREATE TABLE search_gone (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    seq     INTEGER NOT NULL,
    content TEXT    NOT NULL
);

CREATE TABLE search_gone_size (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    bytes INTEGER NOT NULL
);

INSERT INTO search_gone_size (id, bytes) VALUES (1, 0);

CREATE TRIGGER messages_gone AFTER DELETE ON messages
BEGIN
    INSERT INTO search_gone (seq, content) VALUES (old.seq, old.content);
    UPDATE search_gone_size SET bytes = bytes + length(CAST(old.content AS BLOB)) WHERE id = 1;
END;

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

CREATE TABLE offer_dependencies (
    offer_id   TEXT NOT NULL,
    depends_on TEXT NOT NULL,
    PRIMARY KEY (offer_id, depends_on)
) WITHOUT ROWID;

CREATE INDEX offer_dependencies_on ON offer_dependencies (depends_on);

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
    task_id         TEXT,
    priority        INTEGER NOT NULL DEFAULT 2,
    blocked         INTEGER NOT NULL DEFAULT 0,
    on_failure      TEXT    NOT NULL DEFAULT 'cancel'
) WITHOUT ROWID;

CREATE INDEX offers_open ON offers (state, expires_at);

CREATE INDEX offers_poster ON offers (poster_id, state);

CREATE INDEX offers_created ON offers (created_at);

CREATE INDEX offers_updated ON offers (updated_at);

CREATE TABLE peers (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL,
    token_hash  BLOB    NOT NULL UNIQUE,
    state       TEXT    NOT NULL CHECK (state IN ('active', 'reaped', 'left', 'kicked', 'forgotten')),
    skills      TEXT    NOT NULL DEFAULT '[]',
    description TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL DEFAULT '',
    status_at   REAL,
    created_at  REAL    NOT NULL,
    last_seen   REAL    NOT NULL,
    reaped_at   REAL,
    ended_at    REAL,
    delivery_paused INTEGER NOT NULL DEFAULT 0,
    offline_at  REAL
);

CREATE UNIQUE INDEX peers_held_name ON peers (name) WHERE state IN ('active', 'reaped');

CREATE INDEX peers_held_name_nocase ON peers (name COLLATE NOCASE) WHERE state IN ('active', 'reaped');

CREATE INDEX peers_name ON peers (name);

CREATE INDEX peers_state ON peers (state, last_seen);

CREATE TABLE reservations (
    id          TEXT    PRIMARY KEY,
    holder_id   INTEGER NOT NULL,
    holder      TEXT    NOT NULL,
    pattern     TEXT    NOT NULL,
    exclusive   INTEGER NOT NULL,
    reason      TEXT,
    created_at  REAL    NOT NULL,
    expires_at  REAL    NOT NULL
);

CREATE INDEX reservations_expiry ON reservations (expires_at);

CREATE INDEX reservations_holder ON reservations (holder_id, pattern);

CREATE TABLE room_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE sent_counts (
    sender TEXT    PRIMARY KEY,
    sent   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE spawn_grants (
    peer_id    INTEGER PRIMARY KEY,
    peer       TEXT    NOT NULL,
    teammates  INTEGER NOT NULL,
    given_at   REAL    NOT NULL
);

CREATE TABLE spawns (
    id          TEXT    PRIMARY KEY,
    spawner_id  INTEGER NOT NULL,
    spawner     TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    profile     TEXT    NOT NULL,
    tools       TEXT    NOT NULL DEFAULT '[]',
    prompt      TEXT    NOT NULL,
    process     TEXT    NOT NULL,
    launch_id   TEXT,
    record      TEXT,
    state       TEXT    NOT NULL CHECK (state IN ('running', 'ended')),
    ended_by    TEXT,
    exit_code   INTEGER,
    started_at  REAL    NOT NULL,
    ended_at    REAL
);

CREATE INDEX spawns_running ON spawns (spawner_id) WHERE state = 'running';

CREATE INDEX spawns_started ON spawns (started_at);

CREATE TABLE task_dependencies (
    task_id    TEXT NOT NULL,
    depends_on TEXT NOT NULL,
    PRIMARY KEY (task_id, depends_on)
) WITHOUT ROWID;

CREATE INDEX task_dependencies_on ON task_dependencies (depends_on);

CREATE TABLE task_events (
    task_id TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    ts      REAL    NOT NULL,
    state   TEXT    NOT NULL,
    actor   TEXT    NOT NULL,
    detail  TEXT,
    PRIMARY KEY (task_id, n)
) WITHOUT ROWID;

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
    answer      TEXT,
    offer_id    TEXT,
    priority    INTEGER NOT NULL DEFAULT 2,
    blocked     INTEGER NOT NULL DEFAULT 0,
    on_failure  TEXT    NOT NULL DEFAULT 'cancel',
    waits_on    INTEGER NOT NULL DEFAULT 0,
    dependents  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE INDEX tasks_open ON tasks (state, expires_at) WHERE state IN ('pending', 'in_progress', 'input_required');

CREATE INDEX tasks_ready ON tasks (worker_id, priority, created_at)
    WHERE state = 'pending' AND blocked = 0;

CREATE INDEX tasks_sender ON tasks (sender_id, created_at);

CREATE INDEX tasks_state ON tasks (state, updated_at);

CREATE INDEX tasks_updated ON tasks (updated_at);

CREATE INDEX tasks_worker ON tasks (worker_id, created_at);

CREATE TABLE watch_credentials (
    hash       BLOB    PRIMARY KEY,
    peer_id    INTEGER NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('key', 'ticket')),
    created_at REAL    NOT NULL,
    expires_at REAL
) WITHOUT ROWID;

CREATE INDEX watch_credentials_peer ON watch_credentials (peer_id, kind, created_at);
