// Figures for slides: a heatmap or a line chart of the page as it is shown (its title, axes, the
// numbers on its cells where it prints them, its colour key with its range, its outlines), in
// the page's colours now (light, dark, or the light paper of forced colours), made into a scene
// (js/figure/scene.js) and saved as SVG, as a PNG at twice its size on screen, or as a
// 1920 x 1080 PNG for a projector. js/figure/menu.js is the control on each figure.
//
// A heatmap is laid out again from what the page holds, not copied from Plotly's SVG: the
// spec (title, axis titles, colour key), the matrix and its cells' colours (el.vitBitmap, one
// pixel per cell), the ticks Plotly chose (its axes' _vals), the range in view (a zoom is
// kept) and the outlines (layout.shapes). A line chart is the page's own SVG, read element by
// element with its computed colours, under its title and over its legend. A bar chart (a logit's
// terms, the drawn digit's top 3, the probes' accuracies: HTML lists of bars) is read the same
// way from its boxes on screen: each label, bar and number where it stands, in its colours.

import { cellInk } from "../heatmap/contrast.js";
import { cssColour, inkColour } from "../page/dom.js";
import { cellNumberText } from "../heatmap/bitmap.js";
import { look, scaleOf } from "../heatmap/style.js";
import { paint, textWidth, toPng, toSvg, wrapLines } from "./scene.js";
import { chartCopy } from "./line-chart.js";
import { HEATMAP_IDS } from "../shared.js";

const CELLS_AS_RECTS = 4096; // cells in view drawn one rectangle each (SVG: editable); more: an image
const TICK_LENGTH = 5; // Plotly's ticklen, "outside"
// A projector's figure: laid out on a slide of 960 x 540 CSS px and saved at 2x, 1920 x 1080,
// in text of 24 px (ticks, numbers) and 30 px (its title), as the page's Large text shows a
// 1080p projector (js/heatmap/style.js).
const PROJECTOR = { width: 960, height: 540, scale: 2 };
const PROJECTOR_FONTS = { size: 12, title: 15, cellText: 12 };

/** What each figure is called in its file's name (vit-head-<name>.png). */
const FILE_NAMES = {
  [HEATMAP_IDS.W_head]: "w-head", [HEATMAP_IDS.dw]: "dw-head", [HEATMAP_IDS.encoder]: "encoder-output",
  [HEATMAP_IDS.probs]: "softmax", [HEATMAP_IDS.lens]: "logit-lens", "heatmap-mistake-diff": "mistake-difference",
  "contributions-bars": "logit-terms", "digit-top": "digit-top3", "ft-probe-bars": "probe-accuracy",
};

// The bar charts (HTML lists of bars), each with where its title is read.
const BAR_CHARTS = {
  "contributions-bars": () => (document.getElementById("contributions-title") || {}).textContent || "",
  "digit-top": (el) => el.getAttribute("aria-label") || "",
  "ft-probe-bars": () => (document.getElementById("ft-probes-text") || {}).textContent || "",
};
const isBars = (el) => Object.prototype.hasOwnProperty.call(BAR_CHARTS, el.id);
const barRows = (el) => Array.from(el.children).filter((li) => !li.hidden && li.getClientRects().length);

export const FORMATS = {
  png: { label: "PNG, 2× its size on screen", ext: "png" },
  projector: { label: "PNG, 1920 × 1080 (projector)", ext: "png", width: 1920, height: 1080 },
  svg: { label: "SVG (vector, text kept)", ext: "svg" },
};

/** The file name of figure `id` in `format` ("png", "projector", "svg"). */
export function fileName(id, format) {
  const name = FILE_NAMES[id] || id.replace(/^heatmap-/, "");
  return `vit-head-${name}${format === "projector" ? "-1920x1080" : ""}.${FORMATS[format].ext}`;
}

/** Whether the element `el` holds a figure that can be saved now. */
export function exportable(el) {
  if (isBars(el)) return barRows(el).length > 0;
  if (el.classList.contains("line-chart")) return Boolean(el.querySelector("svg.chart-plot")) && el.data && el.data.some((t) => t.y.length);
  return Boolean(el.data && el.vitHover && el.vitBitmap && el._fullLayout && el._fullLayout._size);
}

/** The figure's title as shown. */
export function figureTitle(el) {
  if (isBars(el)) return BAR_CHARTS[el.id](el).replace(/\s+/g, " ").trim();
  if (el.classList.contains("line-chart")) return (el.querySelector(".chart-title") || {}).textContent || "";
  return el.vitHover ? el.vitHover.spec.title.replace(/\s+/g, " ").trim() : "";
}

// The paper the figure is shown on: the first ancestor with a background of its own.
function paperOf(el) {
  for (let a = el; a; a = a.parentElement) {
    const colour = getComputedStyle(a).backgroundColor;
    if (colour && colour !== "transparent" && !/^rgba\(.*,\s*0\)$/.test(colour)) return colour;
  }
  return "#ffffff";
}

// The title lines of a figure `width` wide, from its top: [items], the y below them.
/** @returns {{items: import("./scene.js").SceneText[], bottom: number}} */
function titleBlock(text, x, y, width, size, ink, weight = 400) {
  const lines = wrapLines(text, width, size, weight);
  const step = Math.round(size * 1.3);
  const items = lines.map(/** @returns {import("./scene.js").SceneText} */ (line, i) => ({ kind: "text", role: "figure-title", x, y: y + Math.round(size * 0.95) + i * step,
                                          text: line, size, fill: ink, weight }));
  return { items, bottom: y + lines.length * step };
}

// ---- heatmaps -------------------------------------------------------------------------------

// Plotly's ticks of an axis in view: [{at (axis units), text}].
function ticksOf(axis, lo, hi) {
  const vals = (axis && axis._vals) || [];
  return vals.filter((v) => v.x >= lo - 1e-9 && v.x <= hi + 1e-9 && v.text !== undefined)
    .map((v) => ({ at: v.x, text: String(v.text).replace(/<[^>]*>/g, "") }));
}

/**
 * The scene of the heatmap `el` as it is shown: at its width on screen, in the page's text
 * sizes now, its plot area as tall as on screen; or, `projector`, laid out again on a 960 x 540
 * slide (saved at 2x: 1920 x 1080) in text of 24 px and more, its plot area as wide as the
 * slide allows with its proportions on screen, the numbers on the cells wherever they fit.
 */
export function heatmapScene(el, { projector = false } = {}) {
  const { spec, m } = el.vitHover;
  const bm = el.vitBitmap;
  const full = el._fullLayout;
  const fonts = projector ? PROJECTOR_FONTS : look();
  const ink = inkColour();
  const size = fonts.size;
  const pad = Math.round(size * 1.1);
  const width = projector ? PROJECTOR.width : Math.max(280, Math.round(el.clientWidth || full.width || 600));
  const title = figureTitle(el);
  const items = [];

  // the range in view (a zoom is kept): cell c spans c - 0.5 to c + 0.5; the y axis is reversed
  const [x0, x1] = full.xaxis.range;
  const [ya, yb] = full.yaxis.range;
  const left = Math.min(x0, x1), right = Math.max(x0, x1);
  const top = Math.min(ya, yb), bottom = Math.max(ya, yb);
  const xTicks = ticksOf(full.xaxis, left, right);
  const yTicks = ticksOf(full.yaxis, top, bottom);
  const embed = document.documentElement.classList.contains("embed");
  const xTitle = embed ? "" : spec.x_title;
  const yTitle = embed ? "" : spec.y_title;

  // Heights: the title's lines, the plot, then its ticks, the x axis's title and the key.
  const titleLines = wrapLines(title, width - 2 * pad, fonts.title).length;
  const headH = titleLines * Math.round(fonts.title * 1.3) + Math.round(size * 0.7);
  const keySize = Math.round(size * 1.05);
  const belowH = TICK_LENGTH + 3 + Math.round(size * 1.2) + (xTitle ? Math.round(size * 1.5) : 0) +
    Math.round(size * 0.5) + Math.round(keySize * 1.25);
  const yTickW = Math.ceil(Math.max(0, ...yTicks.map((t) => textWidth(t.text, size))));
  const axisW = (yTitle ? Math.round(size * 1.5) : 0) + yTickW + 3 + TICK_LENGTH;
  const fitW = width - 2 * pad - axisW;
  let plotW = fitW, plotH = Math.max(40, Math.round(full._size.h));
  let y0 = pad;
  if (projector) {
    // the plot's proportions on screen, as large as the slide holds; the figure in its middle
    const fitH = PROJECTOR.height - 2 * pad - headH - belowH;
    const aspect = full._size.h / full._size.w;
    plotH = Math.min(fitH, plotW * aspect);
    plotW = Math.min(fitW, plotH / aspect);
    y0 = Math.round((PROJECTOR.height - (headH + plotH + belowH)) / 2);
  }
  const x0Block = pad + Math.round((fitW - plotW) / 2); // the figure's left edge: its y axis's title
  const head = titleBlock(title, x0Block, y0, width - 2 * pad, fonts.title, ink);
  items.push(...head.items);
  const plot = { x: x0Block + axisW, y: y0 + headH, w: plotW, h: plotH };
  const X = (v) => plot.x + ((v - left) / (right - left)) * plot.w;
  const Y = (v) => plot.y + ((v - top) / (bottom - top)) * plot.h;

  // the cells: one rectangle each when few, else the bitmap stretched (sharp, as on the page)
  const c0 = Math.max(0, Math.ceil(left - 0.5)), c1 = Math.min(m.cols - 1, Math.floor(right + 0.5 - 1e-9));
  const r0 = Math.max(0, Math.ceil(top - 0.5)), r1 = Math.min(m.rows - 1, Math.floor(bottom + 0.5 - 1e-9));
  const inView = Math.max(0, c1 - c0 + 1) * Math.max(0, r1 - r0 + 1);
  const rgba = bm.image.data;
  const cells = [];
  if (inView <= CELLS_AS_RECTS) {
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const i = 4 * (r * m.cols + c);
        if (rgba[i + 3] === 0) continue; // NaN: no colour, as on the page
        cells.push({ kind: "rect", crisp: true, x: X(c - 0.5), y: Y(r - 0.5), w: X(c + 0.5) - X(c - 0.5),
                     h: Y(r + 0.5) - Y(r - 0.5), fill: `rgb(${rgba[i]},${rgba[i + 1]},${rgba[i + 2]})` });
      }
    }
  } else {
    cells.push({ kind: "cells", canvas: bm.cells, x: X(-0.5), y: Y(-0.5), w: X(m.cols - 0.5) - X(-0.5),
                 h: Y(m.rows - 0.5) - Y(-0.5) });
  }
  items.push({ kind: "group", role: "cells", crisp: true, clip: plot, items: cells });

  // The numbers on the cells, in black or white: where the page prints them (el.vitText); on a
  // projector's slide wherever the figure has them (spec.text) and they fit in their cells.
  const numbers = [];
  if (spec.text && inView <= CELLS_AS_RECTS && (projector || el.vitText)) {
    const text = cellNumberText(spec);
    const px = fonts.cellText;
    for (let r = Math.max(0, Math.ceil(top)); r <= Math.min(m.rows - 1, Math.floor(bottom)); r++) {
      for (let c = Math.max(0, Math.ceil(left)); c <= Math.min(m.cols - 1, Math.floor(right)); c++) {
        const v = m.data[r * m.cols + c];
        if (!Number.isFinite(v)) continue;
        const i = 4 * (r * m.cols + c);
        numbers.push({ kind: "text", role: "cell-number", x: X(c), y: Y(r) + px * 0.35, text: text(v), size: px,
                       anchor: "middle", fill: cellInk(rgba[i], rgba[i + 1], rgba[i + 2]) });
      }
    }
    const cellW = plot.w / (right - left), cellH = plot.h / (bottom - top);
    const widest = Math.max(0, ...numbers.map((t) => textWidth(t.text, px)));
    if (projector && (widest + 6 > cellW || px * 1.25 > cellH)) numbers.length = 0;
  }
  if (numbers.length) items.push({ kind: "group", role: "cell-numbers", clip: plot, items: numbers });

  // the outlines laid over the cells (predicted-class marks, a logit chosen, the walk-through's),
  // each a line over its halo (js/heatmap/shapes.js), in the order Plotly draws them
  const shapes = ((el.layout && el.layout.shapes) || []).filter((s) => s.type === "rect" && s.xref === "x" && s.yref === "y");
  if (shapes.length) {
    items.push({ kind: "group", role: "outlines", clip: { x: plot.x - 4, y: plot.y - 4, w: plot.w + 8, h: plot.h + 8 },
                 items: shapes.map((s) => {
                   const xa = X(Math.min(s.x0, s.x1)), xb = X(Math.max(s.x0, s.x1));
                   const yA = Y(Math.min(s.y0, s.y1)), yB = Y(Math.max(s.y0, s.y1));
                   const line = s.line || {};
                   return { kind: "rect", x: xa, y: yA, w: xb - xa, h: yB - yA, fill: s.fillcolor,
                            stroke: line.color || ink, width: line.width === undefined ? 2 : line.width };
                 }) });
  }

  // ticks and their labels, the axes' titles
  const below = plot.y + plot.h;
  for (const t of xTicks) {
    const x = X(t.at);
    items.push({ kind: "line", x1: x, y1: below, x2: x, y2: below + TICK_LENGTH, stroke: ink, width: 1 });
    items.push({ kind: "text", role: "tick", x, y: below + TICK_LENGTH + 3 + Math.round(size * 0.9), text: t.text, size,
                 anchor: "middle", fill: ink });
  }
  for (const t of yTicks) {
    const y = Y(t.at);
    items.push({ kind: "line", x1: plot.x - TICK_LENGTH, y1: y, x2: plot.x, y2: y, stroke: ink, width: 1 });
    items.push({ kind: "text", role: "tick", x: plot.x - TICK_LENGTH - 3, y: y + size * 0.35, text: t.text, size,
                 anchor: "end", fill: ink });
  }
  let y = below + TICK_LENGTH + 3 + Math.round(size * 1.2);
  if (xTitle) {
    items.push({ kind: "text", role: "axis-title", x: plot.x + plot.w / 2, y: y + Math.round(size * 1.05), text: xTitle,
                 size, anchor: "middle", fill: ink });
    y += Math.round(size * 1.5);
  }
  if (yTitle) {
    items.push({ kind: "text", role: "axis-title", x: x0Block + Math.round(size * 0.85), y: plot.y + plot.h / 2,
                 text: yTitle, size, anchor: "middle", fill: ink, rotate: -90 });
  }

  // the colour key, as under the figure: low [gradient, the middle value on it] high
  const key = keyItems(spec, plot.x + plot.w, y + Math.round(size * 0.5), keySize);
  items.push(...key.items);

  return {
    width, height: projector ? PROJECTOR.height : Math.ceil(key.bottom + pad), background: paperOf(el), title,
    desc: `${title}: a heatmap of ${m.rows} by ${m.cols} values (${spec.y_title} down, ${spec.x_title} across), ` +
          `colours from ${spec.key[0]} to ${spec.key[2]}, ${spec.key[1]} in the middle. ` +
          "From the ViT classification-head explorer.",
    items,
  };
}

// The colour key right-aligned at `right`, its top at `y`: [items], its bottom.
function keyItems(spec, right, y, size) {
  const keyInk = cssColour("--key-ink", inkColour());
  const edge = cssColour("--edge", "#6b7280");
  const [low, mid, high] = spec.key;
  const barW = Math.round(size * 12), barH = Math.round(size * 1.25);
  const gap = Math.round(size * 0.45);
  const highW = textWidth(high, size);
  const barX = right - highW - gap - barW;
  const base = y + barH / 2 + size * 0.35;
  const stops = scaleOf(spec.scale);
  return {
    bottom: y + barH,
    items: [
      { kind: "text", role: "key-low", x: barX - gap, y: base, text: low, size, anchor: "end", fill: keyInk },
      { kind: "gradient", role: "key-bar", x: barX, y, w: barW, h: barH, stops, stroke: edge, width: 1 },
      // the middle value in the page's dark ink on the light middle of either scale
      { kind: "text", role: "key-mid", x: barX + barW / 2, y: y + barH / 2 + size * 0.3, text: mid,
        size: Math.round(size * 0.85), anchor: "middle", fill: "#222222" },
      { kind: "text", role: "key-high", x: right, y: base, text: high, size, anchor: "end", fill: keyInk },
    ],
  };
}

// ---- line charts (js/figure/line-chart.js) ----------------------------------------------------------

const num = (el, name) => Number(el.getAttribute(name) || 0);

// The chart's SVG as scene items, offset by (dx, dy), in the colours computed for it now.
function svgItems(root, dx, dy) {
  const clips = new Map();
  for (const clip of root.querySelectorAll("clipPath")) {
    const r = clip.querySelector("rect");
    if (r) clips.set(clip.id, { x: num(r, "x") + dx, y: num(r, "y") + dy, w: num(r, "width"), h: num(r, "height") });
  }
  const read = (parent) => {
    const out = [];
    for (const node of parent.children) {
      const tag = node.tagName.toLowerCase();
      if (tag === "clippath" || tag === "defs") continue;
      const css = getComputedStyle(node);
      if (css.visibility === "hidden" || css.display === "none" || node.classList.contains("chart-guide")) continue;
      const stroke = css.stroke, width = parseFloat(css.strokeWidth) || 1;
      const dash = css.strokeDasharray && css.strokeDasharray !== "none" ? css.strokeDasharray.replace(/px/g, "") : null;
      if (tag === "g") {
        const clip = /url\(["']?#([^)"']+)["']?\)/.exec(node.getAttribute("clip-path") || "");
        const inner = read(node);
        if (clip && clips.has(clip[1])) out.push({ kind: "group", clip: clips.get(clip[1]), items: inner });
        else out.push(...inner);
      } else if (tag === "line") {
        out.push({ kind: "line", x1: num(node, "x1") + dx, y1: num(node, "y1") + dy, x2: num(node, "x2") + dx,
                   y2: num(node, "y2") + dy, stroke, width, dash });
      } else if (tag === "path") {
        const d = node.getAttribute("d") || "";
        if (!d) continue;
        out.push({ kind: "path", d: shiftPath(d, dx, dy), stroke, width, dash, fill: css.fill });
      } else if (tag === "circle") {
        out.push({ kind: "circle", cx: num(node, "cx") + dx, cy: num(node, "cy") + dy, r: num(node, "r"), fill: css.fill });
      } else if (tag === "text") {
        const turn = /rotate\(\s*([-\d.]+)/.exec(node.getAttribute("transform") || "");
        out.push({ kind: "text", role: node.classList.contains("chart-axis-title") ? "axis-title" : "tick",
                   x: num(node, "x") + dx, y: num(node, "y") + dy, text: node.textContent,
                   size: parseFloat(css.fontSize) || 11, fill: css.fill, anchor: node.getAttribute("text-anchor") || "start",
                   rotate: turn ? Number(turn[1]) : 0 });
      }
    }
    return out;
  };
  return read(root);
}

// A path of absolute M and L commands (js/figure/line-chart.js writes no others) moved by (dx, dy).
function shiftPath(d, dx, dy) {
  return d.replace(/([ML])\s*([-\d.]+)[ ,]+([-\d.]+)/g,
                   (_, op, x, y) => `${op}${Math.round((Number(x) + dx) * 10) / 10} ${Math.round((Number(y) + dy) * 10) / 10}`);
}

/**
 * The scene of the line chart `el` (js/figure/line-chart.js) as it is shown; or, `projector`, drawn
 * again as wide as a 960 x 540 slide (saved at 2x: 1920 x 1080) and fitted into it.
 */
export function chartScene(el, { projector = false } = {}) {
  if (projector) {
    const copy = chartCopy(el, PROJECTOR.width - 2 * Math.round(look().size * 1.1));
    if (copy) {
      try {
        return chartSceneOf(copy, paperOf(el), figureTitle(el));
      } finally {
        copy.remove();
      }
    }
  }
  return chartSceneOf(el, paperOf(el), figureTitle(el));
}

function chartSceneOf(el, background, title) {
  const svg = el.querySelector("svg.chart-plot");
  const titleEl = el.querySelector(".chart-title");
  const legendEl = el.querySelector(".chart-legend");
  const ink = getComputedStyle(el).color || inkColour();
  const size = parseFloat(getComputedStyle(legendEl).fontSize) || look().size;
  const titleSize = parseFloat(getComputedStyle(titleEl).fontSize) || look().title;
  const pad = Math.round(size * 1.1);
  const svgW = num(svg, "width"), svgH = num(svg, "height");
  const width = Math.round(svgW + 2 * pad);
  const head = titleBlock(title, pad, pad, width - 2 * pad, titleSize, ink, 600);
  /** @type {import("./scene.js").SceneItem[]} */
  const items = [...head.items];
  const top = head.bottom + Math.round(size * 0.4);
  items.push(...svgItems(svg, pad, top));

  // the legend, one entry per curve in its colour and dash, in rows as wide as the figure
  let x = pad, y = top + svgH + Math.round(size * 0.8);
  const rowH = Math.round(size * 1.5);
  for (const li of legendEl.querySelectorAll("li")) {
    const line = li.querySelector("line");
    const name = li.textContent.trim();
    const entryW = 26 + size * 0.35 + textWidth(name, size);
    if (x > pad && x + entryW > width - pad) { x = pad; y += rowH; }
    const css = line ? getComputedStyle(line) : null;
    const dash = css && css.strokeDasharray !== "none" ? css.strokeDasharray.replace(/px/g, "") : null;
    const mid = y + rowH / 2;
    if (css) items.push({ kind: "line", x1: x + 1, y1: mid, x2: x + 25, y2: mid, stroke: css.stroke, width: 2, dash });
    items.push({ kind: "text", role: "legend", x: x + 26 + size * 0.35, y: mid + size * 0.35, text: name, size, fill: ink });
    x += entryW + size;
  }
  const curves = (el.data || []).map((t) => t.name).join(", ");
  return {
    width, height: Math.ceil(y + rowH + pad), background, title, items,
    desc: `${title}: a line chart of ${curves}. From the ViT classification-head explorer.`,
  };
}

// ---- bar charts ------------------------------------------------------------------------------

// `colour` (rgb or rgba) laid over `paper` at `opacity`, as one opaque colour.
function over(colour, paper, opacity) {
  const a = (colour.match(/[\d.]+/g) || []).map(Number);
  const p = (paper.match(/[\d.]+/g) || [255, 255, 255]).map(Number);
  const k = opacity * (a.length > 3 ? a[3] : 1);
  const mix = (i) => Math.round(a[i] * k + p[i] * (1 - k));
  return `rgb(${mix(0)},${mix(1)},${mix(2)})`;
}

/**
 * The scene of the bar chart `el` (an HTML list of bars) as it is shown: its title above, each
 * row's texts and bars where they stand on screen, in their colours; a logit's terms with the
 * line at zero and the note under them (their sum, the logit). A projector's PNG is the same
 * scene fitted into 1920 x 1080 (toPng).
 */
export function barScene(el) {
  const background = paperOf(el);
  const title = figureTitle(el);
  const fonts = look();
  const size = parseFloat(getComputedStyle(el).fontSize) || fonts.size;
  const pad = Math.round(size * 1.1);
  const box = el.getBoundingClientRect();
  const width = Math.max(240, Math.round(box.width + 2 * pad));
  const head = titleBlock(title, pad, pad, width - 2 * pad, fonts.title, inkColour(), 600);
  /** @type {import("./scene.js").SceneItem[]} */
  const items = [...head.items];
  const top = head.bottom + Math.round(size * 0.5);
  const at = (r) => ({ x: pad + r.left - box.left, y: top + r.top - box.top, w: r.width, h: r.height });
  for (const row of barRows(el)) {
    for (const part of row.children) {
      const css = getComputedStyle(part);
      const r = at(part.getBoundingClientRect());
      if (part.children.length || /bar-track|top-bar/.test(part.className)) {
        // a bar: its track (a colour, or the line at zero of a logit's terms), then its fill
        const track = paint(css.backgroundColor);
        if (track) items.push({ kind: "rect", role: "bar-track", x: r.x, y: r.y, w: r.w, h: r.h, fill: track });
        if (css.backgroundImage.includes("gradient")) {
          items.push({ kind: "line", x1: r.x + r.w / 2, y1: r.y - 1, x2: r.x + r.w / 2, y2: r.y + r.h + 1,
                       stroke: cssColour("--edge", "#6b7280"), width: 1 });
        }
        for (const fill of part.children) {
          const f = at(fill.getBoundingClientRect());
          const fcss = getComputedStyle(fill);
          const colour = paint(fcss.backgroundColor);
          if (colour && f.w > 0) {
            items.push({ kind: "rect", role: "bar", x: f.x, y: f.y, w: f.w, h: f.h,
                         fill: over(colour, background, Number(fcss.opacity) || 1) });
          }
        }
      } else if (part.textContent.trim()) {
        const px = parseFloat(css.fontSize) || size;
        const right = css.textAlign === "right" || css.textAlign === "end";
        const centre = css.textAlign === "center";
        items.push({ kind: "text", role: "bar-text", x: right ? r.x + r.w : centre ? r.x + r.w / 2 : r.x,
                     y: r.y + r.h / 2 + px * 0.35, text: part.textContent.trim(), size: px,
                     weight: Number(css.fontWeight) || 400, fill: css.color,
                     anchor: right ? "end" : centre ? "middle" : "start" });
      }
    }
  }
  let bottom = top + box.height;
  const note = el.id === "contributions-bars" ? document.getElementById("contributions-note") : null;
  if (note && note.textContent.trim()) {
    const lines = wrapLines(note.textContent.trim(), width - 2 * pad, size);
    const step = Math.round(size * 1.35);
    bottom += Math.round(size * 0.6);
    lines.forEach((line, i) => items.push({ kind: "text", role: "note", x: pad, y: bottom + size + i * step,
                                            text: line, size, fill: getComputedStyle(note).color }));
    bottom += lines.length * step;
  }
  const rows = barRows(el).map((li) => li.textContent.replace(/\s+/g, " ").trim()).join("; ");
  return { width, height: Math.ceil(bottom + pad), background, title, items,
           desc: `${title}: a bar chart (${rows}). From the ViT classification-head explorer.` };
}

// ---- saving ---------------------------------------------------------------------------------

/** The scene of the figure `el` (a heatmap, a line chart or a bar chart of the page). */
export function sceneOf(el, options = {}) {
  if (isBars(el)) return barScene(el);
  return el.classList.contains("line-chart") ? chartScene(el, options) : heatmapScene(el, options);
}


/**
 * The figure `el` as a file: {blob, filename, width, height, ms} (ms: the time it took).
 * @param {HTMLElement} el
 * @param {"png"|"projector"|"svg"} format
 */
export async function makeFigure(el, format) {
  const t0 = performance.now();
  const scene = sceneOf(el, { projector: format === "projector" });
  const filename = fileName(el.id, format);
  let out;
  if (format === "svg") {
    const text = await toSvg(scene);
    out = { blob: new Blob([text], { type: "image/svg+xml;charset=utf-8" }),
            width: Math.round(scene.width), height: Math.round(scene.height) };
  } else {
    const { width, height } = FORMATS[format];
    out = await toPng(scene, width ? { width, height } : { scale: 2 });
  }
  return { ...out, filename, ms: performance.now() - t0 };
}

/** Save `blob` as `filename` (the browser's download; the same way as the page's exports). */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
