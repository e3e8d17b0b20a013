// Pending operator forms, answered one field at a time: a card per field, checked as you go
// (required fields, the "other" answer where a field allows one, text lengths), then a recap
// of every answer before anything is sent.

import { route } from "./api.js";
import { CallCard, shortOption } from "./callcard.js";
import { clock } from "./format.js";
import { html, useEffect, useRef, useState } from "./ui.js";

const TEXT_LIMIT = { text: 1000, textarea: 8000 };
const OTHER_LIMIT = 500;

// `pinned`: the phone's Room sheet shows the oldest question only, compact, and how many more
// wait (`onMore` opens them all), so that the transcript keeps most of the screen.
export function Forms({ api, state, observer, notify, pinned = false, onMore = null }) {
  const [open, setOpen] = useState(null);
  const forms = Object.values(state.forms).sort((a, b) => a.created_at - b.created_at);
  const current = open && state.forms[open];
  if (pinned) return html`${forms.length > 0 && html`<${Pinned} forms=${forms} observer=${observer}
      onAnswer=${setOpen} onMore=${onMore} />`}
    ${current && html`<${Wizard} api=${api} form=${current} notify=${notify} onClose=${() => setOpen(null)} />`}`;
  return html`
    <section class="panel" aria-labelledby="forms-title">
      <h2 id="forms-title">Questions for you <span class="count">${forms.length}</span></h2>
      ${forms.length === 0 && html`<p class="empty">No agent is waiting on you.</p>`}
      <ul class="cards">
        ${forms.map(
          (f) => html`<li class="card form" key=${f.form_id} data-form=${f.form_id}>
            <div><strong>${f.title}</strong></div>
            <div class="muted">
              asked by ${f.asker} for ${f.to} at ${clock(f.created_at)} · ${f.fields.length}
              ${f.fields.length === 1 ? " question" : " questions"}
            </div>
            ${f.call && html`<${CallCard} call=${f.call} />`}
            <div class="row">
              <button type="button" class="primary" disabled=${observer} onClick=${() => setOpen(f.form_id)}>
                Answer
              </button>
              <${CancelForm} api=${api} form=${f} observer=${observer} notify=${notify} />
            </div>
          </li>`,
        )}
      </ul>
      ${current &&
      html`<${Wizard}
        api=${api}
        form=${current}
        notify=${notify}
        onClose=${() => setOpen(null)}
      />`}
    </section>
  `;
}

function Pinned({ forms, observer, onAnswer, onMore }) {
  const [first] = forms;
  const more = forms.length - 1;
  return html`<div class="pinned-form" data-form=${first.form_id} data-pinned>
    <div class="pinned-text">
      <strong>${first.title}</strong>
      <span class="muted"> · ${first.call ? "approval" : "question"} from ${first.asker}</span>
    </div>
    <div class="row">
      <button type="button" class="primary" disabled=${observer} onClick=${() => onAnswer(first.form_id)}>
        Answer
      </button>
      ${more > 0 &&
      html`<button type="button" data-read data-more=${more} onClick=${onMore}>${more} more waiting</button>`}
    </div>
  </div>`;
}

function CancelForm({ api, form, observer, notify }) {
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState("");
  if (!asking) {
    return html`<button type="button" disabled=${observer} onClick=${() => setAsking(true)}>Cancel form</button>`;
  }
  async function cancel() {
    try {
      await api.post(route`/operator/forms/${form.form_id}/cancel`, reason ? { reason } : {});
      notify(`canceled "${form.title}"`, "ok");
    } catch (error) {
      notify(error.message, "error");
    }
  }
  return html`<span class="row">
    <input aria-label="why (told to the asker)" placeholder="why (optional)" value=${reason}
      onInput=${(e) => setReason(e.currentTarget.value)} />
    <button type="button" class="danger" onClick=${cancel}>Confirm cancel</button>
    <button type="button" onClick=${() => setAsking(false)}>Keep</button>
  </span>`;
}

function initialAnswers(fields) {
  const out = {};
  for (const f of fields) out[f.key] = { choice: f.type === "checkbox" ? [] : "", other: "", useOther: false };
  return out;
}

// The answer a field gets from its card, or undefined when left empty.
function valueOf(field, entry) {
  if (field.type === "checkbox") {
    const chosen = [...entry.choice];
    if (entry.useOther && entry.other.trim()) chosen.push(entry.other.trim());
    return chosen.length ? chosen : undefined;
  }
  if (field.type === "radio") {
    if (entry.useOther) return entry.other.trim() || undefined;
    return entry.choice || undefined;
  }
  return entry.choice.trim() ? entry.choice : undefined;
}

function problem(field, entry) {
  const value = valueOf(field, entry);
  if (value === undefined) return field.required ? "This question needs an answer." : null;
  if (entry.useOther && entry.other.trim().length > OTHER_LIMIT) {
    return `An answer of your own is at most ${OTHER_LIMIT} characters.`;
  }
  if (entry.useOther && !entry.other.trim()) return "Write your own answer, or untick “other”.";
  const limit = TEXT_LIMIT[field.type];
  if (limit && value.length > limit) return `At most ${limit} characters (now ${value.length}).`;
  return null;
}

function Wizard({ api, form, notify, onClose }) {
  const fields = form.fields;
  const [step, setStep] = useState(0); // fields.length is the recap
  const [answers, setAnswers] = useState(() => initialAnswers(fields));
  const [error, setError] = useState(null);
  const [sending, setSending] = useState(false);
  const [unseen, setUnseen] = useState(form.call ? null : []); // arguments not yet seen whole
  const card = useRef(null);
  const recap = step === fields.length;
  // Approving a call waits until every argument has been seen whole (issue 48).
  const approving =
    form.call &&
    fields.some((f) => {
      const value = valueOf(f, answers[f.key]);
      return [].concat(value || []).some((v) => String(v).startsWith("approve sha256:"));
    });
  const blocked = approving && (unseen === null || unseen.length > 0);

  useEffect(() => {
    const el = card.current && card.current.querySelector("input, textarea, button.primary");
    if (el) el.focus();
  }, [step]);

  function next(event) {
    if (event) event.preventDefault();
    if (!recap) {
      const why = problem(fields[step], answers[fields[step].key]);
      if (why) {
        setError(why);
        return;
      }
    }
    setError(null);
    setStep(step + 1);
  }

  async function send() {
    const body = {};
    for (const f of fields) {
      const value = valueOf(f, answers[f.key]);
      if (value !== undefined) body[f.key] = value;
    }
    setSending(true);
    try {
      await api.post(route`/operator/forms/${form.form_id}/answer`, { answers: body });
      notify(`answered "${form.title}"`, "ok");
      onClose();
    } catch (err) {
      setError(err.message);
    } finally {
      setSending(false);
    }
  }

  const update = (key, change) => setAnswers({ ...answers, [key]: { ...answers[key], ...change } });
  return html`
    <div class="wizard" role="dialog" aria-modal="true" aria-labelledby="wizard-title"
      onKeyDown=${(e) => e.key === "Escape" && onClose()}>
      <div class="wizard-card" ref=${card}>
        <header>
          <h3 id="wizard-title">${form.title}</h3>
          <div class="muted">
            ${`from ${form.asker} for ${form.to} · ${recap ? "recap" : `question ${step + 1} of ${fields.length}`}`}
          </div>
          <progress max=${fields.length} value=${step}></progress>
        </header>
        ${form.call && html`<${CallCard} call=${form.call} onSeen=${(_all, left) => setUnseen(left)} />`}
        ${recap
          ? html`<${Recap} fields=${fields} answers=${answers} />`
          : html`<form class="field-card" onSubmit=${next} data-field=${fields[step].key}>
              <${Field} field=${fields[step]} entry=${answers[fields[step].key]}
                onChange=${(change) => update(fields[step].key, change)} />
            </form>`}
        ${error && html`<p class="error" role="alert">${error}</p>`}
        ${recap &&
        blocked &&
        html`<p class="warn" data-unseen>
          Read every argument whole before approving: open ${(unseen || []).join(", ")} above.
        </p>`}
        <footer class="row">
          <button type="button" onClick=${onClose}>Close</button>
          <button type="button" disabled=${step === 0} onClick=${() => { setError(null); setStep(step - 1); }}>
            Back
          </button>
          ${recap
            ? html`<button type="button" class="primary" disabled=${sending || blocked} onClick=${send}>
                Send answer
              </button>`
            : html`<button type="button" class="primary" onClick=${next}>
                ${step === fields.length - 1 ? "Review" : "Next"}
              </button>`}
        </footer>
      </div>
    </div>
  `;
}

function Field({ field, entry, onChange }) {
  const label = html`<legend>${field.label}${field.required ? html` <span class="req">(required)</span>` : ""}</legend>`;
  if (field.type === "text" || field.type === "textarea") {
    const input =
      field.type === "text"
        ? html`<input name=${field.key} value=${entry.choice} maxlength=${TEXT_LIMIT.text}
            onInput=${(e) => onChange({ choice: e.currentTarget.value })} />`
        : html`<textarea name=${field.key} rows="5" value=${entry.choice}
            onInput=${(e) => onChange({ choice: e.currentTarget.value })}></textarea>`;
    return html`<fieldset>${label}${input}</fieldset>`;
  }
  const multiple = field.type === "checkbox";
  const toggle = (option) => {
    if (!multiple) return onChange({ choice: option, useOther: false });
    const chosen = entry.choice.includes(option)
      ? entry.choice.filter((o) => o !== option)
      : [...entry.choice, option];
    return onChange({ choice: chosen });
  };
  return html`<fieldset>
    ${label}
    ${field.options.map(
      (option) => html`<label class="choice">
        <input type=${multiple ? "checkbox" : "radio"} name=${field.key} value=${option}
          checked=${multiple ? entry.choice.includes(option) : !entry.useOther && entry.choice === option}
          onChange=${() => toggle(option)} />
        ${option.startsWith("approve sha256:")
          ? html`<span class="digest" title=${option}>${shortOption(option)}</span>`
          : option}
      </label>`,
    )}
    ${field.allow_other &&
    html`<label class="choice other">
        <input type=${multiple ? "checkbox" : "radio"} name=${field.key} value="__other"
          checked=${entry.useOther}
          onChange=${() => onChange(multiple ? { useOther: !entry.useOther } : { useOther: true })} />
        other:
      </label>
      <input class="other-text" aria-label="your own answer" value=${entry.other}
        onFocus=${() => !entry.useOther && onChange({ useOther: true })}
        onInput=${(e) => onChange({ other: e.currentTarget.value, useOther: true })} />`}
  </fieldset>`;
}

function Recap({ fields, answers }) {
  return html`<dl class="recap">
    ${fields.map((f) => {
      const value = valueOf(f, answers[f.key]);
      const shown = value === undefined ? "(no answer)" : Array.isArray(value) ? value.join(", ") : value;
      return html`<div key=${f.key}><dt>${f.label}</dt><dd>${shown}</dd></div>`;
    })}
  </dl>`;
}
