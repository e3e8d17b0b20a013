-- Issue 34: teammates on demand. The operator grants an agent leave to spawn native agents
-- (never by default); each spawn is kept while it runs and after, for the bounds and the
-- console.
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
