// Safe Markdown for message content: a small subset (code blocks, inline code, lists, bold,
// italics, links) turned into Preact nodes built from text. No string ever becomes HTML, so
// nothing in a message can add an element, an attribute or a script; a link is shown as its
// text and its address, never as something to click.

import { html } from "./ui.js";

const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
const ITEM = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/;
// Inline spans, tried left to right at each position: `code`, **bold**, *em* / _em_,
// [text](url). A hand-written scanner rather than one regular expression: each position looks
// its closing delimiter up in tables built once per line, so a line of n characters takes O(n)
// whatever it holds (a backtracking pattern took 404 ms on 8 KB of "[a[a[a…").

const WORD = /[A-Za-z0-9_]/;

// next[i]: the first index >= i whose character passes `test` (text.length if none).
function nextIndex(text, test) {
  const next = new Int32Array(text.length + 1);
  next[text.length] = text.length;
  for (let i = text.length - 1; i >= 0; i--) next[i] = test(text[i]) ? i : next[i + 1];
  return next;
}

// For each maximal run of backticks, the start of the next run of the same length.
function backtickPairs(text) {
  const runs = [];
  for (let i = 0; i < text.length; ) {
    if (text[i] !== "`") { i++; continue; }
    let j = i;
    while (j < text.length && text[j] === "`") j++;
    runs.push([i, j - i]);
    i = j;
  }
  const closer = new Map();
  const later = new Map(); // run length -> start of the nearest later run of that length
  for (let r = runs.length - 1; r >= 0; r--) {
    const [at, len] = runs[r];
    if (later.has(len)) closer.set(at, later.get(len));
    later.set(len, at);
  }
  return closer;
}

function inline(text, key) {
  const out = [];
  const n = text.length;
  // Each table is built the first time a delimiter needs it: plain text builds none.
  const lazy = (build) => {
    let made = null;
    return () => (made ??= build());
  };
  const star = lazy(() => nextIndex(text, (c) => c === "*"));
  const emMark = lazy(() => nextIndex(text, (c) => c === "*" || c === "_"));
  const bracket = lazy(() => nextIndex(text, (c) => c === "]"));
  const paren = lazy(() => nextIndex(text, (c) => c === ")"));
  const space = lazy(() => nextIndex(text, (c) => /\s/.test(c)));
  const code = lazy(() => backtickPairs(text));
  const special = /[`*_[]/g;
  const isWord = (i) => i >= 0 && i < n && WORD.test(text[i]);
  let last = 0;
  let k = 0;
  const emit = (from, to, node) => {
    if (from > last) out.push(text.slice(last, from));
    out.push(node);
    last = to;
  };
  let i = 0;
  while (i < n) {
    special.lastIndex = i;
    const found = special.exec(text);
    if (found === null) break;
    i = found.index;
    const c = text[i];
    if (c === "`") {
      let run = i;
      while (run < n && text[run] === "`") run++;
      const len = run - i;
      const close = code().get(i);
      if (close !== undefined) {
        emit(i, close + len, html`<code key=${`${key}.${k++}`}>${text.slice(run, close)}</code>`);
        i = close + len;
      } else {
        i = run; // a run with no partner is text, and so is every backtick in it
      }
      continue;
    }
    if (c === "*" && text[i + 1] === "*") {
      const j = star()[i + 2 <= n ? i + 2 : n];
      if (j > i + 2 && j + 1 < n && text[j + 1] === "*" && !text.slice(i + 2, j).includes("\n")) {
        emit(i, j + 2, html`<strong key=${`${key}.${k++}`}>${text.slice(i + 2, j)}</strong>`);
        i = j + 2;
        continue;
      }
    }
    if ((c === "*" || c === "_") && !isWord(i - 1) && text[i - 1] !== "*") {
      const j = emMark()[i + 1];
      if (j > i + 1 && j < n && !isWord(j + 1) && text[j + 1] !== "*") {
        emit(i, j + 1, html`<em key=${`${key}.${k++}`}>${text.slice(i + 1, j)}</em>`);
        i = j + 1;
        continue;
      }
    }
    if (c === "[") {
      const j = bracket()[i + 1];
      if (j > i + 1 && j + 1 < n && text[j + 1] === "(") {
        const end = paren()[j + 2];
        if (end > j + 2 && end < n && space()[j + 2] > end) {
          const node = html`<span class="link" key=${`${key}.${k++}`}>${text.slice(i + 1, j)}<span
            class="muted">${` (${text.slice(j + 2, end)})`}</span></span>`;
          emit(i, end + 1, node);
          i = end + 1;
          continue;
        }
      }
    }
    i++;
  }
  if (last < n) out.push(text.slice(last));
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
