// Teammates on demand: which agents may spawn (the operator's grants), the model profiles and
// tools they may choose from, and every teammate spawned, running or ended, each stoppable.

import { route } from "./api.js";
import { age, plural } from "./format.js";
import { html, useEffect, useState } from "./ui.js";

function ended(t) {
  if (t.state === "running") return "running";
  return `ended: ${t.ended_by}${t.exit_code !== null ? ` (${t.exit_code})` : ""}`;
}

export function Teammates({ api, state, observer, notify }) {
  const [overview, setOverview] = useState(null);
  const [who, setWho] = useState("");
  const [count, setCount] = useState(1);

  async function refresh() {
    try {
      setOverview(await api.get("/operator/teammates"));
    } catch (error) {
      notify(error.message, "error");
    }
  }

  // On the room's word (a spawn, an end, a grant) and when the roster changes.
  const present = Object.values(state.peers).filter((p) => p.state !== "left" && p.state !== "kicked");
  useEffect(() => {
    refresh();
  }, [api, state.teammatesVersion, present.length]);

  async function act(what, call) {
    try {
      await call();
      notify(what, "ok");
      refresh();
    } catch (error) {
      notify(error.message, "error");
    }
  }

  if (!overview) return html`<section class="panel"><p class="muted">Asking the hub…</p></section>`;
  const granted = new Set(overview.grants.map((g) => g.peer));
  const candidates = present.map((p) => p.name).filter((n) => !granted.has(n)).sort();
  const chosen = candidates.includes(who) ? who : candidates[0];
  const grant = (event) => {
    event.preventDefault();
    const name = chosen;
    act(`${name} may spawn ${plural(Number(count), "teammate")}`, () =>
      api.call("PUT", route`/operator/peers/${name}/spawn-grant`, { teammates: Number(count) }),
    );
  };
  return html`
    <section class="panel teammates" aria-labelledby="teammates-title">
      <h2 id="teammates-title">Teammates <span class="count">${overview.room_running} of ${overview.room_max} running</span></h2>
      ${overview.why_not && html`<p class="card warn" role="status">${overview.why_not}</p>`}
      ${overview.profiles.length === 0
        ? html`<p class="empty" data-profiles="none">No model profile is approved, so no agent can spawn:
            set spawn_profiles (and spawn_tools) in the hub's config.</p>`
        : html`<p class="muted" data-profiles>${`Profiles: ${overview.profiles
            .map((p) => `${p.name} (${p.backend}${p.model ? ` ${p.model}` : ""})`)
            .join(", ")} · tools: ${overview.tools.join(", ") || "none beyond the room's"}`}</p>`}
      <h3>Spawn grants <span class="count">${overview.grants.length}</span></h3>
      ${overview.grants.length === 0 && html`<p class="empty">No agent may spawn (none does by default).</p>`}
      <ul class="cards">
        ${overview.grants.map(
          (g) => html`<li class="card row" key=${g.peer} data-grant=${g.peer}>
            <span><strong>${g.peer}</strong> may run ${g.teammates} at once</span>
            ${!observer &&
            html`<button type="button" class="danger" onClick=${() =>
              act(`${g.peer} may no longer spawn`, () => api.call("DELETE", route`/operator/peers/${g.peer}/spawn-grant`))}>
              Revoke ${g.peer}'s grant</button>`}
          </li>`,
        )}
      </ul>
      ${!observer && candidates.length > 0 &&
      html`<form class="row" onSubmit=${grant} data-grant-form>
        <label>Agent <select value=${chosen} onChange=${(e) => setWho(e.currentTarget.value)}>
          ${candidates.map((n) => html`<option value=${n}>${n}</option>`)}
        </select></label>
        <label>At once <input type="number" min="1" max="16" value=${count}
          onInput=${(e) => setCount(e.currentTarget.value)} /></label>
        <button type="submit" class="primary">Grant spawn</button>
      </form>`}
      <h3>Spawned <span class="count">${overview.teammates.length}</span></h3>
      ${overview.teammates.length === 0 && html`<p class="empty">No teammate spawned yet.</p>`}
      <ul class="cards">
        ${overview.teammates.map(
          (t) => html`<li class="card" key=${t.spawn_id} data-teammate=${t.name} data-state=${t.state}>
            <div><strong>${t.name}</strong> <span class="badge">${ended(t)}</span>
              <span class="muted">${` spawned by ${t.spawner} · ${t.profile}${
                t.tools.length ? ` · ${t.tools.join(", ")}` : ""
              } · ${age(Date.now() / 1000 - t.started_at)} ago`}</span></div>
            <details><summary>Prompt</summary><pre class="output">${t.prompt}</pre></details>
            ${t.record && html`<div class="muted">on the ledger: ${t.record.slice(0, 12)}</div>`}
            ${!observer && t.state === "running" &&
            html`<button type="button" class="danger" onClick=${() =>
              act(`${t.name} stopped`, () => api.post(route`/operator/teammates/${t.spawn_id}/stop`))}>
              Stop ${t.name}</button>`}
          </li>`,
        )}
      </ul>
    </section>
  `;
}
