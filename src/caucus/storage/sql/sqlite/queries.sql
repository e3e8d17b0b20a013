-- The SQLite store's own named statements: those whose text differs between the stores, or
-- that exist only here; the ones both run as written are in ../shared/queries.sql
-- (storage/queries.py loads both by name; the repositories in storage/repos/ use them).
-- The numbered files beside this one are migrations.
-- A list parameter is JSON text, read with json_each.

-- === migrations ====================================================================

-- name: migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL
);

-- name: migration_record
-- Formatted into the migration's own script (a file name's number and words, never input).
INSERT INTO schema_migrations (version, name, applied_at)
VALUES ({version}, '{name}', datetime('now'));

-- name: begin_immediate
BEGIN IMMEDIATE;

-- name: begin
BEGIN;

-- name: commit
COMMIT;

-- name: rollback
ROLLBACK;

-- name: savepoint
SAVEPOINT op;

-- name: rollback_to_savepoint
ROLLBACK TO op;

-- name: release_savepoint
RELEASE op;

-- name: schema_objects
SELECT COUNT(*) FROM sqlite_master;

-- name: commit_sync
-- What this transaction's commit waits for: the store's setting, or less for claims (ADR 0041).
PRAGMA synchronous;

-- name: last_lease
SELECT COALESCE(MAX(lease), 0) FROM deliveries;

-- === peers =========================================================================

-- name: peer_holder_any_case
-- Names are ASCII, which NOCASE folds.
SELECT * FROM peers WHERE name = :name COLLATE NOCASE AND state IN ('active', 'reaped') LIMIT 1;

-- name: peer_case_twin
SELECT name FROM peers
WHERE name = :name COLLATE NOCASE AND state IN ('active', 'reaped') AND id IS NOT :except_id
LIMIT 1;

-- name: peers_in_states
SELECT * FROM peers WHERE state IN (SELECT value FROM json_each(:states)) ORDER BY name, id;

-- name: peer_set_profile
UPDATE peers SET skills = COALESCE(:skills, skills),
    description = COALESCE(:description, description)
WHERE id = :id;

-- name: peer_touch
UPDATE peers SET last_seen = MAX(last_seen, :last_seen) WHERE id = :id;

-- === messages ======================================================================

-- name: message_insert
INSERT INTO messages (id, ts, sender_id, sender, target, kind, content, meta, thread, reply_to,
    reply_seq, reply_sender, delivered_to, missed, recipient_id)
VALUES (:id, :ts, :sender_id, :sender, :target, :kind, :content, :meta, :thread, :reply_to,
    :reply_seq, :reply_sender, :delivered_to, :missed, :recipient_id);

-- name: messages_after
SELECT * FROM messages
WHERE seq > :seq AND (:since IS NULL OR ts >= :since) AND (:until IS NULL OR ts < :until)
ORDER BY seq LIMIT :limit;

-- name: messages_before
-- Newest first, walking back from :before by the key (never the whole log to find a page).
-- Names need no JSON escaping, so the quoted name finds it in delivered_to.
SELECT * FROM messages
WHERE seq < COALESCE(:before, 9223372036854775807)
  AND (:peer IS NULL OR sender = :peer OR target = :peer OR instr(delivered_to, :peer_json) > 0)
  AND (:channel IS NULL OR target = :channel)
  AND (:kind IS NULL OR kind = :kind)
ORDER BY seq DESC LIMIT :limit;

-- name: messages_before_matching
-- As messages_before, only those holding the words of :match_fts: through the search index,
-- walking its matches back from :before.
SELECT m.* FROM search.messages_fts JOIN messages m ON m.seq = messages_fts.rowid
WHERE messages_fts MATCH :match_fts
  AND messages_fts.rowid < COALESCE(:before, 9223372036854775807)
  AND (:peer IS NULL OR m.sender = :peer OR m.target = :peer
       OR instr(m.delivered_to, :peer_json) > 0)
  AND (:channel IS NULL OR m.target = :channel)
  AND (:kind IS NULL OR m.kind = :kind)
ORDER BY messages_fts.rowid DESC LIMIT :limit;

-- === search (issue 34) =============================================================

-- The index lives in a file of its own, attached as `search` (storage/sqlite_index.py): its
-- upkeep never holds the room's writer. It holds no text: a message's words are read from
-- the log when it is indexed, and from `search_gone` when it is purged.

-- name: search_upto
SELECT COALESCE((SELECT upto FROM search.search_state WHERE id = 1), 0);

-- name: search_next_upto
-- Where a batch of at most :limit messages after :upto ends (NULL: none to index).
SELECT max(seq) FROM (SELECT seq FROM messages WHERE seq > :upto ORDER BY seq LIMIT :limit);

-- name: search_index
INSERT INTO search.messages_fts (rowid, content)
SELECT seq, content FROM main.messages WHERE seq > :upto AND seq <= :through;

-- name: search_mark
INSERT INTO search.search_state (id, upto) VALUES (1, :upto)
ON CONFLICT (id) DO UPDATE SET upto = excluded.upto;

-- name: search_gone_cursor
-- Every purged message up to this `search_gone` id is out of the index.
SELECT COALESCE((SELECT gone FROM search.search_state WHERE id = 1), 0);

-- name: search_gone_next
SELECT id, seq, content FROM main.search_gone WHERE id > :after ORDER BY id LIMIT :limit;

-- name: search_unindex
-- A contentless index forgets a message when told the words it was indexed with.
INSERT INTO search.messages_fts (messages_fts, rowid, content) VALUES ('delete', :seq, :content);

-- name: search_gone_mark
INSERT INTO search.search_state (id, upto, gone) VALUES (1, 0, :gone)
ON CONFLICT (id) DO UPDATE SET gone = excluded.gone;

-- name: search_gone_shrink
-- What the index has forgotten leaves the log's side (the room's writer), :limit at a time:
-- first its size...
UPDATE search_gone_size SET bytes = max(0, bytes - COALESCE((SELECT sum(length(CAST(content AS BLOB)))
    FROM (SELECT content FROM search_gone WHERE id <= :through ORDER BY id LIMIT :limit)), 0))
WHERE id = 1;

-- name: search_gone_drop
-- ...then the words themselves.
DELETE FROM search_gone
WHERE id IN (SELECT id FROM search_gone WHERE id <= :through ORDER BY id LIMIT :limit);

-- name: search_gone_bytes
SELECT COALESCE((SELECT bytes FROM search_gone_size WHERE id = 1), 0);

-- name: search_gone_newest
SELECT COALESCE(MAX(id), 0) FROM search_gone;

-- name: search_file_setup
-- The index's file, made on first use: incremental auto-vacuum before any table, then WAL.
PRAGMA search.auto_vacuum=INCREMENTAL;
PRAGMA search.journal_mode=WAL;
CREATE VIRTUAL TABLE IF NOT EXISTS search.messages_fts USING fts5(
    content, content='', tokenize='porter unicode61'
);
CREATE TABLE IF NOT EXISTS search.search_state (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    upto INTEGER NOT NULL,
    gone INTEGER NOT NULL DEFAULT 0
);
INSERT INTO search.messages_fts (messages_fts, rank) VALUES ('automerge', 0);
INSERT INTO search.messages_fts (messages_fts, rank) VALUES ('crisismerge', 100);

-- name: search_file_reset
-- An index that is not this log's (ahead of it: the room's file was replaced) starts over.
INSERT INTO search.messages_fts (messages_fts) VALUES ('delete-all');
DELETE FROM search.search_state;

-- name: search_attach
ATTACH DATABASE :path AS search;

-- name: search_synchronous
PRAGMA search.synchronous={level};

-- name: search_state_row
SELECT * FROM search.search_state WHERE id = 1;


-- name: search_merge
-- About :pages pages of merging the index's segments (the maintenance round's slice; the index
-- never merges on its own: 0019_search_merges.sql).
INSERT INTO search.messages_fts (messages_fts, rank) VALUES ('merge', :pages);

-- name: search_optimize
-- Every segment merged into one (after a bulk import).
INSERT INTO search.messages_fts (messages_fts) VALUES ('optimize');

-- name: total_changes
SELECT total_changes();

-- name: search_unindexed
SELECT count(*) FROM messages WHERE seq > :upto;

-- name: search_messages
-- What the reader may read ({{reader_may_read}}). Relevance ranks the newest :window matches
-- (ranking every match of a word in most messages would take seconds); the newest first
-- takes the newest :limit.
SELECT * FROM (
    SELECT m.*, bm25(messages_fts) AS score
    FROM search.messages_fts JOIN messages m ON m.seq = messages_fts.rowid
    WHERE messages_fts MATCH :match_fts
      AND (:sender IS NULL OR m.sender = :sender)
      AND (:channel IS NULL OR m.target = :channel)
      AND (:since IS NULL OR m.ts >= :since)
      AND (:until IS NULL OR m.ts < :until)
      AND (:kinds IS NULL OR m.kind IN (SELECT value FROM json_each(:kinds)))
      AND (:thread IS NULL OR m.thread = :thread OR m.id = :thread)
      AND {{reader_may_read}}
    ORDER BY messages_fts.rowid DESC LIMIT :window
)
ORDER BY CASE WHEN :recent = 1 THEN seq END DESC, score, seq DESC
LIMIT :limit;

-- === deliveries (the inbox) ========================================================

-- name: deliveries_visible
SELECT d.delivery_count, m.seq, m.id, m.ts, m.sender, m.target, m.kind, m.content, m.meta,
    m.thread, m.reply_to, m.reply_seq, m.reply_sender
FROM deliveries d JOIN messages m ON m.seq = d.seq
WHERE d.peer_id = :peer_id AND d.visible_at <= :now ORDER BY d.seq LIMIT :limit;

-- name: deliveries_visible_priority
SELECT d.delivery_count, m.seq, m.id, m.ts, m.sender, m.target, m.kind, m.content, m.meta,
    m.thread, m.reply_to, m.reply_seq, m.reply_sender
FROM deliveries d JOIN messages m ON m.seq = d.seq
WHERE d.peer_id = :peer_id AND d.visible_at <= :now AND d.lane = 0 ORDER BY d.seq LIMIT :limit;

-- === channels ======================================================================

-- name: members_named
-- Every channel's present members (or one channel's, with :channel), by name.
SELECT cm.channel, p.name FROM channel_members cm JOIN peers p ON p.id = cm.peer_id
WHERE p.state IN ('active', 'reaped') AND (:channel IS NULL OR cm.channel = :channel)
ORDER BY p.name;

-- === room state ====================================================================

-- name: room_state_for_update
SELECT value FROM room_state WHERE key = :key;

-- === tasks =========================================================================

-- name: task_for_update
-- (SQLite has one writer: a write unit's read is already exclusive.)
SELECT * FROM tasks WHERE id = :id;

-- name: task_move
-- A conditional update: the task moves only from the state it was read in (one winner).
UPDATE tasks SET state = :to_state, updated_at = :now,
    result = COALESCE(:result, result), error = COALESCE(:error, error),
    question = COALESCE(:question, question), answer = COALESCE(:answer, answer)
WHERE id = :id AND state = :from_state;

-- === offers (the job board) ========================================================

-- name: offer_for_update
SELECT * FROM offers WHERE id = :id;

-- name: offers_in_state
SELECT * FROM offers WHERE (:state IS NULL OR state = :state) ORDER BY created_at DESC
LIMIT :limit;

-- === operator forms and the ledger's intents =======================================

-- name: form_for_update
SELECT * FROM forms WHERE id = :id;

-- === retention =====================================================================

-- Only what is finished goes: a message no peer still has to acknowledge (no delivery row)
-- and no idempotency key still answers for; an ended task with its events; a settled offer
-- with its claims; a canceled form, or an answered one whose record is on the ledger.
-- name: purgeable_messages
-- Oldest first by age (an index range: nothing is read when nothing is old enough), each
-- checked against the inbox and the idempotency keys by index.
SELECT m.seq, m.ts FROM messages m WHERE m.ts < :before
AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.seq = m.seq)
AND NOT EXISTS (SELECT 1 FROM idempotency i WHERE i.seq = m.seq)
ORDER BY m.ts, m.seq LIMIT :limit;

-- === the file (SQLite only) ========================================================

-- name: page_count
PRAGMA page_count;

-- name: freelist_count
PRAGMA freelist_count;

-- name: page_size
PRAGMA page_size;

-- name: auto_vacuum
PRAGMA auto_vacuum;

-- name: auto_vacuum_incremental
PRAGMA auto_vacuum=INCREMENTAL;

-- name: vacuum
VACUUM;

-- name: incremental_vacuum
PRAGMA incremental_vacuum({pages});

-- name: journal_mode_wal
PRAGMA journal_mode=WAL;

-- name: journal_size_limit
-- A WAL that a purge grew is cut back to this when a checkpoint restarts it (64 MiB), so no
-- slice of retention needs a truncating checkpoint of its own.
PRAGMA journal_size_limit=67108864;

-- name: synchronous
PRAGMA synchronous={level};

-- name: busy_timeout
PRAGMA busy_timeout=5000;

-- name: query_only
PRAGMA query_only=ON;

-- name: wal_checkpoint
PRAGMA wal_checkpoint(TRUNCATE);
