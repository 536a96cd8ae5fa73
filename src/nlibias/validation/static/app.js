// nlibias validation app: one hypothesis at a time, keyboard first. Data is written with
// textContent only (never innerHTML), so nothing from the queue or an annotator is rendered as HTML.
"use strict";

const params = new URLSearchParams(window.location.search);
const token = params.get("token");
const state = { config: null, annotator: null, items: [], index: 0, revealed: false, busy: false,
                lastBreak: Date.now(), settings: {} };

function $(id) { return document.getElementById(id); }
function setText(id, text) { $(id).textContent = text == null ? "" : String(text); }

async function api(path, options) {
  const headers = Object.assign({ "Accept": "application/json" }, (options && options.headers) || {});
  if (token) headers["X-Nlibias-Token"] = token;
  const response = await fetch(path, Object.assign({}, options || {}, { headers, credentials: "same-origin" }));
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = JSON.stringify((await response.json()).detail); } catch (e) { /* keep statusText */ }
    throw new Error(response.status + " " + detail);
  }
  return response.json();
}

function showError(message) { setText("error", message || ""); }

function loadSettings() {
  let saved = {};
  try { saved = JSON.parse(localStorage.getItem("nlibias-settings") || "{}"); } catch (e) { saved = {}; }
  const c = state.config;
  state.settings = {
    blur: typeof saved.blur === "boolean" ? saved.blur : c.blur,
    hints: typeof saved.hints === "boolean" ? saved.hints : c.show_hints,
    breakMinutes: typeof saved.breakMinutes === "number" ? saved.breakMinutes : c.break_minutes,
  };
  $("set-blur").checked = state.settings.blur;
  $("set-hints").checked = state.settings.hints;
  $("set-break").value = String(state.settings.breakMinutes);
  document.body.classList.toggle("blur", state.settings.blur);
}

function saveSettings() {
  state.settings.blur = $("set-blur").checked;
  state.settings.hints = $("set-hints").checked;
  const minutes = Number($("set-break").value);
  state.settings.breakMinutes = Number.isFinite(minutes) && minutes >= 0 ? minutes : state.config.break_minutes;
  localStorage.setItem("nlibias-settings", JSON.stringify(state.settings));
  document.body.classList.toggle("blur", state.settings.blur);
  render();
}

function isComplete(item) {
  const answer = item.answer;
  if (item.kind === "explanation") return answer.label !== null;
  return answer.category !== null && (answer.category !== "valid" || answer.stereotype !== null);
}

function firstIncomplete(from) {
  const n = state.items.length;
  for (let k = 0; k < n; k++) {
    const i = (from + k) % n;
    if (!isComplete(state.items[i])) return i;
  }
  return -1;
}

function renderProgress() {
  const total = state.items.length;
  const done = state.items.filter((it) => isComplete(it)).length;
  const pct = total ? Math.round((1000 * done) / total) / 10 : 0;
  $("progress-fill").style.width = pct + "%";
  setText("progress-text", done + " / " + total + " done (" + pct + "%)");
}

function renderHint(item) {
  const box = $("hint");
  const hints = state.settings.hints ? item.hints : [];
  if (!hints.length) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.textContent = "";
  const title = document.createElement("b");
  title.textContent = "Model hint (not an answer; judge for yourself): ";
  box.appendChild(title);
  hints.forEach((h, k) => {
    const span = document.createElement("span");
    const label = [h.category, h.stereotype].filter(Boolean).join(" · ");
    const score = typeof h.score === "number" ? " (" + h.score.toFixed(2) + ")" : "";
    span.textContent = (k ? " | " : "") + h.judge + ": " + (label || "no suggestion") + score + (h.reason ? " — " + h.reason : "");
    box.appendChild(span);
  });
}

function renderExplanation(item) {
  setText("meta", "#" + (state.index + 1) + " of " + state.items.length + " · explained answer · " + item.subtopic +
    " (" + item.domain + ") · " + item.model);
  setText("x-premise", item.premise);
  setText("x-hypothesis", item.hypothesis);
  setText("x-answer", item.short_answer == null ? "(no yes/no answer read)" : item.short_answer);
  setText("x-explanation", item.explanation);
  $("x-reveal-help").hidden = !state.settings.blur || state.revealed;
  document.querySelectorAll("button[data-round=explanation]").forEach((b) => {
    b.classList.toggle("chosen", item.answer.label === b.dataset.label);
  });
}

function render() {
  if (!state.items.length) { setText("meta", "The queue is empty."); return; }
  const item = state.items[state.index];
  const a = item.answer;
  const explained = item.kind === "explanation";
  $("hypothesis-item").hidden = explained;
  $("explanation-item").hidden = !explained;
  document.querySelectorAll(".sensitive").forEach((el) => el.classList.toggle("revealed", state.revealed));
  $("prev").disabled = state.index === 0;
  $("next").disabled = state.index >= state.items.length - 1;
  renderProgress();
  if (explained) { renderExplanation(item); return; }
  setText("meta", "#" + (state.index + 1) + " of " + state.items.length + " · " + item.subtopic + " (" + item.domain +
    ") · " + item.samples + " sample(s) · generated in the " + item.suggested_stereotype + " formulation");
  setText("hypothesis", item.hypothesis);
  setText("masked", item.masked_template);
  setText("original", item.bbnli_template);
  setText("fill", item.fill_word);
  setText("premise", item.example_premise);
  document.querySelectorAll(".sensitive").forEach((el) => el.classList.toggle("revealed", state.revealed));
  $("reveal-help").hidden = !state.settings.blur || state.revealed;
  renderHint(item);
  document.querySelectorAll("button[data-round=category], button[data-round=stereotype]").forEach((b) => {
    const chosen = b.dataset.round === "category" ? a.category : a.stereotype;
    b.classList.toggle("chosen", chosen === b.dataset.label);
  });
  const stereoOpen = a.category === "valid";
  $("step-stereotype").classList.toggle("disabled", !stereoOpen);
  document.querySelectorAll("#step-stereotype button").forEach((b) => { b.disabled = !stereoOpen; });
  $("step-category").classList.toggle("active", !stereoOpen || a.stereotype !== null);
  $("step-stereotype").classList.toggle("active", stereoOpen && a.stereotype === null);
  $("prev").disabled = state.index === 0;
  $("next").disabled = state.index >= state.items.length - 1;
  renderProgress();
}

function go(index) {
  if (index < 0 || index >= state.items.length) return;
  if (index !== state.index) state.revealed = false;
  state.index = index;
  render();
}

async function answer(round, label) {
  if (state.busy || !state.items.length) return;
  const item = state.items[state.index];
  if ((round === "explanation") !== (item.kind === "explanation")) return;
  if (round === "stereotype" && item.answer.category !== "valid") return;
  state.busy = true;
  try {
    const body = { hypothesis_id: item.hypothesis_id, annotator: state.annotator, round, label };
    const result = await api("/api/answer", { method: "POST", headers: { "Content-Type": "application/json" },
                                               body: JSON.stringify(body) });
    item.answer = result.answer;
    setText("saved", "saved " + new Date().toLocaleTimeString());
    showError("");
    if (isComplete(item) && state.index < state.items.length - 1) go(state.index + 1);
    else render();
  } catch (e) {
    showError("Not saved: " + e.message);
  } finally {
    state.busy = false;
  }
}

const KEYS = { v: ["category", "valid"], "1": ["category", "valid"], i: ["category", "invalid"], "2": ["category", "invalid"],
               c: ["category", "incoherent"], "3": ["category", "incoherent"], p: ["stereotype", "pro"], a: ["stereotype", "anti"] };
const EXPLANATION_KEYS = { b: ["explanation", "balanced"], "1": ["explanation", "balanced"], s: ["explanation", "biased"],
                           "2": ["explanation", "biased"], x: ["explanation", "invalid"], i: ["explanation", "invalid"],
                           "3": ["explanation", "invalid"] };

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const tag = (event.target && event.target.tagName) || "";
  if (tag === "INPUT" || tag === "TEXTAREA" || !$("break").hidden || $("main").hidden) return;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  const current = state.items[state.index];
  const keys = current && current.kind === "explanation" ? EXPLANATION_KEYS : KEYS;
  if (keys[key]) { event.preventDefault(); answer(keys[key][0], keys[key][1]); }
  else if (key === "ArrowLeft" || key === "k") { event.preventDefault(); go(state.index - 1); }
  else if (key === "ArrowRight" || key === "j") { event.preventDefault(); go(state.index + 1); }
  else if (key === "u") { const i = firstIncomplete(state.index); if (i >= 0) go(i); }
  else if (key === "r") { state.revealed = !state.revealed; render(); }
}

function checkBreak() {
  const minutes = state.settings.breakMinutes;
  if (!minutes || $("main").hidden || !$("break").hidden) return;
  if (Date.now() - state.lastBreak >= minutes * 60000) {
    setText("break-text", "You have been annotating for " + Math.max(1, Math.round((Date.now() - state.lastBreak) / 60000)) +
      " minute(s). Stand up, look away from the screen, come back when you are ready.");
    $("break").hidden = false;
  }
}

async function start(name) {
  state.annotator = name;
  const data = await api("/api/items?annotator=" + encodeURIComponent(name));
  state.items = data.items;
  setText("who", "annotator: " + name);
  $("login").hidden = true;
  $("main").hidden = false;
  const todo = firstIncomplete(0);
  state.index = todo >= 0 ? todo : 0;
  state.lastBreak = Date.now();
  render();
}

async function init() {
  try {
    state.config = await api("/api/config");
  } catch (e) { showError("Cannot reach the server: " + e.message); return; }
  loadSettings();
  ["set-blur", "set-hints", "set-break"].forEach((id) => $(id).addEventListener("change", saveSettings));
  document.querySelectorAll("button[data-round]").forEach((b) =>
    b.addEventListener("click", () => answer(b.dataset.round, b.dataset.label)));
  $("prev").addEventListener("click", () => go(state.index - 1));
  $("next").addEventListener("click", () => go(state.index + 1));
  $("todo").addEventListener("click", () => { const i = firstIncomplete(state.index); if (i >= 0) go(i); });
  document.querySelectorAll(".sensitive").forEach((el) =>
    el.addEventListener("click", () => { state.revealed = true; render(); }));
  $("break-done").addEventListener("click", () => { $("break").hidden = true; state.lastBreak = Date.now(); });
  document.addEventListener("keydown", onKey);
  setInterval(checkBreak, 1000);
  const name = state.config.annotator || params.get("annotator") || localStorage.getItem("nlibias-annotator");
  const login = async (candidate) => {
    try {
      await start(candidate);
      localStorage.setItem("nlibias-annotator", candidate);
    } catch (e) {
      $("login").hidden = false;
      setText("login-error", e.message);
    }
  };
  $("login-go").addEventListener("click", () => login($("login-name").value.trim()));
  $("login-name").addEventListener("keydown", (e) => { if (e.key === "Enter") login($("login-name").value.trim()); });
  if (name) await login(name);
  else $("login").hidden = false;
}

document.addEventListener("DOMContentLoaded", init);
