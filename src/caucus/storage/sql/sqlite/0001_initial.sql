-- Identities. A name is unique among active peers only: reaping releases it.
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
    ended_at    REAL
);
CREATE UNIQUE INDEX peers_active_name ON peers (name) WHERE state = 'active';
CREATE INDEX peers_state ON peers (state, last_seen);
CREATE INDEX peers_name ON peers (name);

-- Every routed message, in global order. seq never repeats, even after deletes.
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
    delivered_to TEXT    NOT NULL DEFAULT '[]',
    missed       TEXT    NOT NULL DEFAULT '[]'
);

-- One row per recipient until acknowledged. lease = the claim that last handed it out.
CREATE TABLE deliveries (
    peer_id        INTEGER NOT NULL,
    seq            INTEGER NOT NULL,
    delivery_count INTEGER NOT NULL DEFAULT 0,
    visible_at     REAL    NOT NULL DEFAULT 0,
    lease          INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (peer_id, seq)
) WITHOUT ROWID;

CREATE TABLE channels (
    name       TEXT PRIMARY KEY,
    topic      TEXT NOT NULL DEFAULT '',
    topic_by   TEXT,
    topic_at   REAL,
    created_at REAL NOT NULL
) WITHOUT ROWID;

CREATE TABLE channel_members (
    channel   TEXT    NOT NULL,
    peer_id   INTEGER NOT NULL,
    joined_at REAL    NOT NULL,
    PRIMARY KEY (channel, peer_id)
) WITHOUT ROWID;
CREATE INDEX channel_members_peer ON channel_members (peer_id);

CREATE TABLE idempotency (
    sender_id  INTEGER NOT NULL,
    key        TEXT    NOT NULL,
    created_at REAL    NOT NULL,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (sender_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_created ON idempotency (created_at);
