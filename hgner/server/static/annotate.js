// hgner serve's annotation page (--annotate): one sentence at a time with the model's entities,
// corrected with the keyboard. Every text from the queue or the server goes into the page as text
// (textContent), never as markup. A decision (accept, skip) shows the next sentence at once and is
// sent in order; if the server refuses it, the sentence comes back as it was.
"use strict";

const COLOURS = { PER: "#aa9cfc", LOC: "#ff9561", ORG: "#7aecec", MISC: "#e4e7d2" };
const PALETTE = ["#bfe1d9", "#feca74", "#c887fb", "#9cc9cc", "#ffeb80", "#ff8197", "#f0d0ff"];
const RETRY_MS = 1000;  // between attempts while the model loads (503) or a first tagging runs late (504)

const state = {
  types: [], keyType: new Map(), file: "", progress: null,
  sentence: null, upcoming: [],  // {id, tokens, tags}: shown, and those after it
  decided: [],  // the decisions the page can take back at once ({decision, id, tokens, tags}), the last last
  spans: [], edits: [],  // the entities shown ({start, end, type}, end exclusive) and their earlier states
  cursor: 0, anchor: 0, dragging: false,
  pending: 0, queue: Promise.resolve(), epoch: 0,  // decisions sent in order; a refusal drops those after it
};

function $(id) { return document.getElementById(id); }

function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

function status(message, isError) {
  $("status").textContent = message;
  $("status").classList.toggle("error", Boolean(isError));
}

async function api(path, body) {
  const options = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body) };
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    throw Object.assign(new Error("cannot reach the server (is hgner serve still running?)"), { status: 0 });
  }
  let answer = null;
  try { answer = await response.json(); } catch (error) { answer = null; }
  if (!response.ok || answer === null) {
    const message = answer && answer.error ? answer.error.message : `the server answered HTTP ${response.status}`;
    throw Object.assign(new Error(message), { status: response.status });
  }
  return answer;
}

// ---------------------------------------------------------------- entities as spans and IOB2 tags
function spansOf(tags) {
  const spans = [];
  tags.forEach((tag, i) => {
    const type = tag.slice(2);
    const last = spans[spans.length - 1];
    if (tag.startsWith("I-") && last && last.end === i && last.type === type) last.end = i + 1;
    else if (tag !== "O") spans.push({ start: i, end: i + 1, type });
  });
  return spans;
}

function tagsOf(spans, length) {
  const tags = new Array(length).fill("O");
  for (const span of spans) {
    for (let i = span.start; i < span.end; i += 1) tags[i] = `${i === span.start ? "B" : "I"}-${span.type}`;
  }
  return tags;
}

function selection() {
  return [Math.min(state.cursor, state.anchor), Math.max(state.cursor, state.anchor)];
}

// ---------------------------------------------------------------- drawing
function colour(type) {
  const index = state.types.indexOf(type);
  return COLOURS[type] || PALETTE[Math.max(index, 0) % PALETTE.length];
}

function tokenNode(index, low, high) {
  const classes = ["token"];
  if (index >= low && index <= high) classes.push("selected");
  if (index === state.cursor) classes.push("cursor");
  return element("span", { class: classes.join(" "), "data-index": index }, state.sentence.tokens[index]);
}

function render() {
  const box = $("sentence");
  if (!state.sentence) {
    box.replaceChildren(element("p", { class: "done" }, state.pending ? "Saving…" : "Every sentence of the queue is "
      + `annotated or skipped; ${state.file} holds them (hgner train --train ${state.file}). A restart shows the `
      + "skipped ones again."));
    return;
  }
  const [low, high] = selection();
  const starts = new Map(state.spans.map((span) => [span.start, span]));
  const nodes = [];
  for (let i = 0; i < state.sentence.tokens.length;) {
    const span = starts.get(i);
    if (span) {
      const mark = element("mark", { class: "entity", "data-label": span.type });
      mark.style.background = colour(span.type);
      for (let j = span.start; j < span.end; j += 1) mark.append(tokenNode(j, low, high), j + 1 < span.end ? " " : "");
      mark.append(element("span", { class: "label" }, span.type));
      nodes.push(mark, " ");
      i = span.end;
    } else {
      nodes.push(tokenNode(i, low, high), " ");
      i += 1;
    }
  }
  box.replaceChildren(...nodes);
}

function renderProgress() {
  const p = state.progress;
  if (!p) return;
  const where = state.sentence ? `Sentence ${p.position} of ${p.total}` : `The ${p.total} sentences are done`;
  const parts = [where, `${p.accepted} accepted`, `${p.skipped} skipped`];
  if (p.before) parts.push(`${p.before} annotated before`);
  parts.push(`${p.saved} in ${state.file}`);
  $("progress").textContent = parts.join(" · ");
}

function renderTypes() {
  $("types").replaceChildren(...state.types.map((type) => {
    const label = element("mark", { class: "entity" }, type);
    label.style.background = colour(type);
    return element("li", { "data-type": type }, ...keysOf(type).flatMap((key) => [element("kbd", {}, key), " "]), label);
  }));
}

function show(sentence) {
  state.sentence = sentence;
  state.spans = sentence ? spansOf(sentence.tags) : [];
  state.edits = [];
  state.cursor = 0;
  state.anchor = 0;
  render();
}

// ---------------------------------------------------------------- the server's answers
function apply(answer) {
  if (!state.types.length) {
    state.types = answer.types.map((entry) => entry.type);
    answer.types.forEach((entry) => entry.keys.forEach((key) => state.keyType.set(key, entry.type)));
    renderTypes();
  }
  state.file = answer.file;
  const shown = state.sentence ? state.sentence.id : null;
  const ids = answer.upcoming.map((sentence) => sentence.id);
  if (state.pending === 0) {  // the server has every decision: its state is the page's
    state.progress = answer.progress;
    if (!answer.sentence || shown !== answer.sentence.id) show(answer.sentence);
    state.upcoming = answer.upcoming;
    state.decided = answer.last ? [answer.last] : [];
  } else if (answer.sentence && shown === answer.sentence.id) {  // (the page is ahead of this answer)
    state.upcoming = answer.upcoming;
  } else if (ids.includes(shown)) {
    state.upcoming = answer.upcoming.slice(ids.indexOf(shown) + 1);
  }
  renderProgress();
}

async function load() {
  for (;;) {
    try {
      apply(await api("/v1/annotate"));
      status("");
      return;
    } catch (error) {
      if (error.status !== 503 && error.status !== 504) {
        status(`Error: ${error.message}`, true);
        return;
      }
      status("The model is loading…");
      await new Promise((resolve) => { setTimeout(resolve, RETRY_MS); });
    }
  }
}

// Sent after the decisions before it; a refusal shows the sentence it was about again, as it was,
// and drops the decisions made after it (the server has none of them).
function send(path, body, before) {
  const epoch = state.epoch;
  pending(1);
  state.queue = state.queue.then(async () => {
    if (epoch !== state.epoch) { pending(-1); return; }
    try {
      const answer = await api(path, body);
      pending(-1);
      apply(answer);
    } catch (error) {
      pending(-1);
      state.epoch += 1;
      Object.assign(state, before);
      render();
      renderProgress();
      status(`Error: ${error.message}`, true);
      if (error.status === 409) await load();  // decided elsewhere: the server's state
    }
  });
}

function pending(change) {  // aria-busy: decisions on their way to the server
  state.pending += change;
  $("sentence").setAttribute("aria-busy", String(state.pending > 0));
}

function snapshot() {
  const { sentence, upcoming, spans, edits, cursor, anchor, progress } = state;
  return { sentence, upcoming, spans, edits, cursor, anchor, progress: { ...progress }, decided: [...state.decided] };
}

function advance(decision, step) {  // the progress after a decision (step 1), or after taking it back (-1)
  const p = state.progress;
  const remaining = p.remaining - step;
  const counts = (kind) => (decision === kind ? step : 0);
  state.progress = { ...p, remaining, position: Math.min(p.total - remaining + 1, p.total),
    accepted: p.accepted + counts("accept"), skipped: p.skipped + counts("skip"), saved: p.saved + counts("accept") };
  renderProgress();
}

function decide(kind) {
  if (!state.sentence) return;
  const body = { id: state.sentence.id };
  if (kind === "accept") body.tags = tagsOf(state.spans, state.sentence.tokens.length);
  const before = snapshot();
  const { id, tokens } = state.sentence;
  state.decided.push({ decision: kind, id, tokens, tags: tagsOf(state.spans, tokens.length) });
  const [next, ...rest] = state.upcoming;
  state.upcoming = rest;
  show(next || null);
  advance(kind, 1);
  status(kind === "accept" ? "Accepted." : "Skipped.");
  send(`/v1/annotate/${kind}`, body, before);
}

// ---------------------------------------------------------------- editing
function edit(spans, message) {
  state.edits.push(state.spans);
  state.spans = spans.sort((a, b) => a.start - b.start);
  render();
  status(message);
}

function assign(type) {
  const [low, high] = selection();
  const words = state.sentence.tokens.slice(low, high + 1).join(" ");
  const inside = state.spans.find((span) => span.start <= low && low < span.end);
  if (low === high && inside) {  // one token of an entity: the entity changes type
    edit(state.spans.map((span) => (span === inside ? { ...span, type } : span)), `${type}: the entity is now ${type}`);
    return;
  }
  const kept = state.spans.filter((span) => span.end <= low || span.start > high);
  edit([...kept, { start: low, end: high + 1, type }], `${type}: ${words}`);
}

function remove() {
  const [low, high] = selection();
  const kept = state.spans.filter((span) => span.end <= low || span.start > high);
  if (kept.length === state.spans.length) status("No entity under the selection to delete.");
  else edit(kept, "Deleted.");
}

function undo() {
  if (state.edits.length) {
    state.spans = state.edits.pop();
    render();
    status("Undone.");
    return;
  }
  const before = snapshot();
  const last = state.decided.pop();
  if (last) {  // shown at once, as it was decided
    if (state.sentence) state.upcoming = [state.sentence, ...state.upcoming];
    show(last);
    advance(last.decision, -1);
    status(`Undone: the sentence is back (${last.decision === "accept" ? "no longer saved" : "no longer skipped"}).`);
  } else {
    status("Taking back the last decision…");
  }
  send("/v1/annotate/undo", {}, before);
}

function move(to, extend) {
  const last = state.sentence.tokens.length - 1;
  state.cursor = Math.max(0, Math.min(last, to));
  if (!extend) state.anchor = state.cursor;
  render();
}

function keysOf(type) {
  return [...state.keyType].filter(([, t]) => t === type).map(([key]) => key);
}

const ACTIONS = {
  ArrowLeft: (event) => move(state.cursor - 1, event.shiftKey),
  ArrowRight: (event) => move(state.cursor + 1, event.shiftKey),
  Home: (event) => move(0, event.shiftKey),
  End: (event) => move(Infinity, event.shiftKey),
  Escape: () => move(state.cursor, false),
  Backspace: remove,
  Delete: remove,
  Enter: () => decide("accept"),
  s: () => decide("skip"),
};

function onKey(event) {
  if (event.altKey || event.isComposing) return;
  const key = event.key;
  if ((event.ctrlKey || event.metaKey) && key.toLowerCase() === "z") {
    event.preventDefault();
    undo();
    return;
  }
  if (event.ctrlKey || event.metaKey) return;
  if (key === "u") {
    undo();
  } else if (!state.sentence) {
    return;
  } else if (ACTIONS[key]) {
    ACTIONS[key](event);
  } else if (state.keyType.has(key.toLowerCase())) {
    assign(state.keyType.get(key.toLowerCase()));
  } else if (key.length === 1 && key.trim()) {
    status(`No type on key "${key}": the type keys are ${state.types.map((type) => `${keysOf(type).join("/")} ${type}`).join(", ")}.`, true);
  } else {
    return;
  }
  event.preventDefault();
}

// ---------------------------------------------------------------- the mouse
function tokenAt(event) {
  const token = event.target.closest ? event.target.closest(".token") : null;
  return token ? Number(token.dataset.index) : null;
}

function onMouseDown(event) {
  const index = tokenAt(event);
  if (index === null || !state.sentence) return;
  event.preventDefault();
  state.dragging = true;
  move(index, event.shiftKey);
  $("sentence").focus();
}

function onMouseOver(event) {
  const index = tokenAt(event);
  if (state.dragging && index !== null && index !== state.cursor) move(index, true);
}

document.addEventListener("keydown", onKey);
document.addEventListener("mouseup", () => { state.dragging = false; });
$("sentence").addEventListener("mousedown", onMouseDown);
$("sentence").addEventListener("mouseover", onMouseOver);
load();
