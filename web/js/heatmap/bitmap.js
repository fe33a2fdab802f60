// The heatmaps' cells, painted by the page: one pixel per cell, coloured from the colour
// scale's table into a canvas of the matrix's own size (only the cells whose value changed, or
// all of them when the range moved), then the part in view painted onto a canvas laid under
// the plot's transparent background, exactly over its plot area (cells as sharp squares, and
// each cell's number where the figure asks for it: el.vitText). js/heatmap/draw.js says why.

import { cellInk } from "./contrast.js";
import { setData } from "../page/dom.js";
import { shortNumber } from "../page/numbers.js";
import { look, scaleOf } from "./style.js";

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
  /** @type {Array<[number, number[]]>} */
  const stops = scaleOf(scale).map(([at, hex]) => [at, hexRGB(hex)]);
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

const LAST = TABLE_SIZE - 1;

// A value's colour: its place in the range, rounded to the nearest of the table's colours (values
// beyond the range take the end colour; NaN is transparent).
function colourOf(table, v, low, scale) {
  if (v !== v) return table[LAST >> 1] & 0x00ffffff;
  const f = (v - low) * scale;
  return table[f <= 0 ? 0 : f >= LAST ? LAST : (f + 0.5) | 0];
}

// Colour the cells of `m` into el's bitmap: all of them when the shape, scale or range changed,
// else only those whose value changed (a W_head edit: one cell of 768,000).
/**
 * @param {PlotElement} el
 * @param {HeatmapSpec} spec
 * @param {StoredMatrix} m
 */
export function colourBitmap(el, spec, m) {
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
                                   cols: m.cols, scale: spec.scale, zmin: spec.zmin, zmax: spec.zmax, data: null,
                                   version: -1 });
    el.vitBitmap = bm;
  }
  const { pixels } = bm;
  const data = m.data;
  const before = bm.data;
  const version = m.version || 0;
  if (before === data && bm.version === version) return;
  // the changed cells' bounding box: only it is copied into the canvas
  let r0 = m.rows, r1 = -1, c0 = m.cols, c1 = -1;
  const paint = (i) => {
    pixels[i] = colourOf(table, data[i], low, scale);
    const r = (i / m.cols) | 0, c = i - r * m.cols;
    if (r < r0) r0 = r;
    if (r > r1) r1 = r;
    if (c < c0) c0 = c;
    if (c > c1) c1 = c;
  };
  const log = m.log;
  if (before === data && log && log.length && log[0][0] <= bm.version + 1) {
    // the same array, patched in place (js/page/render.js): only the cells logged since
    for (let k = log.length - 1; k >= 0 && log[k][0] > bm.version; k--) paint(log[k][1]);
  } else {
    // another array: the cells whose value differs (all of them after a reset or a training
    // step: 768,000 at ViT-B/16 size, so row by row, with no call per cell but colourOf's); the
    // same array patched beyond its log: all of them
    const compare = before && before !== data;
    const { rows, cols } = m;
    for (let r = 0, i = 0; r < rows; r++) {
      let first = -1, end = -1;
      for (let c = 0; c < cols; c++, i++) {
        const v = data[i];
        if (compare) {
          const w = before[i];
          if (v === w || (v !== v && w !== w)) continue;
        }
        pixels[i] = colourOf(table, v, low, scale);
        if (first < 0) first = c;
        end = c;
      }
      if (first < 0) continue;
      if (r < r0) r0 = r;
      r1 = r;
      if (first < c0) c0 = first;
      if (end > c1) c1 = end;
    }
  }
  bm.data = data;
  bm.version = version;
  if (r1 >= 0) bm.cells.getContext("2d").putImageData(bm.image, 0, 0, c0, r0, c1 - c0 + 1, r1 - r0 + 1);
}

// The figure is cleared: its canvas goes.
/**
 * @param {PlotElement} el
 */
export function dropBitmap(el) {
  if (!el.vitBitmap) return;
  if (el.vitBitmap.view) el.vitBitmap.view.remove();
  el.vitBitmap = null;
}

// Paint the part of the bitmap in view over the plot area, one screen pixel per device pixel,
// cells as sharp squares, then the cells' numbers if the spec asks for them. Called after each
// Plotly redraw, zoom and resize (`place`: the plot area may have moved; a recolouring leaves it
// where it was, and reading the layout would make the browser lay the page out first).
/**
 * @param {PlotElement} el
 * @param {boolean} [place]
 */
export function paintBitmap(el, place = true) {
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
  const at = { left, top, spanX, spanY, sx: view.width / spanX, sy: view.height / spanY };
  if (!fillCells(ctx, bm, at)) {
    ctx.drawImage(bm.cells, left + 0.5, top + 0.5, spanX, spanY, 0, 0, view.width, view.height);
  }
  const spec = el.vitHover && el.vitHover.spec;
  const numbers = spec && el.vitText ? paintNumbers(ctx, bm, spec, at, ratio)
    : { count: 0, px: 0, widest: 0 };
  // What was painted, for the tests (docs/interface.md): how many numbers, their size in CSS
  // px, the widest one's width and a cell's width.
  setData(el, "cellNumbers", String(numbers.count));
  setData(el, "cellNumberPx", String(numbers.px));
  setData(el, "cellNumberWidest", numbers.widest.toFixed(1));
  setData(el, "cellWidth", (view.width / spanX / ratio).toFixed(1));
}

// The cells in view as one rectangle each, when there are few and each covers whole device
// pixels: the pixels drawImage would give them with smoothing off (pixel x shows the cell under
// its centre), without scaling one canvas onto another, which WebKit makes cost about 1.5 ms a
// heatmap, every heatmap of every change. Returns false where drawImage is the better tool.
// (Exported for its test, which compares the two pixel by pixel.)
const FILL_MAX = 4096; // cells in view
export function fillCells(ctx, bm, { left, top, spanX, spanY, sx, sy }) {
  const c0 = Math.max(0, Math.floor(left + 0.5)), c1 = Math.min(bm.cols - 1, Math.ceil(left + spanX - 0.5));
  const r0 = Math.max(0, Math.floor(top + 0.5)), r1 = Math.min(bm.rows - 1, Math.ceil(top + spanY - 0.5));
  if (sx < 1 || sy < 1 || (c1 - c0 + 1) * (r1 - r0 + 1) > FILL_MAX) return false;
  // the first device pixel of cell c (row r): its edge, c - 0.5 in axis units, rounded
  const x = (c) => Math.min(ctx.canvas.width, Math.max(0, Math.round((c - 0.5 - left) * sx)));
  const y = (r) => Math.min(ctx.canvas.height, Math.max(0, Math.round((r - 0.5 - top) * sy)));
  const rgba = bm.image.data;
  for (let r = r0; r <= r1; r++) {
    const ya = y(r), yb = y(r + 1);
    for (let c = c0; c <= c1; c++) {
      const i = 4 * (r * bm.cols + c);
      if (rgba[i + 3] === 0) continue; // NaN: left clear
      ctx.fillStyle = `rgb(${rgba[i]},${rgba[i + 1]},${rgba[i + 2]})`;
      const xa = x(c);
      ctx.fillRect(xa, ya, x(c + 1) - xa, yb - ya);
    }
  }
  return true;
}

/**
 * How a heatmap prints a number on a cell: with the decimals of the spec's text format
 * ("%{z:.2f}"), else in the short form of js/page/numbers.js (the figures saved for slides too:
 * js/figure/export.js).
 * @returns {(v: number) => string}
 */
export function cellNumberText(spec) {
  const decimals = /%\{z:\.(\d+)f\}/.exec(spec.text_format || "");
  return (v) => (decimals ? v.toFixed(Number(decimals[1])) : shortNumber(v));
}

// Each cell's number in its centre, in black or white, whichever contrasts more with the cell
// (js/heatmap/contrast.js: 4.58:1 at least), at the figure's cell-text size.
function paintNumbers(ctx, bm, spec, { left, top, spanX, spanY, sx, sy }, ratio) {
  const text = cellNumberText(spec);
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
      ctx.fillStyle = cellInk(rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2]);
      const shown = text(v);
      ctx.fillText(shown, (c - left) * sx, (r - top) * sy);
      count += 1;
      widest = Math.max(widest, ctx.measureText(shown).width / ratio);
    }
  }
  return { count, px, widest };
}

// Repaint after Plotly redraws the figure on its own (a zoom, a double-click, a resize).
/**
 * @param {PlotElement} el
 */
export function watchBitmap(el) {
  if (el.vitBitmapWatched || typeof el.on !== "function") return;
  el.vitBitmapWatched = true;
  el.on("plotly_afterplot", () => paintBitmap(el));
  el.on("plotly_relayout", () => paintBitmap(el));
}
