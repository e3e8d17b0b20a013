// The side panels: channels and floors, tasks and the job board, decisions, health, controls.

import { PAUSE_WHILE_TYPING } from "./composer.js";
import { TaskGraph, hasEdges } from "./graph.js";
import { DeliberationBody } from "./deliberation.js";
import { age, bytes, clock, colourOf, plural, short, stamp } from "./format.js";
import { html, useState } from "./ui.js";

export function Channels({ state, observer, act }) {
  const channels = Object.values(state.channels).sort((a, b) => a.name.localeCompare(b.name));
  const floors = Object.values(state.floors).filter((f) => f.holder || f.hands.length);
  return html`
    <section class="panel" aria-labelledby="floors-title">
      <h2 id="floors-title">Floors</h2>
      ${floors.length === 0 && html`<p class="empty">Nobody holds the floor anywhere.</p>`}
      <ul class="cards">
        ${floors.map(
          (f) => html`<li class="card floor" key=${f.scope} data-scope=${f.scope}>
            <div><strong>${f.scope}</strong>: ${f.holder ? html`held by <b>${f.holder}</b>` : "free"}
              ${f.reason && html` <span class="muted">(${f.reason})</span>`}</div>
            <div class="muted">raised hands: ${f.hands.length ? f.hands.join(", ") : "none"}</div>
            ${f.holder &&
            html`<button type="button" disabled=${observer} onClick=${() => act("clearFloor", f.scope)}>
              Clear the floor
            </button>`}
          </li>`,
        )}
      </ul>
      <h2>Channels <span class="count">${channels.length}</span></h2>
      ${channels.length === 0 && html`<p class="empty">No channels yet.</p>`}
      <ul class="cards">
        ${channels.map(
          (c) => html`<li class=${`card channel${c.closed ? " closed" : ""}`} key=${c.name} data-channel=${c.name}>
            <div><strong>${c.name}</strong> ${c.closed && html`<span class="badge">closed</span>`}
              ${c.private &&
              html`<span class="badge private" title="joined on your invitation; only its members see it">🔒 private</span>`}</div>
            ${c.topic && html`<div class="topic">${c.topic} <span class="muted">(${c.topic_by})</span></div>`}
            <div class="muted">${c.members.length ? c.members.join(", ") : "no members"}</div>
            <div class="actions">
              ${c.closed
                ? html`<button type="button" disabled=${observer} onClick=${() => act("reopenChannel", c.name)}>
                    Reopen channel
                  </button>`
                : html`<button type="button" disabled=${observer} onClick=${() => act("closeChannel", c.name)}>
                    Close channel
                  </button>`}
              <button type="button" disabled=${observer} onClick=${() => act(c.private ? "makePublic" : "makePrivate", c.name)}>
                ${c.private ? "Make public" : "Make private"}
              </button>
              ${c.private && !c.closed && html`<${Invite} channel=${c} state=${state} observer=${observer} act=${act} />`}
            </div>
          </li>`,
        )}
      </ul>
    </section>
  `;
}

// Who may be invited into a private channel: the agents here that are not in it.
function Invite({ channel, state, observer, act }) {
  const outside = Object.values(state.peers)
    .filter((p) => !["offline", "reaped"].includes(p.state) && !channel.members.includes(p.name))
    .map((p) => p.name)
    .sort();
  if (!outside.length) return null;
  return html`<select aria-label=${`Invite into ${channel.name}`} disabled=${observer}
    onChange=${(e) => {
      const name = e.target.value;
      e.target.value = "";
      if (name) act("invite", channel.name, name);
    }}>
    <option value="">Invite…</option>
    ${outside.map((n) => html`<option value=${n} key=${n}>${n}</option>`)}
  </select>`;
}

// Tasks grouped by the thread they belong to, the most recently active thread first.
// Tasks grouped by thread, and tasks that wait on one another in one group with them.
function byThread(tasks) {
  const parent = new Map(tasks.map((t) => [t.task_id, t.task_id]));
  const find = (id) => {
    while (parent.get(id) !== id) id = parent.get(id);
    return id;
  };
  const join = (a, b) => parent.has(a) && parent.has(b) && parent.set(find(a), find(b));
  const firstOfThread = new Map();
  for (const t of tasks) {
    const key = t.thread || t.task_id;
    if (firstOfThread.has(key)) join(t.task_id, firstOfThread.get(key));
    else firstOfThread.set(key, t.task_id);
    for (const dep of t.blocked_by || []) join(t.task_id, dep);
  }
  const groups = new Map();
  for (const t of tasks) {
    const root = find(t.task_id);
    if (!groups.has(root)) groups.set(root, []);
    groups.get(root).push(t);
  }
  const list = [...groups.values()].map((items) => {
    items.sort((a, b) => a.created_at - b.created_at);
    return {
      thread: items[0].thread || items[0].task_id,
      items,
      updated: Math.max(...items.map((t) => t.updated_at)),
    };
  });
  return list.sort((a, b) => b.updated - a.updated);
}

// A task as a few words: its subject, or the start of what it asks.
function headline(t) {
  const text = (t.subject || t.content || "").replace(/\s+/g, " ").trim();
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

function Clip({ text, limit = 400 }) {
  const [whole, setWhole] = useState(false);
  if (text.length <= limit) return html`<div class="content">${text}</div>`;
  return html`<div class="content">${whole ? text : `${text.slice(0, limit)}…`}
    <button type="button" class="link" data-read onClick=${() => setWhole(!whole)}>
      ${whole ? "show less" : `show all ${text.length} characters`}</button></div>`;
}

function Task({ t, label }) {
  const [open, setOpen] = useState(false);
  const outcome = t.result ?? t.error;
  return html`<li class="task" data-task=${t.task_id}>
    <div>
      <span class=${`badge task-${t.state}`}>${t.state}</span>
      ${t.blocked && html` <span class="badge warn" data-blocked>blocked</span>`}
      ${t.priority !== undefined && t.priority !== 2 && html` <span class="badge">P${t.priority}</span>`}
      ${" "}<strong>${t.subject || short(t.task_id)}</strong>
      <span class="muted">${` ${t.sender} → ${t.worker} · ${clock(t.updated_at)}`}</span>
    </div>
    <${Clip} text=${t.content} />
    ${t.blocked_by && t.blocked_by.length > 0 &&
    html`<div class="muted" data-waits>${t.blocked ? "waits on" : "waited on"} ${t.blocked_by.map(label).join(", ")}${t.on_failure === "proceed" ? " (goes on if one fails)" : ""}</div>`}
    ${t.question && html`<div data-question><em>asked:</em> ${t.question}${t.answer ? html` — <em>answered:</em> ${t.answer}` : ""}</div>`}
    ${outcome != null &&
    html`<div class=${t.error ? "error" : "result"} data-result>
      <strong>${t.error ? "failed: " : "result: "}</strong><${Clip} text=${outcome} />
    </div>`}
    <button type="button" class="link" data-read aria-expanded=${open ? "true" : "false"}
      onClick=${() => setOpen(!open)}>${open ? "hide history" : `history (${t.history.length})`}</button>
    ${open &&
    html`<ol class="history" data-history>
      ${t.history.map(
        (e) => html`<li>${`${clock(e.ts)} ${e.state}${e.actor ? ` by ${e.actor}` : ""}${e.detail ? `: ${e.detail}` : ""}`}</li>`,
      )}
    </ol>`}
  </li>`;
}

// A position request of a deliberation: the hub's plumbing, shown as what it means.
function PositionTask({ t, d }) {
  let answer = null;
  try {
    answer = t.result ? JSON.parse(t.result) : null;
  } catch {
    answer = null;
  }
  return html`<li class="task" data-task=${t.task_id} data-position-request>
    <div>
      <span class=${`badge task-${t.state}`}>${t.state}</span>
      ${" "}<strong>${`position request to ${t.worker}`}</strong>
      <span class="muted">${` · from the hub, for ${d.convener} · ${clock(t.updated_at)}`}</span>
    </div>
    ${answer && typeof answer === "object"
      ? html`<div data-result>${`${answer.stance} (${Math.round((answer.confidence || 0) * 100)}%): ${answer.summary}`}</div>`
      : t.error && html`<div class="error" data-result>${`failed: ${t.error}`}</div>`}
    <details><summary class="muted">the request as sent</summary><pre class="raw-request">${t.content}</pre></details>
  </li>`;
}

export function Work({ api, state, observer, notify }) {
  const threads = byThread(state.tasks);
  const named = new Map(state.tasks.map((t) => [t.task_id, t.subject || t.content]));
  const label = (id) => {
    const name = named.get(id);
    return name ? `“${name.length > 30 ? `${name.slice(0, 29)}…` : name}”` : id;
  };
  return html`
    <section class="panel" aria-labelledby="tasks-title">
      <h2 id="tasks-title">Tasks <span class="count">${state.tasks.length}</span></h2>
      ${state.tasks.length === 0 && html`<p class="empty">No tasks yet.</p>`}
      <ul class="cards">
        ${threads.map((g) => {
          const d = state.deliberations[g.thread];
          if (d) {
            return html`<li class="card" key=${g.thread} data-task-thread=${g.thread}>
              <div><span class="badge">deliberation</span> <strong>${d.subject}</strong></div>
              <ul class="tasks">${g.items.map((t) => html`<${PositionTask} key=${t.task_id} t=${t} d=${d} />`)}</ul>
            </li>`;
          }
          return html`<li class="card" key=${g.thread} data-task-thread=${g.thread}>
            <div class="muted" title=${g.thread}>${`${plural(g.items.length, "task")} from “${headline(g.items[0])}”`}</div>
            ${hasEdges(g.items) && html`<div class="graph-wrap"><${TaskGraph} tasks=${g.items} /></div>`}
            <ul class="tasks">${g.items.map((t) => html`<${Task} key=${t.task_id} t=${t} label=${label} />`)}</ul>
          </li>`;
        })}
      </ul>
      <h2>Job board <span class="count">${state.offers.length}</span></h2>
      ${state.offers.length === 0 && html`<p class="empty">No offers on the board.</p>`}
      <ul class="cards">
        ${state.offers.map(
          (o) => html`<li class="card" key=${o.offer_id} data-offer=${o.offer_id}>
            <div><strong>${o.subject || o.offer_id}</strong> <span class="badge">${o.state}</span></div>
            <div class="muted">posted by ${o.poster}${o.winner ? `, assigned to ${o.winner}` : ""}</div>
            <${Clip} text=${o.content} />
            ${o.required_skills.length > 0 &&
            html`<div class="muted">needs ${o.required_skills.map((s) => s.name || s.id).join(", ")}</div>`}
            ${o.claims.length === 0
              ? html`<div class="muted">no claims yet</div>`
              : html`<ul class="claims" aria-label="claims">
                  ${o.claims.map(
                    (c) => html`<li data-claim=${c.claimant}>
                      <span class=${`sender ${colourOf(c.claimant)}`}>${c.claimant}</span>
                      ${" "}<span class="badge">${c.state}</span>${c.note ? html` <span class="muted">${c.note}</span>` : ""}
                    </li>`,
                  )}
                </ul>`}
          </li>`,
        )}
      </ul>
      <${Reservations} api=${api} state=${state} observer=${observer} notify=${notify} />
    </section>
  `;
}

// Who holds which files of the repository, oldest first, with the time each has left.
function Reservations({ api, state, observer, notify }) {
  const reservations = state.reservations;
  const enforce = state.reservationPolicy === "enforce";
  const now = Date.now() / 1000;
  const setPolicy = async (policy) => {
    try {
      await api.post("/operator/reservations/policy", { policy });
      notify(`file reservations: ${policy}`, "ok");
    } catch (error) {
      notify(error.message, "error");
    }
  };
  return html`
    <h2 id="reservations-title">File reservations <span class="count">${reservations.length}</span></h2>
    <label class="inline">
      <input type="checkbox" checked=${enforce} disabled=${observer}
        onChange=${(e) => setPolicy(e.currentTarget.checked ? "enforce" : "advisory")} />
      Enforce: refuse a reservation that meets another agent's (otherwise granted, with the conflict reported)
    </label>
    ${reservations.length === 0 && html`<p class="empty">Nobody holds a file.</p>`}
    <ul class="cards" aria-labelledby="reservations-title">
      ${reservations.map(
        (r) => html`<li class="card" key=${r.reservation_id} data-reservation=${r.reservation_id}>
          <div>
            <span class=${`sender ${colourOf(r.holder)}`}>${r.holder}</span>
            ${" "}<code>${r.pattern}</code>
            ${" "}<span class="badge">${r.exclusive ? "exclusive" : "shared"}</span>
          </div>
          <div class="muted">${`${age(r.expires_at - now)} left`}${r.reason ? ` · ${r.reason}` : ""}</div>
        </li>`,
      )}
    </ul>
  `;
}

function Deliberation({ d }) {
  return html`<li class="card deliberation" data-deliberation=${d.deliberation_id}><${DeliberationBody} d=${d} /></li>`;
}

function ledgerTone(ledger) {
  if (!ledger.intact) return "broken";
  return ledger.anchored || ledger.records === 0 ? "ok" : "warn";
}

function ledgerLine(ledger) {
  if (!ledger.intact) {
    return html`<strong>Verification FAILED</strong>${` at record ${ledger.broken.index}: ${ledger.broken.reason} (${plural(ledger.records, "record")} verified before it)`}`;
  }
  if (ledger.records === 0) return html`<strong>Empty</strong>${": no decision recorded yet"}`;
  const anchoring = ledger.anchored
    ? "anchored by the head checkpoint"
    : "not anchored: no head checkpoint, so a cut tail would go unnoticed";
  return html`<strong>Verified</strong>${`: ${plural(ledger.records, "record")}, ${anchoring}`}`;
}

export function Decisions({ state, refresh }) {
  const ledger = state.ledger;
  const deliberations = Object.values(state.deliberations).sort((a, b) => b.created_at - a.created_at);
  return html`
    ${deliberations.length > 0 &&
    html`<section class="panel" aria-labelledby="deliberations-title">
      <h2 id="deliberations-title">Deliberations</h2>
      <ul class="cards">
        ${deliberations.map((d) => html`<${Deliberation} key=${d.deliberation_id} d=${d} />`)}
      </ul>
    </section>`}
    <section class="panel" aria-labelledby="decisions-title">
      <h2 id="decisions-title">Decision ledger</h2>
      ${ledger
        ? html`<div class=${`card ledger ${ledgerTone(ledger)}`} role="status">
            ${ledgerLine(ledger)}
            <div class="muted mono">head ${short(ledger.head_hash)} · ${ledger.path}</div>
            ${ledger.unrecorded_error &&
            html`<div class="error">Answers not recorded: ${ledger.unrecorded_error}</div>`}
            <button type="button" data-read onClick=${refresh}>Verify again</button>
          </div>`
        : html`<p class="muted">Checking the ledger…</p>`}
      ${state.decisions.length === 0 && html`<p class="empty">No decisions recorded yet.</p>`}
      <ul class="cards">
        ${state.decisions.map((d) => {
          const extra = d.caucus || {};
          return html`<li class="card decision" key=${d.hash}>
            <div><strong>${d.subject}</strong></div>
            <div>→ ${d.decision}</div>
            <div class="muted">
              ${stamp(d.timestamp)}${extra.asker ? ` · asked by ${extra.asker}` : ""}${extra.audience
                ? ` · for ${extra.audience}`
                : ""}
            </div>
            <div class="muted mono">record ${short(d.hash)}</div>
          </li>`;
        })}
      </ul>
    </section>
  `;
}

function Chart({ points, value, label, unit, format = (v) => String(v) }) {
  const width = 300;
  const height = 60;
  const values = points.map(value).filter((v) => v != null);
  const peak = Math.max(1, ...values);
  // Placed by time, not by index: the hub's older samples are 10 s apart, live ticks closer.
  const first = points.length ? points[0].at : 0;
  const last = points.length ? points[points.length - 1].at : 0;
  const x = (p) => (last > first ? ((p.at - first) / (last - first)) * width : width);
  const line = points
    .map((p) => [x(p), value(p)])
    .filter(([, v]) => v != null)
    .map(([px, v]) => `${px.toFixed(1)},${(height - (v / peak) * (height - 4) - 2).toFixed(1)}`)
    .join(" ");
  const seconds = Math.round((last - first) / 1000);
  const span = seconds >= 120 ? `${Math.round(seconds / 60)} min` : `${seconds} s`;
  return html`
    <figure class="chart" data-chart=${label}>
      <svg viewBox=${`0 0 ${width + 64} ${height + 18}`} role="img"
        aria-label=${`${label} over the last ${span}, peak ${format(peak)}${unit}`}>
        <g transform="translate(60 2)">
          <line x1="0" y1="0" x2="0" y2=${height} class="axis" />
          <line x1="0" y1=${height} x2=${width} y2=${height} class="axis" />
          <polyline points=${line} fill="none" class="spark" />
        </g>
        <text x="56" y="10" text-anchor="end" class="tick" data-axis="y-top">${values.length ? `${format(peak)}${unit}` : "…"}</text>
        <text x="56" y=${height + 2} text-anchor="end" class="tick" data-axis="y-zero">0</text>
        <text x="60" y=${height + 16} class="tick" data-axis="x-start">${`−${span}`}</text>
        <text x=${width + 60} y=${height + 16} text-anchor="end" class="tick" data-axis="x-end">now</text>
      </svg>
      <figcaption class="muted">${label}, ${values.length ? "the hub's samples, then each health tick" : "waiting for the first health tick"}</figcaption>
    </figure>
  `;
}

function mib(n) {
  return (n / (1024 * 1024)).toFixed(n >= 100 * 1024 * 1024 ? 0 : 1);
}

// The room's state in a few plain sentences: what an operator glancing at it wants to know.
export function roomInWords(state) {
  const h = state.health || {};
  const peers = Object.values(state.peers);
  const live = peers.filter((p) => ["online", "quiet", "stale"].includes(p.state)).length;
  const paused = peers.filter((p) => p.paused).length;
  const forms = Object.keys(state.forms).length;
  const held = Object.values(state.floors).filter((f) => f.holder);
  const mode = {
    open: "The room is open",
    paused: "The room is paused: chatter waits in inboxes until you resume",
    stopped: "The room is stopped: new sends are refused until you resume or reset",
  }[state.mode];
  const parts = [
    `${mode}.`,
    `${live} of ${plural(peers.length, "peer")} ${live === 1 ? "is" : "are"} live${h.listening != null ? `, ${h.listening} listening` : ""}${paused ? `, ${paused} paused by you` : ""}.`,
    `${plural(h.messages_per_minute ?? 0, "message")} in the last minute; ${plural(h.queue_depth ?? 0, "delivery", "deliveries")} ${
      (h.queue_depth ?? 0) === 1 ? "waits" : "wait"
    } to be acknowledged.`,
  ];
  if (held.length) parts.push(`${held.map((f) => `${f.holder} holds the floor of ${f.scope}`).join("; ")}.`);
  parts.push(forms ? `${plural(forms, "question")} ${forms === 1 ? "waits" : "wait"} for you in Forms.` : "Nothing waits for you.");
  return parts.join(" ");
}

export function Health({ state }) {
  const h = state.health || {};
  const points = state.healthHistory;
  return html`
    <section class="panel" aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      <p data-room-words>${roomInWords(state)}</p>
      <dl class="stats">
        <div><dt>Uptime</dt><dd>${age(h.uptime)}</dd></div>
        <div><dt>Peers</dt><dd>${h.peers ?? "—"} (${h.listening ?? 0} listening)</dd></div>
        <div><dt>Messages / minute</dt><dd data-stat="mpm">${h.messages_per_minute ?? "—"}</dd></div>
        <div><dt>Queue depth</dt><dd data-stat="depth">${h.queue_depth ?? "—"}</dd></div>
        <div><dt>Memory</dt><dd data-stat="rss">${bytes(h.rss_bytes)}</dd></div>
      </dl>
      <${Chart} points=${points} value=${(p) => p.perMinute} label="messages per minute" unit="/min" />
      <${Chart} points=${points} value=${(p) => p.depth} label="queue depth (deliveries not yet acknowledged)" unit="" />
      <${Chart} points=${points} value=${(p) => p.rss} label="hub memory (resident)" unit=" MiB" format=${mib} />
    </section>
  `;
}

export function Controls({ api, state, observer, notify, act }) {
  const [announce, setAnnounce] = useState({ subject: "", content: "" });
  const [rate, setRate] = useState(null);
  const [format, setFormat] = useState("markdown");
  const [reason, setReason] = useState("");
  const [typingPause, setTypingPause] = useState(() => localStorage.getItem(PAUSE_WHILE_TYPING) === "on");
  const shownRate = rate || { capacity: state.rate.capacity, refill: state.rate.refill };
  async function run(fn, done) {
    try {
      await fn();
      if (done) notify(done, "ok");
    } catch (error) {
      notify(error.message, "error");
    }
  }
  async function download() {
    await run(async () => {
      const { blob, name } = await api.download(`/export?format=${format}`);
      const link = document.createElement("a");
      link.href = URL.createObjectURL(blob);
      link.download = name;
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    }, "export downloaded");
  }
  return html`
    <section class="panel controls" aria-labelledby="controls-title">
      <h2 id="controls-title">Room controls</h2>
      <div class="row">
        <button type="button" disabled=${observer} onClick=${() => act("room", "pause")}>Pause room</button>
        <button type="button" disabled=${observer} onClick=${() => act("room", "resume")}>Resume room</button>
        <button type="button" class="danger" disabled=${observer} onClick=${() => act("room", "stop", reason)}>
          Stop room
        </button>
        <button type="button" disabled=${observer} onClick=${() => act("room", "reset", reason)}>Reset room</button>
      </div>
      <label class="inline">
        <input type="checkbox" checked=${typingPause} disabled=${observer}
          onChange=${(e) => {
            const on = e.currentTarget.checked;
            localStorage.setItem(PAUSE_WHILE_TYPING, on ? "on" : "off");
            setTypingPause(on);
          }} />
        Pause the room while I type (it resumes when I send, clear the text, or stop for a minute)
      </label>
      <label>Reason told to the agents (stop, reset; optional)
        <input value=${reason} maxlength="500" disabled=${observer} onInput=${(e) => setReason(e.currentTarget.value)} />
      </label>

      <h3>Announcement</h3>
      <form
        onSubmit=${(e) => {
          e.preventDefault();
          run(async () => {
            const body = { content: announce.content };
            if (announce.subject) body.subject = announce.subject;
            await api.post("/operator/announce", body);
            setAnnounce({ subject: "", content: "" });
          }, "announced");
        }}
      >
        <label>Subject <input value=${announce.subject} disabled=${observer}
          onInput=${(e) => setAnnounce({ ...announce, subject: e.currentTarget.value })} /></label>
        <label>News for every peer
          <textarea rows="3" value=${announce.content} disabled=${observer}
            onInput=${(e) => setAnnounce({ ...announce, content: e.currentTarget.value })}></textarea>
        </label>
        <button type="submit" disabled=${observer || !announce.content.trim()}>Announce</button>
      </form>

      <h3>Send budget</h3>
      <form
        class="row"
        onSubmit=${(e) => {
          e.preventDefault();
          run(async () => {
            await api.post("/operator/rate", {
              capacity: Number(shownRate.capacity),
              refill: Number(shownRate.refill),
            });
            setRate(null);
          }, "send budget set");
        }}
      >
        <label>Sends at once <input type="number" min="0" step="any" value=${shownRate.capacity} disabled=${observer}
          onInput=${(e) => setRate({ ...shownRate, capacity: e.currentTarget.value })} /></label>
        <label>Refill per second <input type="number" min="0" step="any" value=${shownRate.refill} disabled=${observer}
          onInput=${(e) => setRate({ ...shownRate, refill: e.currentTarget.value })} /></label>
        <button type="submit" disabled=${observer}>Set budget</button>
      </form>

      <h3>Export the transcript</h3>
      <div class="row">
        <select value=${format} onChange=${(e) => setFormat(e.currentTarget.value)} aria-label="format">
          <option value="markdown">Markdown</option>
          <option value="json">JSON</option>
          <option value="text">text</option>
        </select>
        <button type="button" data-read onClick=${download}>Download</button>
      </div>
    </section>
  `;
}
