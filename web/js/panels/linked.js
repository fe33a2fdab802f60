// Linked views: a logit (b, c), hovered or selected in the logits heatmap (mouse, finger,
// keyboard) or in the top-k table, lights up where it comes from: sample b's row in the CLS,
// LayerNorm and logits heatmaps, column c of W_head, and its D terms h_hat[b,d] * W_head[d,c]
// as bars (computed and formatted by Python: the "contributions" request, js/protocol.js).
// A click in the CLS, encoder or W_head heatmap focuses that number's cell in its editor, and
// the cell being edited is outlined in its heatmap.
//
// Everything drawn on the heatmaps is a Plotly shape over the existing figure (heatmap/draw.js:
// setOverlay), never one DOM node per cell, so it costs the same at D = 768, C = 1000. The
// selection lives in the session (Python keeps its terms current through edits), not in the
// link: a link is the state, not where the pointer was.

import { component } from "../page/components.js";
import { bars } from "./text-views.js";
import { cellAt, classTitle } from "../heatmap/hover.js";
import { OUTLINES, outlinedBox, setOverlay } from "../heatmap/shapes.js";
import { setData, setHidden, setText } from "../page/dom.js";
import { figureMenu, hideFigureMenu } from "../figure/menu.js";
import { HEATMAP_IDS, PANEL_IDS, encoderPosition, encoderRow } from "../shared.js";

const $ = /** @type {ById} */ ((id) => document.getElementById(id));
const ROW = 2; // the outlines' widths in px (heatmap/shapes.js: OUTLINES.linked, with a halo)
const CELL = 3;

let client = null;
let shape = null; // {mode, B, D, C, N1}: the state's sizes (answers' "shape")
let grids = null; // {input, W_head}: the editors (js/grid/grid.js)
let selected = null; // [b, c], chosen by click or keyboard
let hovered = null; // [b, c] under the pointer
let selectedChart = null; // the selected logit's, to go back to when the pointer leaves
let asking = null; // the hover request in flight, and the one that waits for it
let queued = null;

/**
 * Bind the linked views and the top-k table's k, once Python is ready (js/app.js: connect).
 * @param {{call: function(Object): Promise<Object>, send: function(Object, number): Promise<Object>,
 *          render: function(Object, number): Promise<void>, editors: {input: Object, W_head: Object}}} page
 */
export function connect(page) {
  client = page;
  grids = page.editors;
  const show = (res) => page.render(res, performance.now());
  bindTopK((request) => page.send(request, performance.now()));
  const logits = $(HEATMAP_IDS.logits);
  logits.tabIndex = 0;
  logits.addEventListener("mousemove", (e) => hover(cellAt(logits, e.clientX, e.clientY)));
  logits.addEventListener("mouseleave", () => hover(null));
  // Esc puts away the terms of a logit only pointed at (WCAG 1.4.13: they cover what follows)
  // until the pointer moves to another logit; a chosen logit's stay (its own Esc clears it).
  document.addEventListener("keydown", (e) => {
    const box = $(PANEL_IDS.contributions);
    if (e.key === "Escape" && box.dataset.float && !box.hidden) showChart(null);
  });
  onTap(logits, (cell) => select(cell, show));
  logits.addEventListener("keydown", (e) => keyboard(e, show));
  onTap($(HEATMAP_IDS.cls), (cell) => focusInput(shape.mode === "encoder" ? encoderRow(cell[0], 0, shape.N1) : cell[0], cell[1]));
  onTap($(HEATMAP_IDS.encoder), (cell) => focusInput(cell[0], cell[1]));
  onTap($(HEATMAP_IDS.W_head), (cell) => grids.W_head.focusCell(cell[0], cell[1]));
  $("grid-input").addEventListener("focusin", () => highlight());
  $("grid-w").addEventListener("focusin", () => highlight());
  $("top-k-table").addEventListener("click", (e) => {
    const button = /** @type {HTMLElement} */ (/** @type {Element} */ (e.target).closest("button[data-b]"));
    if (button) select([Number(button.dataset.b), Number(button.dataset.c)], show);
  });
}

// A tap (press and release within a few pixels) on a heatmap, as its cell. Pointer events on
// the plot itself: Plotly's click event skips the bitmaps, whose trace is not drawn.
function onTap(el, then) {
  let down = null;
  el.addEventListener("pointerdown", (e) => { down = [e.clientX, e.clientY]; });
  window.addEventListener("pointerup", (e) => {
    if (!down) return;
    const [x, y] = down;
    down = null;
    if (Math.abs(e.clientX - x) > 4 || Math.abs(e.clientY - y) > 4 || !client || !shape) return;
    const cell = cellAt(el, x, y);
    if (cell) then(cell);
  });
}

function focusInput(row, col) {
  grids.input.focusCell(row, col);
}

// ---- the answers ----------------------------------------------------------------------------

// The answer's sections this file draws (js/page/components.js). Before the heatmaps: the state's
// sizes, and the top-k table (which folds the logits heatmap away at C > 20). After them: the
// selected logit's terms, and the highlights for the new sizes.
component("top_k", {
  before: (t) => { topK(t); },
  reset: () => { // the k a new page starts with (a new session's, in Python)
    const k = $("top-k-k");
    k.value = k.defaultValue;
    delete k.dataset.k;
  },
});
component("shape", {
  before: (s) => {
    const resized = shape && (s.B !== shape.B || s.C !== shape.C || s.N1 !== shape.N1);
    shape = s;
    if (resized) hovered = null;
    reserve($(PANEL_IDS.contributions));
  },
  draw: (s, res) => { if (!("contributions" in res)) highlight(); },
});
component("contributions", {
  draw: (c) => {
    selectedChart = c;
    selected = c ? [c.b, c.c] : null;
    if (!hovered) showChart(c);
    else place($(PANEL_IDS.contributions)); // a hovered logit's card, in the flow or over it
    highlight();
  },
  reset: () => { // a new session has no logit selected (the answer to a reset sends none)
    selected = hovered = selectedChart = queued = null;
    showChart(null);
    highlight();
  },
});

function topK(t) {
  const box = $(PANEL_IDS.top_k);
  const details = $("logits-full");
  const big = Boolean(t);
  if (big && details.dataset.big !== "true") details.open = false; // the barcode, one click away
  if (!big) details.open = true;
  setData(details, "big", big ? "true" : "false");
  setHidden(box, !big);
  if (!big) return;
  const k = $("top-k-k");
  k.dataset.k = String(t.k);
  if (document.activeElement !== k) k.value = String(t.k);
  const table = $("top-k-table");
  const caption = document.createElement("caption");
  caption.textContent = t.caption;
  // Ranks down, samples across: a name and its logit read on one line, and a phone scrolls
  // sideways only past a few samples.
  const head = document.createElement("tr");
  for (const h of ["rank", ...t.rows.map((row) => row.label)]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = h;
    head.append(th);
  }
  const thead = document.createElement("thead");
  thead.append(head);
  const body = document.createElement("tbody");
  for (let r = 0; r < t.k; r++) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = t.header[r + 1];
    tr.append(th);
    t.rows.forEach((row, b) => {
      const td = document.createElement("td");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "logit-pick";
      button.dataset.b = String(b);
      button.dataset.c = String(row.classes[r]);
      button.textContent = row.cells[r];
      // a class name cut short (a model file's long one) is said whole in the title
      const whole = classTitle(row.classes[r]);
      button.title = `${whole ? `${whole}. ` : ""}Show where this logit comes from`;
      if (row.mark === r) td.className = "predicted";
      td.append(button);
      tr.append(td);
    });
    body.append(tr);
  }
  table.replaceChildren(caption, thead, body);
}

// ---- choosing a logit -----------------------------------------------------------------------

function same(a, b) {
  return a === b || (a && b && a[0] === b[0] && a[1] === b[1]);
}

async function select(cell, show) {
  if (!client) return;
  const res = await client.call({ op: "contributions", b: cell[0], c: cell[1], select: true });
  if (res.ok) await show(res);
}

// Hovering asks for the terms of the logit under the pointer, at most one request at a time
// (the newest waits; those in between are skipped). Leaving shows the selected one again.
function hover(cell) {
  if (same(cell, hovered)) return;
  hovered = cell;
  if (!cell) {
    queued = null;
    showChart(selectedChart);
    highlight();
    return;
  }
  highlight();
  if (asking) { queued = cell; return; }
  ask(cell);
}

function ask(cell) {
  asking = client.call({ op: "contributions", b: cell[0], c: cell[1] }).then((res) => {
    asking = null;
    if (res.ok && same(cell, hovered)) showChart(res.contributions);
    if (queued) {
      const next = queued;
      queued = null;
      if (same(next, hovered)) ask(next);
    }
  });
}

// The logits heatmap by keyboard: arrows move the selected logit, Escape clears it.
function keyboard(e, show) {
  if (!shape) return;
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  if (e.key === "Escape" && selected) {
    e.preventDefault();
    client.call({ op: "contributions", b: null, c: null }).then((res) => { if (res.ok) show(res); });
    return;
  }
  const step = moves[e.key] || (e.key === "Enter" || e.key === " " ? [0, 0] : null);
  if (!step) return;
  e.preventDefault();
  const [b, c] = selected || [0, 0];
  const next = selected ? [Math.max(0, Math.min(shape.B - 1, b + step[0])), Math.max(0, Math.min(shape.C - 1, c + step[1]))] : [0, 0];
  select(next, show);
}

// ---- what is drawn ----------------------------------------------------------------------------

function rowBox(b, cols) {
  return outlinedBox({ x0: -0.5, x1: cols - 0.5, y0: b - 0.5, y1: b + 0.5 }, "linked-row", OUTLINES.linked, ROW);
}

function columnBox(c, rows) {
  return outlinedBox({ x0: c - 0.5, x1: c + 0.5, y0: -0.5, y1: rows - 0.5 }, "linked-column", OUTLINES.linked, ROW);
}

function cellBox(r, c) {
  return outlinedBox({ x0: c - 0.5, x1: c + 0.5, y0: r - 0.5, y1: r + 0.5 }, "linked-cell", OUTLINES.linked, CELL);
}

// Sample b's row in the CLS, LayerNorm and logits heatmaps and column c of W_head, for the
// hovered logit (else the selected one); and the cell being edited, in its heatmap.
function highlight() {
  if (!shape) return;
  const logit = hovered || selected;
  const root = document.documentElement;
  if (logit) {
    setData(root, "linkedLogit", `${logit[0]},${logit[1]}`);
  } else {
    delete root.dataset.linkedLogit;
  }
  const edited = editedCell();
  const rows = (b) => (logit ? [rowBox(b, shape.D)] : []);
  const cls = rows(logit && logit[0]);
  const encoder = [];
  const w = logit ? [columnBox(logit[1], shape.D)] : [];
  if (edited && edited.grid === "input") {
    if (shape.mode === "encoder") {
      encoder.push(cellBox(edited.i, edited.j));
      const [b, t] = encoderPosition(edited.i, shape.N1);
      if (t === 0) cls.push(cellBox(b, edited.j));
    } else {
      cls.push(cellBox(edited.i, edited.j));
    }
  } else if (edited) {
    w.push(cellBox(edited.i, edited.j));
  }
  setOverlay(HEATMAP_IDS.cls, cls);
  setOverlay(HEATMAP_IDS.encoder, encoder);
  setOverlay(HEATMAP_IDS.normalized, rows(logit && logit[0]));
  setOverlay(HEATMAP_IDS.W_head, w);
  setOverlay(HEATMAP_IDS.logits, logit ? [rowBox(logit[0], shape.C), cellBox(logit[0], logit[1])] : []);
}

// The editor cell that has the focus: {grid: "input" | "W_head", i, j}, or null.
function editedCell() {
  for (const name of ["input", "W_head"]) {
    const host = $(name === "W_head" ? "grid-w" : "grid-input");
    const active = /** @type {HTMLElement} */ (document.activeElement);
    if (host.contains(active) && active.classList.contains("cell")) {
      return { grid: name, i: Number(active.dataset.i), j: Number(active.dataset.j) };
    }
  }
  return null;
}

// The contribution chart: one bar per named feature and one for the rest, drawn as HTML (a
// dozen rows), with each bar's two factors and value printed and the sum said in words. A
// logit only pointed at (none chosen) shows it as a card over what follows (css/panels.css:
// data-float), so pointing and leaving move nothing and no place is kept for it. A chosen
// logit's stands in the flow at the tallest it has been at this D (min(D, TERMS_NAMED + 1)
// rows and two lines each for its title and note, at least), so pointing at other logits,
// whose titles and notes wrap differently, never moves what is below it either.
const BARS_SHOWN = 11; // pycore/explorer/panels/readouts.py: TERMS_NAMED named, one for the rest
let reservedFor = null;
function reserve(box) {
  if (!shape) return;
  if (reservedFor !== shape.D) {
    reservedFor = shape.D;
    box.style.setProperty("--bars", String(Math.min(shape.D, BARS_SHOWN)));
    box.style.removeProperty("--seen");
  }
  if (box.hidden || box.dataset.float) return;
  // the height as laid out, fractions too: offsetHeight's whole pixels kept a place up to half
  // a pixel taller than the chart, and the table below moved by that much
  const height = box.getBoundingClientRect().height;
  if (height > parseFloat(box.style.getPropertyValue("--seen") || "0")) box.style.setProperty("--seen", `${height}px`);
}

// In the flow while a logit is chosen, over it while one is only pointed at: then lifted, as
// far as the logits heatmap's box allows, where it would end below the window, so that the
// terms of the logit under the pointer are in view (at 1280 x 800 the card's place starts at
// the window's bottom edge).
function place(box) {
  box.style.removeProperty("--lift");
  if (selected) {
    delete box.dataset.float;
  } else {
    setData(box, "float", "true");
    const card = box.getBoundingClientRect();
    const figure = /** @type {HTMLElement} */ ($(HEATMAP_IDS.logits).closest("details") || box).getBoundingClientRect();
    const lift = Math.min(card.bottom - innerHeight + 8, card.top - figure.bottom - 4);
    if (lift > 0) box.style.setProperty("--lift", `${lift}px`);
  }
  reserve(box);
}

function showChart(c) {
  const box = $(PANEL_IDS.contributions);
  setHidden(box, !c);
  if (!c) {
    delete box.dataset.float;
    setText($("contributions-title"), "");
    hideFigureMenu($("contributions-bars"));
    return;
  }
  setText($("contributions-title"), c.title);
  setText($("contributions-note"), `${c.note} Sum of the bars: ${c.total_text}; logit: ${c.logit_text}.`);
  setData(box, "logit", `${c.b},${c.c}`);
  bars($("contributions-bars"), c.bars, { signed: true });
  place(box);
  figureMenu($("contributions-bars")); // "Download figure" (js/figure/menu.js)
}

/** The top-k table's k (1 to 20), as the person sets it. */
function bindTopK(send) {
  const k = $("top-k-k");
  // Python checks k; a refusal (its message is shown) puts the k in effect back
  const apply = async () => {
    if (k.value === k.dataset.k) return;
    const res = await send({ op: "option", name: "top_k", value: k.value.trim() === "" ? null : Number(k.value) });
    if (!res.ok) k.value = k.dataset.k;
  };
  k.addEventListener("change", apply);
  k.addEventListener("keydown", (e) => { if (e.key === "Enter") apply(); });
  $("logits-full").addEventListener("toggle", () => {
    const el = $(HEATMAP_IDS.logits);
    if ($("logits-full").open && el.data) window.Plotly.Plots.resize(el);
  });
}
