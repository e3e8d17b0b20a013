// The graph of a thread's tasks: what waits on what (issue 34), drawn left to right.

import { short } from "./format.js";
import { html } from "./ui.js";

const W = 150;
const H = 34;
const GAP_X = 36;
const GAP_Y = 10;

// Each task's column: how many tasks of the group it waits on, one after another.
function depths(tasks) {
  const byId = new Map(tasks.map((t) => [t.task_id, t]));
  const memo = new Map();
  const depth = (t, seen) => {
    if (memo.has(t.task_id)) return memo.get(t.task_id);
    if (seen.has(t.task_id)) return 0; // the hub refuses cycles; never loop on one anyway
    seen.add(t.task_id);
    const deps = (t.blocked_by || []).map((id) => byId.get(id)).filter(Boolean);
    const d = deps.length ? 1 + Math.max(...deps.map((x) => depth(x, seen))) : 0;
    memo.set(t.task_id, d);
    return d;
  };
  for (const t of tasks) depth(t, new Set());
  return memo;
}

export function hasEdges(tasks) {
  const ids = new Set(tasks.map((t) => t.task_id));
  return tasks.some((t) => (t.blocked_by || []).some((id) => ids.has(id)));
}

export function TaskGraph({ tasks }) {
  const depth = depths(tasks);
  const columns = [];
  for (const t of tasks) {
    const d = depth.get(t.task_id);
    (columns[d] = columns[d] || []).push(t);
  }
  const at = new Map();
  columns.forEach((col, x) => col.forEach((t, y) => at.set(t.task_id, { x: x * (W + GAP_X), y: y * (H + GAP_Y) })));
  const width = columns.length * (W + GAP_X) - GAP_X;
  const height = Math.max(...columns.map((c) => c.length)) * (H + GAP_Y) - GAP_Y;
  const edges = [];
  for (const t of tasks) {
    for (const id of t.blocked_by || []) {
      if (at.has(id)) edges.push({ from: at.get(id), to: at.get(t.task_id), key: `${id}>${t.task_id}` });
    }
  }
  return html`
    <svg class="task-graph" role="img" aria-label="what waits on what" width=${width} height=${height}
      viewBox=${`0 0 ${width} ${height}`}>
      <defs>
        <marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" orient="auto">
          <path d="M0,0 L8,4 L0,8 z" class="edge-head" />
        </marker>
      </defs>
      ${edges.map(
        (e) => html`<line key=${e.key} data-edge=${e.key} class="edge" marker-end="url(#arrow)"
          x1=${e.from.x + W} y1=${e.from.y + H / 2} x2=${e.to.x - 2} y2=${e.to.y + H / 2} />`,
      )}
      ${tasks.map((t) => {
        const p = at.get(t.task_id);
        const label = t.subject || t.content || short(t.task_id);
        const state = t.blocked ? "blocked" : t.state;
        return html`<g key=${t.task_id} data-graph-task=${t.task_id} data-graph-state=${state}
          transform=${`translate(${p.x},${p.y})`}>
          <title>${`${t.task_id}: ${label} (${state}, ${t.worker})`}</title>
          <rect class=${`node node-${state}`} width=${W} height=${H} rx="6" />
          <text x="8" y="14" class="node-label">${label.length > 20 ? `${label.slice(0, 19)}…` : label}</text>
          <text x="8" y="28" class="node-state">${`${state} · ${t.worker}`}</text>
        </g>`;
      })}
    </svg>
  `;
}
