// The text panels: statistics, the logits table, the step-by-step equations, the softmax
// summary, and the mistake and variant explanations. Everything shown was computed and
// formatted in Python (js/protocol.js: the answer's sections); this file only places it, always
// as text (never as HTML).

import { component } from "../page/components.js";
import { bars, table } from "./text-views.js";
import { setData, setHidden, setText } from "../page/dom.js";
import { setClassLabels } from "../heatmap/hover.js";
import { PANEL_IDS } from "../shared.js";
import { calmly, RESULT_TURN } from "../page/announce.js";

const $ = /** @type {ById} */ ((id) => document.getElementById(id));

// The step-by-step equations sit below the fold; typesetting them costs a few milliseconds per
// edit, so while they are out of view edits do not even ask Python for them ("equations": "later",
// see equationsLater): they are fetched when they scroll into view, so that a keystroke stays one
// request and one answer.
let equationsInView = true;
let pendingEquations = null;
let equationsStale = false; // an answer said they changed without sending them
let client = null;
let labels = { samples: [], classes: [] }; // the answers' names of samples and classes
const equationsObserver = new IntersectionObserver((entries) => {
  equationsInView = entries[entries.length - 1].isIntersecting;
  if (equationsInView) flushEquations();
});
equationsObserver.observe($("step-list"));

// The page, once Python is ready (js/app.js: connect): its call, for fetching the equations
// that edits left for later.
export function connect(page) { client = page; }

// The names of the samples and classes the answers last sent (for js/panels/walkthrough.js's selects).
export function labelsNow() { return labels; }

// New names of the samples and classes: for the selects, and the heatmaps' hover.
export function setLabels(l) {
  labels = l;
  setClassLabels(l.classes, l.class_titles);
}

// What an edit request says about the equations: wanted in the answer, or "later".
export function equationsLater() { return equationsInView ? undefined : "later"; }

function flushEquations() {
  if (pendingEquations) {
    const s = pendingEquations;
    pendingEquations = null;
    equations(s);
  } else if (equationsStale && client) {
    equationsStale = false;
    client.call({ op: "equations" }).then((res) => {
      // an answer with equations that came meanwhile is newer: keep it
      if (res.ok && !pendingEquations) equations(res.equations);
    });
  }
}

// Once a render cycle has ended: equations that arrived while out of view are typeset when the
// browser is idle (no request: only the ones an answer brought). While Python boots (the
// build-time first view), not even then: Python's start is the page's critical path.
export function afterRender() {
  if (!pendingEquations || !client) return;
  if (window.requestIdleCallback) requestIdleCallback(typesetPending, { timeout: 300 });
  else setTimeout(typesetPending, 0);
}

function typesetPending() {
  if (!pendingEquations) return;
  const s = pendingEquations;
  pendingEquations = null;
  equations(s);
}

function queueEquations(s) {
  pendingEquations = s;
  equationsStale = false;
  if (equationsInView) flushEquations();
}

// The answer's sections this file draws (js/page/components.js).
component("labels", { before: (l) => { setLabels(l); } });
component("stats", { draw: (t) => { table($(PANEL_IDS.stats), t); } });
component("logits_table", { draw: (t) => { table($(PANEL_IDS.logits_table), t); } });
component("equations", { draw: (s) => { queueEquations(s); } });
component("equations_follow", {
  draw: (follow, res) => {
    if (!follow || res.equations) return; // the equations themselves came too
    equationsStale = true;
    if (equationsInView) flushEquations();
  },
});
component("softmax_bars", { draw: (c) => {
  const box = $(PANEL_IDS.softmax_bars);
  setText(box.querySelector("h3"), c.title);
  bars(box.querySelector("ol"), c.bars, { signed: false });
  setText(box.querySelector("p"), c.note);
} });
component("top_classes", { draw: (text) => { setText($(PANEL_IDS.top_classes), text || ""); } });
const sayPrediction = calmly("prediction-said", { turn: RESULT_TURN, rank: 0 });
component("prediction", { draw: (p) => {
  const text = [p.text, ...p.notes].join(" ");
  setText($(PANEL_IDS.prediction), text);
  sayPrediction(text);
} });
component("host", { draw: (host) => { $("host-info").textContent = host; } });
// Which head the pipeline shows, once a model file brought a real ViT's gamma/beta or bias:
// before the heatmaps are drawn, so that its own steps' plots are laid out when drawn.
function showHead(h) {
  setData(document.documentElement, "realHead", h && h.shown === "model" ? "true" : "false");
  setHidden($("head-choice"), !h);
  if (!h) return;
  $("head-shown").value = h.shown;
  setText($("head-note"), h.text);
}
// (a new session sends no "head" until a model file brings one: reset shows the page's head)
component("head", { before: showHead, reset: () => showHead(null) });
// Before any heatmap is drawn: show or hide the comparison plots, so that Plotly measures
// containers that are laid out (a hidden one would get Plotly's default 700 px width).
// A head that cannot run (W_head transposed, GAP without patch tokens) shows its message, not
// empty plots.
const comparison = (name, section) => ({
  before: (c) => { setData($(section), "active", c.selected && !c.error ? "true" : "false"); },
  draw: (c) => { choice(name, c); },
});
component("mistake", comparison("mistake", PANEL_IDS.mistake));
component("variant", comparison("variant", PANEL_IDS.variant));

// `titles`: the whole names where the labels cut some short (each option's title).
function options(select, labels, selected, titles = null) {
  if (select.options.length !== labels.length || select.dataset.labels !== labels.join("|")) {
    select.replaceChildren(...labels.map((label, i) => {
      const option = new Option(label, String(i));
      if (titles && titles[i] !== label) option.title = titles[i];
      return option;
    }));
    select.dataset.labels = labels.join("|");
  }
  select.value = String(selected);
}

// KaTeX (~270 kB) is needed only for the equations, which start below the fold: it loads when
// they are first typeset, not during the boot, where its evaluation would compete with Python's.
let katexLoading = null;
let waitingForKatex = null; // the newest equations that wait for it
function loadKatex() {
  if (!katexLoading) {
    katexLoading = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = window.vitHost.asset("vendor/katex/katex.min.js");
      script.onload = resolve;
      script.onerror = () => reject(new Error("vendor/katex/katex.min.js did not load"));
      document.head.append(script);
    });
  }
  return katexLoading;
}

/**
 * Typeset `tex` into `el` with KaTeX (loaded on first use); the newest call per element wins.
 * Display-style math, but in KaTeX's inline mode, whose lines wrap after an =, a + or an
 * \allowbreak where the box is too narrow (display mode never wraps): the walk-through's
 * equations (pycore/explorer/panels/walkthrough.py) then fit a phone.
 * @param {HTMLElement & {vitTex?: string}} el the equation typeset last is kept in el.vitTex
 * @param {string} tex
 * @returns {Promise<void>}
 */
export function typeset(el, tex) {
  el.vitTex = tex;
  const draw = () => {
    if (el.vitTex !== tex) return;
    window.katex.render(`\\displaystyle ${tex}`, el, { displayMode: false, throwOnError: false, output: "htmlAndMathml" });
    el.dataset.tex = tex;
  };
  if (window.katex) return Promise.resolve(draw());
  return loadKatex().then(draw, (err) => console.error(err));
}

// s: {sample, class, items: [{title, tex, note}]}
function equations(s) {
  options($("step-sample"), labels.samples, s.sample);
  options($("step-class"), labels.classes, s.class, labels.class_titles);
  if (!window.katex) {
    waitingForKatex = s;
    loadKatex().then(() => { if (waitingForKatex === s) equations(s); }, (err) => console.error(err));
    return;
  }
  waitingForKatex = null;
  const list = $("step-list");
  const items = s.items.map((item, k) => {
    const li = document.createElement("li");
    const h = document.createElement("h3");
    h.textContent = item.title;
    h.id = `step-title-${k}`;
    const math = document.createElement("div");
    math.className = "math";
    // an equation wider than a phone scrolls sideways: the keyboard reaches it too
    math.tabIndex = 0;
    math.setAttribute("role", "group");
    math.setAttribute("aria-labelledby", h.id);
    window.katex.render(item.tex, math, { displayMode: true, throwOnError: false, output: "htmlAndMathml" });
    li.append(h, math);
    if (item.note) {
      const p = document.createElement("p");
      p.className = "note";
      p.textContent = item.note;
      li.append(p);
    }
    return li;
  });
  list.replaceChildren(...items);
}

// What a comparison's select says while nothing is chosen (its explanation then lists the
// choices, as Python wrote them).
const PROMPT = { mistake: "Choose a mistake…", variant: "Choose another head…" };

// c: {choices (sent once): [[key, title]], selected: key|null, explanation, source, error, note,
//     changes, notice}
function choice(name, c) {
  const select = $(name);
  if (c.choices) {
    select.replaceChildren(new Option(PROMPT[name], ""), ...c.choices.map(([key, title]) => new Option(title, key)));
  }
  if (select.value !== (c.selected || "")) select.value = c.selected || "";
  setText($(`${name}-explanation`), [c.explanation, c.note].filter(Boolean).join(" "));
  const source = $(`${name}-source`);
  if (source) {
    setText(source, c.source ? `Source: ${c.source}` : "");
    setHidden(source, !c.source);
  }
  for (const part of ["changes", "notice"]) {
    const el = $(`${name}-${part}`);
    if (!el) continue;
    setText(el, c[part] || "");
    setHidden(el, !c[part]);
  }
  // From 21 classes on: the k largest outputs of the head compared (its heatmap is a barcode).
  const topK = $(`${name}-top-k`);
  if (topK && "top_k" in c) {
    if (c.top_k) table(topK, c.top_k);
    setHidden(topK.parentElement, !c.top_k);
  }
  const box = $(`${name}-error`);
  if (box) {
    setText(box, c.error || "");
    setHidden(box, !c.error);
  }
}
