// Heatmaps: Plotly draws the axes, titles, marks and zoom; the page paints the cells.
//
// What each heatmap shows (title, axes, range, marks) is decided in Python
// (pycore/explorer/panels/heatmap.py; js/protocol.js: HeatmapSpec); this file only draws it.
//
// Every matrix is painted by the page (js/heatmap/bitmap.js) on a canvas laid under the plot's
// transparent background, exactly over its plot area. The figure keeps an invisible heatmap
// trace whose z is the matrix, so data[0].z stays the page's interface (docs/interface.md), and
// hovering a cell shows its exact value (js/heatmap/hover.js). This file keeps each figure:
// when Plotly draws it and when its cells are only recoloured, the colour key, what a screen
// reader hears, and the table of its numbers (js/heatmap/numbers.js); Plotly's layout of it is
// js/heatmap/layout.js's, the outlines over the cells js/heatmap/shapes.js's.
//
// Why: a change of values (an edit, a scrub, a training step) is the page's commonest redraw,
// and Plotly.react of even a 2 x 4 heatmap re-lays out its figure and re-renders its trace
// (docs/performance.md has the cost per engine). When only the values, the colour range or
// the marks changed, the figure is left to Plotly as it is and its cells are recoloured in
// place (the cells whose value changed, or all of them when the range moved): a cost in
// proportion to the cells recoloured, small even for a 768,000-cell W_head. Plotly.react runs only
// when what the figure looks like changes (its size, title, axes, hover).

import { holdHeight, onColourScheme, setData, setHidden, setText } from "../page/dom.js";
import { look } from "./style.js";
import { bareFigures, compactFigures, figureParts, titleOf, wrapTitle } from "./layout.js";
import { allShapes } from "./shapes.js";
import { hoverOver } from "./hover.js";
import { colourBitmap, dropBitmap, paintBitmap, watchBitmap } from "./bitmap.js";
import { numbersTable } from "./numbers.js";
import { HEATMAP_IDS } from "../shared.js";
import { figureMenu, hideFigureMenu } from "../figure/menu.js";

// No mode bar: its buttons would be most of the page's Tab stops, and sit over the titles on a
// phone. Zoom stays (drag a box, double-click to zoom out) where a mouse is.
const CONFIG = { displaylogo: false, responsive: true, displayModeBar: false };

// A new colour scheme: every figure again, in its ink.
onColourScheme(() => redrawAll());

// Each figure's width, for wrapping its title, as a ResizeObserver reports it (its callbacks
// come once the page is laid out). Reading el.clientWidth before each Plotly.react would make the
// browser lay the page out right there, in the middle of a redraw that has just changed it,
// in every edit (docs/performance.md). Once widths have stopped changing for 250 ms
// (a window resized, large text that moved the layout), the figures whose titles would now
// wrap differently are drawn again, and those drawn at another width resized.
const widths = new WeakMap();
// Figures drawn since the last frame: each is resized in it if its box is not the width Plotly
// drew it (it measured the box while the page's layout was changing under it: a stage as wide
// as its editor's grid, which a new mode had just changed; no resize of the box is reported
// after, as it is back at the width last seen).
const drawnNow = new Set();
/** Resize the figure `el` in the next frame if its box is not the width Plotly drew it. */
export function fitNextFrame(el) {
  if (!drawnNow.size) {
    requestAnimationFrame(() => {
      for (const fig of drawnNow) {
        if (fig.isConnected && fig._fullLayout && fig.clientWidth &&
            Math.abs(fig._fullLayout.width - fig.clientWidth) >= 1) window.Plotly.Plots.resize(fig);
      }
      drawnNow.clear();
    });
  }
  drawnNow.add(el);
}
let rewrapTimer = 0;
const sizes = new ResizeObserver((entries) => {
  let changed = false;
  for (const { target: el } of entries) {
    const width = el.clientWidth; // laid out already: ResizeObserver reports after layout
    if (widths.get(el) !== width) {
      widths.set(el, width);
      changed = true;
    }
  }
  if (changed) {
    clearTimeout(rewrapTimer);
    rewrapTimer = setTimeout(rewrap, 250);
  }
});
function rewrap() {
  for (const [id, { spec, m }] of [...shown.entries()]) {
    const el = /** @type {PlotElement} */ (document.getElementById(id));
    const drawn = (el.layout && el.layout.title && el.layout.title.text) || "";
    if (drawn !== titleOf(spec.title, widthOf(el) || 600, look().title).text ||
        Boolean(el.vitText) !== textInCells(el, spec, m.cols)) {
      shown.delete(id);
      drawHeatmap(id, spec, m);
    } else {
      fitNextFrame(el); // its box another width, the window's not: Plotly resizes on the latter
    }
  }
}
// Numbers in the cells only where a cell is wide enough to hold one (a phone's 10 logits ran
// together); a resize that changes this draws the figure again (rewrap).
function textInCells(el, spec, cols) {
  // the plot area is the figure's width less the rows' ticks and title (about 50 px)
  return Boolean(spec.text) && ((widthOf(el) || 600) - 50) / cols >= 40;
}
function widthOf(el) {
  if (!widths.has(el)) {
    widths.set(el, el.clientWidth); // the first draw: measured now, then kept up to date
    sizes.observe(el);
  } else if (!widths.get(el)) {
    // Hidden when last reported (an encoder-only figure in the CLS mode), shown again by this
    // redraw: measured now, or its title would be wrapped for 600 px and cut off until the
    // observer's report redrew it.
    widths.set(el, el.clientWidth);
  }
  return widths.get(el);
}

// What each heatmap shows now: id -> {figure (figureOf), specText (the spec as JSON), spec, m}.
// A heatmap asked to show exactly that again is left alone; this is how the first view drawn
// while Python boots costs nothing more once Python's own, identical answer arrives.
const shown = new Map();

// Whether `m` holds the values drawn: the same array at the same version (js/page/render.js
// patches in place), or another array with the same numbers.
function sameValues(before, m) {
  if (before.m.data === m.data) return before.version === (m.version || 0);
  return sameData(before.m.data, m.data);
}

function sameData(a, b) {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Rows of a matrix ({rows, cols, data: Float64Array}) as views: what Plotly takes as heatmap z
// (typed arrays are accepted as rows, so nothing is converted element by element).
function rowsOf(m) {
  const out = new Array(m.rows);
  for (let i = 0; i < m.rows; i++) out[i] = m.data.subarray(i * m.cols, (i + 1) * m.cols);
  return out;
}

// What a figure looks like apart from its values: while this stays, a change is a recolouring.
// The colour range, the key and the marks are not in it (they follow the values), nor the title
// (a new mistake's name: recolour changes it in place while it wraps to as many lines).
function figureOf(spec, m) {
  const { zmin, zmax, key, marks, title, ...look } = spec;
  return `${m.rows}x${m.cols}:${JSON.stringify(look)}`;
}

/**
 * Draw (or leave alone, if unchanged) the heatmap `id`.
 * @param {string} id
 * @param {import("../protocol.js").HeatmapSpec} spec
 * @param {StoredMatrix} m
 */
export function drawHeatmap(id, spec, m) {
  const el = /** @type {PlotElement} */ (document.getElementById(id));
  const figure = figureOf(spec, m);
  const specText = JSON.stringify(spec);
  const before = shown.get(id);
  if (before && el.data && before.figure === figure && before.specText === specText &&
      sameValues(before, m)) return Promise.resolve(el);
  if (before && el.data && el.vitBitmap && before.figure === figure) {
    const title = before.spec.title === spec.title ? null : titled(el, spec, before);
    if (title !== false) return recolour(el, id, spec, m, before, title);
  }
  // hidden and kept by clearHeatmap (a figure without its data): its size may be old
  const kept = !el.data && Boolean(el._fullLayout);
  const held = kept && hidden.get(id);
  hidden.delete(id);
  if (held && held.figure === figure && held.look === lookText() && held.width === widthOf(el) &&
      sizeKept(el, held)) {
    // back as it was hidden: its trace given back, recoloured
    const title = held.spec.title === spec.title ? null : titled(el, spec, held);
    if (title !== false) {
      el.data = held.data;
      bindFigure(el, spec, m); // a figure made ahead is bound for the first time
      return recolour(el, id, spec, m, held, title, true);
    }
  }
  shown.delete(id);
  const { trace, layout, width, compact } = figureParts(id, spec, m, widthOf(el));
  bindFigure(el, spec, m);
  describe(el, spec, m);
  numbersTable(el, spec, m);
  // The cells' colours are set before Plotly draws, and painted in view once it has laid the
  // plot area out (and after every zoom or resize: see paintBitmap).
  colourBitmap(el, spec, m);
  // The key changes the page's layout: only after Plotly has measured it (the react calls of
  // one render all run before any of them resolves).
  holdHeight(el, layout.height);
  const drawing = window.Plotly.react(el, [trace], layout, CONFIG);
  const z = rowsOf(m);
  trace.z = z; // el.data[0].z (docs/interface.md), from now on
  // Plotly.react keeps a figure's size: one kept while the window changed size is resized (its
  // width measured as it came back: widthOf, no second layout of the page)
  const fitted = kept && width ? drawing.then((drawn) => (Math.abs(el._fullLayout.width - width) > 0.5
    ? window.Plotly.Plots.resize(el).then(() => drawn) : drawn)) : drawing;
  return fitted.then((drawn) => {
    // drawn again meanwhile (a later answer's draw gave Plotly another trace): that draw finishes
    // the figure; this one, whose resize may resolve after it (Plotly resolves a resize with the
    // next one), must not put its older values back
    if (!el.data || el.data[0] !== trace) return drawn;
    putZ(el, { z }); // and in Plotly's own copy of the trace, made as it drew
    watchBitmap(el); // a new figure: Plotly's events exist from now on
    paintBitmap(el);
    shown.set(id, { figure, specText, spec, m, version: m.version || 0 });
    colourKey(el, spec, keyShown(m));
    figureMenu(el); // "Download figure" (js/figure/menu.js), named with the title drawn
    fitNextFrame(el);
    const cleared = compact && layout.title.text.includes("<br>") ? clearTitle(el) : null;
    return cleared ? cleared.then(() => drawn) : drawn;
  });
}

// A compact figure's title of two lines or more: Plotly places the lines by its own estimate of
// their height, which in a compact figure's title band left the last line on the plot's top row
// (h_hat's "(B × D)" at 200 % zoom, at either text size). Measured once drawn, the band is
// widened by what it lacks (and the figure by as much): a promise of the relayout, or null.
const TITLE_GAP_PX = 6;
function clearTitle(el) {
  const title = el.querySelector(".gtitle"), plot = el.querySelector(".nsewdrag");
  if (!title || !plot) return null;
  const short = title.getBoundingClientRect().bottom + TITLE_GAP_PX - plot.getBoundingClientRect().top;
  if (short < 0.5) return null;
  const by = Math.ceil(short);
  return window.Plotly.relayout(el, { "margin.t": el.layout.margin.t + by, height: el.layout.height + by });
}

// What the page adds to a figure, whether Plotly draws it anew or it is recoloured: the hover
// over its cells, the repaint of its cells after each Plotly redraw, zoom or resize (a figure
// Plotly has made; a new one is watched once drawn), and whether the cells print their numbers.
function bindFigure(el, spec, m) {
  hoverOver(el);
  setData(el, "bitmap", "true");
  watchBitmap(el);
  el.vitHover = { spec, m };
  el.vitText = textInCells(el, spec, m.cols); // the cells' numbers painted (paintNumbers)
}

/**
 * What to change in the layout of the heatmap `el` to draw it `width` px wide, its title wrapped
 * again for that width (js/figure/print.js: paper is narrower than most screens); null for a figure not
 * shown. The keys are Plotly.relayout's.
 * @returns {?Object<string, number|string>}
 */
export function layoutAt(el, width) {
  const now = shown.get(el.id);
  if (!now || !el.layout || !el.layout.title) return null;
  const size = look().title;
  const step = Math.ceil(size * 1.3);
  const was = wrapTitle(now.spec.title, widthOf(el) || 600, size);
  const title = wrapTitle(now.spec.title, width, size);
  const grow = (title.lines - was.lines) * step; // the plot moves down by the lines added
  const pad = Math.ceil(((title.lines - 1) * step) / 2) - Math.ceil(((was.lines - 1) * step) / 2);
  return { width, "title.text": title.text, height: el.layout.height + grow,
           "margin.t": el.layout.margin.t + grow, "title.pad.t": el.layout.title.pad.t + pad };
}

/** Whether the heatmap `el`, drawn `width` px wide, prints its numbers on its cells. */
export function numbersAt(el, width) {
  const now = shown.get(el.id);
  return Boolean(now) && Boolean(now.spec.text) && width / now.m.cols >= 40;
}

// In the compact embed view, small matrices print their values; a squeezed key would not help.
// A bare figure has none.
function keyShown(m) {
  return !(document.documentElement.classList.contains("embed") && m.rows <= 8) && !bareFigures();
}

// A new title for a figure as it is: its wrapped text, or false if it wraps to another number of
// lines than the title shown (the plot then moves: a full redraw).
function titled(el, spec, before) {
  const size = look().title;
  const width = widthOf(el) || 600;
  const text = titleOf(spec.title, width, size);
  return text.lines === titleOf(before.spec.title, width, size).lines ? text.text : false;
}

// The figure as it is, new values: its cells recoloured and painted, its z swapped in place (in
// Plotly's own copy of the trace too, which it reads until its next full redraw), its key, label
// and numbers table brought up to date, and its marks and title (`title`: wrapped, or null if
// unchanged) changed if they changed (`back`: a figure back from hidden, whose outlines are
// compared with all it should have, the walk-through's too, which may have moved meanwhile).
function recolour(el, id, spec, m, before, title = null, back = false) {
  colourBitmap(el, spec, m);
  el.vitHover = { spec, m };
  paintBitmap(el, false);
  putZ(el, { z: rowsOf(m), zmin: spec.zmin, zmax: spec.zmax });
  describe(el, spec, m);
  numbersTable(el, spec, m);
  colourKey(el, spec, keyShown(m));
  shown.set(id, { figure: before.figure, specText: JSON.stringify(spec), spec, m, version: m.version || 0 });
  figureMenu(el);
  const update = title === null ? {} : { "title.text": title };
  if (back) {
    const shapes = allShapes(id, spec, m);
    if (JSON.stringify(shapes) !== JSON.stringify(el.layout.shapes || [])) update.shapes = shapes;
  } else if (JSON.stringify(before.spec.marks) !== JSON.stringify(spec.marks)) {
    update.shapes = allShapes(id, spec, m);
  }
  if (!Object.keys(update).length) return Promise.resolve(el);
  return window.Plotly.relayout(el, update).then(() => el);
}

// z and its range in the trace (el.data[0].z: docs/interface.md), and in Plotly's own copy of it,
// which Plotly reads until its next full redraw. Plotly draws nothing from them: the page paints
// the cells.
function putZ(el, values) {
  for (const trace of [el.data && el.data[0], el._fullData && el._fullData[0]]) {
    if (trace) Object.assign(trace, values);
  }
}

// What a screen reader hears for the figure (the cells themselves are a picture). The logits'
// heatmap takes arrow keys (js/panels/linked.js: they choose a logit, whose terms are said below it):
// an application, whose keys a screen reader passes on, not an image, whose it keeps.
function describe(el, spec, m) {
  const keys = el.id === HEATMAP_IDS.logits;
  const label = `${spec.title}: a heatmap of ${m.rows} by ${m.cols} values, colours from ${spec.key[0]} to ` +
                `${spec.key[2]}. ` + (keys ? "Arrow keys choose a logit; its terms are listed below. " : "") +
                `"Show the numbers" below it lists them.`;
  if (el.getAttribute("aria-label") !== label) {
    el.setAttribute("role", keys ? "application" : "img");
    if (keys) el.setAttribute("aria-roledescription", "heatmap");
    el.setAttribute("aria-label", label);
  }
}

// The colour key under a heatmap: "low [gradient] high", with the middle value (0 on the
// diverging scale) under the gradient's centre; read as one image named by its words.
function colourKey(el, spec, visible) {
  let key = el.nextElementSibling;
  if (!key || !key.classList.contains("colour-key")) {
    key = document.createElement("div");
    key.className = "colour-key";
    // one picture with its words (a screen reader once heard "-3.000 0 3.000")
    key.setAttribute("role", "img");
    for (const part of ["low", "bar", "high"]) {
      const span = document.createElement("span");
      span.className = `key-${part}`;
      key.appendChild(span);
    }
    el.after(key);
  }
  const [low, mid, high] = spec.key;
  setHidden(key, !visible);
  setData(key, "scale", spec.scale);
  const [lowEl, midEl, highEl] = key.children;
  setText(lowEl, low);
  setText(midEl, mid);
  setText(highEl, high);
  const label = `Colour key: ${low} to ${high}, ${mid} in the middle`;
  if (key.getAttribute("aria-label") !== label) key.setAttribute("aria-label", label);
}

// Draw every heatmap shown again (the text size changed).
export function redrawAll() {
  for (const [id, { spec, m }] of [...shown.entries()]) {
    shown.delete(id);
    drawHeatmap(id, spec, m);
  }
}

// A heatmap Python hides (a comparison with none chosen, the encoder output in the CLS mode) is
// kept, not purged: Plotly makes a new figure far more slowly than it draws a kept one again
// (most of all in WebKit: docs/performance.md), and a lecture goes back and forth between a
// mistake and none. Its numbers go (data[0].z is what the page shows: nothing), and it is drawn
// again in full when it comes back (sized anew: a window resized meanwhile is followed).
/**
 * @param {string} id
 */
export function clearHeatmap(id) {
  const before = shown.get(id);
  shown.delete(id);
  const el = /** @type {PlotElement} */ (document.getElementById(id));
  const key = el && el.nextElementSibling;
  if (key && key.classList.contains("colour-key")) setHidden(/** @type {HTMLElement} */ (key), true);
  const numbers = el && el.parentElement.querySelector("details.numbers-toggle");
  if (numbers) numbers.remove();
  if (el) dropBitmap(el);
  if (el) hideFigureMenu(el);
  if (!el || !el.data) return;
  putZ(el, { z: null }); // Plotly.react diffs against its own copy of the trace, not el.data
  // What it showed, for a return to the same figure at the same size and look: a recolouring
  if (before) hidden.set(id, { ...before, data: el.data, width: widths.get(el), height: el.layout.height, look: lookText() });
  el.data = undefined;
}

// Figures hidden by clearHeatmap: id -> what `shown` held, with the trace taken away (`data`), the
// width and height it was drawn for and the page's look then (a new colour scheme or text size
// while it was hidden means a full redraw).
const hidden = new Map();
// Whether a hidden figure still has the size it was drawn at. Plotly resizes its responsive
// figures on every window resize (the walk-through sends one when the pipeline's width changes:
// large text, a scroll bar), hidden ones too (only display: none stops it), and sizes them to
// their box, which has no height: one shown as it was then would squeeze its rows together.
function sizeKept(el, held) {
  return Boolean(el.layout) && el.layout.height === held.height && el._fullLayout.height === held.height;
}
function lookText() {
  return JSON.stringify(look()) + compactFigures() + bareFigures();
}
// A figure Python has not shown yet (a comparison, before a mistake or another head is chosen;
// the encoder output, in the CLS mode; dW_head, before the first Step), made ahead while the
// page is idle and kept as clearHeatmap keeps one: Plotly makes a new figure far more slowly
// than it draws a kept one again (docs/performance.md), so the first switch to it costs what a
// later one does. `like`:
// what Python said it will be ({spec, rows, cols}: the answer's "ahead"; its colour range a
// placeholder: a figure made ahead is recoloured when shown). Made at its own width: a hidden
// figure keeps its width (css/pipeline.css). Resolves to whether it was made; never over a figure
// drawn meanwhile.
/**
 * @param {string} id
 * @param {{spec: HeatmapSpec, rows: number, cols: number} | undefined} like
 * @returns {Promise<boolean>}
 */
export function prepareFigure(id, like) {
  const el = /** @type {PlotElement} */ (document.getElementById(id));
  if (!el || !like || el._fullLayout || shown.has(id) || !el.clientWidth) return Promise.resolve(false);
  const { spec } = like, m = { rows: like.rows, cols: like.cols };
  const { trace, layout, width } = figureParts(id, spec, m, widthOf(el));
  layout.shapes = [];
  return window.Plotly.react(el, [trace], layout, CONFIG).then(() => {
    // drawn meanwhile (Plotly keeps the trace it is given as el.data[0]): left as that draw made it
    if (!el.data || el.data[0] !== trace) return false;
    // kept, as by clearHeatmap
    hidden.set(id, { figure: figureOf(spec, m), spec, data: el.data, width, height: layout.height,
                     look: lookText() });
    el.data = undefined;
    return true;
  });
}
