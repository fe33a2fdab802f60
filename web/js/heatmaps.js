// Heatmaps: Plotly draws the axes, titles, marks and zoom; the page paints the cells.
//
// What each heatmap shows (title, axes, range, marks) is decided in Python
// (pycore/explorer/heatmap_spec.py; js/protocol.js: HeatmapSpec); this file only draws it.
//
// Every matrix is painted by the page: one pixel per cell, coloured from the colour scale's
// table into a canvas of the matrix's own size, then the part in view is painted (cells as
// sharp squares, and each cell's number when the spec asks for it) onto a canvas laid under the
// plot's transparent background, exactly over its plot area. The figure keeps an invisible
// heatmap trace whose z is the matrix, so data[0].z stays the page's interface
// (docs/interface.md), and hovering a cell shows its exact value (drawn by this file, from the
// spec's hover template).
//
// Why: a change of values (an edit, a scrub, a training step) is the page's commonest redraw,
// and Plotly.react of even a 2 x 4 heatmap re-lays out its figure and re-renders its trace
// (docs/performance.md has the cost per engine). When only the values, the colour range or
// the marks changed, the figure is left to Plotly as it is and its cells are recoloured in
// place (the cells whose value changed, or all of them when the range moved): a cost in
// proportion to the cells recoloured, small even for a 768,000-cell W_head. Plotly.react runs only
// when what the figure looks like changes (its size, title, axes, hover).

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

// No mode bar: its buttons would be most of the page's Tab stops, and sit over the titles on a
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
// come once the page is laid out). Reading el.clientWidth before each Plotly.react would make the
// browser lay the page out right there, in the middle of a redraw that has just changed it,
// in every edit (docs/performance.md). Once widths have stopped changing for 250 ms
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
        Boolean(el.vitText) !== textInCells(el, spec, m.cols)) {
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
  // the same outlines again (the focused cell's, after each edit): nothing to lay out
  if (JSON.stringify(shapes) === JSON.stringify(before)) return Promise.resolve();
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

// What each heatmap shows now: id -> {figure (figureOf), specText (the spec as JSON), spec, m}.
// A heatmap asked to show exactly that again is left alone; this is how the first view drawn
// while Python boots costs nothing more once Python's own, identical answer arrives.
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

// What a figure looks like apart from its values: while this stays, a change is a recolouring.
// The colour range, the key and the marks are not in it (they follow the values).
function figureOf(spec, m) {
  const { zmin, zmax, key, marks, ...look } = spec;
  return `${m.rows}x${m.cols}:${JSON.stringify(look)}` + (spec.x_labels ? classLabels.join("\n") : "");
}

/**
 * Draw (or leave alone, if unchanged) the heatmap `id`.
 * @param {string} id
 * @param {import("./protocol.js").HeatmapSpec} spec
 * @param {import("./protocol.js").Matrix} m
 */
export function drawHeatmap(id, spec, m) {
  const el = document.getElementById(id);
  const figure = figureOf(spec, m);
  const specText = JSON.stringify(spec);
  const before = shown.get(id);
  if (before && el.data && before.figure === figure && before.specText === specText &&
      sameData(before.m.data, m.data)) return Promise.resolve(el);
  if (before && el.data && el.vitBitmap && before.figure === figure) return recolour(el, id, spec, m, before);
  shown.delete(id);
  const { rows, cols } = m;
  const compact = document.documentElement.classList.contains("embed");
  const trace = {
    type: "heatmap",
    z: rowsOf(m),
    zmin: spec.zmin,
    zmax: spec.zmax,
    colorscale: spec.scale === "sequential" ? SEQUENTIAL : DIVERGING,
    // z for the page's interface: the canvas under the plot is what is seen
    visible: false,
    hovertemplate: spec.hover + "<extra></extra>",
    showscale: false, // the colour key is the page's own (see colourKey)
  };
  if (spec.x_labels === "classes") {
    // each column's class name, for the hover (the same names hoverOver shows)
    const names = Array.from({ length: cols }, (_, j) => classLabels[j] || `class ${j}`);
    trace.customdata = Array.from({ length: rows }, () => names);
  }
  const style = look();
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
    xaxis: Object.assign(axis(compact ? "" : spec.x_title, cols, style.ink),
                         { range: [-0.5, cols - 0.5], autorange: false }),
    yaxis: Object.assign(axis(compact ? "" : spec.y_title, rows, style.ink),
                         { range: [rows - 0.5, -0.5], autorange: false }),
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
  hoverOver(el);
  setData(el, "bitmap", "true");
  el.vitHover = { spec, m };
  el.vitText = textInCells(el, spec, cols); // the cells' numbers painted (paintNumbers)
  describe(el, spec, m);
  numbersTable(el, spec, m);
  // The cells' colours are set before Plotly draws, and painted in view once it has laid the
  // plot area out (and after every zoom or resize: see paintBitmap).
  colourBitmap(el, spec, m);
  // The key changes the page's layout: only after Plotly has measured it (the react calls of
  // one render all run before any of them resolves).
  holdHeight(el, layout.height);
  return window.Plotly.react(el, [trace], layout, CONFIG).then((drawn) => {
    watchBitmap(el);
    paintBitmap(el);
    shown.set(id, { figure, specText, spec, m });
    colourKey(el, spec, keyShown(m));
    return drawn;
  });
}

// In the compact embed view, small matrices print their values; a squeezed key would not help.
function keyShown(m) {
  return !(document.documentElement.classList.contains("embed") && m.rows <= 8);
}

// The figure as it is, new values: its cells recoloured and painted, its z swapped in place (in
// Plotly's own copy of the trace too, which it reads until its next full redraw), its key, label
// and numbers table brought up to date, and its marks moved if they changed.
function recolour(el, id, spec, m, before) {
  colourBitmap(el, spec, m);
  el.vitHover = { spec, m };
  paintBitmap(el, false);
  const z = rowsOf(m);
  for (const trace of [el.data[0], el._fullData && el._fullData[0]]) {
    if (trace) Object.assign(trace, { z, zmin: spec.zmin, zmax: spec.zmax });
  }
  describe(el, spec, m);
  numbersTable(el, spec, m);
  colourKey(el, spec, keyShown(m));
  shown.set(id, { figure: before.figure, specText: JSON.stringify(spec), spec, m });
  if (JSON.stringify(before.spec.marks) === JSON.stringify(spec.marks)) return Promise.resolve(el);
  return window.Plotly.relayout(el, { shapes: allShapes(id, spec, m) }).then(() => el);
}

// What a screen reader hears for the figure (the cells themselves are a picture).
function describe(el, spec, m) {
  const label = `${spec.title}: a heatmap of ${m.rows} by ${m.cols} values, colours from ${spec.key[0]} to ` +
                `${spec.key[2]}. "Show the numbers" below it lists them.`;
  if (el.getAttribute("aria-label") !== label) {
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", label);
  }
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

// The figure is cleared: its canvas goes.
function dropBitmap(el) {
  if (!el.vitBitmap) return;
  if (el.vitBitmap.view) el.vitBitmap.view.remove();
  el.vitBitmap = null;
}

// Paint the part of the bitmap in view over the plot area, one screen pixel per device pixel,
// cells as sharp squares, then the cells' numbers if the spec asks for them. Called after each
// Plotly redraw, zoom and resize (`place`: the plot area may have moved; a recolouring leaves it
// where it was, and reading the layout would make the browser lay the page out first).
function paintBitmap(el, place = true) {
  const bm = el.vitBitmap;
  const full = el._fullLayout;
  if (!bm || !full || !full._size) return;
  const box = el.parentElement;
  let view = bm.view;
  if (!view || !view.isConnected) {
    view = document.createElement("canvas");
    view.className = "heatmap-bitmap";
    view.setAttribute("aria-hidden", "true"); // the plot's label and its table say what it shows
    box.style.position = "relative";
    box.insertBefore(view, el); // first: Plotly's own layers, positioned after it, paint above
    bm.view = view;
    place = true;
  }
  const { l, t, w, h } = full._size;
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(1, Math.round(w * ratio));
  const height = Math.max(1, Math.round(h * ratio));
  if (place) {
    if (view.width !== width) view.width = width;
    if (view.height !== height) view.height = height;
    view.style.left = `${el.offsetLeft + l}px`;
    view.style.top = `${el.offsetTop + t}px`;
    view.style.width = `${w}px`;
    view.style.height = `${h}px`;
  }
  // Cell c spans x from c - 0.5 to c + 0.5, so the canvas's pixel column c starts at x = c - 0.5.
  const [x0, x1] = full.xaxis.range;
  const [ya, yb] = full.yaxis.range; // reversed: the top of the plot is the smaller row
  const left = Math.min(x0, x1), top = Math.min(ya, yb);
  const spanX = Math.abs(x1 - x0), spanY = Math.abs(yb - ya);
  const ctx = view.getContext("2d");
  ctx.imageSmoothingEnabled = false;
  ctx.clearRect(0, 0, view.width, view.height);
  ctx.drawImage(bm.cells, left + 0.5, top + 0.5, spanX, spanY, 0, 0, view.width, view.height);
  const spec = el.vitHover && el.vitHover.spec;
  const numbers = spec && el.vitText
    ? paintNumbers(ctx, bm, spec, { left, top, spanX, spanY, sx: view.width / spanX, sy: view.height / spanY }, ratio)
    : { count: 0, px: 0, widest: 0 };
  // What was painted, for the tests (docs/interface.md): how many numbers, their size in CSS
  // px, the widest one's width and a cell's width.
  setData(el, "cellNumbers", String(numbers.count));
  setData(el, "cellNumberPx", String(numbers.px));
  setData(el, "cellNumberWidest", numbers.widest.toFixed(1));
  setData(el, "cellWidth", (view.width / spanX / ratio).toFixed(1));
}

// Each cell's number in its centre, in dark ink on light cells and white on dark ones (as
// Plotly's own cell text), at the figure's cell-text size.
function paintNumbers(ctx, bm, spec, { left, top, spanX, spanY, sx, sy }, ratio) {
  const decimals = /%\{z:\.(\d+)f\}/.exec(spec.text_format || "");
  const text = (v) => (decimals ? v.toFixed(Number(decimals[1])) : shortNumber(v));
  const rgba = bm.image.data;
  const px = look().cellText;
  ctx.font = `${px * ratio}px system-ui, sans-serif`;
  let count = 0, widest = 0;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  const r0 = Math.max(0, Math.ceil(top)), r1 = Math.min(bm.rows - 1, Math.floor(top + spanY));
  const c0 = Math.max(0, Math.ceil(left)), c1 = Math.min(bm.cols - 1, Math.floor(left + spanX));
  for (let r = r0; r <= r1; r++) {
    for (let c = c0; c <= c1; c++) {
      const i = r * bm.cols + c;
      const v = bm.data[i];
      if (!Number.isFinite(v)) continue;
      const light = 0.299 * rgba[4 * i] + 0.587 * rgba[4 * i + 1] + 0.114 * rgba[4 * i + 2] > 150;
      ctx.fillStyle = light ? "#111" : "#fff";
      const shown = text(v);
      ctx.fillText(shown, (c - left) * sx, (r - top) * sy);
      count += 1;
      widest = Math.max(widest, ctx.measureText(shown).width / ratio);
    }
  }
  return { count, px, widest };
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
    const cell = cellAt(el, event.clientX, event.clientY);
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
