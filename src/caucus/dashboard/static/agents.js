// Agents at work: launching native agents (their state and output), and every tool call.

import { route } from "./api.js";
import { age, clock, colourOf, plural } from "./format.js";
import { html, useEffect, useState } from "./ui.js";

const POLL_MS = 2000;
const BLANK = { name: "", backend: "openai", model: "", base_url: "", api_key_env: "", prompt: "", tools: "", allow: "", workdir: "" };

function request(form) {
  const body = { name: form.name.trim(), backend: form.backend };
  for (const key of ["model", "base_url", "api_key_env", "prompt", "workdir"]) {
    if (form[key].trim()) body[key] = form[key].trim();
  }
  const tools = form.tools.split("\n").map((t) => t.trim()).filter(Boolean);
  if (tools.length) body.tools = tools;
  const allow = form.allow.split(/[\s,]+/).filter(Boolean);
  if (allow.length) body.allow = allow;
  return body;
}

function stateLine(agent) {
  if (agent.state === "exited") return `exited (${agent.exit_code})`;
  return agent.state;
}

export function Agents({ api, observer, notify }) {
  const [listing, setListing] = useState(null);
  const [form, setForm] = useState(BLANK);
  const [busy, setBusy] = useState(false);
  const [open, setOpen] = useState(null); // the launch id whose output is shown
  const [output, setOutput] = useState({ lines: [], dropped: 0 });

  async function refresh() {
    try {
      setListing(await api.get("/operator/agents"));
    } catch (error) {
      setListing({ enabled: false, why_not: error.message, agents: [] });
    }
  }

  useEffect(() => {
    if (observer) return undefined;
    refresh();
    const timer = setInterval(refresh, POLL_MS);
    return () => clearInterval(timer);
  }, [api, observer]);

  useEffect(() => {
    if (!open) return undefined;
    let lines = [];
    let stale = false;
    setOutput({ lines: [], dropped: 0 });
    async function more() {
      try {
        const after = lines.length ? lines[lines.length - 1].n : 0;
        const page = await api.get(route`/operator/agents/${open}/output`, { after });
        if (stale) return;
        lines = lines.concat(page.lines).slice(-500);
        setOutput({ lines, dropped: page.dropped });
      } catch (error) {
        if (!stale) notify(error.message, "error");
      }
    }
    more();
    const timer = setInterval(more, POLL_MS);
    return () => {
      stale = true;
      clearInterval(timer);
    };
  }, [open]);

  async function launch(event) {
    event.preventDefault();
    setBusy(true);
    try {
      const agent = await api.post("/operator/agents", request(form));
      notify(`launched ${agent.name} (pid ${agent.pid})`);
      setForm({ ...BLANK, backend: form.backend, model: form.model, base_url: form.base_url });
      setOpen(agent.launch_id);
      refresh();
    } catch (error) {
      notify(error.message, "error");
    } finally {
      setBusy(false);
    }
  }

  async function stop(agent) {
    try {
      const ended = await api.post(route`/operator/agents/${agent.launch_id}/stop`);
      notify(`${ended.name} stopped: ${stateLine(ended)}`);
      refresh();
    } catch (error) {
      notify(error.message, "error");
    }
  }

  if (observer) {
    return html`<section class="panel"><h2>Agents</h2>
      <p class="empty">Only the operator launches agents.</p></section>`;
  }
  if (!listing) return html`<section class="panel"><p class="muted">Asking the hub…</p></section>`;
  const set = (key) => (e) => setForm({ ...form, [key]: e.currentTarget.value });
  return html`
    <section class="panel launcher" aria-labelledby="agents-title">
      <h2 id="agents-title">Launch an agent</h2>
      ${!listing.enabled
        ? html`<p class="card warn" role="status" data-launcher="off">${listing.why_not}</p>`
        : html`<form onSubmit=${launch} data-launcher="on">
            <label>Name <input value=${form.name} required maxlength="64" pattern="[A-Za-z0-9._\\-]+"
              onInput=${set("name")} /></label>
            <label>Backend
              <select value=${form.backend} onChange=${set("backend")}>
                <option value="openai">OpenAI-compatible model</option>
                <option value="claude-cli">Claude Code CLI</option>
                <option value="mock">mock (echoes; for trying it out)</option>
              </select>
            </label>
            ${form.backend === "openai" &&
            html`<label>Model <input value=${form.model} required onInput=${set("model")} /></label>
              <label>Server URL <input value=${form.base_url} placeholder="http://127.0.0.1:8080/v1"
                onInput=${set("base_url")} /></label>
              <label>API key variable <input value=${form.api_key_env} placeholder="OPENAI_API_KEY"
                onInput=${set("api_key_env")} /></label>`}
            <label>System prompt (optional)
              <textarea rows="3" value=${form.prompt} onInput=${set("prompt")}></textarea></label>
            <label>Tools: MCP servers over stdio, one command per line (no shell)
              <textarea rows="2" value=${form.tools} onInput=${set("tools")}></textarea></label>
            <label>Tools that run unasked (the others not marked read-only wait for your approval)
              <input value=${form.allow} placeholder="read_file, search" onInput=${set("allow")} /></label>
            <label>Working directory (absolute; default the hub's)
              <input value=${form.workdir} onInput=${set("workdir")} /></label>
            <button type="submit" class="primary" disabled=${busy || !form.name.trim()}>Launch</button>
          </form>`}
      <h2>Launched <span class="count">${listing.agents.length}</span></h2>
      ${listing.agents.length === 0 && html`<p class="empty">No agents launched from here yet.</p>`}
      <ul class="cards">
        ${listing.agents.map(
          (a) => html`<li class="card" key=${a.launch_id} data-launched=${a.name} data-state=${a.state}>
            <div>
              <strong>${a.name}</strong> <span class="badge">${stateLine(a)}</span>
              ${a.spawned_by && html` <span class="badge" data-spawned-by=${a.spawned_by}>spawned by ${a.spawned_by}</span>`}
              ${a.silent && html` <span class="badge warn" data-silent>joined but never spoke</span>`}
              ${!a.joined && a.state === "running" && html` <span class="badge">not joined yet</span>`}
            </div>
            <div class="muted">
              ${`${a.backend}${a.model ? ` · ${a.model}` : ""} · pid ${a.pid} · in ${a.workdir} · started ${age(
                Date.now() / 1000 - a.started_at,
              )} ago`}
            </div>
            <div class="row">
              <button type="button" data-read aria-expanded=${open === a.launch_id ? "true" : "false"}
                onClick=${() => setOpen(open === a.launch_id ? null : a.launch_id)}>Output</button>
              ${a.state !== "exited" &&
              html`<button type="button" class="danger" onClick=${() => stop(a)}>Stop ${a.name}</button>`}
            </div>
            ${open === a.launch_id &&
            html`<pre class="output" data-output=${a.name}>${output.dropped
                ? `(${plural(output.dropped, "earlier line")} not kept)\n`
                : ""}${output.lines.map((l) => `${l.stream === "stderr" ? "! " : ""}${l.text}`).join("\n")}</pre>`}
          </li>`,
        )}
      </ul>
    </section>
  `;
}

// Every MCP tool call the hub hears of, newest first: who called what, and how it went.
export function ActivityView({ state }) {
  const [q, setQ] = useState("");
  const [errorsOnly, setErrorsOnly] = useState(false);
  const needle = q.trim().toLowerCase();
  const calls = state.activity.filter(
    (c) =>
      (!errorsOnly || !c.ok) &&
      (!needle ||
        (c.caller || "").toLowerCase().includes(needle) ||
        c.tool.includes(needle) ||
        (c.arguments || "").toLowerCase().includes(needle)),
  );
  const failed = state.activity.filter((c) => !c.ok).length;
  return html`
    <section class="panel" aria-labelledby="activity-title">
      <h2 id="activity-title">Tool calls <span class="count">${`${state.activity.length} · ${failed} failed`}</span></h2>
      <div class="row activity-tools" role="search">
        <input type="search" data-read aria-label="find calls" placeholder="caller, tool or argument" value=${q}
          onInput=${(e) => setQ(e.currentTarget.value)} />
        <label class="inline"><input type="checkbox" data-read checked=${errorsOnly}
          onChange=${(e) => setErrorsOnly(e.currentTarget.checked)} /> failed only</label>
      </div>
      ${calls.length === 0 && html`<p class="empty">No tool calls${state.activity.length ? " match" : " yet"}.</p>`}
      <table class="grid activity">
        <thead><tr><th>time</th><th>caller</th><th>tool</th><th>outcome</th><th>ms</th></tr></thead>
        <tbody>
          ${calls.map(
            (c, i) => html`<tr key=${`${c.ts}-${i}`} data-call=${c.tool} data-ok=${c.ok ? "yes" : "no"}>
              <td class="muted">${clock(c.ts)}</td>
              <td><span class=${c.caller ? `sender ${colourOf(c.caller)}` : "muted"}>${c.caller || "(not joined)"}</span></td>
              <td class="mono">${c.tool}${c.witness === "self-reported"
                ? html` <span class="badge warn" data-witness="self-reported"
                    title="the caller says it ran this (a stdio bridge or native agent); the hub did not see it">self-reported</span>`
                : html` <span class="badge" data-witness="observed" title="the hub ran this call itself (/mcp)">observed</span>`}
                ${c.arguments && html`<div class="muted small activity-args" data-arguments title=${c.arguments}>${c.arguments}</div>`}</td>
              <td>${c.ok
                ? html`<span class="badge good">ok</span>`
                : html`<span class="badge bad" title=${c.detail || ""}>${c.error}</span>
                    ${c.detail && html`<div class="muted small">${c.detail}</div>`}`}</td>
              <td class="muted">${c.ms < 10 ? c.ms.toFixed(1) : Math.round(c.ms)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </section>
  `;
}
