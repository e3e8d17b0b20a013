// The room's main panels: who is here (roster), what is said (transcript), and saying it.

import { age, anyFilter, clock, colourOf, matches, plural, skillNames } from "./format.js";
import { DeliberationRow, foldDeliberations } from "./deliberation.js";
import { FilterToggle, Filters } from "./filters.js";
import { markdown } from "./markdown.js";
import { Component, html, useEffect, useLayoutEffect, useRef, useState } from "./ui.js";

const PAGE = 300; // messages fetched per step back in history
const WINDOW = 400; // transcript rows in the page at most
const STEP = 200; // rows the window slides by
const LONG = 2000; // characters shown before "show all"

const STATE_ORDER = { online: 0, quiet: 1, stale: 1, offline: 2, reaped: 3 };
const GONE = (p) => p.state === "reaped";
const SHOW = {
  all: () => true,
  live: (p) => STATE_ORDER[p.state] <= 1,
  away: (p) => p.state === "offline",
  gone: GONE,
};

// A peer's liveness in the operator's words: waiting quietly is not an outage.
export function stateWord(peer) {
  if (peer.state === "online") return "online";
  if (peer.state === "quiet" || peer.state === "stale") {
    const s = Math.max(0, Math.round(peer.last_seen_age || 0));
    return s < 60 ? `idle ${s} s` : s < 7200 ? `idle ${Math.floor(s / 60)} min` : `idle ${Math.floor(s / 3600)} h`;
  }
  return peer.state === "reaped" ? "gone" : peer.state;
}

const LEGEND = [
  ["online", "online", "connected and waiting for messages now"],
  ["quiet", "idle", "connected, between calls: an agent thinking or waiting is idle, not broken"],
  ["offline", "offline", "said goodbye for now; comes back with its token"],
  ["reaped", "gone", "silent past the hub's time to live; its token works until the grace ends"],
];

function Legend() {
  return html`<details class="legend" data-legend>
    <summary>What the states mean</summary>
    <dl>
      ${LEGEND.map(
        ([state, word, meaning]) => html`<div class=${`state-${state}`} key=${state}>
          <dt><span class="dot" aria-hidden="true"></span> ${word}</dt><dd>${meaning}</dd></div>`,
      )}
    </dl>
  </details>`;
}

function doing(peer, floors) {
  // One who is gone or offline runs nothing: its last status is history, not a run state.
  if (peer.state === "reaped" || peer.state === "offline") return "";
  if (Object.values(floors).some((f) => f.holder === peer.name)) return "holding the floor";
  // A native agent's run state, as its status names it (runtime/connectors/hub.py).
  const status = (peer.status || "").toLowerCase();
  if (status.startsWith("composing")) return "composing";
  if (status.startsWith("interrupted")) return "interrupted";
  if (status.startsWith("running tool ")) return peer.status.slice(0, 60);
  if (status.startsWith("running")) return "running a tool";
  if (status.startsWith("working on task") || status.startsWith("task ")) return "running a task";
  if (peer.listening) return "listening";
  return "";
}

export function Roster({ peers, floors, observer, act, onMessage }) {
  const [show, setShow] = useState("all");
  const [q, setQ] = useState("");
  const all = Object.values(peers);
  const needle = q.trim().toLowerCase();
  const list = all
    .filter(SHOW[show])
    .filter(
      (p) =>
        !needle ||
        p.name.toLowerCase().includes(needle) ||
        skillNames(p.skills).some((s) => s.toLowerCase().includes(needle)),
    )
    .sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state] || a.name.localeCompare(b.name));
  const live = all.filter(SHOW.live).length;
  // Gone peers fold away under one line unless the operator asked for them.
  const here = show === "gone" ? list : list.filter((p) => !GONE(p));
  const gone = show === "gone" ? [] : list.filter(GONE);
  const line = (peer) => html`<${PeerLine}
    key=${peer.name}
    peer=${peer}
    now=${doing(peer, floors)}
    observer=${observer}
    act=${act}
    onMessage=${onMessage}
  />`;
  return html`
    <section class="panel roster" aria-labelledby="roster-title">
      <h2 id="roster-title">Peers <span class="count" data-live=${live}>${`${live} live of ${all.length}`}</span></h2>
      <div class="roster-tools" role="search">
        <select aria-label="show" data-read value=${show} onChange=${(e) => setShow(e.currentTarget.value)}>
          <option value="all">all</option>
          <option value="live">live</option>
          <option value="away">offline</option>
          <option value="gone">gone</option>
        </select>
        <input type="search" aria-label="find a peer" data-read placeholder="name or skill" value=${q}
          onInput=${(e) => setQ(e.currentTarget.value)} />
      </div>
      <${Legend} />
      ${all.length === 0 && html`<p class="empty">No agents have joined yet.</p>`}
      <ul class="peers">${here.map(line)}</ul>
      ${gone.length > 0 &&
      html`<details class="gone" data-gone=${gone.length}>
        <summary>${`gone (${gone.length})`}</summary>
        <ul class="peers">${gone.map(line)}</ul>
      </details>`}
    </section>
  `;
}

// A roster line renders again only when its peer, what it is doing or the role changes: one
// peer's event touches one line, not two hundred.
class PeerLine extends Component {
  shouldComponentUpdate(next) {
    const p = this.props;
    return next.peer !== p.peer || next.now !== p.now || next.observer !== p.observer;
  }

  render(props) {
    return html`<${PeerRow} ...${props} />`;
  }
}

function PeerRow({ peer, now, observer, act, onMessage }) {
  const [open, setOpen] = useState(false);
  const [confirm, setConfirm] = useState(null); // "kick" or "stop", once asked for
  const skills = skillNames(peer.skills);
  const name = peer.name;
  const details = `up ${age(peer.uptime)} · ${peer.messages || 0} sent · seen ${age(peer.last_seen_age)} ago${
    skills.length ? ` · skills: ${skills.join(", ")}` : ""
  }`;
  return html`
    <li class=${`peer state-${peer.state}`} data-peer=${name} title=${details}>
      <div class="peer-row">
        <span class="dot" aria-hidden="true"></span>
        <strong class=${`peer-name ${colourOf(name)}`}>${name}</strong>
        <span class="badge" data-state=${peer.state}>${stateWord(peer)}</span>
        ${now && html`<span class=${`badge ${now === "interrupted" ? "warn" : "good"}`} data-doing>${now}</span>`}
        ${peer.paused && html`<span class="badge warn">paused</span>`}
        <span class="peer-line muted">${details}</span>
        <button type="button" class="menu-button" data-read aria-expanded=${open ? "true" : "false"}
          aria-label=${`actions for ${name}`} onClick=${() => setOpen(!open)}>⋯</button>
      </div>
      ${peer.status && !GONE(peer) &&
      html`<div class="peer-status" data-status title=${peer.status}>${peer.status}<span class="muted">${` · ${age(
        peer.status_age,
      )} ago`}</span></div>`}
      ${open &&
      html`<div class="actions" role="group" aria-label=${`actions for ${name}`}>
        <button type="button" disabled=${observer} onClick=${() => onMessage(name)}>Message</button>
        ${peer.paused
          ? html`<button type="button" disabled=${observer} onClick=${() => act("resume", name)}>Resume</button>`
          : html`<button type="button" disabled=${observer} onClick=${() => act("pause", name)}>Pause</button>`}
        <button type="button" disabled=${observer} onClick=${() => act("interrupt", name)}>Interrupt</button>
        <button type="button" disabled=${observer} onClick=${() => act("reset", name)}>Reset</button>
        ${confirm === "stop"
          ? html`<button type="button" class="danger" disabled=${observer}
              onClick=${() => {
                setConfirm(null);
                act("stopPeer", name);
              }}>Confirm stop</button>`
          : html`<button type="button" disabled=${observer} title="tell this agent to finish and stop"
              onClick=${() => setConfirm("stop")}>Stop</button>`}
        <button type="button" disabled=${observer} onClick=${() => act("ping", name)}>Ping</button>
        ${confirm === "kick"
          ? html`<button
                type="button"
                class="danger"
                disabled=${observer}
                onClick=${() => {
                  setConfirm(null);
                  act("kick", name);
                }}
              >
                Confirm kick
              </button>`
          : html`<button type="button" class="danger" disabled=${observer} onClick=${() => setConfirm("kick")}>
              Kick
            </button>`}
        ${confirm && html`<button type="button" onClick=${() => setConfirm(null)}>Keep</button>`}
      </div>`}
    </li>
  `;
}

export function Transcript({ api, state, dispatch, filters, setFilters, notify }) {
  const [filtered, setFiltered] = useState(null); // {messages, more} while filters are set
  const [foldOpen, setFoldOpen] = useState(false); // the filters, at phone width
  // The rows on screen are a window of at most WINDOW messages ending at `endSeq` (null: the
  // newest, following the feed). Memory holds far more; the DOM never does.
  const [endSeq, setEndSeq] = useState(null);
  const [loading, setLoading] = useState(false);
  const [dropped, setDropped] = useState(null); // what retention dropped, as the hub says
  const scroller = useRef(null);
  const anchor = useRef(null); // the row to keep in place across the next render
  const olderAgain = useRef(false); // a scroll to the top came while a page was loading
  const filtering = anyFilter(filters);
  // One function for every row (rows only render again when their own message changes), over
  // whatever the transcript holds at the moment a thread is opened.
  const held = useRef([]);
  const onScreen = useRef(new Set()); // the seqs of the rows shown now
  const related = useRef((message) => ({
    list: conversation(held.current, message),
    inView: onScreen.current,
    root: message.thread ? held.current.find((m) => m.id === message.thread) : undefined,
  })).current;

  useEffect(() => {
    setEndSeq(null);
    if (!filtering) {
      setFiltered(null);
      return undefined;
    }
    let stale = false;
    const timer = setTimeout(async () => {
      try {
        const page = await api.get("/operator/messages", { ...filters, limit: PAGE });
        if (!stale) {
          setFiltered(page);
          setDropped(page.dropped || null);
        }
      } catch (error) {
        if (!stale) notify(error.message, "error");
      }
    }, 200);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [filters.peer, filters.channel, filters.kind, filters.q]);

  // Live messages that match the filters join the filtered view as they arrive.
  const all = filtering
    ? mergeLive(filtered ? filtered.messages : [], state.messages, filters)
    : state.messages;
  held.current = all;
  const following = endSeq === null;
  const endIndex = following ? all.length : indexAfter(all, endSeq);
  const startIndex = Math.max(0, endIndex - WINDOW);
  const visible = all.slice(startIndex, endIndex);
  // While a filter's first page is on its way there is nothing older to ask for yet.
  const exhausted = filtering ? !filtered || !filtered.more : state.olderExhausted;
  const atStart = startIndex === 0 && exhausted;

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const kept = anchor.current;
    anchor.current = null;
    const row = kept && el.querySelector(`[data-seq="${kept.seq}"]`);
    if (row) el.scrollTop = row.offsetTop - kept.offset; // what was in view stays in view
    else if (following) el.scrollTop = el.scrollHeight;
  });

  function keepInView() {
    const el = scroller.current;
    const row = el && el.querySelector(".msg");
    if (row) anchor.current = { seq: row.dataset.seq, offset: row.offsetTop - el.scrollTop };
  }

  // A scroll to the top while a page loads is not lost: once it has come, if the view is
  // still at the top, the next page is asked for (a busy machine drew the two apart).
  useEffect(() => {
    const el = scroller.current;
    if (loading || !olderAgain.current || !el) return;
    olderAgain.current = false;
    if (el.scrollTop < 60) older();
  }, [loading]);

  async function older() {
    if (loading) {
      olderAgain.current = true;
      return;
    }
    if (startIndex > 0) {
      // Slide the window back over what memory already holds.
      keepInView();
      setEndSeq(all[Math.max(WINDOW, endIndex - STEP) - 1].seq);
      return;
    }
    if (exhausted || (filtering && !filtered)) return;
    const first = all.find((m) => !m.event);
    const oldest = first ? first.seq : undefined;
    setLoading(true);
    try {
      const page = await api.get("/operator/messages", { ...filters, before: oldest, limit: PAGE });
      setDropped(page.dropped || null);
      if (filtering) {
        setFiltered({ messages: page.messages.concat(filtered.messages), more: page.more });
      } else {
        dispatch({ type: "older", data: page });
      }
      // Show the start of what is now in memory: the fetched page, then what followed it.
      keepInView();
      const fetched = page.messages;
      const last = Math.min(WINDOW, fetched.length + all.length) - 1;
      if (last >= 0) setEndSeq(last < fetched.length ? fetched[last].seq : all[last - fetched.length].seq);
    } catch (error) {
      notify(error.message, "error");
    } finally {
      setLoading(false);
    }
  }

  function newer() {
    if (following) return;
    const next = endIndex + STEP;
    keepInView();
    setEndSeq(next >= all.length ? null : all[next - 1].seq);
  }

  function onScroll(event) {
    const el = event.currentTarget;
    const fromBottom = el.scrollHeight - el.scrollTop - el.clientHeight;
    if (fromBottom < 40) newer();
    else if (following && fromBottom > 200) setEndSeq(all.length ? all[all.length - 1].seq : null);
    if (el.scrollTop < 60) older();
  }

  return html`
    <section class="panel transcript" aria-labelledby="transcript-title">
      <div class="panel-head">
        <h2 id="transcript-title">Transcript <span class="count">${all.length}</span></h2>
        <${FilterToggle} filters=${filters} open=${foldOpen} setOpen=${setFoldOpen} />
      </div>
      <${Filters} state=${state} filters=${filters} setFilters=${setFilters} open=${foldOpen} />
      <div class="messages" ref=${scroller} onScroll=${onScroll} tabindex="0" aria-live="polite"
        data-total=${all.length} data-first=${visible.length ? visible[0].seq : 0}>
        <div class="older">
          ${atStart
            ? html`<span class="muted" data-start>
                ${dropped
                  ? `the beginning of what is kept: retention dropped ${plural(dropped.messages, "older message")}${dropped.through_ts ? ` (through ${new Date(dropped.through_ts * 1000).toLocaleString()})` : ""}`
                  : "the beginning of the transcript"}
              </span>`
            : html`<button type="button" data-read onClick=${older} disabled=${loading}>
                ${loading ? "Loading…" : "Load older"}
              </button>`}
        </div>
        ${visible.length === 0 && html`<p class="empty">No messages yet.</p>`}
        ${(onScreen.current = new Set(visible.map((m) => m.seq))) &&
        foldDeliberations(visible, state.deliberations).map(
          (m) => html`<${Row} key=${m.seq} message=${m} related=${related} />`,
        )}
        ${!following &&
        html`<div class="newer">
          <button type="button" data-read onClick=${() => setEndSeq(null)}>Jump to the newest</button>
        </div>`}
      </div>
    </section>
  `;
}

function mergeLive(page, live, filters) {
  const last = page.length ? page[page.length - 1].seq : 0;
  const extra = [];
  for (let i = live.length - 1; i >= 0 && live[i].seq > last; i -= 1) {
    if (!live[i].event && matches(live[i], filters)) extra.push(live[i]);
  }
  return extra.length ? page.concat(extra.reverse()) : page;
}

// The index just past the message with `seq` (messages are in seq order).
function indexAfter(list, seq) {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (list[mid].seq <= seq) low = mid + 1;
    else high = mid;
  }
  return low;
}

// A row renders again only when its message or its own state changes: applying one live
// event touches one row, not the window.
class Row extends Component {
  shouldComponentUpdate(next, nextState) {
    return (
      next.message !== this.props.message ||
      nextState.whole !== this.state.whole ||
      nextState.threadOpen !== this.state.threadOpen
    );
  }

  render({ message, related }, { whole, threadOpen }) {
    if (message.event) return renderEvent(message);
    if (message.fold) return html`<${DeliberationRow} fold=${message} />`;
    return renderRow(message, {
      whole,
      toggle: () => this.setState({ whole: !whole }),
      thread: threadOpen ? related(message) : null,
      toggleThread: () => this.setState({ threadOpen: !threadOpen }),
    });
  }
}

// The conversation a message belongs to: its thread, what it answers and what answers it.
export function conversation(messages, message) {
  // A reply without a thread of its own is threaded under the id of what it answers.
  const ids = new Set([message.id, message.reply_to, message.thread].filter(Boolean));
  const out = [];
  for (const m of messages) {
    if (m.event || m.seq === message.seq) continue;
    const sameThread = message.thread && m.thread === message.thread;
    if (sameThread || ids.has(m.id) || ids.has(m.reply_to) || ids.has(m.thread)) out.push(m);
  }
  return out;
}

// A thread, opened under one of its messages: what is on screen already is a link to its row
// (never its text again); the rest of it, held but not shown (a filter hides it), in full.
function ThreadView({ message, thread }) {
  const { list, inView } = thread;
  const label = message.thread ? "this thread" : "the conversation";
  const jump = (seq) => (e) => {
    e.preventDefault();
    const row = document.querySelector(`.messages [data-seq="${seq}"]`);
    if (row) row.scrollIntoView({ block: "center" });
  };
  return html`
    <ol class="thread" aria-label=${label} data-thread-of=${message.seq}>
      ${list.length === 0 && html`<li class="muted">nothing else of it in memory (filter by peer to look further back)</li>`}
      ${list.map((m) =>
        inView.has(m.seq)
          ? html`<li key=${m.seq} data-seq-in-thread=${m.seq} data-in-view>
              <a href="#" onClick=${jump(m.seq)}>#${m.seq}</a>${" "}<span
                class=${`sender ${colourOf(m.sender)}`}>${m.sender}</span>${" "}<span
                class="muted">shown ${m.seq < message.seq ? "above" : "below"}</span>
            </li>`
          : html`<li key=${m.seq} data-seq-in-thread=${m.seq}>
              <time>${clock(m.ts)}</time> <span class=${`sender ${colourOf(m.sender)}`}>${m.sender}</span>
              → ${m.to}${m.kind !== "chat" ? ` (${m.kind})` : ""}: ${m.content.length > 400 ? `${m.content.slice(0, 400)}…` : m.content}
            </li>`,
      )}
    </ol>
  `;
}

const TASK_KINDS = new Set(["task", "result", "failure", "input_request", "task_canceled"]);

// What kind of talk a message is, at a glance.
function scopeOf(message) {
  if (message.sender === "operator") return "operator";
  if (message.sender === "hub" && message.meta && message.meta.floor) return "floor";
  if (TASK_KINDS.has(message.kind)) return "task";
  if (message.to === "all") return "broadcast";
  if (message.to.startsWith("#")) return "channel";
  return "direct";
}

function renderEvent(event) {
  return html`
    <div class="room-event" data-seq=${event.seq} data-event=${event.change} role="note">
      <time datetime=${new Date(event.ts * 1000).toISOString()}>${clock(event.ts)}</time>
      <span class=${`sender ${colourOf(event.name)}`}>${event.name}</span> ${event.text}
    </div>
  `;
}

// A thread's button reads as words: a name an agent gave it as is, a generated id (a message's
// or a task's) never (it is the button's title).
const GENERATED = /^[mt]_[0-9a-f]{16,}$/;

function threadLabel(message, thread) {
  if (!message.thread) return "a reply";
  if (!GENERATED.test(message.thread)) return `thread ${message.thread}`;
  if (message.thread === message.id) return "starts a thread";
  const root = thread && thread.root;
  return root ? `thread from #${root.seq}` : "in a thread";
}

function renderRow(message, { whole, toggle, thread, toggleThread }) {
  const long = message.content.length > LONG;
  const text = long && !whole ? message.content.slice(0, LONG) : message.content;
  return html`
    <article class=${`msg kind-${message.kind}${message.parent ? " reply" : ""}`} data-seq=${message.seq}>
      ${message.parent &&
      html`<div class="reply-to muted" data-reply-to=${message.parent.seq}>
        <span aria-hidden="true">↳ </span>${`re #${message.parent.seq} `}<span class=${`sender ${colourOf(
          message.parent.sender,
        )}`}>${message.parent.sender}</span>${`: ${message.parent.excerpt}`}
      </div>`}
      <header>
        <time datetime=${new Date(message.ts * 1000).toISOString()}>${clock(message.ts)}</time>
        <span class=${`sender ${colourOf(message.sender)}`}>${message.sender}</span>
        <span class="arrow" aria-label="to">→</span>
        <span class="target">${message.to}</span>
        <span class="badge scope" data-scope=${scopeOf(message)}>${scopeOf(message)}</span>
        ${!["chat", scopeOf(message)].includes(message.kind) && html`<span class="badge">${message.kind}</span>`}
        ${(message.thread || message.reply_to) &&
        html`<button type="button" class="badge link" data-read data-thread=${message.thread || ""}
          title=${message.thread || ""} aria-expanded=${thread ? "true" : "false"} onClick=${toggleThread}>
          ${threadLabel(message, thread)}<span aria-hidden="true">${thread ? " ▾" : " ▸"}</span>
        </button>`}
        <span class="muted seq">#${message.seq}</span>
      </header>
      <div class="content">${markdown(text)}</div>
      ${long &&
      html`<button type="button" class="link" data-read onClick=${toggle}>
        ${whole ? "show less" : `show all ${message.content.length} characters`}
      </button>`}
      ${thread && html`<${ThreadView} message=${message} thread=${thread} />`}
    </article>
  `;
}
