// A deliberation as the operator reads it: subject, panel, round, who has answered, each
// position as fields (stance, confidence, rationale, evidence), then the verdict with dissent.
// The Decisions tab lists them; the transcript folds a deliberation's messages into one.

import { clock, colourOf, short } from "./format.js";
import { html } from "./ui.js";

const STATE_WORDS = {
  deliberating: "panel answering",
  deciding: "chair deciding",
  decided: "decided",
  failed: "failed",
};

function seatWord(p, round) {
  if (p.absent) return "absent";
  if (p.task_id) return `waiting (round ${round})`;
  if (p.answered.length) return `answered round ${p.answered.join(", ")}`;
  return "not asked yet";
}

function Position({ p }) {
  return html`<li class="position" data-position=${p.agent}>
    <strong class=${colourOf(p.agent)}>${p.agent}</strong>
    <dl>
      <div><dt>stance</dt><dd><span class="badge" data-stance=${p.stance}>${p.stance}</span></dd></div>
      <div><dt>confidence</dt><dd>${`${Math.round(p.confidence * 100)}%`}</dd></div>
      <div><dt>rationale</dt><dd>${p.summary}</dd></div>
      ${p.evidence && p.evidence.length > 0 &&
      html`<div><dt>evidence</dt><dd>${p.evidence.join(", ")}</dd></div>`}
    </dl>
  </li>`;
}

// The card's body; the caller gives it its element and its attributes.
export function DeliberationBody({ d }) {
  const latest = d.rounds.length ? d.rounds[d.rounds.length - 1] : [];
  return html`
    <div><strong>${d.subject}</strong></div>
    <div class="muted">
      ${`${STATE_WORDS[d.state] || d.state} · round ${d.round} of ${d.max_rounds}`}
      ${` · chair ${d.chair} · convened by ${d.convener}`}
    </div>
    <ul class="panelists">
      ${d.panel.map(
        (p) => html`<li data-panelist=${p.name} data-seat=${p.absent ? "absent" : p.task_id ? "waiting" : p.answered.length ? "answered" : "idle"}>
          ${`${p.name}: ${seatWord(p, d.round)}`}
        </li>`,
      )}
    </ul>
    ${latest.length > 0 &&
    html`<ul class="positions">${latest.map((p) => html`<${Position} key=${p.agent} p=${p} />`)}</ul>`}
    ${d.state === "deciding" && d.chair_form && html`<div class="muted">The chair's question waits in Forms.</div>`}
    ${d.verdict &&
    html`<div class="verdict" data-verdict>
      → ${d.verdict.decision} (${Math.round(d.verdict.confidence * 100)}%)${d.dissent.length
        ? ` · dissent: ${d.dissent.join(", ")}`
        : ""}
    </div>`}
    ${d.record_hash && html`<div class="muted mono">record ${d.record_index} · ${short(d.record_hash)}</div>`}
    ${d.error && html`<div class="error">${d.error}</div>`}
  `;
}

// Who a deliberation's message is from, in truth: the hub sends the position requests on the
// convener's behalf; the answers are the panelists' own.
function creditOf(m, d) {
  return m.kind === "task" && m.sender === d.convener ? `hub, for ${d.convener}` : m.sender;
}

// The transcript's one row for a deliberation: the card, then its messages one click away.
export function DeliberationRow({ fold }) {
  const d = fold.deliberation;
  return html`<article class="msg deliberation-row" data-seq=${fold.seq} data-deliberation-card=${d.deliberation_id}>
    <header>
      <time datetime=${new Date(fold.ts * 1000).toISOString()}>${clock(fold.ts)}</time>
      <span class="sender">hub</span>
      <span class="badge">deliberation</span>
    </header>
    <div class="card deliberation"><${DeliberationBody} d=${d} /></div>
    <details data-raw>
      <summary>${`the requests and answers as sent (${fold.messages.length})`}</summary>
      ${fold.messages.map(
        (m) => html`<div class="raw" key=${m.seq} data-raw-seq=${m.seq}>
          <div class="muted">${`#${m.seq} ${creditOf(m, d)} → ${m.to} · ${m.kind}`}</div>
          <pre>${m.content}</pre>
        </div>`,
      )}
    </details>
  </article>`;
}

// A deliberation's messages fold into one row, where its first message in `rows` was.
// The chair's answer is a form's (its own thread): it folds in by the form's id.
export function foldDeliberations(rows, deliberations) {
  const out = [];
  const folds = new Map();
  const chairs = new Map();
  for (const d of Object.values(deliberations)) if (d.chair_form) chairs.set(d.chair_form, d);
  for (const m of rows) {
    const form = m.meta && m.meta.form_id;
    const d = m.event ? undefined : (m.thread && deliberations[m.thread]) || (form && chairs.get(form));
    if (!d) {
      out.push(m);
      continue;
    }
    let fold = folds.get(d.deliberation_id);
    if (!fold) {
      fold = { fold: true, deliberation: d, seq: m.seq, ts: m.ts, messages: [] };
      folds.set(d.deliberation_id, fold);
      out.push(fold);
    }
    fold.messages.push(m);
  }
  return out;
}
