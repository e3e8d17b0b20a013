// The transcript's filters (who, where, what kind, which words). On a wide screen they are
// always shown; on a phone they fold behind one button that says how many are on, so that
// the messages keep the screen.

import { html } from "./ui.js";

const KINDS = [
  "chat",
  "operator",
  "announce",
  "control",
  "system",
  "task",
  "result",
  "failure",
  "input_request",
  "task_canceled",
  "form_answer",
  "form_canceled",
];

function countOn(filters) {
  return ["peer", "channel", "kind", "q"].filter((key) => Boolean(filters[key])).length;
}

// The button that unfolds the filters; shown only at phone width (CSS).
export function FilterToggle({ filters, open, setOpen }) {
  const on = countOn(filters);
  return html`<button type="button" data-read class="filter-toggle" aria-expanded=${open ? "true" : "false"}
    aria-controls="transcript-filters" data-on=${on} onClick=${() => setOpen(!open)}>
    ${open ? "Hide filters" : on ? `Filters · ${on} on` : "Filters"}
  </button>`;
}

export function Filters({ state, filters, setFilters, open }) {
  const peers = Object.keys(state.peers).sort();
  const channels = Object.keys(state.channels).sort();
  const set = (key) => (event) => setFilters({ ...filters, [key]: event.currentTarget.value });
  return html`
    <div class=${`filters${open ? " open" : ""}`} id="transcript-filters" role="search">
      <label>
        Peer
        <select value=${filters.peer} onChange=${set("peer")}>
          <option value="">anyone</option>
          <option value="operator">operator</option>
          <option value="hub">hub</option>
          ${peers.map((p) => html`<option value=${p}>${p}</option>`)}
        </select>
      </label>
      <label>
        Channel
        <select value=${filters.channel} onChange=${set("channel")}>
          <option value="">any</option>
          ${channels.map((c) => html`<option value=${c}>${c}</option>`)}
        </select>
      </label>
      <label>
        Kind
        <select value=${filters.kind} onChange=${set("kind")}>
          <option value="">any</option>
          ${KINDS.map((k) => html`<option value=${k}>${k}</option>`)}
        </select>
      </label>
      <label class="grow">
        Search
        <input
          type="search"
          id="search"
          placeholder='words or "a phrase" ( / )'
          value=${filters.q}
          onInput=${set("q")}
        />
      </label>
    </div>
  `;
}
