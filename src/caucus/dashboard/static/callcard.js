// The tool call an approval form asks about, whole: the tool, what its annotations say, every
// argument (keys in a stable order, long values in a scrolling box, never cut), the files the
// arguments name with what each held, and the canonical text the approve option's digest covers.

import { html } from "./ui.js";

const HINTS = [
  ["readOnlyHint", "read-only", "may change things"],
  ["destructiveHint", "destructive", "not destructive"],
  ["idempotentHint", "idempotent", "not idempotent"],
  ["openWorldHint", "reaches outside", "stays local"],
];

// JSON with every object's keys sorted: the same value always reads the same.
export function sortedJSON(value) {
  const sort = (v) => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])]));
    }
    return v;
  };
  return JSON.stringify(sort(value), null, 2);
}

function shown(value) {
  return typeof value === "string" ? value : sortedJSON(value);
}

function Hints({ annotations }) {
  const given = HINTS.filter(([key]) => typeof annotations[key] === "boolean");
  if (given.length === 0) {
    return html`<span class="badge warn" title="MCP's default for a tool without hints">
      no annotations: it may change things</span>`;
  }
  return given.map(([key, yes, no]) => {
    const on = annotations[key];
    const tone = (key === "destructiveHint" && on) || (key === "readOnlyHint" && !on) ? "warn" : "";
    return html`<span class="badge ${tone}" data-hint=${key}>${on ? yes : no}</span> `;
  });
}

export function CallCard({ call }) {
  const keys = Object.keys(call.arguments).sort();
  const files = Object.entries(call.files);
  return html`<div class="call-card" data-call=${call.sha256}>
    <div class="call-head"><code>${call.tool}</code> <${Hints} annotations=${call.annotations} /></div>
    ${keys.length === 0
      ? html`<p class="muted">no arguments</p>`
      : html`<dl class="call-args">
          ${keys.map(
            (k) => html`<div key=${k} data-arg=${k}>
              <dt>${k}</dt>
              <dd><pre class="call-value" tabindex="0">${shown(call.arguments[k])}</pre></dd>
            </div>`,
          )}
        </dl>`}
    ${files.length > 0 &&
    html`<div class="call-files">
      <div class="muted">Files it names, as they are now (a change before it runs refuses it):</div>
      <ul>
        ${files.map(([path, state]) => html`<li key=${path}><code>${path}</code> <span class="muted">${state}</span></li>`)}
      </ul>
    </div>`}
    <details class="call-canonical">
      <summary>What the approval covers: sha256 <code>${call.sha256.slice(0, 16)}…</code></summary>
      <pre class="call-value" tabindex="0">${call.canonical}</pre>
    </details>
  </div>`;
}
