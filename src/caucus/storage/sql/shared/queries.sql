-- Named statements both stores run exactly as written (storage/queries.py loads this file
-- first, then the dialect's own: sql/sqlite/queries.sql, sql/postgres/queries.sql). A name is
-- defined in one place only: a statement that must differ lives in both dialect files, not
-- here. `:name` parameters; SQLite binds them by position, PostgreSQL by name.

-- === who may read a message (issue 47, ADR 0033) ======================================

-- fragment: reader_may_read
-- `domain.visibility.may_read` over a message row `m`: the reader (NULL: the operator or the
-- observer, who read everything) reads what it sent, a direct message routed to its identity,
-- a broadcast, and the history of each channel it is a member of now. By id, never a name.
CAST(:reader AS BIGINT) IS NULL OR m.sender_id = :reader OR m.recipient_id = :reader
OR m.target = 'all'
OR m.target IN (SELECT channel FROM channel_members WHERE peer_id = :reader)

-- name: messages_readable_after
-- What the reader may read after :seq, oldest first (an agent's export of its transcript).
SELECT m.* FROM messages m
WHERE m.seq > :seq
  AND (CAST(:since AS DOUBLE PRECISION) IS NULL OR m.ts >= :since)
  AND (CAST(:until AS DOUBLE PRECISION) IS NULL OR m.ts < :until)
  AND {{reader_may_read}}
ORDER BY m.seq LIMIT :limit;

-- name: thread_messages
-- A thread's newest :limit messages the reader may read, newest first.
SELECT m.* FROM messages m
WHERE (m.thread = :thread OR m.id = :thread) AND {{reader_may_read}}
ORDER BY m.seq DESC LIMIT :limit;

-- === migrations ====================================================================

-- name: migrations_done
SELECT version FROM schema_migrations ORDER BY version;

-- === peers =========================================================================

-- name: peer_insert
INSERT INTO peers (name, token_hash, state, skills, description, created_at, last_seen)
VALUES (:name, :token_hash, 'active', :skills, :description, :now, :now)
RETURNING *;

-- name: peer_by_id
SELECT * FROM peers WHERE id = :id;

-- name: peer_by_token
SELECT * FROM peers WHERE token_hash = :token_hash;

-- name: peer_holder
SELECT * FROM peers WHERE name = :name AND state IN ('active', 'reaped');

-- name: peers_held_count
SELECT COUNT(*) FROM peers WHERE state IN ('active', 'reaped');

-- name: peer_recipient
-- The peer a direct message to a name reaches: the active holder, else the one away.
SELECT id, name, state FROM peers WHERE name = :name AND state IN ('active', 'reaped')
ORDER BY state = 'active' DESC, id DESC LIMIT 1;

-- name: peers_everyone_but
SELECT id, name, state FROM peers WHERE state IN ('active', 'reaped') AND id != :sender_id;

-- name: peer_rename
UPDATE peers SET name = :name WHERE id = :id;

-- name: peer_set_status
UPDATE peers SET status = :status, status_at = :status_at WHERE id = :id;

-- name: peer_set_paused
UPDATE peers SET delivery_paused = :paused WHERE id = :id;

-- name: peer_set_offline
UPDATE peers SET state = 'reaped', reaped_at = :now, offline_at = :now
WHERE id = :id AND state IN ('active', 'reaped') AND offline_at IS NULL;

-- name: peer_revive
UPDATE peers SET state = 'active', reaped_at = NULL, offline_at = NULL, last_seen = :now
WHERE id = :id AND state = 'reaped';

-- name: peers_idle
SELECT * FROM peers WHERE state = 'active' AND last_seen < :idle_before;

-- name: peer_reap
UPDATE peers SET state = 'reaped', reaped_at = :now WHERE id = :id AND state = 'active';

-- name: peers_grace_over
SELECT * FROM peers WHERE state = 'reaped' AND reaped_at < :reaped_before;

-- name: peer_end
UPDATE peers SET state = :state, ended_at = :now WHERE id = :id;

-- name: peer_present
SELECT 1 FROM peers WHERE id = :id AND state IN ('active', 'reaped');

-- name: peer_active
SELECT 1 FROM peers WHERE id = :id AND state = 'active';

-- name: handle_insert
INSERT INTO mcp_handles (handle_hash, peer_id, created_at) VALUES (:hash, :peer_id, :now);

-- name: handle_keep_newest
DELETE FROM mcp_handles WHERE peer_id = :peer_id AND handle_hash NOT IN (
    SELECT handle_hash FROM mcp_handles WHERE peer_id = :peer_id
    ORDER BY created_at DESC LIMIT :keep
);

-- name: handle_peer
SELECT peer_id FROM mcp_handles WHERE handle_hash = :hash;

-- name: handles_of_peer_delete
DELETE FROM mcp_handles WHERE peer_id = :peer_id;

-- === watch keys and tickets (ADR 0011) =============================================

-- name: watch_credential_insert
INSERT INTO watch_credentials (hash, peer_id, kind, created_at, expires_at)
VALUES (:hash, :peer_id, :kind, :created_at, :expires_at);

-- name: watch_credential_keep_newest
-- Keeps the peer's `keep` newest credentials of one kind (a ticket's keep is 1).
DELETE FROM watch_credentials
WHERE peer_id = :peer_id AND kind = :kind AND hash NOT IN (
    SELECT hash FROM watch_credentials WHERE peer_id = :peer_id AND kind = :kind
    ORDER BY created_at DESC LIMIT :keep
);

-- name: watch_tickets_expire
DELETE FROM watch_credentials WHERE kind = 'ticket' AND expires_at <= :now;

-- name: watch_ticket_peer
SELECT peer_id FROM watch_credentials WHERE hash = :hash AND kind = 'ticket';

-- name: watch_credential_delete
DELETE FROM watch_credentials WHERE hash = :hash;

-- name: watch_key_peer
SELECT peer_id FROM watch_credentials WHERE hash = :hash AND kind = 'key';

-- name: watch_credentials_of_peer_delete
DELETE FROM watch_credentials WHERE peer_id = :peer_id;

-- === messages ======================================================================

-- name: message_parent
-- The message a reply answers, by its id, if the one replying may read it.
SELECT m.id, m.thread, m.seq, m.sender FROM messages m WHERE m.id = :id AND {{reader_may_read}};

-- name: message_parent_by_seq
-- The message a reply answers, by the number a model sees, if the one replying may read it.
SELECT m.id, m.thread, m.seq, m.sender FROM messages m WHERE m.seq = :seq AND {{reader_may_read}};

-- name: message_import
-- History carried from another room (`caucus db import`): archived, so nobody's inbox holds
-- it; identities do not travel (no sender or recipient id, so only the operator reads its
-- directs); a reply takes the number its parent has here, if the parent came along. A message
-- already here (by id) is skipped, so an import run twice adds nothing the second time.
INSERT INTO messages (id, ts, sender, target, kind, content, meta, thread, reply_to, reply_seq,
    reply_sender, delivered_to)
VALUES (:id, :ts, :sender, :target, :kind, :content, :meta, :thread, :reply_to,
    (SELECT p.seq FROM messages p WHERE p.id = :reply_to), :reply_sender, :delivered_to)
ON CONFLICT (id) DO NOTHING;

-- name: message_by_seq
SELECT * FROM messages WHERE seq = :seq;

-- name: messages_last_seq
SELECT COALESCE(MAX(seq), 0) FROM messages;

-- name: messages_slice_end
-- Where a slice of at most :limit messages after :upto ends (NULL: none stored after it).
SELECT max(seq) FROM (SELECT seq FROM messages WHERE seq > :upto ORDER BY seq LIMIT :limit) s;

-- === what each agent sent (issue 53) ===============================================
-- Counted as the log grows (`History.count_more`, a slice per maintenance step), so a read
-- adds only the few messages stored since.

-- name: sent_counts_all
SELECT sender, sent FROM sent_counts;

-- name: sent_counts_add
INSERT INTO sent_counts (sender, sent)
SELECT sender, COUNT(*) FROM messages
WHERE seq > :upto AND seq <= :through AND sender_id IS NOT NULL GROUP BY sender
ON CONFLICT (sender) DO UPDATE SET sent = sent_counts.sent + excluded.sent;

-- name: messages_by_sender_after
SELECT sender, COUNT(*) AS sent FROM messages
WHERE seq > :upto AND sender_id IS NOT NULL GROUP BY sender;

-- === deliveries (the inbox) ========================================================

-- name: delivery_insert
INSERT INTO deliveries (peer_id, seq, lane, ephemeral) VALUES (:peer_id, :seq, :lane, :ephemeral);

-- name: deliveries_next_visible
SELECT MIN(visible_at) FROM deliveries WHERE peer_id = :peer_id AND visible_at > :now;

-- name: deliveries_next_visible_priority
SELECT MIN(visible_at) FROM deliveries
WHERE peer_id = :peer_id AND visible_at > :now AND lane = 0;

-- name: delivery_hand_out
UPDATE deliveries SET delivery_count = delivery_count + 1, visible_at = :visible_at, lease = :lease
WHERE peer_id = :peer_id AND seq = :seq;

-- name: delivery_ack
DELETE FROM deliveries WHERE peer_id = :peer_id AND seq = :seq AND delivery_count > 0;

-- name: deliveries_ack_through
-- Only the batch that held `through`: a batch the client never saw (a lost response) must not
-- be acknowledged by a later cursor. It comes back after its visibility timeout.
DELETE FROM deliveries WHERE peer_id = :peer_id AND seq <= :through AND delivery_count > 0
AND lease = (SELECT lease FROM deliveries WHERE peer_id = :peer_id AND seq = :through);

-- name: deliveries_drop_ephemeral
DELETE FROM deliveries WHERE peer_id = :peer_id AND ephemeral = 1;

-- name: deliveries_release
UPDATE deliveries SET visible_at = 0
WHERE peer_id = :peer_id AND delivery_count > 0 AND visible_at > :now;

-- name: deliveries_count_of_peer
SELECT COUNT(*) FROM deliveries WHERE peer_id = :peer_id;

-- name: delivery_newest_of_peer
SELECT m.seq, m.id, m.ts, m.sender, m.target, m.kind, m.content, m.meta, m.thread, m.reply_to,
    m.reply_seq, m.reply_sender
FROM deliveries d JOIN messages m ON m.seq = d.seq
WHERE d.peer_id = :peer_id ORDER BY d.seq DESC LIMIT 1;

-- name: deliveries_count
-- Counted up to :cap: a count is a walk over every row, and the console asks each second.
SELECT COUNT(*) FROM (SELECT 1 FROM deliveries LIMIT :cap) AS held;

-- name: deliveries_of_peer_delete
DELETE FROM deliveries WHERE peer_id = :peer_id;

-- name: deliveries_of_announcements_since
-- A newcomer gets the recent announcements once.
INSERT INTO deliveries (peer_id, seq) SELECT :peer_id, seq FROM announcements
WHERE ts >= :since ORDER BY seq;

-- === idempotency ===================================================================

-- name: idempotency_hit
SELECT seq FROM idempotency WHERE sender_id = :sender_id AND key = :key AND created_at >= :since;

-- name: idempotency_record
INSERT INTO idempotency (sender_id, key, created_at, seq) VALUES (:sender_id, :key, :ts, :seq)
ON CONFLICT (sender_id, key) DO UPDATE SET created_at = excluded.created_at, seq = excluded.seq;

-- name: idempotency_purge
DELETE FROM idempotency WHERE created_at < :before;

-- === channels ======================================================================

-- name: channel_insert
INSERT INTO channels (name, created_at, private) VALUES (:name, :now, :private)
ON CONFLICT (name) DO NOTHING;

-- name: channel_closed_at
SELECT name, closed_at, private FROM channels WHERE name = :name;

-- name: channel_set_private
UPDATE channels SET private = :private WHERE name = :name;

-- name: invite_insert
INSERT INTO channel_invites (channel, peer_id, invited_at) VALUES (:channel, :peer_id, :now)
ON CONFLICT (channel, peer_id) DO NOTHING;

-- name: invite_is
SELECT 1 FROM channel_invites WHERE channel = :channel AND peer_id = :peer_id;

-- name: invite_delete
DELETE FROM channel_invites WHERE channel = :channel AND peer_id = :peer_id;

-- name: invites_of_peer_delete
DELETE FROM channel_invites WHERE peer_id = :peer_id;

-- name: channel_by_name
SELECT * FROM channels WHERE name = :name;

-- name: channels_all
SELECT * FROM channels ORDER BY name;

-- name: channel_close
UPDATE channels SET closed_at = COALESCE(closed_at, :now) WHERE name = :name;

-- name: channel_reopen
UPDATE channels SET closed_at = NULL WHERE name = :name AND closed_at IS NOT NULL;

-- name: channel_set_topic
UPDATE channels SET topic = :topic, topic_by = :by, topic_at = :now WHERE name = :name;

-- name: member_insert
INSERT INTO channel_members (channel, peer_id, joined_at) VALUES (:channel, :peer_id, :now)
ON CONFLICT (channel, peer_id) DO NOTHING;

-- name: member_is
SELECT 1 FROM channel_members WHERE channel = :channel AND peer_id = :peer_id;

-- name: member_delete
DELETE FROM channel_members WHERE channel = :channel AND peer_id = :peer_id;

-- name: memberships_count
SELECT COUNT(*) FROM channel_members WHERE peer_id = :peer_id;

-- name: memberships_of_peer
SELECT channel FROM channel_members WHERE peer_id = :peer_id ORDER BY channel;

-- name: memberships_of_peer_delete
DELETE FROM channel_members WHERE peer_id = :peer_id;

-- name: members_ids
SELECT peer_id FROM channel_members WHERE channel = :channel;

-- name: members_delete
DELETE FROM channel_members WHERE channel = :channel;

-- name: members_but
SELECT p.id, p.name, p.state FROM channel_members cm JOIN peers p ON p.id = cm.peer_id
WHERE cm.channel = :channel AND p.id != :sender_id AND p.state IN ('active', 'reaped');

-- === room state ====================================================================

-- name: room_state_all
SELECT key, value FROM room_state;

-- name: room_state_get
SELECT value FROM room_state WHERE key = :key;

-- name: room_state_insert_missing
INSERT INTO room_state (key, value) VALUES (:key, :value) ON CONFLICT (key) DO NOTHING;

-- name: room_state_set
INSERT INTO room_state (key, value) VALUES (:key, :value)
ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- === announcements =================================================================

-- name: announcements_recent
SELECT MAX(ts) AS last, COUNT(*) AS count FROM announcements
WHERE sender_id = :sender_id AND ts > :since;

-- name: announcement_insert
INSERT INTO announcements (seq, sender_id, sender, ts) VALUES (:seq, :sender_id, :sender, :ts);

-- === tasks =========================================================================

-- name: task_insert
INSERT INTO tasks (id, sender_id, sender, worker_id, worker, subject, payload, thread, state,
    created_at, updated_at, expires_at, offer_id, priority, blocked, on_failure)
VALUES (:id, :sender_id, :sender, :worker_id, :worker, :subject, :payload, :thread, 'pending',
    :now, :now, :expires_at, :offer_id, :priority, :blocked, :on_failure);

-- name: task_by_id
SELECT * FROM tasks WHERE id = :id;

-- name: task_requeue
UPDATE tasks SET state = 'pending', visible_at = NULL, updated_at = :now
WHERE id = :id AND state = 'in_progress';

-- name: task_claim
-- Receiving a task's item claims the task, in the same transaction as the receive.
UPDATE tasks SET state = 'in_progress', updated_at = :now
WHERE id = :id AND worker_id = :worker_id AND state = 'pending'
RETURNING worker, sender_id;

-- name: task_event_insert
INSERT INTO task_events (task_id, n, ts, state, actor, detail)
VALUES (:task_id, (SELECT COALESCE(MAX(n), 0) + 1 FROM task_events WHERE task_id = :task_id),
    :ts, :state, :actor, :detail);

-- name: task_events_of
SELECT ts, state, actor, detail FROM task_events WHERE task_id = :task_id ORDER BY n;

-- name: tasks_sent_by
-- A party's tasks newest first, walking its index (never every task ever sent).
SELECT * FROM tasks WHERE sender_id = :peer_id
  AND (CAST(:state AS TEXT) IS NULL OR state = :state)
ORDER BY created_at DESC LIMIT :limit;

-- name: tasks_worked_by
SELECT * FROM tasks WHERE worker_id = :peer_id
  AND (CAST(:state AS TEXT) IS NULL OR state = :state)
ORDER BY created_at DESC LIMIT :limit;

-- name: tasks_all
-- Every peer's tasks, most recently changed first, walking the index.
SELECT * FROM tasks ORDER BY updated_at DESC LIMIT :limit;

-- name: tasks_in_state
SELECT * FROM tasks WHERE state = :state ORDER BY updated_at DESC LIMIT :limit;

-- name: tasks_silent
SELECT * FROM tasks WHERE state = 'in_progress' AND updated_at < :silent_before;

-- name: tasks_of_ended_workers
-- Open tasks whose worker left, was kicked, or was forgotten after its grace: nobody will
-- ever work them.
SELECT t.* FROM tasks t JOIN peers p ON p.id = t.worker_id
WHERE t.state IN ('pending', 'in_progress', 'input_required')
AND p.state IN ('left', 'kicked', 'forgotten');

-- name: task_event_once
-- A hub note on a task, written once however often the sweep meets it.
INSERT INTO task_events (task_id, n, ts, state, actor, detail)
SELECT :task_id, (SELECT COALESCE(MAX(n), 0) + 1 FROM task_events WHERE task_id = :task_id),
    :ts, :state, :actor, :detail
WHERE NOT EXISTS (SELECT 1 FROM task_events WHERE task_id = :task_id AND detail = :detail);

-- name: tasks_stale
-- A blocked task does not expire: its time to live starts when it is released.
SELECT * FROM tasks WHERE state IN ('pending', 'input_required') AND expires_at < :now
AND blocked = 0;

-- === task dependencies (issue 34) ==================================================

-- name: task_dependency_insert
INSERT INTO task_dependencies (task_id, depends_on) VALUES (:task_id, :depends_on)
ON CONFLICT (task_id, depends_on) DO NOTHING;

-- name: task_dependents_add
UPDATE tasks SET dependents = dependents + 1 WHERE id = :id;

-- name: task_waits_on_count
UPDATE tasks SET waits_on = (SELECT count(*) FROM task_dependencies WHERE task_id = :id)
WHERE id = :id;

-- name: task_dependencies_of
-- What a task waits on, with each one's state and who its parties are.
SELECT t.id, t.state, t.sender_id, t.worker_id FROM task_dependencies d
JOIN tasks t ON t.id = d.depends_on WHERE d.task_id = :task_id ORDER BY t.created_at, t.id;

-- name: task_dependents_blocked
-- The blocked tasks that wait on this one.
SELECT t.* FROM task_dependencies d JOIN tasks t ON t.id = d.task_id
WHERE d.depends_on = :task_id AND t.state = 'pending' AND t.blocked = 1 ORDER BY t.created_at;

-- name: task_release
UPDATE tasks SET blocked = 0, updated_at = :now, expires_at = :expires_at
WHERE id = :id AND state = 'pending' AND blocked = 1;

-- name: tasks_ready
-- What a worker can start now: its pending tasks nothing holds back, most urgent first.
SELECT * FROM tasks WHERE worker_id = :worker_id AND state = 'pending' AND blocked = 0
ORDER BY priority, created_at LIMIT :limit;

-- === offers (the job board) ========================================================

-- name: offer_insert
INSERT INTO offers (id, poster_id, poster, subject, payload, required_skills, state, created_at,
    updated_at, expires_at, priority, blocked, on_failure)
VALUES (:id, :poster_id, :poster, :subject, :payload, :required_skills, 'open', :now, :now,
    :expires_at, :priority, :blocked, :on_failure);

-- name: offer_dependency_insert
INSERT INTO offer_dependencies (offer_id, depends_on) VALUES (:offer_id, :depends_on)
ON CONFLICT (offer_id, depends_on) DO NOTHING;

-- name: offer_dependencies_of
SELECT t.id, t.state FROM offer_dependencies d JOIN tasks t ON t.id = d.depends_on
WHERE d.offer_id = :offer_id ORDER BY t.created_at, t.id;

-- name: offers_waiting_on
-- The blocked offers that wait on a task.
SELECT o.* FROM offer_dependencies d JOIN offers o ON o.id = d.offer_id
WHERE d.depends_on = :task_id AND o.state = 'open' AND o.blocked = 1 ORDER BY o.created_at;

-- name: offer_release
-- A blocked offer opened: its time to live, as long as it was asked, starts now.
UPDATE offers SET blocked = 0, updated_at = :now, expires_at = :now + (expires_at - created_at)
WHERE id = :id AND state = 'open' AND blocked = 1;

-- name: offer_by_id
SELECT * FROM offers WHERE id = :id;

-- name: offers_open_of_poster
SELECT COUNT(*) FROM offers
WHERE poster_id = :poster_id AND state IN ('open', 'assigned') AND expires_at >= :now;

-- name: offer_assigned_from_task
SELECT * FROM offers WHERE task_id = :task_id AND state = 'assigned';

-- name: offer_assign
UPDATE offers SET state = 'assigned', winner = :winner, task_id = :task_id, updated_at = :now
WHERE id = :id AND state = 'open';

-- name: offer_set_state
UPDATE offers SET state = :state, updated_at = :now WHERE id = :id;

-- name: offer_reopen
-- An assignment that ended without a result: open again (or expired) with no winner.
UPDATE offers SET state = :state, winner = NULL, task_id = NULL, updated_at = :now WHERE id = :id;

-- name: offers_expire
UPDATE offers SET state = 'expired', updated_at = :now
WHERE state = 'open' AND blocked = 0 AND expires_at < :now;

-- name: claim_upsert
INSERT INTO offer_claims (offer_id, claimant_id, claimant, note, ts, state)
VALUES (:offer_id, :claimant_id, :claimant, :note, :ts, 'pending')
ON CONFLICT (offer_id, claimant_id)
DO UPDATE SET state = 'pending', note = excluded.note, ts = excluded.ts
WHERE offer_claims.state != 'pending';

-- name: claims_of_offer
SELECT claimant, note, ts, state FROM offer_claims WHERE offer_id = :offer_id ORDER BY ts;

-- name: claims_select
UPDATE offer_claims SET state = CASE WHEN claimant = :winner THEN 'selected' ELSE 'rejected' END
WHERE offer_id = :offer_id AND state = 'pending';

-- name: claims_withdraw
UPDATE offer_claims SET state = 'withdrawn' WHERE offer_id = :offer_id AND state = 'pending';

-- name: claim_reject
UPDATE offer_claims SET state = 'rejected' WHERE offer_id = :offer_id AND claimant = :claimant;

-- === operator forms and the ledger's intents =======================================

-- name: form_insert
INSERT INTO forms (
    id, asker_id, asker, audience, title, fields, state, created_at, updated_at, tool_call
)
VALUES (
    :id, :asker_id, :asker, :audience, :title, :fields, 'pending', :created_at, :updated_at,
    :tool_call
);

-- name: form_by_id
SELECT * FROM forms WHERE id = :id;

-- name: form_same_pending
SELECT * FROM forms WHERE asker_id = :asker_id AND state = 'pending' AND title = :title
AND audience = :audience AND fields = :fields;

-- name: forms_pending_of_asker
SELECT COUNT(*) FROM forms WHERE asker_id = :asker_id AND state = 'pending';

-- name: forms_all
SELECT * FROM forms ORDER BY created_at DESC LIMIT :limit;

-- name: forms_in_state
SELECT * FROM forms WHERE state = :state ORDER BY created_at LIMIT :limit;

-- name: form_settle
-- From pending only: two operators racing get one winner.
UPDATE forms SET state = :state, answer = :answer, reason = :reason, updated_at = :now
WHERE id = :id AND state = 'pending';

-- name: forms_unrecorded
SELECT * FROM forms WHERE state IN ('answered', 'canceled') AND decision_hash IS NULL
ORDER BY updated_at, id
LIMIT :limit;

-- name: form_recorded_latest
SELECT decision_hash FROM forms WHERE decision_hash IS NOT NULL
ORDER BY updated_at DESC, id DESC LIMIT 1;

-- name: form_mark_recorded
UPDATE forms SET decision_hash = :hash WHERE id = :id AND decision_hash IS NULL;

-- name: ledger_intent_insert
INSERT INTO ledger_intents (hash, created_at) VALUES (:hash, :now) ON CONFLICT (hash) DO NOTHING;

-- name: ledger_intents_all
SELECT hash FROM ledger_intents;

-- name: ledger_intents_clear
DELETE FROM ledger_intents;

-- === retention =====================================================================

-- Each is an index range of what is old enough, in no order (every one of them goes; sorting
-- them would read them all to take a slice).
-- name: purgeable_tasks
SELECT id FROM tasks WHERE state IN ('completed', 'failed', 'canceled', 'expired')
AND updated_at < :before LIMIT :limit;

-- name: purgeable_offers
SELECT id FROM offers WHERE state IN ('completed', 'withdrawn', 'expired')
AND updated_at < :before LIMIT :limit;

-- name: purgeable_forms
SELECT id FROM forms WHERE state IN ('answered', 'canceled') AND decision_hash IS NOT NULL
AND updated_at < :before LIMIT :limit;

-- name: message_delete
DELETE FROM messages WHERE seq = :id;

-- name: announcement_delete
DELETE FROM announcements WHERE seq = :id;

-- name: task_events_delete
DELETE FROM task_events WHERE task_id = :id;

-- name: task_delete
DELETE FROM tasks WHERE id = :id;

-- name: offer_claims_delete
DELETE FROM offer_claims WHERE offer_id = :id;

-- name: offer_delete
DELETE FROM offers WHERE id = :id;

-- name: form_delete
DELETE FROM forms WHERE id = :id;


-- === reservations (advisory file leases, issue 34) ========================================

-- name: reservation_insert
INSERT INTO reservations (id, holder_id, holder, pattern, exclusive, reason, created_at,
    expires_at)
VALUES (:id, :holder_id, :holder, :pattern, :exclusive, :reason, :now, :expires_at);

-- name: reservation_update
UPDATE reservations SET exclusive = :exclusive, reason = :reason, expires_at = :expires_at
WHERE id = :id AND holder_id = :holder_id;

-- name: reservations_live
-- What stands: unexpired, and held by a peer who is here (a departed, kicked or reaped
-- holder's are void at once; the sweep deletes them).
SELECT r.id, r.holder, r.pattern, r.exclusive, r.reason, r.created_at, r.expires_at
FROM reservations r JOIN peers p ON p.id = r.holder_id
WHERE r.expires_at > :now AND p.state = 'active'
ORDER BY r.created_at, r.id;

-- name: reservations_live_of_holder
SELECT id, holder, pattern, exclusive, reason, created_at, expires_at FROM reservations
WHERE holder_id = :holder_id AND expires_at > :now
ORDER BY created_at, id;

-- name: reservation_delete
DELETE FROM reservations WHERE id = :id AND holder_id = :holder_id;

-- name: reservation_renew
UPDATE reservations SET expires_at = :expires_at
WHERE id = :id AND holder_id = :holder_id AND expires_at > :now;

-- name: reservations_sweep
DELETE FROM reservations
WHERE expires_at <= :now OR holder_id NOT IN (SELECT id FROM peers WHERE state = 'active');


-- === teammates on demand (spawn grants and spawns, issue 34) ===============================

-- name: spawn_grant_set
INSERT INTO spawn_grants (peer_id, peer, teammates, given_at)
VALUES (:peer_id, :peer, :teammates, :now)
ON CONFLICT (peer_id) DO UPDATE
SET peer = excluded.peer, teammates = excluded.teammates, given_at = excluded.given_at;

-- name: spawn_grant_delete
DELETE FROM spawn_grants WHERE peer_id = :peer_id;

-- name: spawn_grant_get
SELECT peer, teammates, given_at FROM spawn_grants WHERE peer_id = :peer_id;

-- name: spawn_grants_here
-- The grants of agents still here (one who left or was kicked keeps none that matters).
SELECT g.peer, g.teammates, g.given_at
FROM spawn_grants g JOIN peers p ON p.id = g.peer_id
WHERE p.state IN ('active', 'reaped')
ORDER BY g.peer;

-- name: spawn_insert
INSERT INTO spawns (id, spawner_id, spawner, name, profile, tools, prompt, process, state,
    started_at)
VALUES (:id, :spawner_id, :spawner, :name, :profile, :tools, :prompt, :process, 'running',
    :now);

-- name: spawn_launched
UPDATE spawns SET launch_id = :launch_id, record = :record WHERE id = :id;

-- name: spawn_end
UPDATE spawns SET state = 'ended', ended_by = :ended_by, exit_code = :exit_code,
    ended_at = :now
WHERE id = :id AND state = 'running';

-- name: spawns_end_running
-- Every teammate the room still counts as running, ended at once (a hub that restarted
-- alone on its database ran them all, and its children did not outlive it).
UPDATE spawns SET state = 'ended', ended_by = :ended_by, ended_at = :now
WHERE state = 'running';

-- name: spawn_get
SELECT * FROM spawns WHERE id = :id;

-- name: spawns_running_count
SELECT count(*) AS n FROM spawns WHERE state = 'running';

-- name: spawns_running_count_of
SELECT count(*) AS n FROM spawns WHERE state = 'running' AND spawner_id = :spawner_id;

-- name: spawns_running_of_spawner
SELECT * FROM spawns WHERE state = 'running' AND spawner = :spawner ORDER BY started_at;

-- name: spawns_recent
SELECT * FROM spawns ORDER BY started_at DESC, id DESC LIMIT :limit;

-- name: spawns_recent_of
SELECT * FROM spawns WHERE spawner_id = :spawner_id ORDER BY started_at DESC, id DESC
LIMIT :limit;

-- name: spawns_forget
DELETE FROM spawns WHERE state = 'ended' AND ended_at < :before;
