// The Caucus operator console: sign in, follow the feed, act on the room.

import { ActivityView, Agents } from "./agents.js";
import { Teammates } from "./teammates.js";
import { Api, follow, route } from "./api.js";
import { Composer } from "./composer.js";
import { Roster, Transcript } from "./panels.js";
import { Search } from "./search.js";
import { Channels, Controls, Decisions, Health, Work } from "./side.js";
import { initial, reduce } from "./state.js";
import { html, render, useCallback, useEffect, useReducer, useRef, useState } from "./ui.js";
import { Forms } from "./wizard.js";

const TOKEN_KEY = "caucus-console-token";
const PEER_POLL_MS = 5000;

function tokenFromFragment() {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (!match) return null;
  // The token leaves the address bar (and the tab's history) as soon as it is read.
  window.history.replaceState(null, "", window.location.pathname + window.location.search);
  return decodeURIComponent(match[1]);
}

// The roster's words for the hub's liveness states (quiet and stale are both idle).
const WORDS = { online: "online", quiet: "idle", stale: "idle", offline: "offline", reaped: "gone" };
const ORDER = ["online", "idle", "offline", "gone"];

function stateCounts(peers) {
  const counts = {};
  for (const p of Object.values(peers)) counts[WORDS[p.state]] = (counts[WORDS[p.state]] || 0) + 1;
  const parts = ORDER.filter((s) => counts[s]).map((s) => `${counts[s]} ${s}`);
  return parts.length ? parts.join(" · ") : "no peers";
}

function SignIn({ onToken, error }) {
  const [token, setToken] = useState("");
  return html`
    <main class="signin">
      <form
        class="card"
        onSubmit=${(e) => {
          e.preventDefault();
          if (token.trim()) onToken(token.trim());
        }}
      >
        <h1>Caucus console</h1>
        <p>
          Open the <code>operator:</code> link <code>caucus hub</code> printed, or paste the operator
          (or observer) token. It stays in this tab only.
        </p>
        <label>Token <input type="password" autocomplete="off" value=${token} autofocus
          onInput=${(e) => setToken(e.currentTarget.value)} /></label>
        ${error && html`<p class="error" role="alert">${error}</p>`}
        <button type="submit" class="primary" data-read>Sign in</button>
      </form>
    </main>
  `;
}

const NARROW = "(max-width: 760px)"; // app.css's phone width: one sheet at a time

function useNarrow() {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW).matches);
  useEffect(() => {
    const media = window.matchMedia(NARROW);
    const changed = () => setNarrow(media.matches);
    media.addEventListener("change", changed);
    return () => media.removeEventListener("change", changed);
  }, []);
  return narrow;
}

const SHEETS = [
  ["room", "Room"],
  ["peers", "Peers"],
  ["panels", "Panels"],
];

const TABS = [
  ["forms", "Forms"],
  ["channels", "Channels & floors"],
  ["work", "Tasks & board"],
  ["decisions", "Decisions"],
  ["search", "Search"],
  ["health", "Health"],
  ["activity", "Activity"],
  ["agents", "Agents"],
  ["controls", "Controls"],
];

function Console({ api, role, onSignOut }) {
  const [state, dispatch] = useReducer(reduce, initial);
  const [tab, setTab] = useState("forms");
  // At phone width one sheet shows at a time: the room, its peers, or the panels.
  const [sheet, setSheet] = useState("room");
  const narrow = useNarrow();
  // At phone width only the chosen sheet is there at all (one Forms, one transcript).
  const shows = (key) => !narrow || sheet === key;
  const [filters, setFilters] = useState({ peer: "", channel: "", kind: "", q: "" });
  const [target, setTarget] = useState("all");
  const [toasts, setToasts] = useState([]);
  const [confirmStop, setConfirmStop] = useState(false);
  const [help, setHelp] = useState(false);
  const composer = useRef(null);
  const observer = role !== "operator";

  const notify = useCallback((text, kind = "ok") => {
    const id = Math.random();
    setToasts((list) => [...list.slice(-3), { id, text, kind }]);
    setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), 6000);
  }, []);

  const pollPeers = useCallback(async () => {
    try {
      dispatch({ type: "peers", data: (await api.get("/peers")).peers });
    } catch (error) {
      if (error.status === 401) onSignOut("the hub no longer accepts this token");
    }
  }, [api]);

  const loadLedger = useCallback(async () => {
    try {
      dispatch({ type: "ledger", data: await api.get("/operator/ledger") });
    } catch (error) {
      notify(error.message, "error");
    }
  }, [api]);

  useEffect(() => {
    let peerTimer = null;
    const feed = follow(
      api,
      (event) => {
        dispatch({ type: event.type, data: event.data });
        if (event.type === "peer" && event.data.change === "joined") {
          clearTimeout(peerTimer);
          peerTimer = setTimeout(pollPeers, 300);
        }
        if (event.type === "decision") loadLedger();
      },
      (status) => {
        dispatch({ type: "feed", data: status });
        if (status === "refused") onSignOut("the hub refused this token");
      },
    );
    const poll = setInterval(pollPeers, PEER_POLL_MS);
    (async () => {
      try {
        dispatch({ type: "decisions", data: (await api.get("/operator/decisions", { limit: 50 })).decisions });
        dispatch({ type: "deliberations", data: (await api.get("/operator/deliberations")).deliberations });
        dispatch({ type: "activityPage", data: (await api.get("/operator/activity", { limit: 500 })).calls });
      } catch (error) {
        notify(error.message, "error");
      }
    })();
    loadLedger();
    return () => {
      feed.close();
      clearInterval(poll);
      clearTimeout(peerTimer);
    };
  }, [api]);

  // Tasks and offers change through messages, reservations by their own event; fetch them
  // again when one passes by.
  useEffect(() => {
    const timer = setTimeout(async () => {
      try {
        dispatch({ type: "tasks", data: (await api.get("/operator/tasks", { limit: 200 })).tasks });
        dispatch({ type: "offers", data: (await api.get("/operator/offers")).offers });
        dispatch({ type: "reservationList", data: await api.get("/reservations") });
      } catch (error) {
        notify(error.message, "error");
      }
    }, 250);
    return () => clearTimeout(timer);
  }, [state.workVersion]);

  // The room's brakes on the keyboard (never while typing): p pauses, r resumes, s asks to
  // stop, / searches, ? lists the keys, Escape closes a dialog.
  const keys = useRef(null);
  keys.current = (e) => {
    if (e.key === "Escape") {
      setConfirmStop(false);
      setHelp(false);
      return;
    }
    const typing = /INPUT|TEXTAREA|SELECT/.test(document.activeElement.tagName);
    if (typing || e.ctrlKey || e.metaKey || e.altKey || confirmStop) return;
    const brake = { p: "pause", r: "resume" }[e.key];
    if (e.key === "/") {
      e.preventDefault();
      const search = document.getElementById("search");
      if (!search) setSheet("room"); // on a phone's other sheets: to the transcript first
      else if (search.offsetParent !== null) search.focus();
      else {
        // Folded at phone width: unfold the filters, then focus once they are drawn.
        document.querySelector(".filter-toggle").click();
        requestAnimationFrame(() => document.getElementById("search").focus());
      }
    } else if (e.key === "?") {
      setHelp(!help);
    } else if (brake || e.key === "s") {
      e.preventDefault();
      if (observer) notify("an observer cannot pause, resume or stop the room", "error");
      else if (brake) act("room", brake);
      else setConfirmStop(true);
    }
  };
  useEffect(() => {
    const onKey = (e) => keys.current(e);
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  async function act(action, name, extra) {
    const paths = {
      pause: () => route`/operator/peers/${name}/pause`,
      resume: () => route`/operator/peers/${name}/resume`,
      interrupt: () => route`/operator/peers/${name}/interrupt`,
      reset: () => route`/operator/peers/${name}/reset`,
      stopPeer: () => route`/operator/peers/${name}/stop`,
      kick: () => route`/operator/peers/${name}/kick`,
      clearFloor: () => route`/operator/floors/${String(name).replace(/^#/, "")}/clear`,
      closeChannel: () => route`/operator/channels/${String(name).replace(/^#/, "")}/close`,
      reopenChannel: () => route`/operator/channels/${String(name).replace(/^#/, "")}/reopen`,
      makePrivate: () => route`/operator/channels/${String(name).replace(/^#/, "")}/private`,
      makePublic: () => route`/operator/channels/${String(name).replace(/^#/, "")}/private`,
      invite: () => route`/operator/channels/${String(name).replace(/^#/, "")}/invite`,
    };
    const bodies = {
      makePrivate: { private: true },
      makePublic: { private: false },
      invite: { peer: extra },
    };
    try {
      if (action === "ping") {
        const peer = await api.get(route`/operator/peers/${name}/ping`);
        notify(`${peer.name}: ${peer.state}, last seen ${Math.round(peer.last_seen_age)} s ago${peer.listening ? ", listening" : ""}`);
        return;
      }
      if (action === "room") {
        const body = extra ? { reason: extra } : {};
        const state = await api.post(route`/operator/${name}`, ["stop", "reset"].includes(name) ? body : undefined);
        notify(`room ${state.mode}`);
        return;
      }
      await api.post(paths[action](), bodies[action]);
      const said = {
        clearFloor: "cleared the floor of",
        stopPeer: "told to stop:",
        makePrivate: "made private:",
        makePublic: "made public:",
        invite: `invited ${extra} into`,
      }[action] || action;
      notify(`${said} ${name}`);
      pollPeers();
    } catch (error) {
      notify(error.message, "error");
    }
  }

  function messagePeer(name) {
    setTarget(name);
    setSheet("room"); // at phone width the composer is on the room's sheet
    if (composer.current) composer.current.focus();
  }

  const pending = Object.keys(state.forms).length;
  // Everything the operator must answer: pending forms (a chair's question among them).
  const waiting = pending;
  const panels = {
    forms: html`<${Forms} api=${api} state=${state} observer=${observer} notify=${notify} />`,
    channels: html`<${Channels} state=${state} observer=${observer} act=${act} />`,
    work: html`<${Work} api=${api} state=${state} observer=${observer} notify=${notify} />`,
    decisions: html`<${Decisions} state=${state} refresh=${loadLedger} />`,
    search: html`<${Search} api=${api} notify=${notify} />`,
    health: html`<${Health} state=${state} />`,
    activity: html`<${ActivityView} state=${state} />`,
    agents: html`<${Agents} api=${api} observer=${observer} notify=${notify} />
      <${Teammates} api=${api} state=${state} observer=${observer} notify=${notify} />`,
    controls: html`<${Controls} api=${api} state=${state} observer=${observer} notify=${notify} act=${act} />`,
  };
  return html`
    <div class=${`console mode-${state.mode}${waiting ? " has-waiting" : ""}`}>
      <header class="top">
        <h1>Caucus</h1>
        <span class=${`badge mode`} data-mode=${state.mode}>room ${state.mode}</span>
        <span class=${`badge feed-${state.feed}`} data-feed=${state.feed}>${state.feed === "live" ? "live" : state.feed}</span>
        ${waiting > 0 &&
        html`<button type="button" data-read class="badge waiting" data-waiting=${waiting}
          title="questions and decisions waiting for the operator"
          onClick=${() => {
            setTab("forms");
            setSheet("panels");
          }}>${`${waiting} waiting for you`}</button>`}
        <span class="grow"></span>
        <span class="muted" data-counts>${stateCounts(state.peers)} · ${state.health ? state.health.messages_per_minute : 0}/min</span>
        <div class="row room-buttons" role="group" aria-label="room">
          ${state.mode === "open"
            ? html`<button type="button" disabled=${observer} onClick=${() => act("room", "pause")} title="pause the room (p)">Pause</button>`
            : html`<button type="button" disabled=${observer} onClick=${() => act("room", "resume")} title="resume the room (r)">Resume</button>`}
          <button type="button" class="danger" disabled=${observer} onClick=${() => setConfirmStop(true)}
            title="stop the room (s)">Stop</button>
        </div>
        <span class=${`badge role-${role}`}>${role}</span>
        <button type="button" data-read onClick=${() => onSignOut(null)}>Sign out</button>
      </header>
      ${!state.ready && html`<p class="boot">Connecting to the hub…</p>`}
      <div class="layout" data-sheet=${sheet}>
        ${narrow && sheet === "room" && waiting > 0 &&
        html`<section class="waiting-first" aria-label="waiting for you">
          <${Forms} api=${api} state=${state} observer=${observer} notify=${notify} pinned
            onMore=${() => {
              setTab("forms");
              setSheet("panels");
            }} />
        </section>`}
        ${shows("peers") &&
        html`<${Roster} peers=${state.peers} floors=${state.floors} observer=${observer} act=${act} onMessage=${messagePeer} />`}
        ${shows("room") &&
        html`<div class="center">
          <${Transcript} api=${api} state=${state} dispatch=${dispatch} filters=${filters}
            setFilters=${setFilters} notify=${notify} />
          <${Composer} api=${api} state=${state} target=${target} setTarget=${setTarget}
            observer=${observer} notify=${notify} inputRef=${composer} />
        </div>`}
        ${shows("panels") &&
        html`<aside class="side">
          <nav class="tabs" role="tablist" aria-label="panels">
            ${TABS.map(
              ([key, label]) => html`<button type="button" role="tab" data-read data-tab=${key}
                aria-selected=${tab === key} class=${tab === key ? "active" : ""} onClick=${() => setTab(key)}>
                ${label}${key === "forms" && pending ? html` <span class="count">${pending}</span>` : ""}
              </button>`,
            )}
          </nav>
          <div role="tabpanel" data-panel=${tab}>${panels[tab]}</div>
        </aside>`}
      </div>
      <nav class="sheets" aria-label="views">
        ${SHEETS.map(
          ([key, label]) => html`<button type="button" data-read data-sheet-button=${key}
            aria-current=${sheet === key ? "page" : "false"} class=${sheet === key ? "active" : ""}
            onClick=${() => setSheet(key)}>${label}${key === "panels" && waiting
              ? html` <span class="count">${waiting}</span>`
              : ""}</button>`,
        )}
      </nav>
      ${confirmStop &&
      html`<${StopDialog} onStop=${(reason) => {
        setConfirmStop(false);
        act("room", "stop", reason);
      }} onKeep=${() => setConfirmStop(false)} />`}
      ${help && html`<${KeysHelp} onClose=${() => setHelp(false)} />`}
      <div class="toasts" aria-live="assertive">
        ${toasts.map((t) => html`<div key=${t.id} class=${`toast ${t.kind}`} role="status">${t.text}</div>`)}
      </div>
    </div>
  `;
}

function StopDialog({ onStop, onKeep }) {
  const [reason, setReason] = useState("");
  return html`
    <div class="dialog-backdrop">
      <form class="card" role="dialog" aria-modal="true" aria-labelledby="stop-title"
        onSubmit=${(e) => {
          e.preventDefault();
          onStop(reason.trim());
        }}>
        <h2 id="stop-title">Stop the room?</h2>
        <p>Every agent is told to stop, and new sends are refused until you resume or reset the room.</p>
        <label>Reason told to the agents (optional)
          <input value=${reason} maxlength="500" onInput=${(e) => setReason(e.currentTarget.value)} /></label>
        <div class="row">
          <button type="submit" class="danger" autofocus>Stop the room</button>
          <button type="button" onClick=${onKeep}>Keep going</button>
        </div>
      </form>
    </div>
  `;
}

function KeysHelp({ onClose }) {
  const keys = [
    ["p", "pause the room"],
    ["r", "resume the room"],
    ["s", "stop the room (asks first)"],
    ["/", "search the transcript"],
    ["@ #", "in the composer: complete a peer or channel (Tab or Enter)"],
    ["Ctrl+Enter", "send"],
    ["Esc", "close this"],
  ];
  return html`
    <div class="dialog-backdrop" onClick=${onClose}>
      <div class="card" role="dialog" aria-modal="true" aria-labelledby="keys-title">
        <h2 id="keys-title">Keys</h2>
        <dl class="stats">${keys.map(([k, what]) => html`<div><dt><kbd>${k}</kbd></dt><dd>${what}</dd></div>`)}</dl>
      </div>
    </div>
  `;
}

function App() {
  const [token, setToken] = useState(() => tokenFromFragment() || sessionStorage.getItem(TOKEN_KEY));
  const [session, setSession] = useState(null);
  const [error, setError] = useState(null);

  // An operator link pasted into a tab that is already open signs in with its token.
  useEffect(() => {
    const onHash = () => {
      const fresh = tokenFromFragment();
      if (fresh) {
        setSession(null);
        setError(null);
        setToken(fresh);
      }
    };
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  useEffect(() => {
    if (!token) return;
    let stale = false;
    const api = new Api(token);
    api
      .get("/operator/session")
      .then((info) => {
        if (stale) return;
        sessionStorage.setItem(TOKEN_KEY, token);
        setSession({ api, role: info.role });
        setError(null);
      })
      .catch((err) => {
        if (stale) return;
        sessionStorage.removeItem(TOKEN_KEY);
        setToken(null);
        setError(err.status === 401 || err.status === 403 ? `That token was refused: ${err.message}` : err.message);
      });
    return () => {
      stale = true;
    };
  }, [token]);

  function signOut(why) {
    sessionStorage.removeItem(TOKEN_KEY);
    setSession(null);
    setToken(null);
    setError(why);
  }

  if (!token || !session) {
    return token && !error ? html`<p class="boot">Signing in…</p>` : html`<${SignIn} onToken=${setToken} error=${error} />`;
  }
  return html`<${Console} api=${session.api} role=${session.role} onSignOut=${signOut} />`;
}

const root = document.getElementById("app");
root.textContent = ""; // the boot line is the page's, not Preact's: it must not linger
render(html`<${App} />`, root);
