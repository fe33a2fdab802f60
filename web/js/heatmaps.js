// Plotly heatmaps, always updated with Plotly.react and new array objects, axes kept fixed.
//
// What each heatmap shows (title, axes, range, marks) is decided in Python
// (pycore/explorer/panels.py; js/protocol.js: HeatmapSpec); this file only draws it.
//
// Big matrices (a ViT-B/16 W_head: 768,000 cells) are drawn as a bitmap: the page colours one
// pixel per cell from the colour scale's table, into a canvas of the matrix's own size, and
// paints the part in view onto a canvas laid under the plot's transparent background, exactly
// over its plot area. A Plotly heatmap of that size costs 350-450 ms per redraw on a 2-CPU
// machine, and a picture handed to Plotly costs a PNG encoding of ~250 ms; an edit here
// recolours only the cells that changed. The figure keeps an invisible heatmap trace whose z is
// the matrix, so data[0].z stays the page's interface (docs/interface.md), Plotly still draws
// the axes, titles, marks and zoom, and hovering a cell shows its exact value (drawn by this
// file, from the same hover template).

import { holdHeight, inkColour, onColourScheme, setData, setHidden, setText } from "./dom.js";
import { shortNumber } from "./numbers.js";

// A diverging scale centred at zero (ColorBrewer RdBu, readable with the common colour-vision
// deficiencies): blue below zero, white at zero, red above.
const DIVERGING = [
  [0.0, "#2166ac"], [0.2, "#4393c3"], [0.4, "#d1e5f0"], [0.5, "#f7f7f7"],
  [0.6, "#fddbc7"], [0.8, "#d6604d"], [1.0, "#b2182b"],
];
// Probabilities are not signed: a sequential scale from white.
const SEQUENTIAL = [[0.0, "#f7f7f7"], [0.5, "#fdae6b"], [1.0, "#a63603"]];

// Matrices with more cells than this are drawn as a bitmap.
const BITMAP_FROM = 20000;

// No mode bar: its buttons were 42 of the page's 57 Tab stops and sat over the titles on a
// phone. Zoom stays (drag a box, double-click to zoom out) where a mouse is.
const CONFIG = { displaylogo: false, responsive: true, displayModeBar: false };
const COARSE = window.matchMedia ? window.matchMedia("(pointer: coarse)") : { matches: false };

function axis(title, n, colour) {
  const a = { title: { text: title, standoff: 6 }, zeroline: false, showgrid: false, fixedrange: false,
              automargin: true, color: colour };
  if (n <= 24) a.dtick = 1;
  return a;
}

// Plotly never wraps a title: break a long one at spaces so that it fits the plot's width
// (about 0.6 em per character); a figure whose width changes is drawn again (see widths).
function wrapTitle(text, width, size) {
  const perLine = Math.max(16, Math.floor((width - 12) / (size * 0.6)));
  const lines = [];
  let line = "";
  for (const word of text.split(/ +/)) {
    if (line && line.length + 1 + word.length > perLine) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return { text: lines.join("<br>"), lines: lines.length };
}

// A new colour scheme: every figure again, in its ink.
onColourScheme(() => redrawAll());

// Each figure's width, for wrapping its title, as a ResizeObserver reports it (its callbacks
// come once the page is laid out). Reading el.clientWidth before each Plotly.react made the
// browser lay the page out right there, in the middle of a redraw that has just changed it:
// a few ms of every edit (docs/performance.md). Once widths have stopped changing for 250 ms
// (a window resized, large text that moved the layout), the figures whose titles would now
// wrap differently are drawn again.
const widths = new WeakMap();
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
    const el = document.getElementById(id);
    const drawn = (el.layout && el.layout.title && el.layout.title.text) || "";
    if (drawn !== wrapTitle(spec.title, widthOf(el) || 600, look().title).text ||
        Boolean(el.data && el.data[0] && el.data[0].texttemplate) !== textInCells(el, spec, m.cols)) {
      shown.delete(id);
      drawHeatmap(id, spec, m);
    }
  }
}
// Numbers in the cells only where a cell is wide enough to hold one (a phone's 10 logits ran
// together); a resize that changes this draws the figure again (rewrap).
function textInCells(el, spec, cols) {
  return Boolean(spec.text) && (widthOf(el) || 600) / cols >= 40;
}
function widthOf(el) {
  if (!widths.has(el)) {
    widths.set(el, el.clientWidth); // the first draw: measured now, then kept up to date
    sizes.observe(el);
  }
  return widths.get(el);
}

// The page's text colour and size now (dark mode, large text), for Plotly's labels.
const WIDE = window.matchMedia ? window.matchMedia("(min-width: 1600px)") : { matches: false };
function look() {
  const large = document.documentElement.classList.contains("large");
  // Large text (a projector): about 1.4x every text of the figure; on a wide screen (a
  // 1080p projector) numbers and ticks of 24 px, legible from the back of a lecture hall.
  if (large && WIDE.matches) return { ink: inkColour(), size: 24, title: 26, cellText: 24 };
  return { ink: inkColour(), size: large ? 15 : 11, title: large ? 18 : 13,
           cellText: large ? 16 : 11 };
}

// Shapes laid over a heatmap by the linked views (js/linked.js): id -> Plotly shapes. They are
// drawn with the heatmap's own marks, and kept across its redraws.
const overlays = new Map();
// The classes' names (the answers' labels), for hovers whose spec says x_labels: "classes".
let classLabels = [];

export function setClassLabels(names) { classLabels = names || []; }

// The predicted-class marks: a dark outline per cell.
function markShapes(spec) {
  return (spec.marks || []).map(([r, c]) => ({
    type: "rect", xref: "x", yref: "y",
    x0: c - 0.5, x1: c + 0.5, y0: r - 0.5, y1: r + 0.5,
    line: { color: "#111", width: 3 },
  }));
}

// Everything laid over heatmap `id`: its marks, the linked views' overlays, the walk-through's
// highlights (drawn last, on top). Each setter redraws them all, so none removes another's.
// Only shapes inside the matrix `m` now shown are laid: an overlay set for another size (the
// cell focused in a 768 x 1000 W_head, kept while a preset of 4 x 3 replaces it) would stretch
// the axes to its place, and Plotly would then lay out (and measure) a tick label for each of
// a thousand columns: minutes of main thread.
function allShapes(id, spec, m) {
  const inside = (s) => !m || s.xref !== "x" || (
    Math.min(s.x0, s.x1) >= -0.5 - 1e-9 && Math.max(s.x0, s.x1) <= m.cols - 0.5 + 1e-9 &&
    Math.min(s.y0, s.y1) >= -0.5 - 1e-9 && Math.max(s.y0, s.y1) <= m.rows - 0.5 + 1e-9);
  return markShapes(spec || {}).concat(overlays.get(id) || [], highlightShapes(id)).filter(inside);
}

/**
 * Lay `shapes` over heatmap `id` (replacing those laid before), now and after its redraws.
 * @param {string} id
 * @param {Object[]} shapes Plotly shapes
 */
export function setOverlay(id, shapes) {
  const before = overlays.get(id) || [];
  if (!shapes.length && !before.length) return Promise.resolve();
  overlays.set(id, shapes);
  const el = document.getElementById(id);
  if (!el || !el.data || !el.vitHover) return Promise.resolve();
  return window.Plotly.relayout(el, { shapes: allShapes(id, el.vitHover.spec, el.vitHover.m) });
}

/**
 * The cell of heatmap `el` under the point (clientX, clientY), or null outside it: from the
 * axes' ranges, so it works for the bitmaps too (their trace is not hovered by Plotly).
 * @returns {?number[]} [row, col]
 */
export function cellAt(el, clientX, clientY) {
  const area = el.querySelector(".nsewdrag");
  const full = el._fullLayout;
  if (!area || !full || !el.vitHover) return null;
  const box = area.getBoundingClientRect();
  const fx = (clientX - box.left) / box.width;
  const fy = (clientY - box.top) / box.height;
  const [x0, x1] = full.xaxis.range;
  const [y0, y1] = full.yaxis.range;
  const { m } = el.vitHover;
  const col = Math.round(x0 + fx * (x1 - x0));
  const row = Math.round(y1 + fy * (y0 - y1)); // the y axis runs top to bottom: reversed
  if (fx < 0 || fx > 1 || fy < 0 || fy > 1 || col < 0 || row < 0 || col >= m.cols || row >= m.rows) return null;
  return [row, col];
}

// What each heatmap shows now: id -> {specText (the spec as JSON, and the class names if it
// names them), spec, m}. A heatmap asked to show exactly that again is left alone; this is how
// the first view drawn while Python boots costs nothing more once Python's own, identical
// answer arrives.
const shown = new Map();

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

/**
 * Draw (or leave alone, if unchanged) the heatmap `id`.
 * @param {string} id
 * @param {import("./protocol.js").HeatmapSpec} spec
 * @param {import("./protocol.js").Matrix} m
 */
export function drawHeatmap(id, spec, m) {
  const el = document.getElementById(id);
  // a hover that names the classes changes with their names
  const specText = JSON.stringify(spec) + (spec.x_labels ? classLabels.join("\n") : "");
  const before = shown.get(id);
  if (before && el.data && before.specText === specText && before.m.rows === m.rows &&
      before.m.cols === m.cols && sameData(before.m.data, m.data)) return Promise.resolve(el);
  shown.delete(id);
  const { rows, cols } = m;
  const compact = document.documentElement.classList.contains("embed");
  const bitmap = rows * cols > BITMAP_FROM;
  // A bitmap whose figure is unchanged (a W_head edit: the same title, range and marks): only
  // values changed, and Plotly draws none of them (its trace is invisible), so the figure is
  // left as it is, its z swapped in place; a Plotly.react would only re-check 768,000 values.
  if (bitmap && before && el.data && el.dataset.bitmap === "true" && before.specText === specText &&
      before.m.rows === rows && before.m.cols === cols) {
    colourBitmap(el, spec, m);
    paintBitmap(el);
    el.data[0].z = rowsOf(m);
    // and in Plotly's own copy of the trace, which it reads until its next full redraw
    if (el._fullData && el._fullData[0]) el._fullData[0].z = el.data[0].z;
    el.vitHover = { spec, m };
    numbersTable(el, spec, m);
    shown.set(id, { specText, spec, m });
    return Promise.resolve(el);
  }
  const z = rowsOf(m);
  const trace = {
    type: "heatmap",
    z,
    zmin: spec.zmin,
    zmax: spec.zmax,
    colorscale: spec.scale === "sequential" ? SEQUENTIAL : DIVERGING,
    hovertemplate: spec.hover.replace(EXACT, "%{text}") + "<extra></extra>",
    text: bitmap ? undefined : z.map((row) => Array.from(row, shortNumber)), // hovers' numbers
    // The colour key is the page's own (see colourKey): Plotly's colour bar is a second plot
    // with its own axis, and redrawing it cost about a third of every heatmap's update.
    showscale: false,
    xgap: 0, ygap: 0,
  };
  if (spec.x_labels === "classes") {
    const names = Array.from({ length: cols }, (_, j) => classLabels[j] || `class ${j}`);
    trace.customdata = Array.from({ length: rows }, () => names);
  }
  // In the compact embed view, small matrices print their values; a squeezed key would not help.
  const keyShown = !(compact && rows <= 8);
  const style = look();
  if (textInCells(el, spec, cols)) {
    trace.texttemplate = spec.text_format || "%{z:.2f}";
    trace.textfont = { size: style.cellText };
  }
  const cell = rows <= 8 ? (compact ? 19 : 34) : rows <= 32 ? (compact ? 8 : 16) : 0;
  const height = cell ? Math.max(compact ? 96 : 150, (compact ? 70 : 90) + rows * cell) : (compact ? 200 : 340);
  const title = wrapTitle(spec.title, widthOf(el) || 600, style.title);
  // Plotly sets lines 1.3 em apart and centres a multi-line title on its first line's place:
  // half of the extra lines go above it unless the pad makes room.
  const extra = (title.lines - 1) * Math.ceil(style.title * 1.3);
  const layout = {
    title: { text: title.text, font: { size: style.title, color: style.ink }, x: 0, xanchor: "left",
             y: 1, yref: "container", yanchor: "top", pad: { t: 4 + Math.ceil(extra / 2) } },
    height: Math.round(height * (style.size / 11)) + extra,
    margin: compact ? { l: 8, r: 6, t: 22 + extra, b: 8 } : { l: 10, r: 10, t: 30 + extra, b: 10 },
    // In the compact embed the axes keep their ticks but not their titles: a 600-pixel frame has
    // no room for both, and the plot's title and the hover say what rows and columns are.
    xaxis: axis(compact ? "" : spec.x_title, cols, style.ink),
    yaxis: Object.assign(axis(compact ? "" : spec.y_title, rows, style.ink), { autorange: "reversed" }),
    // On a touch screen a swipe scrolls the page: no dragging in the plot (explorer.css too).
    dragmode: COARSE.matches ? false : "zoom",
    shapes: allShapes(id, spec, m),
    // A fixed uirevision keeps the user's zoom across updates; it changes with the shape, so a
    // resize starts from the full view.
    uirevision: `${id}:${rows}x${cols}`,
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    font: { family: "system-ui, sans-serif", size: style.size, color: style.ink },
  };
  if (bitmap) {
    trace.visible = false; // z for the page's interface; the canvas under it is what is seen
    Object.assign(layout.xaxis, { range: [-0.5, cols - 0.5], autorange: false });
    Object.assign(layout.yaxis, { range: [rows - 0.5, -0.5], autorange: false });
    hoverOver(el);
  }
  setData(el, "bitmap", bitmap ? "true" : "false");
  el.vitHover = { spec, m };
  const label = `${spec.title}: a heatmap of ${rows} by ${cols} values, colours from ${spec.key[0]} to ` +
                `${spec.key[2]}. "Show the numbers" below it lists them.`;
  if (el.getAttribute("aria-label") !== label) {
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", label);
  }
  numbersTable(el, spec, m);
  // The bitmap's colours are set before Plotly draws, and painted in view once it has laid the
  // plot area out (and after every zoom or resize: see paintBitmap).
  if (bitmap) colourBitmap(el, spec, m);
  else dropBitmap(el);
  // The key changes the page's layout: only after Plotly has measured it (the react calls of
  // one render all run before any of them resolves).
  holdHeight(el, layout.height);
  return window.Plotly.react(el, [trace], layout, CONFIG).then((drawn) => {
    if (bitmap) watchBitmap(el);
    paintBitmap(el);
    shown.set(id, { specText, spec, m });
    colourKey(el, spec, keyShown);
    return drawn;
  });
}

// ---- highlights: the cells a walk-through step uses (js/walkthrough.js) -----------------------

const highlights = new Map(); // id -> [[row0, col0, row1, col1]], inclusive

// A thick orange frame, and inside it a thin one in the page's ink, so that the outline shows
// over both ends of the colour scale and on a projector; drawn above the predicted-class marks.
// No wash inside: a tint would change the cells' colours, which must match the colour key.
// The frames are named "highlight" and "highlight-edge".
function highlightShapes(id) {
  const ink = look().ink;
  return (highlights.get(id) || []).flatMap(([r0, c0, r1, c1]) => [
    { type: "rect", xref: "x", yref: "y", name: "highlight",
      x0: c0 - 0.5, x1: c1 + 0.5, y0: r0 - 0.5, y1: r1 + 0.5,
      line: { color: "#ff8c00", width: 5 }, fillcolor: "rgba(0, 0, 0, 0)" },
    { type: "rect", xref: "x", yref: "y", name: "highlight-edge",
      x0: c0 - 0.42, x1: c1 + 0.42, y0: r0 - 0.42, y1: r1 + 0.42,
      line: { color: ink, width: 1.5 }, fillcolor: "rgba(0, 0, 0, 0)" },
  ]);
}

/**
 * Outline these cells of the heatmap `id` (none: an empty list), keeping its marks.
 * @param {string} id
 * @param {number[][]} rects [[row0, col0, row1, col1]], inclusive
 */
export function highlight(id, rects) {
  const before = JSON.stringify(highlights.get(id) || []);
  if (rects.length) highlights.set(id, rects);
  else highlights.delete(id);
  const el = document.getElementById(id);
  if (!el || !el.data || before === JSON.stringify(rects)) return Promise.resolve();
  const shown = el.vitHover || {};
  return window.Plotly.relayout(el, { shapes: allShapes(id, shown.spec, shown.m) });
}

// ---- the bitmap ----------------------------------------------------------------------------

const TABLE_SIZE = 512;
const tables = new Map(); // scale name -> Uint32Array of RGBA pixels (the page's byte order)

function hexRGB(hex) {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

// The colour scale as a table of TABLE_SIZE colours, interpolated linearly in RGB between its
// stops, as Plotly interpolates a heatmap's scale.
function colourTable(scale) {
  if (tables.has(scale)) return tables.get(scale);
  const stops = (scale === "sequential" ? SEQUENTIAL : DIVERGING).map(([at, hex]) => [at, hexRGB(hex)]);
  const bytes = new Uint8ClampedArray(TABLE_SIZE * 4);
  for (let k = 0; k < TABLE_SIZE; k++) {
    const f = k / (TABLE_SIZE - 1);
    let s = 0;
    while (s < stops.length - 2 && f > stops[s + 1][0]) s++;
    const [a0, c0] = stops[s];
    const [a1, c1] = stops[s + 1];
    const w = a1 > a0 ? (f - a0) / (a1 - a0) : 0;
    for (let ch = 0; ch < 3; ch++) bytes[4 * k + ch] = Math.round(c0[ch] + (c1[ch] - c0[ch]) * w);
    bytes[4 * k + 3] = 255;
  }
  const table = new Uint32Array(bytes.buffer);
  tables.set(scale, table);
  return table;
}

// Each bitmap heatmap keeps, in el.vitBitmap: `cells`, a canvas of rows x cols pixels (one per
// cell) with its ImageData; the matrix, scale and range it was coloured from; and `view`, the
// canvas on screen. Both canvases are the page's own: Plotly never sees them.

function colourOf(table, v, low, scale) {
  if (v !== v) return table[(TABLE_SIZE - 1) >> 1] & 0x00ffffff; // NaN: transparent
  const last = TABLE_SIZE - 1;
  const k = Math.round((v - low) * scale);
  return table[k < 0 ? 0 : k > last ? last : k];
}

// Colour the cells of `m` into el's bitmap: all of them when the shape, scale or range changed,
// else only those whose value changed (a W_head edit: one cell of 768,000).
function colourBitmap(el, spec, m) {
  const table = colourTable(spec.scale);
  const low = spec.zmin;
  const scale = (TABLE_SIZE - 1) / (spec.zmax - spec.zmin || 1);
  let bm = el.vitBitmap;
  const same = bm && bm.rows === m.rows && bm.cols === m.cols && bm.scale === spec.scale &&
    bm.zmin === spec.zmin && bm.zmax === spec.zmax;
  if (!same) {
    const cells = bm && bm.cells ? bm.cells : document.createElement("canvas");
    cells.width = m.cols;
    cells.height = m.rows;
    const image = cells.getContext("2d").createImageData(m.cols, m.rows);
    bm = Object.assign(bm || {}, { cells, image, pixels: new Uint32Array(image.data.buffer), rows: m.rows,
                                   cols: m.cols, scale: spec.scale, zmin: spec.zmin, zmax: spec.zmax, data: null });
    el.vitBitmap = bm;
  }
  const { pixels } = bm;
  const data = m.data;
  const before = bm.data;
  if (before === data) return;
  // the changed cells' bounding box: only it is copied into the canvas
  let r0 = m.rows, r1 = -1, c0 = m.cols, c1 = -1;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (before && (v === before[i] || (v !== v && before[i] !== before[i]))) continue;
    pixels[i] = colourOf(table, v, low, scale);
    const r = (i / m.cols) | 0, c = i - r * m.cols;
    if (r < r0) r0 = r;
    if (r > r1) r1 = r;
    if (c < c0) c0 = c;
    if (c > c1) c1 = c;
  }
  bm.data = data;
  if (r1 >= 0) bm.cells.getContext("2d").putImageData(bm.image, 0, 0, c0, r0, c1 - c0 + 1, r1 - r0 + 1);
}

// The figure stopped being a bitmap (a smaller matrix): its canvas goes.
function dropBitmap(el) {
  if (!el.vitBitmap) return;
  if (el.vitBitmap.view) el.vitBitmap.view.remove();
  el.vitBitmap = null;
}

// Paint the part of the bitmap in view over the plot area, one screen pixel per device pixel,
// cells as sharp squares. Called after each Plotly redraw, zoom and resize.
function paintBitmap(el) {
  const bm = el.vitBitmap;
  const full = el._fullLayout;
  if (!bm || !full || el.dataset.bitmap !== "true") return;
  const box = el.parentElement;
  let view = bm.view;
  if (!view || !view.isConnected) {
    view = document.createElement("canvas");
    view.className = "heatmap-bitmap";
    view.setAttribute("aria-hidden", "true"); // the plot's label and its table say what it shows
    box.style.position = "relative";
    box.insertBefore(view, el); // first: Plotly's own layers, positioned after it, paint above
    bm.view = view;
  }
  const { l, t, w, h } = full._size;
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(1, Math.round(w * ratio));
  const height = Math.max(1, Math.round(h * ratio));
  if (view.width !== width) view.width = width;
  if (view.height !== height) view.height = height;
  view.style.left = `${el.offsetLeft + l}px`;
  view.style.top = `${el.offsetTop + t}px`;
  view.style.width = `${w}px`;
  view.style.height = `${h}px`;
  // Cell c spans x from c - 0.5 to c + 0.5, so the canvas's pixel column c starts at x = c - 0.5.
  const [x0, x1] = full.xaxis.range;
  const [ya, yb] = full.yaxis.range; // reversed: the top of the plot is the smaller row
  const ctx = view.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  ctx.clearRect(0, 0, width, height);
  ctx.drawImage(bm.cells, Math.min(x0, x1) + 0.5, Math.min(ya, yb) + 0.5, Math.abs(x1 - x0), Math.abs(yb - ya),
                0, 0, width, height);
}

// Repaint after Plotly redraws the figure on its own (a zoom, a double-click, a resize).
function watchBitmap(el) {
  if (el.vitBitmapWatched || typeof el.on !== "function") return;
  el.vitBitmapWatched = true;
  el.on("plotly_afterplot", () => paintBitmap(el));
  el.on("plotly_relayout", () => paintBitmap(el));
}

// ---- hover over a bitmap: the cell's exact value, from the spec's hover template ------------

const EXACT = /%\{z(?::[^}]*)?\}/g;

function hoverOver(el) {
  if (el.vitHoverBound) return;
  el.vitHoverBound = true;
  const label = document.createElement("div");
  label.className = "hover-value";
  label.setAttribute("aria-hidden", "true"); // the numbers are in the page's tables for readers
  label.hidden = true;
  const box = el.parentElement; // the plot's box (Plotly owns the plot's own children)
  box.style.position = "relative";
  box.appendChild(label);
  el.addEventListener("mousemove", (event) => {
    const cell = el.dataset.bitmap === "true" ? cellAt(el, event.clientX, event.clientY) : null;
    if (!cell) {
      label.hidden = true;
      return;
    }
    const [row, col] = cell;
    const { m, spec } = el.vitHover;
    const value = m.data[row * m.cols + col];
    label.replaceChildren(...spec.hover.replace(/%\{x\}/g, String(col)).replace(/%\{y\}/g, String(row))
      .replace(/%\{customdata\}/g, classLabels[col] || `class ${col}`)
      .replace(EXACT, shortNumber(value)).split("<br>").flatMap((line, n) => (n ? [document.createElement("br"), line] : [line])));
    const own = box.getBoundingClientRect();
    label.style.left = `${event.clientX - own.left + 12}px`;
    label.style.top = `${event.clientY - own.top + 12}px`;
    label.hidden = false;
  });
  el.addEventListener("mouseleave", () => { label.hidden = true; });
}

// The colour key under a heatmap: "low [gradient] high", with the middle value (0 on the
// diverging scale) under the gradient's centre. Plain text, so screen readers read it too.
function colourKey(el, spec, visible) {
  let key = el.nextElementSibling;
  if (!key || !key.classList.contains("colour-key")) {
    key = document.createElement("div");
    key.className = "colour-key";
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

// ---- "Show the numbers": the values as a table, built when it is opened -----------------------

const TABLE_MAX = 24; // rows and columns listed (the exports have them all)

function cellText(value) {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "inf" : "-inf";
  if (Math.abs(value) >= 1e6) return value.toExponential(4);
  const text = value.toFixed(4);
  return /^-0\.0+$/.test(text) ? text.slice(1) : text; // never "-0.0000"
}

function numbersTable(el, spec, m) {
  let box = el.parentElement.querySelector("details.numbers-toggle");
  if (!box) {
    box = document.createElement("details");
    box.className = "numbers-toggle";
    const summary = document.createElement("summary");
    summary.textContent = "Show the numbers";
    box.append(summary);
    box.addEventListener("toggle", () => { if (box.open) fillNumbers(box); });
    el.parentElement.append(box);
  }
  box.vitNumbers = { spec, m };
  if (box.open) fillNumbers(box);
}

function fillNumbers(box) {
  const { spec, m } = box.vitNumbers;
  const rows = Math.min(m.rows, TABLE_MAX);
  const cols = Math.min(m.cols, TABLE_MAX);
  const table = document.createElement("table");
  table.className = "numbers";
  const caption = document.createElement("caption");
  caption.textContent = spec.title + (m.rows > rows || m.cols > cols
    ? ` (the first ${rows} of ${m.rows} rows and ${cols} of ${m.cols} columns; the exports have them all)` : "");
  const head = document.createElement("tr");
  head.append(document.createElement("td"));
  for (let j = 0; j < cols; j++) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = `${spec.x_title} ${j}`;
    head.append(th);
  }
  const thead = document.createElement("thead");
  thead.append(head);
  const body = document.createElement("tbody");
  for (let i = 0; i < rows; i++) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = `${spec.y_title} ${i}`;
    tr.append(th);
    for (let j = 0; j < cols; j++) {
      const td = document.createElement("td");
      td.textContent = cellText(m.data[i * m.cols + j]);
      tr.append(td);
    }
    body.append(tr);
  }
  table.append(caption, thead, body);
  const scroll = document.createElement("div");
  scroll.className = "table-scroll";
  // A region that may scroll must be reachable by keyboard (arrow keys then scroll it).
  scroll.tabIndex = 0;
  scroll.setAttribute("role", "region");
  scroll.setAttribute("aria-label", `${spec.title}: the numbers`);
  scroll.append(table);
  box.querySelector(".table-scroll")?.remove();
  box.append(scroll);
}

// Draw every heatmap shown again (the text size changed).
export function redrawAll() {
  for (const [id, { spec, m }] of [...shown.entries()]) {
    shown.delete(id);
    drawHeatmap(id, spec, m);
  }
}

export function clearHeatmap(id) {
  shown.delete(id);
  const el = document.getElementById(id);
  const key = el && el.nextElementSibling;
  if (key && key.classList.contains("colour-key")) setHidden(key, true);
  const numbers = el && el.parentElement.querySelector("details.numbers-toggle");
  if (numbers) numbers.remove();
  if (el) dropBitmap(el);
  if (el && el.data) window.Plotly.purge(el);
}
