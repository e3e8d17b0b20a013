// Small display helpers. Everything shown comes from peers or the hub and is rendered as text
// (Preact text nodes), never as markup.

export function clock(ts) {
  const d = new Date(ts * 1000);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function stamp(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString();
}

export function age(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

// "1 delivery", "2 deliveries": a count with its noun in the right number.
export function plural(n, word, many = `${word}s`) {
  return `${n} ${n === 1 ? word : many}`;
}

export function bytes(n) {
  if (!n && n !== 0) return "—";
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit ? 1 : 0)} ${units[unit]}`;
}

export function short(hash) {
  return hash ? String(hash).slice(0, 12) : "";
}

export function skillNames(skills) {
  return (skills || []).map((s) => s.name || s.id).filter(Boolean);
}

// Does a message match the transcript filters? (The hub applies the same rules to history.)
export function matches(message, filters) {
  if (filters.peer) {
    const p = filters.peer;
    const to = message.delivered_to || [];
    if (message.sender !== p && message.to !== p && !to.includes(p)) return false;
  }
  if (filters.channel && message.to !== filters.channel) return false;
  if (filters.kind && message.kind !== filters.kind) return false;
  if (filters.q && !message.content.toLowerCase().includes(filters.q.toLowerCase())) return false;
  return true;
}

export function anyFilter(filters) {
  return Boolean(filters.peer || filters.channel || filters.kind || filters.q);
}

export const PALETTE = 12;

// A stable colour per agent: the same name always gets the same one of PALETTE hues.
export function colourOf(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.codePointAt(0)) >>> 0;
  return `c${h % PALETTE}`;
}
