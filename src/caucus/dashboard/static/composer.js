// Speaking as the operator: the composer, with @peer and #channel completion, and (when the
// operator asks for it) the room paused while they type.

import { html, useEffect, useLayoutEffect, useRef, useState } from "./ui.js";

const SUGGESTIONS = 8;
const TYPING_IDLE_MS = 60000; // a paused room resumes after this long without a keystroke
export const PAUSE_WHILE_TYPING = "caucus-pause-while-typing";

// The @word or #word the caret is in, if any: where it starts and what it holds so far.
export function wordAt(text, caret) {
  const before = text.slice(0, caret);
  const match = /(^|\s)([@#][A-Za-z0-9._-]*)$/.exec(before);
  if (!match) return null;
  return { start: caret - match[2].length, word: match[2] };
}

function candidates(state, word) {
  const needle = word.slice(1).toLowerCase();
  const pool =
    word[0] === "@"
      ? Object.keys(state.peers).sort()
      : Object.keys(state.channels)
          .filter((c) => !state.channels[c].closed)
          .sort()
          .map((c) => c.slice(1));
  return pool.filter((name) => name.toLowerCase().startsWith(needle)).slice(0, SUGGESTIONS);
}

export function Composer({ api, state, target, setTarget, observer, notify, inputRef }) {
  const [content, setContent] = useState("");
  const [busy, setBusy] = useState(false);
  const [caret, setCaret] = useState(0);
  const [chosen, setChosen] = useState(0);
  const [dismissed, setDismissed] = useState(false);
  const pausedByTyping = useRef(false);
  const idle = useRef(null);
  const placeCaret = useRef(null);
  const peers = Object.keys(state.peers).sort();
  const channels = Object.keys(state.channels).filter((c) => !state.channels[c].closed);
  const at = observer ? null : wordAt(content, caret);
  const options = at && !dismissed ? candidates(state, at.word) : [];

  async function resumeIfWePaused() {
    clearTimeout(idle.current);
    if (!pausedByTyping.current) return;
    pausedByTyping.current = false;
    try {
      await api.post("/operator/resume");
    } catch (error) {
      notify(error.message, "error");
    }
  }

  async function typing(text) {
    if (observer || localStorage.getItem(PAUSE_WHILE_TYPING) !== "on") return;
    if (!text.trim()) {
      resumeIfWePaused();
      return;
    }
    clearTimeout(idle.current);
    idle.current = setTimeout(resumeIfWePaused, TYPING_IDLE_MS);
    if (!pausedByTyping.current && state.mode === "open") {
      pausedByTyping.current = true;
      try {
        await api.post("/operator/pause");
      } catch (error) {
        pausedByTyping.current = false;
        notify(error.message, "error");
      }
    }
  }

  useEffect(() => () => resumeIfWePaused(), []);

  async function send(event) {
    if (event) event.preventDefault();
    if (!content.trim()) return;
    setBusy(true);
    try {
      await api.post("/operator/say", { to: target, content });
      setContent("");
      await resumeIfWePaused();
    } catch (error) {
      notify(error.message, "error");
    } finally {
      setBusy(false);
    }
  }

  function complete(name) {
    const el = inputRef.current;
    const insert = `${at.word[0]}${name} `;
    const next = content.slice(0, at.start) + insert + content.slice(caret);
    const where = at.start + insert.length;
    setContent(next);
    setCaret(where);
    setChosen(0);
    placeCaret.current = where;
    if (el) el.focus();
  }

  // The caret goes after the completed name as soon as the new text is in the page, before
  // the next keystroke is handled (a later frame would move it back under fast typing).
  useLayoutEffect(() => {
    const el = inputRef.current;
    if (placeCaret.current !== null && el) {
      el.setSelectionRange(placeCaret.current, placeCaret.current);
      placeCaret.current = null;
    }
  });

  function onKeyDown(e) {
    if (options.length) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : options.length - 1;
        setChosen((chosen + step) % options.length);
        return;
      }
      if (e.key === "Tab" || (e.key === "Enter" && !e.ctrlKey && !e.metaKey)) {
        e.preventDefault();
        complete(options[Math.min(chosen, options.length - 1)]);
        return;
      }
      if (e.key === "Escape") {
        e.preventDefault();
        setDismissed(true);
        return;
      }
    }
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) send(e);
  }

  return html`
    <form class="composer" onSubmit=${send} aria-label="message as the operator">
      <label>
        To
        <select value=${target} onChange=${(e) => setTarget(e.currentTarget.value)} disabled=${observer}>
          <option value="all">all</option>
          ${channels.map((c) => html`<option value=${c}>${c}</option>`)}
          ${peers.map((p) => html`<option value=${p}>${p}</option>`)}
        </select>
      </label>
      <div class="compose-box">
        <textarea
          ref=${inputRef}
          rows="2"
          aria-label="message"
          aria-autocomplete="list"
          aria-controls="completions"
          aria-expanded=${options.length ? "true" : "false"}
          placeholder=${observer ? "observers cannot speak" : "Message as the operator (@peer, #channel; Ctrl+Enter sends)"}
          value=${content}
          disabled=${observer}
          onInput=${(e) => {
            const el = e.currentTarget;
            setContent(el.value);
            setCaret(el.selectionStart);
            setChosen(0);
            setDismissed(false);
            typing(el.value);
          }}
          onKeyUp=${(e) => {
            if (!["ArrowDown", "ArrowUp", "Tab", "Enter", "Escape"].includes(e.key)) {
              setCaret(e.currentTarget.selectionStart);
            }
          }}
          onClick=${(e) => setCaret(e.currentTarget.selectionStart)}
          onKeyDown=${onKeyDown}
        ></textarea>
        ${options.length > 0 &&
        html`<ul class="completions" id="completions" role="listbox" aria-label="suggestions">
          ${options.map(
            (name, i) => html`<li role="option" aria-selected=${i === chosen ? "true" : "false"}
              class=${i === chosen ? "chosen" : ""}
              onMouseDown=${(e) => {
                e.preventDefault();
                complete(name);
              }}>${at.word[0]}${name}</li>`,
          )}
        </ul>`}
      </div>
      <button type="submit" class="primary" disabled=${observer || busy || !content.trim()}>Send</button>
    </form>
  `;
}
