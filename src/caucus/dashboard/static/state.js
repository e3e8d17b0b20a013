// The console's picture of the room: a snapshot, then every feed event applied in order.

export const MAX_MESSAGES = 20000; // kept in memory; older ones are fetched again on demand
const HISTORY_MS = 3600 * 1000; // the hub keeps an hour of samples; so does the chart
const DENSE_MS = 120 * 1000; // the last two minutes at every tick, older points 10 s apart
const SPARSE_MS = 10 * 1000;

// The chart's points: an hour at most, the latest at full rate, the rest thinned.
export function thinned(points) {
  if (!points.length) return points;
  const now = points[points.length - 1].at;
  const out = [];
  for (const p of points) {
    if (now - p.at > HISTORY_MS) continue;
    const last = out[out.length - 1];
    if (last && now - p.at > DENSE_MS && p.at - last.at < SPARSE_MS) continue;
    out.push(p);
  }
  return out;
}

function sample(h, at) {
  return { at, perMinute: h.messages_per_minute, depth: h.queue_depth, rss: h.rss_bytes };
}
export const ACTIVITY_KEPT = 500; // tool calls the activity view holds
const TASK_KINDS = new Set(["task", "result", "failure", "input_request", "task_canceled"]);

export const initial = {
  ready: false,
  mode: "open",
  rate: { capacity: 0, refill: 0 },
  peers: {},
  channels: {},
  messages: [], // routed messages, and room events between them (`event: true`)
  lastSeq: 0, // the newest message's seq
  eventsSince: 0, // room events added after it
  olderExhausted: false,
  floors: {},
  forms: {},
  health: null,
  healthHistory: [],
  decisions: [],
  deliberations: {},
  ledger: null,
  tasks: [],
  offers: [],
  reservations: [],
  teammatesVersion: 0,
  reservationPolicy: "advisory",
  activity: [], // MCP tool calls, newest first
  feed: "connecting",
  // Bumped when tasks, offers or reservations may have changed, so the console fetches them
  // again.
  workVersion: 0,
};

function byName(list, key = "name") {
  const out = {};
  for (const item of list) out[item[key]] = item;
  return out;
}

// A reply carries a glimpse of what it answers, when that is among the recent messages held.
const PARENT_LOOKBACK = 500;
const EXCERPT = 90;

// A message's first line as plain words: what its Markdown says, not how it marks it up.
export function plainLine(content) {
  const first = content.split("\n").find((line) => line.trim()) || "";
  return first
    .replace(/^\s{0,3}(#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)/, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/(\*\*|__|\*|_|~~|`+)(?=\S)([^]*?\S)\1/g, "$2")
    .replace(/\s+/g, " ")
    .trim();
}

export function withParent(message, held) {
  if (!message.reply_to || message.parent) return message;
  for (let i = held.length - 1; i >= Math.max(0, held.length - PARENT_LOOKBACK); i -= 1) {
    const m = held[i];
    if (m.id === message.reply_to) {
      const text = plainLine(m.content);
      const excerpt = text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text;
      return { ...message, parent: { seq: m.seq, sender: m.sender, excerpt } };
    }
  }
  return message;
}

function addMessage(state, incoming) {
  if (incoming.seq <= state.lastSeq) return state; // a replay of something already shown
  const message = withParent(incoming, state.messages);
  let next = state.messages.concat([message]);
  if (next.length > MAX_MESSAGES) next = next.slice(next.length - MAX_MESSAGES);
  const out = { ...state, messages: next, lastSeq: message.seq, eventsSince: 0 };
  if (message.kind === "chat" && out.peers[message.sender]) {
    const peer = out.peers[message.sender];
    out.peers = { ...out.peers, [message.sender]: { ...peer, messages: (peer.messages || 0) + 1 } };
  }
  const floor = message.meta && message.meta.floor;
  if (message.sender === "hub" && floor && floor.scope) {
    out.floors = { ...out.floors, [floor.scope]: floor };
  }
  const meta = message.meta || {};
  if (TASK_KINDS.has(message.kind) || meta.offer_id || meta.task_id) {
    out.workVersion = state.workVersion + 1;
  }
  return out;
}

// What a peer event says in the transcript, inline between the messages.
const PEER_NEWS = {
  joined: (d) => (d.how === "created" ? "joined" : d.how === "reaffirmed" ? "reconnected" : "came back"),
  left: (d) => ({ kicked: "was kicked by the operator", forgotten: "was forgotten" })[d.reason] || "left",
  offline: () => "went offline",
  reaped: () => "was reaped: silent past its grace period",
};

// What the transcript would otherwise miss: a form asked (its answer and its cancellation
// arrive as the hub's own messages) and a hand raised (the hub announces who holds the floor).
const CHAIR_FORM = /^Chair (d_[0-9a-f]+): /; // the hub asks it for a deliberation's convener

function formNews(change, form) {
  if (change !== "asked") return null;
  const chair = CHAIR_FORM.exec(form.title);
  if (chair) return [SYSTEM, `asks the operator to chair: ${form.title.slice(chair[0].length)}`];
  return [form.asker, `asks the operator: ${form.title}${form.to === "all" ? "" : ` (for ${form.to})`}`];
}

function floorNews(state, before, floor) {
  let next = state;
  const hadHands = new Set(before ? before.hands : []);
  for (const name of floor.hands) {
    if (!hadHands.has(name)) next = addEvent(next, name, `raised a hand for the floor of ${floor.scope}`, "hand");
  }
  return next;
}

const SYSTEM = "hub";

// A room event as a transcript row: numbered just after the newest message, so it sorts and
// windows with them but is never mistaken for one (the hub numbers messages in whole steps).
function addEvent(state, name, text, change) {
  const k = state.eventsSince + 1;
  const seq = state.lastSeq + 1 - 1 / (k + 1); // k-th event after lastSeq: below lastSeq + 1
  const row = { event: true, seq, ts: Date.now() / 1000, name, text, change };
  let next = state.messages.concat([row]);
  if (next.length > MAX_MESSAGES) next = next.slice(next.length - MAX_MESSAGES);
  return { ...state, messages: next, eventsSince: k };
}

function peerEvent(state, data) {
  const news = PEER_NEWS[data.change];
  const told = news ? addEvent(state, data.name, news(data), data.change) : state;
  return peerChange(told, data);
}

function peerChange(state, data) {
  const peers = { ...state.peers };
  const current = peers[data.name];
  switch (data.change) {
    case "joined":
      peers[data.name] = {
        name: data.name,
        state: "online",
        status: "",
        status_age: null,
        listening: false,
        paused: false,
        uptime: 0,
        last_seen_age: 0,
        skills: [],
        description: "",
        messages: 0,
        ...(data.how === "resumed" || data.how === "reaffirmed" ? current : {}),
      };
      if (["reaped", "offline"].includes(peers[data.name].state)) peers[data.name].state = "online";
      break;
    case "left":
      delete peers[data.name];
      break;
    case "reaped":
    case "offline":
      if (current) peers[data.name] = { ...current, state: data.change, listening: false };
      break;
    case "status":
      if (current) peers[data.name] = { ...current, status: data.status, status_age: 0 };
      break;
    case "paused":
      if (current) peers[data.name] = { ...current, paused: data.paused };
      break;
    default:
      return state;
  }
  return { ...state, peers };
}

function channelEvent(state, data) {
  const channels = { ...state.channels };
  const name = data.channel;
  const channel = channels[name] || { name, topic: "", topic_by: null, members: [], closed: false };
  switch (data.change) {
    case "joined":
      if (!channel.members.includes(data.name)) {
        channels[name] = { ...channel, members: [...channel.members, data.name].sort() };
      }
      break;
    case "left":
      channels[name] = { ...channel, members: channel.members.filter((m) => m !== data.name) };
      break;
    case "topic":
      channels[name] = { ...channel, topic: data.topic, topic_by: data.by };
      break;
    case "closed":
      channels[name] = { ...channel, closed: true, members: [] };
      break;
    case "reopened":
      channels[name] = { ...channel, closed: false };
      break;
    case "private":
    case "public":
      channels[name] = { ...channel, private: data.change === "private" };
      break;
    default:
      return state;
  }
  return { ...state, channels };
}

export function reduce(state, action) {
  switch (action.type) {
    case "snapshot": {
      const s = action.data;
      return {
        ...state,
        ready: true,
        mode: s.mode,
        rate: s.rate,
        peers: byName(s.peers),
        channels: byName(s.channels),
        messages: s.messages.map((m, i) => withParent(m, s.messages.slice(0, i))),
        lastSeq: s.messages.length ? s.messages[s.messages.length - 1].seq : 0,
        eventsSince: 0,
        olderExhausted: s.messages.length === 0 || s.messages[0].seq === 1,
        floors: byName(s.floors || [], "scope"),
        forms: byName(s.forms || [], "form_id"),
        health: s.health,
        // The hub's own samples from before this page opened, placed by their age.
        healthHistory: thinned(
          (s.health_history || []).map((h) => sample(h, Date.now() - h.age * 1000)),
        ),
        workVersion: state.workVersion + 1,
      };
    }
    case "message":
      return addMessage(state, action.data);
    case "peer": {
      const next = peerEvent(state, action.data);
      // One who left or was reaped holds no file any more (their reservations are void).
      const gone = action.data.change === "left" || action.data.change === "reaped";
      return gone ? { ...next, workVersion: next.workVersion + 1 } : next;
    }
    case "channel":
      return channelEvent(state, action.data);
    case "mode":
      return { ...state, mode: action.data.mode };
    case "rate":
      return { ...state, rate: action.data };
    case "form": {
      const forms = { ...state.forms };
      const form = action.data.form;
      if (action.data.change === "asked") forms[form.form_id] = form;
      else delete forms[form.form_id];
      const said = formNews(action.data.change, form);
      const next = { ...state, forms };
      return said ? addEvent(next, said[0], said[1], `form-${action.data.change}`) : next;
    }
    case "floor": {
      const before = state.floors[action.data.scope];
      const next = { ...state, floors: { ...state.floors, [action.data.scope]: action.data } };
      return floorNews(next, before, action.data);
    }
    case "decision":
      return { ...state, decisions: [action.data.record, ...state.decisions].slice(0, 200) };
    case "health": {
      const history = thinned([...state.healthHistory, sample(action.data, Date.now())]);
      return { ...state, health: action.data, healthHistory: history };
    }
    case "peers": {
      // A liveness poll: states and ages move with time, not with events.
      const peers = {};
      for (const peer of action.data) {
        peers[peer.name] = { ...peer, messages: (state.peers[peer.name] || {}).messages || 0 };
      }
      return { ...state, peers };
    }
    case "older": {
      const oldest = state.messages.length ? state.messages[0].seq : Infinity;
      const older = action.data.messages.filter((m) => m.seq < oldest);
      return {
        ...state,
        messages: older.concat(state.messages),
        olderExhausted: !action.data.more,
      };
    }
    case "decisions":
      return { ...state, decisions: action.data };
    case "deliberation":
      return {
        ...state,
        deliberations: { ...state.deliberations, [action.data.deliberation_id]: action.data },
      };
    case "deliberations":
      return { ...state, deliberations: byName(action.data, "deliberation_id") };
    case "ledger":
      return { ...state, ledger: action.data };
    case "tasks":
      return { ...state, tasks: action.data };
    case "activity":
      return { ...state, activity: [action.data, ...state.activity].slice(0, ACTIVITY_KEPT) };
    case "activityPage":
      return { ...state, activity: action.data.slice(0, ACTIVITY_KEPT) };
    case "offers":
      return { ...state, offers: action.data };
    case "reservationList":
      return { ...state, reservations: action.data.reservations, reservationPolicy: action.data.policy };
    case "reservations":
    case "task_changed":
      // Who holds what, or a task no message told of, changed: fetch the lists again.
      return { ...state, workVersion: state.workVersion + 1 };
    case "teammates":
      // A teammate was spawned or ended, or a spawn grant changed: the Agents view refetches.
      return { ...state, teammatesVersion: state.teammatesVersion + 1 };
    case "feed":
      return { ...state, feed: action.data };
    default:
      return state;
  }
}
