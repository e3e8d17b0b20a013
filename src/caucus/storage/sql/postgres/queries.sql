-- The PostgreSQL store's own named statements: those whose text differs between the stores, or
-- that exist only here; the ones both run as written are in ../shared/queries.sql
-- (storage/queries.py loads both by name; the repositories in storage/repos/ use them).
-- The numbered files beside this one are migrations.
-- A list parameter is an array (`= ANY(:x)`); a parameter that may be NULL in an `IS NULL`
-- test is CAST, since PostgreSQL cannot infer its type.

-- === migrations ====================================================================

-- name: commit_sync
-- What this transaction's commit waits for: the store's setting, or less for claims (ADR 0041).
SELECT current_setting('synchronous_commit');

-- name: migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL
);

-- name: migration_record
-- Formatted into the migration's own script (a file name's number and words, never input).
INSERT INTO schema_migrations (version, name, applied_at) VALUES (:version, :name, now());

-- === peers =========================================================================

-- name: peer_holder_any_case
-- Names are ASCII, which NOCASE folds.
SELECT * FROM peers WHERE lower(name) = lower(:name) AND state IN ('active', 'reaped') LIMIT 1;

-- name: peer_case_twin
SELECT name FROM peers
WHERE lower(name) = lower(:name) AND state IN ('active', 'reaped')
AND id IS DISTINCT FROM CAST(:except_id AS BIGINT)
LIMIT 1;

-- name: peers_in_states
SELECT * FROM peers WHERE state = ANY(:states) ORDER BY name, id;

-- name: peer_set_profile
UPDATE peers SET skills = COALESCE(CAST(:skills AS TEXT), skills),
    description = COALESCE(CAST(:description AS TEXT), description)
WHERE id = :id;

-- name: peer_touch
UPDATE peers SET last_seen = GREATEST(last_seen, :last_seen) WHERE id = :id;

-- === messages ======================================================================

-- name: message_insert
INSERT INTO messages (id, ts, sender_id, sender, target, kind, content, meta, thread, reply_to,
    reply_seq, reply_sender, delivered_to, missed, recipient_id)
VALUES (:id, :ts, :sender_id, :sender, :target, :kind, :content, :meta, :thread, :reply_to,
    :reply_seq, :reply_sender, :delivered_to, :missed, :recipient_id)
RETURNING seq;

-- name: message_insert_routed
-- The message and its deliveries in one statement: each statement is a round trip to the
-- server, and a send is the hub's commonest write.
WITH m AS (
    INSERT INTO messages (id, ts, sender_id, sender, target, kind, content, meta, thread,
        reply_to, reply_seq, reply_sender, delivered_to, missed, recipient_id)
    VALUES (:id, :ts, :sender_id, :sender, :target, :kind, :content, :meta, :thread, :reply_to,
        :reply_seq, :reply_sender, :delivered_to, :missed, :recipient_id)
    RETURNING seq
), d AS (
    INSERT INTO deliveries (peer_id, seq, lane, ephemeral)
    SELECT p, m.seq, :lane, :ephemeral FROM m, unnest(CAST(:peer_ids AS BIGINT[])) AS p
)
SELECT seq FROM m;

-- name: messages_insert_direct_many
-- Several direct messages in one statement (the sends a writer's batch holds, each found its
-- recipient as message_insert_direct does): one row per message in the order given, with the
-- peer it reaches (null: nobody holds the name) and its seq (null: the sender named itself,
-- and nothing was written for it).
WITH q AS (
    SELECT * FROM unnest(
        CAST(:ids AS TEXT[]), CAST(:tss AS DOUBLE PRECISION[]), CAST(:sender_ids AS BIGINT[]),
        CAST(:senders AS TEXT[]), CAST(:names AS TEXT[]), CAST(:targets AS TEXT[]),
        CAST(:kinds AS TEXT[]), CAST(:contents AS TEXT[]), CAST(:metas AS TEXT[]),
        CAST(:threads AS TEXT[]), CAST(:delivered AS TEXT[]), CAST(:self_ids AS BIGINT[]),
        CAST(:lanes AS INTEGER[]), CAST(:ephemerals AS INTEGER[]), CAST(:reply_tos AS TEXT[]),
        CAST(:reply_seqs AS BIGINT[]), CAST(:reply_senders AS TEXT[])
    ) WITH ORDINALITY AS q(id, ts, sender_id, sender, name, target, kind, content, meta,
        thread, delivered, self_id, lane, ephemeral, reply_to, reply_seq, reply_sender, ord)
), r AS (
    SELECT q.ord, p.id AS peer_id, p.name AS peer_name, p.state
    FROM q CROSS JOIN LATERAL (
        SELECT id, name, state FROM peers WHERE name = q.name AND state IN ('active', 'reaped')
        ORDER BY state = 'active' DESC, id DESC LIMIT 1
    ) p
), m AS (
    INSERT INTO messages (id, ts, sender_id, sender, target, kind, content, meta, thread,
        reply_to, reply_seq, reply_sender, delivered_to, missed, recipient_id)
    SELECT q.id, q.ts, q.sender_id, q.sender, q.target, q.kind, q.content, q.meta, q.thread,
        q.reply_to, q.reply_seq, q.reply_sender, q.delivered, CASE WHEN r.state = 'reaped' THEN q.delivered ELSE '[]' END,
        r.peer_id
    FROM q JOIN r ON r.ord = q.ord
    WHERE r.peer_id <> q.self_id
    ORDER BY q.ord
    RETURNING seq, id
), d AS (
    INSERT INTO deliveries (peer_id, seq, lane, ephemeral)
    SELECT r.peer_id, m.seq, q.lane, q.ephemeral
    FROM m JOIN q ON q.id = m.id JOIN r ON r.ord = q.ord
)
SELECT r.peer_id, r.peer_name, r.state, m.seq
FROM q LEFT JOIN r ON r.ord = q.ord LEFT JOIN m ON m.id = q.id
ORDER BY q.ord;

-- name: messages_after
SELECT * FROM messages
WHERE seq > :seq
  AND (CAST(:since AS DOUBLE PRECISION) IS NULL OR ts >= :since)
  AND (CAST(:until AS DOUBLE PRECISION) IS NULL OR ts < :until)
ORDER BY seq LIMIT :limit;

-- name: messages_before
-- Newest first, walking back from :before by the key (never the whole log to find a page).
-- Names need no JSON escaping, so the quoted name finds it in delivered_to.
SELECT * FROM messages
WHERE seq < COALESCE(CAST(:before AS BIGINT), 9223372036854775807)
  AND (CAST(:peer AS TEXT) IS NULL OR sender = :peer OR target = :peer
       OR strpos(delivered_to, :peer_json) > 0)
  AND (CAST(:channel AS TEXT) IS NULL OR target = :channel)
  AND (CAST(:kind AS TEXT) IS NULL OR kind = :kind)
ORDER BY seq DESC LIMIT :limit;

-- name: messages_before_matching
-- As messages_before, only those holding the words of :match_tsquery. The planner cannot tell
-- a rare word from a common one it has not sampled, and walking the log back for a rare one
-- read half a million rows; so the newest 20,000 before :before are walked (a common word is
-- met there), and only when they hold too few is the rest read through the word index, its
-- few matches sorted (`seq + 0`: neither the key's order nor its range, so not its walk).
WITH near AS MATERIALIZED (
    SELECT * FROM (
        SELECT * FROM messages
        WHERE seq < COALESCE(CAST(:before AS BIGINT), 9223372036854775807)
        ORDER BY seq DESC LIMIT 20000
    ) recent
    WHERE search @@ to_tsquery('english', :match_tsquery)
      AND (CAST(:peer AS TEXT) IS NULL OR sender = :peer OR target = :peer
           OR strpos(delivered_to, :peer_json) > 0)
      AND (CAST(:channel AS TEXT) IS NULL OR target = :channel)
      AND (CAST(:kind AS TEXT) IS NULL OR kind = :kind)
    ORDER BY seq DESC LIMIT :limit
)
SELECT * FROM near
UNION ALL
SELECT * FROM (
    SELECT * FROM messages
    WHERE search @@ to_tsquery('english', :match_tsquery)
      AND seq + 0 < (
          SELECT seq FROM messages
          WHERE seq < COALESCE(CAST(:before AS BIGINT), 9223372036854775807)
          ORDER BY seq DESC OFFSET 19999 LIMIT 1
      )
      AND (CAST(:peer AS TEXT) IS NULL OR sender = :peer OR target = :peer
           OR strpos(delivered_to, :peer_json) > 0)
      AND (CAST(:channel AS TEXT) IS NULL OR target = :channel)
      AND (CAST(:kind AS TEXT) IS NULL OR kind = :kind)
      AND (SELECT count(*) FROM near) < :limit
    ORDER BY seq + 0 DESC LIMIT :limit
) older
ORDER BY seq DESC LIMIT :limit;

-- name: read_budget_set
-- A costly read's time budget (`Engine.query`, issue 47): the server cancels the read's
-- statements past it, for the rest of the read's transaction only.
SELECT set_config('statement_timeout', :ms, true);

-- === search (issue 34) =============================================================
-- PostgreSQL keeps its index as each message is stored (0005_search.sql): nothing to follow.

-- name: search_upto
SELECT 0;

-- name: search_next_upto
SELECT CAST(NULL AS BIGINT);

-- name: search_unindexed
SELECT 0;

-- name: search_gone_cursor
SELECT 0;

-- name: search_gone_next
-- The GIN index forgets a purged row with it: nothing is queued.
SELECT CAST(NULL AS BIGINT) AS id, CAST(NULL AS BIGINT) AS seq, CAST(NULL AS TEXT) AS content
WHERE CAST(:after AS BIGINT) IS NULL AND CAST(:limit AS INTEGER) IS NULL AND false;

-- name: search_unindex
SELECT CAST(:seq AS BIGINT), CAST(:content AS TEXT) WHERE false;

-- name: search_gone_mark
SELECT CAST(:gone AS BIGINT) WHERE false;

-- name: search_gone_drop
SELECT CAST(:through AS BIGINT), CAST(:limit AS INTEGER) WHERE false;

-- name: search_gone_shrink
SELECT CAST(:through AS BIGINT), CAST(:limit AS INTEGER) WHERE false;

-- name: search_merge
SELECT CAST(:pages AS INTEGER) WHERE false;

-- name: messages_settle
-- After a bulk import (Engine.settle): hint bits, the visibility map and statistics set now,
-- not by autovacuum while the hub serves. Outside a transaction, as VACUUM must be.
VACUUM (ANALYZE) messages;

-- name: settle_checkpoint
-- ...and what the import and that VACUUM dirtied (gigabytes at ten million messages) written
-- out now: left to a checkpoint while the hub serves, its flush stalls the sends' commits.
-- A superuser's, or a role with pg_checkpoint's; without it the checkpoint comes on its own.
CHECKPOINT;

-- name: search_optimize
-- After a bulk import: the planner's statistics of the words (a rare word's filter then reads
-- the index's few matches, not the log backwards).
ANALYZE messages;

-- name: total_changes
SELECT 0;


-- name: search_messages
-- What the reader may read ({{reader_may_read}}). Relevance ranks the newest :window
-- matches; the newest first takes the newest :limit.
SELECT * FROM (
    SELECT m.*, ts_rank_cd(m.search, q) AS score
    FROM messages m, to_tsquery('english', :match_tsquery) q
    WHERE m.search @@ q
      AND (CAST(:sender AS TEXT) IS NULL OR m.sender = :sender)
      AND (CAST(:channel AS TEXT) IS NULL OR m.target = :channel)
      AND (CAST(:since AS DOUBLE PRECISION) IS NULL OR m.ts >= :since)
      AND (CAST(:until AS DOUBLE PRECISION) IS NULL OR m.ts < :until)
      AND (CAST(:kinds AS TEXT[]) IS NULL OR m.kind = ANY(:kinds))
      AND (CAST(:thread AS TEXT) IS NULL OR m.thread = :thread OR m.id = :thread)
      AND {{reader_may_read}}
    ORDER BY m.seq DESC LIMIT :window
) AS found
ORDER BY CASE WHEN :recent = 1 THEN seq END DESC, score DESC, seq DESC
LIMIT :limit;

-- === deliveries (the inbox) ========================================================

-- name: deliveries_visible
-- A claim skips rows another process is handing out this instant: never one delivery twice.
SELECT d.delivery_count, m.seq, m.id, m.ts, m.sender, m.target, m.kind, m.content, m.meta,
    m.thread, m.reply_to, m.reply_seq, m.reply_sender
FROM deliveries d JOIN messages m ON m.seq = d.seq
WHERE d.peer_id = :peer_id AND d.visible_at <= :now ORDER BY d.seq LIMIT :limit
FOR UPDATE OF d SKIP LOCKED;

-- name: deliveries_visible_priority
SELECT d.delivery_count, m.seq, m.id, m.ts, m.sender, m.target, m.kind, m.content, m.meta,
    m.thread, m.reply_to, m.reply_seq, m.reply_sender
FROM deliveries d JOIN messages m ON m.seq = d.seq
WHERE d.peer_id = :peer_id AND d.visible_at <= :now AND d.lane = 0 ORDER BY d.seq LIMIT :limit
FOR UPDATE OF d SKIP LOCKED;

-- name: deliveries_vacuum
-- Run by the hub as the table churns (storage/postgres_tidy.py), outside any transaction.
VACUUM (SKIP_LOCKED) deliveries;

-- name: deliveries_ack_claim_many
-- The receives a writer's batch holds, one per peer, in one statement, each as
-- deliveries_ack_claim: for every peer at least one row, `claimant` its id, with what it
-- acknowledged, when its next hidden delivery shows and the senders of the tasks whose items
-- it received (claimed here), and the message columns null when nothing was handed out to it.
-- Linear in the batch: what a step needs of another per peer is counted once, by peer, and
-- the acknowledged rows (still in this statement's snapshot) are told by the acknowledgement's
-- own condition, not looked up in `acked` for every row.
WITH q AS (
    SELECT q.*, (SELECT x.lease FROM deliveries x WHERE x.peer_id = q.peer_id AND x.seq = q.through)
        AS through_lease
    FROM unnest(
        CAST(:peer_ids AS BIGINT[]), CAST(:throughs AS BIGINT[]), CAST(:nows AS DOUBLE PRECISION[]),
        CAST(:limits AS INTEGER[]), CAST(:priority AS INTEGER[]),
        CAST(:visible_ats AS DOUBLE PRECISION[]), CAST(:leases AS BIGINT[])
    ) AS q(peer_id, through, now, lim, priority_only, visible_at, lease)
), acked AS (
    DELETE FROM deliveries d USING q
    WHERE d.peer_id = q.peer_id AND d.seq <= q.through AND d.delivery_count > 0
      AND d.lease = q.through_lease
    RETURNING d.peer_id, d.seq
), picked AS (
    SELECT p.peer_id, p.seq, q.visible_at, q.lease FROM q CROSS JOIN LATERAL (
        SELECT peer_id, seq FROM deliveries
        WHERE peer_id = q.peer_id AND visible_at <= q.now AND (q.priority_only = 0 OR lane = 0)
          AND NOT COALESCE(seq <= q.through AND delivery_count > 0 AND lease = q.through_lease, false)
        ORDER BY seq LIMIT q.lim
        FOR UPDATE SKIP LOCKED
    ) p
), handed AS (
    UPDATE deliveries d
    SET delivery_count = d.delivery_count + 1, visible_at = picked.visible_at,
        lease = picked.lease
    FROM picked WHERE d.peer_id = picked.peer_id AND d.seq = picked.seq
    RETURNING d.peer_id, d.seq, d.delivery_count - 1 AS delivery_count
), tasked AS (
    -- Receiving a task's item claims the task, as task_claim does (Tasks.claim_received).
    UPDATE tasks t SET state = 'in_progress', updated_at = q.now
    FROM handed h JOIN messages m ON m.seq = h.seq JOIN q ON q.peer_id = h.peer_id
    WHERE t.worker_id = h.peer_id AND t.state = 'pending' AND t.id = CASE WHEN m.kind = 'task'
        THEN CASE WHEN jsonb_typeof(CAST(m.meta AS JSONB) -> 'task_id') = 'string'
            THEN CAST(m.meta AS JSONB) ->> 'task_id' END END
    RETURNING t.id, t.worker, t.sender_id, h.peer_id AS claimant, q.now
), evented AS (
    INSERT INTO task_events (task_id, n, ts, state, actor, detail)
    SELECT x.id, (SELECT COALESCE(MAX(e.n), 0) + 1 FROM task_events e WHERE e.task_id = x.id),
        x.now, 'in_progress', x.worker, 'received'
    FROM tasked x
), picked_by AS (
    SELECT peer_id, COUNT(*) AS n FROM picked GROUP BY peer_id
), acked_by AS (
    SELECT peer_id, COUNT(*) AS n FROM acked GROUP BY peer_id
), tasked_by AS (
    SELECT claimant AS peer_id, array_agg(sender_id ORDER BY id) AS senders
    FROM tasked GROUP BY claimant
), counted AS (
    SELECT q.*, COALESCE(pb.n, 0) AS handed_out, COALESCE(ab.n, 0) AS acked, tb.senders
    FROM q LEFT JOIN picked_by pb ON pb.peer_id = q.peer_id
        LEFT JOIN acked_by ab ON ab.peer_id = q.peer_id
        LEFT JOIN tasked_by tb ON tb.peer_id = q.peer_id
), summary AS (
    SELECT c.peer_id, c.handed_out > 0 AND c.handed_out < c.lim AS drained, c.acked,
        -- Read unless the claim took its limit (more may be visible): when the next hidden
        -- delivery shows, those just handed out included (LEAST skips a NULL).
        CASE WHEN c.handed_out >= c.lim THEN NULL ELSE LEAST(
            CASE WHEN c.handed_out > 0 THEN c.visible_at END,
            (SELECT MIN(x.visible_at) FROM deliveries x
             WHERE x.peer_id = c.peer_id AND x.visible_at > c.now
               AND (c.priority_only = 0 OR x.lane = 0)
               AND NOT COALESCE(x.seq <= c.through AND x.delivery_count > 0
                                AND x.lease = c.through_lease, false)))
        END AS next_visible,
        c.senders AS task_senders
    FROM counted c
)
SELECT s.peer_id AS claimant, s.acked, s.next_visible, s.drained, s.task_senders,
    h.delivery_count,
    m.seq, m.id, m.ts, m.sender, m.target, m.kind, m.content, m.meta, m.thread, m.reply_to,
    m.reply_seq, m.reply_sender
FROM summary s
LEFT JOIN (handed h JOIN messages m ON m.seq = h.seq) ON h.peer_id = s.peer_id
ORDER BY s.peer_id, h.seq;

-- === channels ======================================================================

-- name: members_named
-- Every channel's present members (or one channel's, with :channel), by name.
SELECT cm.channel, p.name FROM channel_members cm JOIN peers p ON p.id = cm.peer_id
WHERE p.state IN ('active', 'reaped') AND (CAST(:channel AS TEXT) IS NULL OR cm.channel = :channel)
ORDER BY p.name;

-- === room state ====================================================================

-- name: room_state_for_update
SELECT value FROM room_state WHERE key = :key FOR UPDATE;

-- === tasks =========================================================================

-- name: task_for_update
-- Locked for the unit: two processes moving one task take turns.
SELECT * FROM tasks WHERE id = :id FOR UPDATE;

-- name: task_move
-- A conditional update: the task moves only from the state it was read in (one winner).
UPDATE tasks SET state = :to_state, updated_at = :now,
    result = COALESCE(CAST(:result AS TEXT), result), error = COALESCE(CAST(:error AS TEXT), error),
    question = COALESCE(CAST(:question AS TEXT), question),
    answer = COALESCE(CAST(:answer AS TEXT), answer)
WHERE id = :id AND state = :from_state;

-- === offers (the job board) ========================================================

-- name: offer_for_update
SELECT * FROM offers WHERE id = :id FOR UPDATE;

-- name: offers_in_state
SELECT * FROM offers WHERE (CAST(:state AS TEXT) IS NULL OR state = :state)
ORDER BY created_at DESC LIMIT :limit;

-- === operator forms and the ledger's intents =======================================

-- name: form_for_update
SELECT * FROM forms WHERE id = :id FOR UPDATE;

-- === retention =====================================================================

-- Only what is finished goes: a message no peer still has to acknowledge (no delivery row)
-- and no idempotency key still answers for; an ended task with its events; a settled offer
-- with its claims; a canceled form, or an answered one whose record is on the ledger.
-- name: purgeable_messages
-- Oldest first by age (an index range: nothing is read when nothing is old enough).
SELECT seq, ts FROM messages m WHERE ts < :before
AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.seq = m.seq)
AND NOT EXISTS (SELECT 1 FROM idempotency i WHERE i.seq = m.seq)
ORDER BY ts LIMIT :limit;

-- === wake-ups and leases (PostgreSQL only) ===========================================

-- name: next_lease
SELECT nextval('delivery_lease');

-- name: wake_notify
-- One per committed batch: the ids of the peers it queued deliveries for.
SELECT pg_notify('caucus_wake', :payload);

-- name: wake_listen
LISTEN caucus_wake;

-- name: signal_notify
SELECT pg_notify('caucus_signal', :payload);

-- name: signal_listen
LISTEN caucus_signal;

-- name: migrations_lock
-- Hub processes starting at once migrate one at a time (released at the end of the transaction).
SELECT pg_advisory_xact_lock(7262831);

-- name: messages_footprint
-- What the size bound reads (storage/postgres_size.py). The statistics count the rows live
-- once a VACUUM or ANALYZE ran since they started; after a reset (a crash, a copied database)
-- they count only the changes since, added to the catalog's count from before.
SELECT pg_database_size(current_database()) AS database,
       pg_total_relation_size(c.oid) AS total,
       pg_table_size(c.oid) AS stored,
       CASE WHEN c.reltuples < 0 OR COALESCE(s.last_vacuum, s.last_autovacuum, s.last_analyze,
                                             s.last_autoanalyze) IS NOT NULL
            THEN s.n_live_tup
            ELSE c.reltuples::bigint + s.n_tup_ins - s.n_tup_del END AS live
FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE c.oid = 'messages'::regclass;

-- name: message_row_bytes
-- What a message row stores, as stored (compressed, or out of line), averaged over rows spread
-- evenly across the whole log (256 lookups by number): neither the newest rows alone (a room's
-- recent messages may differ from its history) nor ANALYZE's widths (it measures a text
-- search vector by its words, not by what it stores). A column the schema adds belongs here.
WITH r AS (SELECT min(seq) AS lo, max(seq) AS hi FROM messages)
SELECT avg(pg_column_size(seq) + pg_column_size(id) + pg_column_size(ts)
    + coalesce(pg_column_size(sender_id), 0) + pg_column_size(sender) + pg_column_size(target)
    + pg_column_size(kind) + pg_column_size(content) + coalesce(pg_column_size(meta), 0)
    + coalesce(pg_column_size(thread), 0) + coalesce(pg_column_size(reply_to), 0)
    + coalesce(pg_column_size(reply_seq), 0) + coalesce(pg_column_size(reply_sender), 0)
    + pg_column_size(delivered_to) + pg_column_size(missed) + pg_column_size(search)
    + coalesce(pg_column_size(recipient_id), 0))::float8
FROM messages m
WHERE m.seq IN (SELECT generate_series(r.lo, r.hi, greatest((r.hi - r.lo) / 256, 1)) FROM r);

-- name: stats_flush
-- The writer's statistics reach the server when its backend next goes idle, not a second
-- later: the size bound reads them next (PostgreSQL 15 has the call).
DO $$ BEGIN
    IF current_setting('server_version_num')::int >= 150000 THEN
        PERFORM pg_stat_force_next_flush();
    END IF;
END $$;
