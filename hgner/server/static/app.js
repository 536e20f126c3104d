// hgner serve's page: tag a text or let decoders compete on it. Every text from the user, the
// model or the server goes into the page as text (textContent, setAttribute), never as markup.
"use strict";

const DEFAULT_DECODERS = ["viterbi", "exact", "gibbs", "herded"];
const COLOURS = { PER: "#aa9cfc", LOC: "#ff9561", ORG: "#7aecec", MISC: "#e4e7d2" };
const PALETTE = ["#bfe1d9", "#feca74", "#c887fb", "#9cc9cc", "#ffeb80", "#ff8197", "#f0d0ff"];
const LIVE_SLIDER_TOKENS = 5000;  // longer texts are redrawn when the slider is let go, not at each step
const state = { view: null, colours: new Map(), busy: false };

function $(id) { return document.getElementById(id); }

function element(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function colour(label) {
  if (!state.colours.has(label)) {
    state.colours.set(label, COLOURS[label] || PALETTE[state.colours.size % PALETTE.length]);
  }
  return state.colours.get(label);
}

function status(message, isError) {
  const line = $("status");
  line.textContent = message;
  line.classList.toggle("error", Boolean(isError));
}

// A request the server never answers (stopped, or a proxy holding it) is given up after this long;
// the server answers its own timeout (504) well before.
const GIVE_UP_SECONDS = 120;
const RETRY_SECONDS = 3;  // between attempts to read the models and decoders at startup

async function api(path, body, signal) {
  const options = { signal };
  if (body !== undefined) {
    Object.assign(options, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new Error("cannot reach the server (is hgner serve still running?)");
  }
  let answer = null;
  try { answer = await response.json(); } catch (error) { answer = null; }
  if (!response.ok) {
    throw new Error(answer && answer.error ? answer.error.message : `the server answered HTTP ${response.status}`);
  }
  if (answer === null || typeof answer !== "object") throw new Error("an answer from the server that is not JSON");
  return answer;
}

// One request at a time: both buttons wait while it runs, the status counts its seconds, and an
// error clears the results, which belonged to an earlier text.
async function request(label, path, body, show) {
  if (state.busy) return;
  state.busy = true;
  const buttons = [$("compare"), $("tag")];
  buttons.forEach((button) => { button.disabled = true; });
  $("results").setAttribute("aria-busy", "true");
  const controller = new AbortController();
  const started = Date.now();
  status(`${label}…`);
  const ticker = setInterval(() => status(`${label}… ${Math.round((Date.now() - started) / 1000)} s`), 1000);
  const giveUp = setTimeout(() => controller.abort(), GIVE_UP_SECONDS * 1000);
  try {
    show(await api(path, body, controller.signal));
  } catch (error) {
    state.view = null;
    render();
    status(error.name === "AbortError" ? `Error: no answer from the server within ${GIVE_UP_SECONDS} s`
      : `Error: ${error.message}`, true);
  } finally {
    clearInterval(ticker);
    clearTimeout(giveUp);
    state.busy = false;
    buttons.forEach((button) => { button.disabled = false; });
    $("results").removeAttribute("aria-busy");
  }
}

function plural(count, one, many = `${one}s`) { return `${count} ${count === 1 ? one : many}`; }

function noTokens() {
  state.view = null;
  render();
  status("The text has no tokens: type, paste or drop a text.", true);
}

// What a request needs before it is sent: valid fields, a text, a decoder; false (said in the status) if not.
function ready(text, decoders) {
  if (!$("form").reportValidity()) return false;  // the form's invalid listener says which field
  const seed = $("seed").value.trim();  // a number above 2^53 - 1 would be sent rounded: refused instead
  if (seed && !(/^\d+$/.test(seed) && Number.isSafeInteger(Number(seed)))) {
    status(`Error: Seed must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}; this page cannot send ${seed} `
      + "exactly.", true);
    return false;
  }
  if (!text.trim()) { noTokens(); return false; }
  if (!decoders.length) { status("Pick at least one decoder.", true); return false; }
  return true;
}

async function loadChoices() {
  const [models, decoders] = await Promise.all([api("/v1/models"), api("/v1/decoders")]);
  const select = $("model");
  for (const model of models.models) {
    select.append(element("option", { value: model.name }, `${model.name} (${model.language})`));
  }
  if (models.default) select.value = models.default;  // the model of hgner tag, as /v1/tag without one
  const box = $("decoders");
  for (const decoder of decoders.decoders) {
    const id = `decoder-${decoder.name}`;
    const input = element("input", { type: "checkbox", id, value: decoder.name });
    input.checked = DEFAULT_DECODERS.includes(decoder.name);
    const notes = [];
    if (decoder.capabilities.chain_only) notes.push("chain only");
    if (decoder.capabilities.certifies) notes.push("certifies");
    box.append(element("label", { for: id, class: "decoder" }, input, ` ${decoder.name}`,
      notes.length ? element("small", {}, ` (${notes.join(", ")})`) : ""));
  }
}

function chosenDecoders() {
  return [...document.querySelectorAll("#decoders input:checked")].map((input) => input.value);
}

function options() {
  const body = { model: $("model").value, graph: $("graph").value };
  const sweeps = parseInt($("sweeps").value, 10);
  const seed = parseInt($("seed").value, 10);
  if (Number.isFinite(sweeps)) body.sweeps = sweeps;
  if (Number.isFinite(seed)) body.seed = seed;
  return body;
}

async function compare() {
  const decoders = chosenDecoders();
  const text = $("text").value;
  if (!ready(text, decoders)) return;
  await request("Comparing", "/v1/compare", { ...options(), text, decoders }, (answer) => {
    if (!answer.tokens.length) { noTokens(); return; }
    state.view = {
      text,
      labels: answer.labels,
      tokens: answer.tokens,
      columns: answer.results.map((result) => ({
        name: result.decoder,
        entities: result.entities,
        marginals: result.marginals,
        summary: [
          ["graph", result.graph],
          ["score", result.score.toFixed(3)],
          ["certified optimum", result.optimum_reached === null ? "not certified" : result.optimum_reached ? "reached" : "missed"],
          ["agreement with Viterbi", `${(100 * result.agreement_with_viterbi).toFixed(1)} %`],
          ["time", `${(1000 * result.seconds).toFixed(1)} ms`],
        ],
      })),
    };
    render();
    const optimum = answer.optimum.certified ? `certified optimum ${answer.optimum.score.toFixed(3)}` : "optimum not certified";
    status(`${plural(answer.results.length, "decoder")} on ${plural(answer.tokens.length, "token")} `
      + `(${answer.graph} graph, ${optimum}).`);
  });
}

async function tag() {
  const decoders = chosenDecoders();
  const text = $("text").value;
  if (!ready(text, decoders)) return;
  await request("Tagging", "/v1/tag", { ...options(), text, tokens: true, decoder: decoders[0] }, (answer) => {
    if (!answer.tokens.length) { noTokens(); return; }
    const labels = answer.tokens.length && answer.tokens[0].marginals ? Object.keys(answer.tokens[0].marginals) : [];
    state.view = {
      text,
      labels,
      tokens: answer.tokens,
      columns: [{
        name: answer.decoder,
        entities: answer.entities,
        marginals: labels.length ? answer.tokens.map((token) => labels.map((label) => token.marginals[label])) : null,
        summary: [["graph", answer.graph], ["entities", answer.entities.length]],
      }],
    };
    render();
    const notes = answer.warnings.length ? ` Note: ${answer.warnings.join(" ")}` : "";
    status(`${answer.decoder} found ${plural(answer.entities.length, "entity", "entities")} in `
      + `${plural(answer.tokens.length, "token")}.${notes}`);
  });
}

function entityKey(entity) { return `${entity.start}:${entity.end}:${entity.label}`; }

function render() {
  const view = state.view;
  const results = $("results");
  results.replaceChildren();
  if (!view) return;
  const threshold = parseFloat($("confidence").value);
  const shown = view.columns.map((column) => column.entities.filter(
    (entity) => entity.confidence === null || entity.confidence >= threshold));
  const counts = new Map();  // how many decoders found each entity (the slider only hides entities)
  for (const column of view.columns) {
    for (const entity of column.entities) counts.set(entityKey(entity), (counts.get(entityKey(entity)) || 0) + 1);
  }
  view.columns.forEach((column, index) => {
    const differing = column.entities.filter((entity) => counts.get(entityKey(entity)) < view.columns.length).length;
    const summary = element("dl", {});
    for (const [term, value] of [...column.summary, ["entities shown", shown[index].length],
      ["differences", differing]]) {
      summary.append(element("dt", {}, term), element("dd", {}, value));
    }
    const body = element("div", { class: "text", tabindex: "0", "data-column": index,
      "aria-label": `Text tagged by ${column.name}; arrow keys move between tokens` });
    fillText(body, view, shown[index], counts, index);
    results.append(element("article", { class: "column", "data-decoder": column.name },
      element("h2", {}, column.name), summary, body));
  });
}

// The server's offsets count code points (as Python does); JavaScript strings count UTF-16 units.
function unitOffsets(text) {
  const units = [0];
  for (const character of text) units.push(units[units.length - 1] + character.length);
  return units;
}

function fillText(body, view, entities, counts, columnIndex) {
  const units = unitOffsets(view.text);
  const text = { slice: (start, end) => view.text.slice(units[start], end === undefined ? undefined : units[end]) };
  const byStart = new Map(entities.map((entity) => [entity.start, entity]));
  let cursor = 0;
  let open = null; // [entity, mark element]
  view.tokens.forEach((token, index) => {
    const target = () => (open ? open[1] : body);
    if (!open && byStart.has(token.start)) {
      const entity = byStart.get(token.start);
      body.append(text.slice(cursor, token.start));
      cursor = token.start;
      const differs = counts.get(entityKey(entity)) < state.view.columns.length;
      const confidence = entity.confidence === null ? "confidence unknown" : `confidence ${entity.confidence.toFixed(3)}`;
      const mark = element("mark", { class: differs ? "entity differs" : "entity", "data-label": entity.label,
        title: `${entity.label}, ${confidence}${differs ? ", not found by every decoder" : ""}` });
      mark.style.background = colour(entity.label);
      open = [entity, mark];
      body.append(mark);
    }
    target().append(text.slice(cursor, token.start));
    target().append(element("span", { class: "token", tabindex: "-1", "data-index": index,
      "data-column": columnIndex }, text.slice(token.start, token.end)));
    cursor = token.end;
    if (open && token.end >= open[0].end) {
      open[1].append(element("span", { class: "label" }, open[0].label));
      if (open[1].classList.contains("differs")) open[1].append(element("span", { class: "visually-hidden" }, " (differs)"));
      open = null;
    }
  });
  body.append(text.slice(cursor));
}

function showToken(index) {
  const view = state.view;
  const token = view.tokens[index];
  const details = $("details");
  details.replaceChildren(element("h2", {}, "Token"), element("p", { class: "token-text" }, token.text || ""),
    element("p", { class: "hint" }, `characters ${token.start} to ${token.end}`));
  for (const column of view.columns) {
    const rows = column.marginals ? view.labels.map((label, k) => [label, column.marginals[index][k]]) : [];
    rows.sort((a, b) => b[1] - a[1]);
    const table = element("table", {}, element("caption", {}, column.name));
    if (!rows.length) {
      table.append(element("tr", {}, element("td", { colspan: "2" }, "no marginals from this decoder")));
    }
    for (const [label, probability] of rows) {
      const bar = element("span", { class: "bar" });
      bar.style.width = `${Math.round(100 * probability)}%`;
      table.append(element("tr", {}, element("th", { scope: "row" }, label),
        element("td", {}, element("span", { class: "meter" }, bar), ` ${probability.toFixed(3)}`)));
    }
    details.append(table);
  }
}

function tokenOf(node) {
  return node instanceof Element ? node.closest(".token") : null;
}

function setUp() {
  $("form").addEventListener("submit", (event) => { event.preventDefault(); compare(); });
  // the browser refuses to submit a field out of range (sweeps 0): say which, not only in its bubble
  $("form").addEventListener("invalid", (event) => {
    const label = event.target.closest("label");
    const name = label ? label.firstChild.textContent.trim() : event.target.name;
    status(`${name}: ${event.target.validationMessage}`, true);
  }, true);
  $("tag").addEventListener("click", tag);
  $("text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); compare(); }
  });
  $("confidence").addEventListener("input", () => {
    $("confidence-value").textContent = parseFloat($("confidence").value).toFixed(2);
    if (!state.view || state.view.tokens.length <= LIVE_SLIDER_TOKENS) render();
  });
  $("confidence").addEventListener("change", () => {
    if (state.view && state.view.tokens.length > LIVE_SLIDER_TOKENS) render();
  });
  const results = $("results");
  results.addEventListener("mouseover", (event) => {
    const token = tokenOf(event.target);
    if (token) showToken(Number(token.dataset.index));
  });
  results.addEventListener("focusin", (event) => {
    const token = tokenOf(event.target);
    if (token) showToken(Number(token.dataset.index));
  });
  results.addEventListener("keydown", (event) => {
    if (!["ArrowRight", "ArrowLeft", "Home", "End"].includes(event.key)) return;
    const body = event.target.closest(".text");
    if (!body) return;
    const tokens = [...body.querySelectorAll(".token")];
    if (!tokens.length) return;
    const current = tokens.indexOf(tokenOf(event.target));
    let next = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: tokens.length - 1 }[event.key];
    if (current < 0 && event.key === "ArrowLeft") next = tokens.length - 1;
    next = Math.max(0, Math.min(tokens.length - 1, next));
    event.preventDefault();
    tokens[next].focus();
  });
  const area = $("text");
  area.addEventListener("dragover", (event) => { event.preventDefault(); area.classList.add("dropping"); });
  area.addEventListener("dragleave", () => area.classList.remove("dropping"));
  area.addEventListener("drop", (event) => {
    area.classList.remove("dropping");
    const file = event.dataTransfer && event.dataTransfer.files[0];
    if (!file) return;
    event.preventDefault();
    file.text().then((text) => { area.value = text; status(`Read ${file.name} (${text.length} characters).`); },
      () => status(`Cannot read ${file.name}.`, true));
  });
  loadChoicesUntilReady();
}

// The models and decoders, asked again every few seconds until the server gives them (it may be starting).
function loadChoicesUntilReady() {
  loadChoices().then(() => status("Ready: press Compare decoders (or Ctrl+Enter in the text)."), (error) => {
    status(`Waiting for the server (${error.message}); trying again in ${RETRY_SECONDS} s…`, true);
    setTimeout(loadChoicesUntilReady, RETRY_SECONDS * 1000);
  });
}

document.addEventListener("DOMContentLoaded", setUp);
