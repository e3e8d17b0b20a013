// Safe Markdown for message content: a small subset (code blocks, inline code, lists, bold,
// italics, links) turned into Preact nodes built from text. No string ever becomes HTML, so
// nothing in a message can add an element, an attribute or a script; a link is shown as its
// text and its address, never as something to click.

import { html } from "./ui.js";

const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
const ITEM = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/;
// Inline spans, tried left to right: `code`, **bold**, *em* / _em_, [text](url).
const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*\n]+)\*\*|(?<![\w*])[*_]([^*_\n]+)[*_](?![\w*])|\[([^\]\n]+)\]\(([^)\s]+)\)/g;

function inline(text, key) {
  const out = [];
  let last = 0;
  let n = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const k = `${key}.${n++}`;
    if (m[1] !== undefined) out.push(html`<code key=${k}>${m[2]}</code>`);
    else if (m[3] !== undefined) out.push(html`<strong key=${k}>${m[3]}</strong>`);
    else if (m[4] !== undefined) out.push(html`<em key=${k}>${m[4]}</em>`);
    else out.push(html`<span class="link" key=${k}>${m[5]}<span class="muted">${` (${m[6]})`}</span></span>`);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function lines(text, key) {
  const out = [];
  text.split("\n").forEach((line, i) => {
    if (i > 0) out.push(html`<br key=${`${key}.br${i}`} />`);
    out.push(...inline(line, `${key}.${i}`));
  });
  return out;
}

export function markdown(source) {
  const rows = source.split("\n");
  const blocks = [];
  let para = [];
  let list = null;
  const flush = () => {
    if (para.length) blocks.push(html`<p key=${blocks.length}>${lines(para.join("\n"), blocks.length)}</p>`);
    para = [];
    if (list) {
      const items = list.items.map((t, i) => html`<li key=${i}>${lines(t, `${blocks.length}.${i}`)}</li>`);
      blocks.push(list.ordered ? html`<ol key=${blocks.length}>${items}</ol>` : html`<ul key=${blocks.length}>${items}</ul>`);
      list = null;
    }
  };
  for (let i = 0; i < rows.length; i++) {
    const fence = FENCE.exec(rows[i]);
    if (fence) {
      flush();
      const marker = fence[1];
      const code = [];
      i++;
      // Until the same fence closes it; an unclosed one runs to the end (a message cut short).
      while (i < rows.length && !rows[i].trim().startsWith(marker)) code.push(rows[i++]);
      blocks.push(html`<pre key=${blocks.length}><code>${code.join("\n")}</code></pre>`);
      continue;
    }
    const item = ITEM.exec(rows[i]);
    if (item) {
      const ordered = /\d/.test(item[1][0]);
      if (para.length || (list && list.ordered !== ordered)) flush();
      if (!list) list = { ordered, items: [] };
      list.items.push(item[2]);
      continue;
    }
    if (!rows[i].trim()) {
      flush();
      continue;
    }
    if (list) flush();
    para.push(rows[i]);
  }
  flush();
  return blocks;
}
