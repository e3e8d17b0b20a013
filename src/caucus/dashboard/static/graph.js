// The graph of a thread's tasks: what waits on what (issue 34), drawn left to right where the
// panel is wide enough, and top to bottom where it is not, so every task (the blocked ones
// first of all) is in view without panning; a task's whole title on hover and on focus.

import { short } from "./format.js";
import { html, useLayoutEffect, useRef, useState } from "./ui.js";

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

const CHAR = 6.6; // px per character of a node's label at its font size

// Where each task goes: by depth in columns (left to right), or in rows when `down`.
function layout(tasks, down, nodeW) {
  const depth = depths(tasks);
  const ranks = [];
  for (const t of tasks) {
    const d = depth.get(t.task_id);
    (ranks[d] = ranks[d] || []).push(t);
  }
  const at = new Map();
  ranks.forEach((rank, i) =>
    rank.forEach((t, j) =>
      at.set(
        t.task_id,
        down ? { x: j * (nodeW + GAP_X), y: i * (H + GAP_X) } : { x: i * (nodeW + GAP_X), y: j * (H + GAP_Y) },
      ),
    ),
  );
  const longest = Math.max(...ranks.map((r) => r.length));
  const width = down ? longest * (nodeW + GAP_X) - GAP_X : ranks.length * (nodeW + GAP_X) - GAP_X;
  const height = down ? ranks.length * (H + GAP_X) - GAP_X : longest * (H + GAP_Y) - GAP_Y;
  return { at, width, height };
}

export function TaskGraph({ tasks }) {
  const box = useRef(null);
  const [room, setRoom] = useState(null); // the panel's width, once measured
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const measure = () => setRoom(el.clientWidth);
    measure();
    const watch = new ResizeObserver(measure);
    watch.observe(el);
    return () => watch.disconnect();
  }, []);
  const across = layout(tasks, false, W);
  const down = room !== null && across.width > room;
  // Top to bottom, a node takes the panel's width (its rank's share of it).
  const widest = Math.max(...Object.values(depthCounts(tasks)));
  const nodeW = down ? Math.max(W, Math.floor((room - (widest - 1) * GAP_X) / widest)) : W;
  const { at, width, height } = down ? layout(tasks, true, nodeW) : across;
  const chars = Math.floor((nodeW - 16) / CHAR);
  const edges = [];
  for (const t of tasks) {
    for (const id of t.blocked_by || []) {
      if (at.has(id)) edges.push({ from: at.get(id), to: at.get(t.task_id), key: `${id}>${t.task_id}` });
    }
  }
  const line = (e) =>
    down
      ? { x1: e.from.x + nodeW / 2, y1: e.from.y + H, x2: e.to.x + nodeW / 2, y2: e.to.y - 2 }
      : { x1: e.from.x + nodeW, y1: e.from.y + H / 2, x2: e.to.x - 2, y2: e.to.y + H / 2 };
  return html`<div class="task-graph-box" ref=${box} data-graph-layout=${down ? "down" : "across"}>
    <svg class="task-graph" role="img" aria-label="what waits on what" width=${width} height=${height}
      viewBox=${`0 0 ${width} ${height}`}>
      <defs>
        <marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" orient="auto">
          <path d="M0,0 L8,4 L0,8 z" class="edge-head" />
        </marker>
      </defs>
      ${edges.map((e) => {
        const l = line(e);
        return html`<line key=${e.key} data-edge=${e.key} class="edge" marker-end="url(#arrow)"
          x1=${l.x1} y1=${l.y1} x2=${l.x2} y2=${l.y2} />`;
      })}
      ${tasks.map((t) => {
        const p = at.get(t.task_id);
        const label = t.subject || t.content || short(t.task_id);
        const state = t.blocked ? "blocked" : t.state;
        const whole = `${t.task_id}: ${label} (${state}, ${t.worker})`;
        return html`<g key=${t.task_id} data-graph-task=${t.task_id} data-graph-state=${state}
          transform=${`translate(${p.x},${p.y})`} tabindex="0" aria-label=${whole}>
          <title>${whole}</title>
          <rect class=${`node node-${state}`} width=${nodeW} height=${H} rx="6" />
          <text x="8" y="14" class="node-label">${label.length > chars ? `${label.slice(0, chars - 1)}…` : label}</text>
          <text x="8" y="28" class="node-state">${`${state} · ${t.worker}`}</text>
        </g>`;
      })}
    </svg>
  </div>`;
}

// How many tasks share each depth (a row's width, top to bottom).
function depthCounts(tasks) {
  const counts = {};
  for (const d of depths(tasks).values()) counts[d] = (counts[d] || 0) + 1;
  return counts;
}
