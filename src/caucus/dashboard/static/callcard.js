// The tool call an approval form asks about, whole: the tool, what its annotations say, every
// argument (keys in a stable order, long values in a box that says how much more there is and
// opens whole), the files the arguments name with what each held, and the canonical text the
// approve option's digest covers. The card tells its holder once every argument has been seen
// whole (`onSeen`): approving waits for that (issue 48).

import { html, useEffect, useLayoutEffect, useRef, useState } from "./ui.js";

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

// The approve option as the operator reads it: the digest's first 12 hex, the rest on hover.
export const SHORT_DIGEST = 12;
export function shortOption(option) {
  const at = option.indexOf("sha256:");
  if (at < 0) return option;
  return `${option.slice(0, at + 7 + SHORT_DIGEST)}…`;
}

// One argument's value: a box of at most 14 lines that, when there is more, says how much and
// opens whole; seen once it was shown whole (it fits, it was opened, or scrolled to its end).
function ArgValue({ value, onSeen }) {
  const box = useRef(null);
  const [hidden, setHidden] = useState(0); // lines below the box's edge
  const [open, setOpen] = useState(false);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el || open) {
      onSeen(true);
      return;
    }
    const line = parseFloat(getComputedStyle(el).lineHeight) || 16;
    const more = Math.ceil((el.scrollHeight - el.clientHeight) / line);
    setHidden(more > 0 ? more : 0);
    if (more <= 0) onSeen(true);
  }, [value, open]);
  const scrolled = (e) => {
    const el = e.currentTarget;
    if (el.scrollTop + el.clientHeight >= el.scrollHeight - 2) onSeen(true);
  };
  return html`<div class=${`call-box${open ? " open" : ""}`}>
    <pre class="call-value" tabindex="0" ref=${box} onScroll=${scrolled}>${value}</pre>
    ${hidden > 0 &&
    !open &&
    html`<button type="button" class="call-more" data-more onClick=${() => setOpen(true)}>
      ▾ ${hidden} more line${hidden === 1 ? "" : "s"}: show it whole
    </button>`}
  </div>`;
}

const KINDS = {
  bidi: "reorders the text around it",
  invisible: "invisible characters",
  control: "control characters",
  blank_lines: "a run of blank lines",
  lookalike: "look-alike letters of another script",
};

// What the hub found in the call, said before the arguments: hidden characters are shown as
// escapes (⟨U+202E⟩) in the boxes below, look-alikes named with what they mimic.
function Findings({ call }) {
  const found = call.findings || [];
  if (found.length === 0) return null;
  return html`<div class="call-findings" role="alert">
    ${call.hidden &&
    html`<span class="badge warn" data-hidden>⚠ this call contains hidden characters</span>`}
    <ul>
      ${found.map(
        (f, i) => html`<li key=${i} data-finding=${f.kind}>
          <b>${f.argument || "tool name"}</b>: ${KINDS[f.kind] || f.kind} — <code>${f.detail}</code>
        </li>`,
      )}
    </ul>
  </div>`;
}

export function CallCard({ call, onSeen }) {
  const keys = Object.keys(call.arguments).sort();
  const text = (k) => (call.shown && k in call.shown ? call.shown[k] : shown(call.arguments[k]));
  const flagged = new Set((call.findings || []).map((f) => f.argument));
  const files = Object.entries(call.files);
  const [seen, setSeen] = useState(() => new Set());
  useEffect(() => {
    if (onSeen) onSeen(keys.every((k) => seen.has(k)), keys.filter((k) => !seen.has(k)));
  }, [seen, call.sha256]);
  const sawWhole = (key) => (whole) => {
    if (whole && !seen.has(key)) setSeen((before) => new Set([...before, key]));
  };
  const copy = () => navigator.clipboard && navigator.clipboard.writeText(call.sha256);
  return html`<div class="call-card" data-call=${call.sha256}>
    <div class="call-head"><code>${call.tool}</code> <${Hints} annotations=${call.annotations} /></div>
    <${Findings} call=${call} />
    ${keys.length === 0
      ? html`<p class="muted">no arguments</p>`
      : html`<dl class="call-args">
          ${keys.map(
            (k) => html`<div key=${k} data-arg=${k} data-seen=${seen.has(k) ? "yes" : "no"}>
              <dt>${k}${flagged.has(k) && html` <span class="badge warn">⚠ see above</span>`}</dt>
              <dd><${ArgValue} value=${text(k)} onSeen=${sawWhole(k)} /></dd>
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
      <summary>What the approval covers: sha256 <code title=${call.sha256}>${call.sha256.slice(0, SHORT_DIGEST)}…</code>
        <button type="button" class="copy" onClick=${copy} aria-label="copy the whole sha256">copy</button></summary>
      <pre class="call-value" tabindex="0">${call.canonical_shown || call.canonical}</pre>
    </details>
  </div>`;
}
