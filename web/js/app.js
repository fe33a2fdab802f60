// The page's entry point: waits for a runtime host, then binds the state that Python owns
// (web/py/bridge.py) to the DOM. Every user action is one request to Python; the answer says
// what changed, and only those panels are redrawn. Requests are asynchronous: the fallback host
// answers from a Web Worker (see js/host.js for what a host hands over).

import { MatrixGrid } from "./grid/grid.js";
import { latestOnly } from "./grid/scrub.js";
import { Renderer } from "./page/render.js";
import * as panels from "./panels/text.js";
import * as share from "./page/share.js";
import { showBoot, bootDone, bootFailed } from "./runtime/boot-status.js";
import { setData, setText, setValue } from "./page/dom.js";
import { prepareFigure, redrawAll } from "./heatmap/draw.js";
import * as digits from "./digits/panel.js";
import { component, resetAll } from "./page/components.js";
import * as walkthrough from "./panels/walkthrough.js";
import * as linked from "./panels/linked.js";
import * as offscreen from "./page/offscreen.js";
import * as finetune from "./panels/finetune.js";
import { keepWarm } from "./runtime/warmup.js";
import { restarted, restarting } from "./runtime/restart.js";
import { keepFocusClear } from "./page/focus-clear.js";
import "./figure/print.js"; // figures drawn again for paper around printing
import { clearAlert, showAlert } from "./page/alert.js";
import * as modelfile from "./page/modelfile.js";
import { bindDocs, openDoc } from "./page/docs-view.js";
import { DEFAULT_PRESET, HEATMAP_IDS, LINK_MAX, PANEL_IDS, encoderPosition } from "./shared.js";

const root = document.documentElement;
const $ = /** @type {ById} */ ((id) => document.getElementById(id));
const query = new URLSearchParams(location.search);
const embed = query.get("embed") === "1";
if (embed) root.classList.add("embed");
if (query.get("text") === "large") root.classList.add("large");

let client = null;
let opened = ""; // the URL's fragment when the page was opened (or a link was pasted)
let shape = null;
const grids = {};

// The editors exist from the first paint; they become editable once Python is ready.
grids.input = new MatrixGrid($("grid-input"), {
  name: "CLS vectors",
  label: (i, j) => inputLabel(i, j),
  rowHeader: (i) => inputRowHeader(i),
  colHeader: (j) => `d=${j}`,
  rowClass: (i) => (shape && shape.mode === "encoder" && encoderPosition(i, shape.N1)[1] === 0 ? "is-cls" : null),
  onEdit: (i, j, text, t0, commit) => editCell(grids.input, i, j, text, t0, commit),
  onPaste: (i, j, text, t0) => pasteBlock(grids.input, i, j, text, t0),
  onScrub: (i, j, value, t0, final) => scrubCell(grids.input, i, j, value, t0, final),
  onReadOnly: notStartedYet,
});
grids.W_head = new MatrixGrid($("grid-w"), {
  name: "W_head",
  label: (i, j) => `W_head[${i},${j}]`,
  rowHeader: (i) => `d=${i}`,
  colHeader: (j) => `c=${j}`,
  onEdit: (i, j, text, t0, commit) => editCell(grids.W_head, i, j, text, t0, commit),
  onPaste: (i, j, text, t0) => pasteBlock(grids.W_head, i, j, text, t0),
  onScrub: (i, j, value, t0, final) => scrubCell(grids.W_head, i, j, value, t0, final),
  onReadOnly: notStartedYet,
});
grids.input.setReadOnly(true);
grids.W_head.setReadOnly(true);
const renderer = new Renderer({ grids });
// The answer's section drawn by what this file holds (js/page/components.js): the editors' sizes.
component("shape", { before: (s) => { applyShape(s); } });
bindPageControls();
bindDocs(() => share.lastFragment()); // the one file's docs, in a dialog (js/page/docs-view.js)
keepFocusClear();
followFormerAnchor();
preview();

// Plotly.js downloads with the page (index.html preloads it) and is evaluated once the runtime
// no longer needs the main thread to start (vitHost.started), or has failed, or after
// PLOTLY_LATEST_MS whatever happens: evaluated first, it would hold the runtime's worker back
// for as long as it takes.
// (KaTeX loads when the equations are first typeset: see panels/text.js.)
const PLOTLY_LATEST_MS = 3000;
const PLOTLY_TIMEOUT_MS = 60000;
class PlotlyMissing extends Error {}
let addPlotly = null; // adds Plotly's <script>, once (then null)
// Resolves once Plotly.js has run; rejects, in words for the person, if it could not be loaded.
const plotlyLoaded = new Promise((resolve, reject) => {
  addPlotly = () => {
    addPlotly = null;
    const script = document.createElement("script");
    script.src = window.vitHost.asset($("plotly-js").getAttribute("href"));
    const missing = (why) => reject(new PlotlyMissing(`Plotly.js, which draws the heatmaps, ${why} ` +
                                                      `(${script.src}).${window.vitHost.boot.FIX}`));
    script.onload = resolve;
    script.onerror = () => missing("could not be loaded");
    setTimeout(() => missing(`did not load within ${PLOTLY_TIMEOUT_MS / 1000} s`), PLOTLY_TIMEOUT_MS);
    document.head.append(script);
  };
});
// Without Plotly.js nothing can be drawn: said at once, whatever Python is doing.
plotlyLoaded.catch((err) => {
  if (!window.vitHost.damaged) bootFailed(err.message, "The page could not start."); // else its echo
});
function loadPlotly() {
  if (addPlotly) addPlotly();
}
setTimeout(loadPlotly, PLOTLY_LATEST_MS);

window.vitHost.connect((kind, args) => {
  if (kind === "status") showBoot(args[0], args[1], args[2]);
  else if (kind === "started") loadPlotly();
  else if (kind === "fail") {
    loadPlotly();
    bootFailed(args[0]);
  } else if (kind === "ready") {
    start(args[0]).catch((err) => {
      if (!(err instanceof PlotlyMissing)) bootFailed(`The explorer could not start: ${err.message || err}`); // else said
    });
  }
});


async function start(hostBridge) {
  showBoot("explorer", "Drawing the explorer…");
  loadPlotly();
  await plotlyLoaded;
  const warm = keepWarm(hostBridge, figuresAhead().map(([id, like]) => () => prepareFigure(id, like())));
  // every request of the page's, for warm-up to wait out; a runtime that stops is restarted
  const bridge = restarting({ call: warm.call }, showAlert);
  client = bridge;
  // One contract for every module that talks to Python: connect(page), with what the page
  // offers them all (each takes what it needs).
  const page = {
    call: (request) => client.call(request), // the answer, drawing nothing
    send, // (request, t0): the answer, drawn (or its refusal shown)
    render: (res, t0) => renderer.schedule(res, t0),
    alert: showAlert,
    clear: clearAlert,
    equationsLater: () => panels.equationsLater(),
    laterSections: () => offscreen.laterSections(),
    editors: grids,
    mode: () => shape.mode,
  };
  share.connect(page);
  panels.connect(page);
  bindControls(page);
  linked.connect(page);
  offscreen.connect(page);
  opened = stateHash();
  share.loadingLink(opened);
  await send({ op: "load", fragment: opened }, performance.now());
  if (opened.length > 1) $("preset").value = "link";
  grids.input.setReadOnly(false);
  grids.W_head.setReadOnly(false);
  bootDone();
  root.dataset.ready = "true";
  restarted(share.notify);
  warm.start();
}

// The figures Python shows only on a choice, made ahead while they are hidden (heatmap/draw.js:
// prepareFigure), so that the first mistake or head chosen, the encoder output, or dW_head at
// the first Step, draws kept figures, not new ones. Each is [id, a function giving what Python
// last said it will be]: the answer's "ahead", {spec, rows, cols}, read when it is made.
/** @returns {Array<[string, () => ({spec: HeatmapSpec, rows: number, cols: number} | undefined)]>} */
export function figuresAhead() {
  const compared = [PANEL_IDS.mistake, PANEL_IDS.variant].flatMap((panel) => Array.from(
    document.querySelectorAll(`#${panel} .compare .plot`), (el) => el.id));
  return [HEATMAP_IDS.encoder, ...compared, HEATMAP_IDS.dw].map((id) => [id, () => later.get(id)]);
}
const later = new Map(); // id -> {spec, rows, cols}: the latest "ahead" that named it
component("ahead", { draw: (figures) => { for (const [id, f] of Object.entries(figures)) later.set(id, f); } });

// If the fragment names an element renamed since links to it were shared (docs/glossary.md, "Old
// names still read"; "index.html#pitfalls"): the address shows its new id, and the page scrolls to
// it, as the browser would have.
function followFormerAnchor() {
  /** @type {Record<string, string>} old id: new id */
  const renamed = { pitfalls: PANEL_IDS.mistake, pitfall: "mistake", "real-vit": PANEL_IDS.digit };
  const id = renamed[location.hash.slice(1)];
  const target = id ? document.getElementById(id) : null;
  if (!target) return;
  history.replaceState(history.state, "", `${location.pathname}${location.search}#${id}`);
  target.scrollIntoView();
}

// The URL's fragment if it holds a state (a link: "#state=..."), else "": a fragment that names
// an element of the page ("#pipeline") is an anchor, not a link.
function stateHash() {
  return /^#state=/.test(location.hash) ? location.hash : "";
}

// While Python boots, show the worked example as pycore answered it at build time
// (default-view.json, see buildtools/assembly/first_view.py): the editors at once, the rest once Plotly is in.
// Python's own answer then redraws whatever differs. A link's state waits for Python to
// validate it.
async function preview() {
  if (stateHash()) {
    previewLink();
    return;
  }
  try {
    const response = await fetch("default-view.json");
    if (!response.ok || client) return;
    const view = await response.json();
    if (client || !view.ok) return;
    for (const m of Object.values(view.matrices)) m.data = Float64Array.from(m.data);
    applyShape(view.shape);
    for (const [name, spec] of Object.entries(view.grids)) grids[name].setMatrix(view.matrices[spec.matrix]);
    panels.setLabels(view.labels);
    await plotlyLoaded;
    if (!client) await renderer.schedule(view, performance.now(), { preview: true });
  } catch (err) {
    // No preview is no loss: the page fills in when Python is ready.
  }
}

// A link's own numbers from the first paint: its JSON is read here, to show the editors and the
// sizes read-only while Python boots (Python then checks it, and computes every stage). A link
// whose matrices are in the compact form (a preset's recipe) waits for Python, which makes them.
function previewLink() {
  // Longer than any link Python writes ("#" and LINK_MAX characters): Python refuses it.
  if (location.hash.length > 1 + LINK_MAX) return;
  let state = null;
  try {
    const params = new URLSearchParams(location.hash.slice(1));
    state = JSON.parse(params.get("state") || "null");
  } catch (err) {
    return; // Python will say what is wrong with it
  }
  const matrix = (value, ndim) => {
    if (!Array.isArray(value) || !value.length) return null;
    const rows = ndim === 3 ? value.flat() : value;
    const cols = Array.isArray(rows[0]) ? rows[0].length : 0;
    if (!cols || !rows.every((r) => Array.isArray(r) && r.length === cols && r.every(Number.isFinite))) return null;
    return { rows: rows.length, cols, data: Float64Array.from(rows.flat()) };
  };
  if (!state || typeof state !== "object") return;
  const W = matrix(state.W_head, 2);
  const encoder = Array.isArray(state.encoder_output);
  const X = encoder ? matrix(state.encoder_output, 3) : matrix(state.cls, 2);
  if (!W || !X || W.rows !== X.cols) return;
  const tokens = encoder ? state.encoder_output[0].length : null;
  applyShape({ mode: encoder ? "encoder" : "cls", B: encoder ? X.rows / tokens : X.rows, D: W.rows, C: W.cols, N1: tokens });
  grids.input.setMatrix(X);
  grids.W_head.setMatrix(W);
  $("preset").value = "link";
}

// ---- what the grids are labelled -------------------------------------------------------

function inputLabel(i, j) {
  if (shape && shape.mode === "encoder") {
    const [b, t] = encoderPosition(i, shape.N1);
    return `encoder_output[${b},${t},${j}]`;
  }
  return `cls[${i},${j}]`;
}

function inputRowHeader(i) {
  if (shape && shape.mode === "encoder") {
    const [b, t] = encoderPosition(i, shape.N1);
    return `b=${b} ${t === 0 ? "CLS" : "t=" + t}`;
  }
  return `b=${i}`;
}

function inputIndex(grid, i, j) {
  if (grid === grids.W_head) return { key: "W_head", index: [i, j] };
  if (shape.mode === "encoder") return { key: "encoder_output", index: [...encoderPosition(i, shape.N1), j] };
  return { key: "cls", index: [i, j] };
}

// ---- requests ----------------------------------------------------------------------------

// The last edit sent for each cell ("cls[1,2]") whose answer has not come: an answer to an
// earlier one (a key typed before the next key, or before Escape took the entry back) neither
// marks the cell nor shows its refusal, which the last answer decides (the refusal of "x" came
// just after Escape, and showed until the answer to the entry taken back cleared it).
/** @type {Map<string, number>} */
const editsInFlight = new Map();
let editsSent = 0; // numbers every edit, so that no two edits of a cell ever share one

// One cell, as typed so far (commit: the person has left it). Python answers with the value
// in effect: a text that is not a number leaves the value the cell had when it was entered.
// `linkLater`: a number being scrubbed, whose link is written once the changes pause; its
// answer is drawn while the next change is answered (the promise resolves once it is
// answered, not drawn: the renderer merges answers that come while it draws).
async function editCell(grid, i, j, text, t0, commit, linkLater = false) {
  const where = inputIndex(grid, i, j);
  const request = { op: "edit", key: where.key, index: where.index, text, equations: panels.equationsLater() };
  if (commit) request.commit = true;
  if (linkLater) {
    request.link = "later";
    const later = offscreen.laterSections();
    if (later.length) request.later = later;
  }
  const cell = `${where.key}[${where.index}]`;
  const sent = ++editsSent;
  editsInFlight.set(cell, sent);
  const res = await client.call(request);
  const latest = editsInFlight.get(cell) === sent;
  if (latest) editsInFlight.delete(cell);
  if (!res.ok) {
    showAlert(res.error.message);
    return;
  }
  const error = res.error;
  if (latest) {
    grid.mark(i, j, !error ? "valid" : error.incomplete ? "pending" : "invalid");
    // a text being typed is refused at each key: shown then, said once the entry ends
    if (error && !error.incomplete) showAlert(error.message, { say: commit });
    else if (!commit || !error) clearAlert();
  }
  if (res.unchanged) grid.refill(i, j); // the value in effect, unless the cell is being typed in
  else if (linkLater) renderer.schedule(res, t0);
  else await renderer.schedule(res, t0);
}

// A scrubbed number (js/grid/scrub.js): one edit in flight at a time. Values that come while it is
// answered replace each other, so the page never falls behind the pointer; the last one (where
// a drag or a held key ended) is always sent, so the screen ends at its exact value. Python
// answers the next change while the page draws the last answer.
const scrubs = latestOnly(({ grid, i, j, value, t0, final }) =>
  editCell(grid, i, j, String(value), t0, final, !final));

function scrubCell(grid, i, j, value, t0, final) {
  if (client) scrubs({ grid, i, j, value, t0, final });
}

function pasteBlock(grid, i, j, text, t0) {
  const where = inputIndex(grid, i, j);
  send({ op: "paste", key: where.key, index: where.index, text, equations: panels.equationsLater() }, t0);
}

// One request whose answer replaces what it changes; refusals leave everything as it was.
async function send(request, t0) {
  const res = await client.call(request);
  if (!res.ok) {
    showAlert(res.error.message);
    return res;
  }
  if (res.error) showAlert(res.error.message);
  else clearAlert();
  if (["preset", "load", "reset", "digit"].includes(request.op)) modelfile.forgetModelFile();
  await renderer.schedule(res, t0);
  return res;
}

// A new session, as a newly opened page has it: every component lets go of what it kept
// (js/page/components.js, reset: a run being played, the selected logit, marks and messages), Python
// of everything the session keeps (the "reset" request), and the link's state (the worked
// example for "") is loaded. Components reset first, so that no request of the old session's
// (a Play loop's next step) follows the reset.
function newSession(fragment) {
  resetAll();
  clearAlert();
  return send({ op: "reset", fragment }, performance.now());
}

function applyShape(s) {
  const reshaped = !shape || s.mode !== shape.mode || s.N1 !== shape.N1;
  shape = s;
  setValue($("dim-B"), String(s.B));
  setValue($("dim-D"), String(s.D));
  setValue($("dim-C"), String(s.C));
  setValue($("dim-N1"), s.N1 ? String(s.N1) : "");
  setValue($("mode"), s.mode);
  setData(root, "mode", s.mode);
  // the overview in the header, with the sizes now shown (B x (N+1) x D: N+1 only when known)
  setText($("shape-z"), `${s.B} × ${s.N1 || "(N+1)"} × ${s.D}`);
  setText($("shape-h"), `${s.B} × ${s.D}`);
  setText($("shape-w"), `${s.D} × ${s.C}`);
  setText($("shape-logits"), `${s.B} × ${s.C}`);
  // New labels (cls[...] or encoder_output[...]) need new cells.
  if (reshaped) grids.input.clear();
}

// ---- controls ----------------------------------------------------------------------------

function bindControls(page) {
  const now = () => performance.now();
  $("apply-dims").addEventListener("click", () => resize());
  for (const id of ["dim-B", "dim-N1", "dim-D", "dim-C"]) {
    $(id).addEventListener("keydown", (e) => { if (e.key === "Enter") resize(); });
  }
  $("mode").addEventListener("change", (e) => send({ op: "mode", mode: /** @type {HTMLSelectElement} */ (e.target).value }, now()));
  $("load-preset").addEventListener("click", () => {
    const name = $("preset").value;
    if (name === "digit") return; // the drawn digit is shown already (the pad draws another)
    // "From the link": back to the state the page was opened with, as it was opened
    if (name === "link") newSession(opened);
    else if (name === "file") $("model-file").click(); // another file
    else send({ op: "preset", name, seed: Number($("seed").value) || 0 }, now());
  });
  $("reset").addEventListener("click", () => {
    $("preset").value = DEFAULT_PRESET;
    $("seed").value = $("seed").defaultValue;
    newSession("");
  });
  const option = (name, value) => send({ op: "option", name, value }, now());
  // A menu away from the equations leaves them for later while they are out of view (the first
  // "last position" changes them: the input becomes the encoder output); the equations' own
  // selects always bring them.
  const compare = (name, value) => send({ op: "option", name, value, equations: panels.equationsLater() }, now());
  $("step-sample").addEventListener("change", (e) => option("sample", Number(/** @type {HTMLSelectElement} */ (e.target).value)));
  $("step-class").addEventListener("change", (e) => option("logit_class", Number(/** @type {HTMLSelectElement} */ (e.target).value)));
  $("mistake").addEventListener("change", (e) => compare("mistake", /** @type {HTMLSelectElement} */ (e.target).value || null));
  $("variant").addEventListener("change", (e) => compare("variant", /** @type {HTMLSelectElement} */ (e.target).value || null));
  $("head-shown").addEventListener("change", (e) => option("head", /** @type {HTMLSelectElement} */ (e.target).value === "page" ? "page" : null));
  // next to the logits: one click to the mistakes, their select focused
  $("compare-mistake").addEventListener("click", () => {
    $(PANEL_IDS.mistake).scrollIntoView({ block: "start" });
    $("mistake").focus({ preventScroll: true });
  });

  for (const module of [digits, walkthrough, finetune, modelfile]) module.connect(page); // their own controls
  $("copy-link").addEventListener("click", () => share.copyLink());
  // Every export a download (#export-json, -npz, -numpy, -csv); the text ones copy too.
  const refused = (error) => showAlert(error.message);
  for (const format of ["json", "npz", "numpy", "csv"]) {
    $(`export-${format}`).addEventListener("click", () => share.downloadExport(format, refused));
  }
  $("export-numpy-copy").addEventListener("click", () => share.copyExport("numpy", "the NumPy code", refused));
  $("export-csv-copy").addEventListener("click", () => share.copyExport("csv", "the logits as CSV", refused));
  share.bindDialog(refused);

  // A link pasted into the address bar (or back/forward) replaces the whole state. An in-page
  // anchor ("Skip to the explorer", a heading's) only scrolls: the state and its link stay, and
  // the address bar shows the link again (a reload then reopens the state, not the worked example).
  window.addEventListener("hashchange", () => {
    if (location.hash.length > 1 && !stateHash()) {
      followFormerAnchor();
      openDoc(location.hash); // the one file's "#doc=math" shows the doc, over the state
      const fragment = share.lastFragment();
      history.replaceState(history.state, "", `${location.pathname}${location.search}${fragment ? `#${fragment}` : ""}`);
      return;
    }
    if (location.hash.slice(1) !== share.lastFragment()) {
      opened = location.hash;
      share.loadingLink(opened);
      $("preset").value = "link";
      newSession(location.hash);
    }
  });
}

function resize() {
  const n = (id) => Number($(id).value);
  const request = { op: "resize", B: n("dim-B"), D: n("dim-D"), C: n("dim-C") };
  if (shape.mode === "encoder") request.N1 = n("dim-N1");
  send(request, performance.now());
}

// Typing into a cell before Python is ready: say why nothing happens.
function notStartedYet() {
  share.notify("Python is still starting: the numbers can be edited in a moment.");
}

// Controls that work before Python is ready: large text, and the embed's link to the full page.
function bindPageControls() {
  const button = $("text-size");
  const sync = () => button.setAttribute("aria-pressed", String(root.classList.contains("large")));
  sync();
  button.addEventListener("click", () => {
    root.classList.toggle("large");
    sync();
    const url = new URL(location.href);
    if (root.classList.contains("large")) url.searchParams.set("text", "large");
    else url.searchParams.delete("text");
    history.replaceState(history.state, "", url.href);
    grids.input.relayout();
    grids.W_head.relayout();
    redrawAll();
  });
  // Large text is larger still on a wide screen (css/page.css, js/heatmap/draw.js): crossing
  // that width lays the grids out and draws the figures again.
  const wide = window.matchMedia("(min-width: 1600px)");
  wide.addEventListener("change", () => {
    if (!root.classList.contains("large")) return;
    grids.input.relayout();
    grids.W_head.relayout();
    redrawAll();
  });
  const full = $("full-page");
  const update = () => {
    const url = new URL(location.href);
    url.searchParams.delete("embed");
    full.href = url.href;
  };
  update();
  window.addEventListener("hashchange", update);
  full.addEventListener("focus", update);
  full.addEventListener("mouseenter", update);
}

