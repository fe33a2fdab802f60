// Plotly heatmaps, always updated with Plotly.react and new array objects, axes kept fixed.
//
// What each heatmap shows (title, axes, range, marks) is decided in Python
// (pycore/explorer/panels.py; js/protocol.js: HeatmapSpec); this file only draws it.
//
// Big matrices (a ViT-B/16 W_head: 768,000 cells) are drawn as a bitmap: the page colours one
// pixel per cell from the colour scale's table, and Plotly places the picture as a layout image
// under the same axes. A Plotly heatmap of that size costs 350-450 ms per redraw on a 2-CPU
// machine; the bitmap about a tenth. The figure keeps an invisible heatmap trace whose z is the
// matrix, so data[0].z stays the page's interface (docs/interface.md), and hovering a cell still
// shows its exact value (drawn by this file, from the same hover template).

import { setData, setHidden, setText } from "./dom.js";

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

// The page's text colour and size now (dark mode, large text), for Plotly's labels.
// Plotly never wraps a title: break a long one at spaces so that it fits the plot's width
// (about 0.6 em per character), and redraw when the window's width changes.
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

let lastWidth = window.innerWidth;
let resizeTimer = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (window.innerWidth !== lastWidth) {
      lastWidth = window.innerWidth;
      redrawAll();
    }
  }, 250);
});

function look() {
  const style = getComputedStyle(document.documentElement);
  const large = document.documentElement.classList.contains("large");
  // Large text (a projector): about 1.4x every text of the figure.
  return { ink: style.getPropertyValue("--ink").trim() || "#1d2330", size: large ? 15 : 11, title: large ? 18 : 13,
           cellText: large ? 16 : 11 };
}

// What each heatmap shows now: id -> {spec (as JSON), m}. A heatmap asked to show exactly that
// again is left alone; this is how the first view drawn while Python boots costs nothing more
// once Python's own, identical answer arrives.
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
  const specText = JSON.stringify(spec);
  const before = shown.get(id);
  if (before && el.data && before.spec === specText && before.m.rows === m.rows &&
      before.m.cols === m.cols && sameData(before.m.data, m.data)) return Promise.resolve(el);
  shown.delete(id);
  const { rows, cols } = m;
  const compact = document.documentElement.classList.contains("embed");
  const bitmap = rows * cols > BITMAP_FROM;
  const z = rowsOf(m);
  const trace = {
    type: "heatmap",
    z,
    zmin: spec.zmin,
    zmax: spec.zmax,
    colorscale: spec.scale === "sequential" ? SEQUENTIAL : DIVERGING,
    hovertemplate: spec.hover + "<extra></extra>",
    // The colour key is the page's own (see colourKey): Plotly's colour bar is a second plot
    // with its own axis, and redrawing it cost about a third of every heatmap's update.
    showscale: false,
    xgap: 0, ygap: 0,
  };
  // In the compact embed view, small matrices print their values; a squeezed key would not help.
  const keyShown = !(compact && rows <= 8);
  const style = look();
  if (spec.text) {
    trace.texttemplate = spec.text_format || "%{z:.2f}";
    trace.textfont = { size: style.cellText };
  }
  const cell = rows <= 8 ? (compact ? 19 : 34) : rows <= 32 ? (compact ? 8 : 16) : 0;
  const height = cell ? Math.max(compact ? 96 : 150, (compact ? 70 : 90) + rows * cell) : (compact ? 200 : 340);
  const title = wrapTitle(spec.title, el.clientWidth || 600, style.title);
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
    shapes: (spec.marks || []).map(([r, c]) => ({
      type: "rect", xref: "x", yref: "y",
      x0: c - 0.5, x1: c + 0.5, y0: r - 0.5, y1: r + 0.5,
      line: { color: "#111", width: 3 },
    })),
    // A fixed uirevision keeps the user's zoom across updates; it changes with the shape, so a
    // resize starts from the full view.
    uirevision: `${id}:${rows}x${cols}`,
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    font: { family: "system-ui, sans-serif", size: style.size, color: style.ink },
  };
  if (bitmap) {
    trace.visible = false; // z for the page's interface; the picture below is what is seen
    Object.assign(layout.xaxis, { range: [-0.5, cols - 0.5], autorange: false });
    Object.assign(layout.yaxis, { range: [rows - 0.5, -0.5], autorange: false });
    layout.images = [{
      source: picture(m, spec), xref: "x", yref: "y", x: -0.5, y: -0.5, sizex: cols, sizey: rows,
      sizing: "stretch", xanchor: "left", yanchor: "top", layer: "below",
    }];
    hoverOver(el);
  }
  el.dataset.bitmap = bitmap ? "true" : "false";
  el.vitHover = { spec, m };
  const label = `${spec.title}: a heatmap of ${rows} by ${cols} values, colours from ${spec.key[0]} to ` +
                `${spec.key[2]}. "Show the numbers" below it lists them.`;
  if (el.getAttribute("aria-label") !== label) {
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", label);
  }
  numbersTable(el, spec, m);
  // The key changes the page's layout: only after Plotly has measured it (the react calls of
  // one render all run before any of them resolves).
  return window.Plotly.react(el, [trace], layout, CONFIG).then((drawn) => {
    shown.set(id, { spec: specText, m });
    colourKey(el, spec, keyShown);
    return drawn;
  });
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

let canvas = null;

// One pixel per cell, coloured as the heatmap would colour it; a data: URL of a PNG.
function picture(m, spec) {
  const table = colourTable(spec.scale);
  canvas = canvas || document.createElement("canvas");
  canvas.width = m.cols;
  canvas.height = m.rows;
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(m.cols, m.rows);
  const pixels = new Uint32Array(image.data.buffer);
  const low = spec.zmin;
  const scale = (TABLE_SIZE - 1) / (spec.zmax - spec.zmin || 1);
  const last = TABLE_SIZE - 1;
  const nan = table[last >> 1] & 0x00ffffff; // NaN: transparent
  const data = m.data;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v !== v) { pixels[i] = nan; continue; }
    const k = Math.round((v - low) * scale);
    pixels[i] = table[k < 0 ? 0 : k > last ? last : k];
  }
  ctx.putImageData(image, 0, 0);
  return canvas.toDataURL("image/png");
}

// ---- hover over a bitmap: the cell's exact value, from the spec's hover template ------------

const EXACT = /%\{z(?::[^}]*)?\}/g;

function format(value) {
  if (!Number.isFinite(value)) return String(value);
  return String(Number(value.toPrecision(12))); // 12 significant digits, trailing zeros trimmed
}

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
    const area = el.querySelector(".nsewdrag");
    const full = el._fullLayout;
    if (!area || !full || !el.vitHover || el.dataset.bitmap !== "true") return;
    const box = area.getBoundingClientRect();
    const fx = (event.clientX - box.left) / box.width;
    const fy = (event.clientY - box.top) / box.height;
    const [x0, x1] = full.xaxis.range;
    const [y0, y1] = full.yaxis.range;
    const { m, spec } = el.vitHover;
    const col = Math.round(x0 + fx * (x1 - x0));
    const row = Math.round(y1 + fy * (y0 - y1)); // the y axis runs top to bottom: reversed
    if (fx < 0 || fx > 1 || fy < 0 || fy > 1 || col < 0 || row < 0 || col >= m.cols || row >= m.rows) {
      label.hidden = true;
      return;
    }
    const value = m.data[row * m.cols + col];
    label.replaceChildren(...spec.hover.replace(/%\{x\}/g, String(col)).replace(/%\{y\}/g, String(row))
      .replace(EXACT, format(value)).split("<br>").flatMap((line, n) => (n ? [document.createElement("br"), line] : [line])));
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
    drawHeatmap(id, JSON.parse(spec), m);
  }
}

export function clearHeatmap(id) {
  shown.delete(id);
  const el = document.getElementById(id);
  const key = el && el.nextElementSibling;
  if (key && key.classList.contains("colour-key")) setHidden(key, true);
  const numbers = el && el.parentElement.querySelector("details.numbers-toggle");
  if (numbers) numbers.remove();
  if (el && el.data) window.Plotly.purge(el);
}
