// Full-text search over everything the room said and decided, and a thread's summary.

import { route } from "./api.js";
import { clock, colourOf, plural, stamp } from "./format.js";
import { html, useState } from "./ui.js";

const KINDS = ["message", "announcement", "task", "decision"];

// A snippet's matched words come between ** from the hub: shown as <mark>, never as HTML.
function Snippet({ text }) {
  const parts = text.split("**");
  return html`<span class="snippet">${parts.map((part, i) => (i % 2 ? html`<mark>${part}</mark>` : part))}</span>`;
}

export function Search({ api, notify }) {
  const [q, setQ] = useState("");
  const [kind, setKind] = useState("");
  const [order, setOrder] = useState("relevance");
  const [found, setFound] = useState(null);
  const [busy, setBusy] = useState(false);
  const [summary, setSummary] = useState(null); // {thread, data} or {thread, loading}

  async function find(event) {
    event.preventDefault();
    if (!q.trim()) return;
    setBusy(true);
    try {
      setFound(await api.get("/operator/search", { q, kind, order, limit: 30 }));
    } catch (error) {
      notify(error.message, "error");
    } finally {
      setBusy(false);
    }
  }

  async function summarize(thread) {
    setSummary({ thread, loading: true });
    try {
      setSummary({ thread, data: await api.get(route`/operator/threads/${thread}/summary`) });
    } catch (error) {
      setSummary(null);
      notify(error.message, "error");
    }
  }

  return html`
    <section class="panel" aria-labelledby="search-title">
      <h2 id="search-title">Search</h2>
      <form class="search-form" role="search" onSubmit=${find}>
        <input type="search" aria-label="search the room" data-read placeholder='words or "a phrase"'
          value=${q} onInput=${(e) => setQ(e.currentTarget.value)} />
        <select aria-label="kind" data-read value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
          <option value="">everything</option>
          ${KINDS.map((k) => html`<option value=${k}>${k}s</option>`)}
        </select>
        <select aria-label="order" data-read value=${order} onChange=${(e) => setOrder(e.currentTarget.value)}>
          <option value="relevance">best first</option>
          <option value="recent">newest first</option>
        </select>
        <button type="submit" data-read disabled=${busy}>${busy ? "Searching…" : "Search"}</button>
      </form>
      ${found && html`<${Results} found=${found} summarize=${summarize} />`}
      ${summary && html`<${Summary} summary=${summary} close=${() => setSummary(null)} />`}
    </section>
  `;
}

function Results({ found, summarize }) {
  const none = found.hits.length === 0 && found.decisions.length === 0;
  return html`
    <div class="results" data-results=${found.hits.length}>
      ${none && html`<p class="empty">Nothing matches ${found.query}.</p>`}
      ${found.unindexed > 0 &&
      html`<p class="muted">The ${found.unindexed} newest messages are still being indexed.</p>`}
      ${found.decisions.length > 0 &&
      html`<ul class="cards" aria-label="decisions found">
        ${found.decisions.map(
          (d) => html`<li class="card" key=${d.hash} data-decision-hit=${d.hash}>
            <div><span class="badge">decision</span> <span class="muted">${stamp(d.timestamp)} · ${d.audience || "operator"}</span></div>
            <${Snippet} text=${d.snippet} />
          </li>`,
        )}
      </ul>`}
      <ul class="cards" aria-label="messages found">
        ${found.hits.map((h) => {
          const thread = h.thread || h.id;
          return html`<li class="card" key=${h.seq} data-hit=${h.seq}>
            <div>
              <span class="badge">${h.kind}</span>
              ${" "}<span class=${`sender ${colourOf(h.sender)}`}>${h.sender}</span> → ${h.to}
              ${" "}<span class="muted">${clock(h.ts)}${h.task_id ? ` · task ${h.task_id}` : ""}</span>
            </div>
            <${Snippet} text=${h.snippet} />
            <button type="button" data-read data-summarize=${thread} onClick=${() => summarize(thread)}>
              Summarize the thread
            </button>
          </li>`;
        })}
      </ul>
      ${found.more && html`<p class="muted">More match: add words or pick a kind.</p>`}
    </div>
  `;
}

function Summary({ summary, close }) {
  const data = summary.data;
  return html`
    <div class="card summary" data-summary=${summary.thread} aria-live="polite">
      <div class="row">
        <strong>Thread ${summary.thread}</strong>
        <span class="grow"></span>
        <button type="button" data-read onClick=${close}>Close</button>
      </div>
      ${summary.loading && html`<p class="muted">Summarizing…</p>`}
      ${data &&
      html`<div>
        <p class="muted">${plural(data.messages, "message")} · ${data.method === "model" ? `by ${data.model}` : "extractive"}
          ${data.model_error ? ` · the model failed: ${data.model_error}` : ""}</p>
        <p class="summary-text">${data.summary}</p>
        ${data.tasks.length > 0 &&
        html`<ul aria-label="tasks of the thread">
          ${data.tasks.map((t) => html`<li key=${t.task_id}>${t.task_id}: ${t.state}${t.subject ? ` (${t.subject})` : ""}</li>`)}
        </ul>`}
      </div>`}
    </div>
  `;
}
