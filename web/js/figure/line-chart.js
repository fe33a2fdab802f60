// A line chart the page draws itself, as SVG: the fine-tuning panel's loss curves
// (js/panels/finetune.js). A redraw is a few dozen SVG elements, about a millisecond, where a
// Plotly.react of the same chart held the main thread for 15-60 ms, the longest task of a Play
// round. What it shows:
//
//   <div id=...>  .chart-title   the title
//                 svg            the grid, the tick labels (g.xtick / g.ytick), the axis titles,
//                                the curves, and a guide at the step pointed at or chosen with
//                                the arrow keys (the svg takes focus: Left/Right, Home/End)
//                 .chart-readout what every curve is at that step
//                 .chart-legend  one entry per curve, in its colour and dash
//
// The element keeps what it shows where a Plotly figure keeps it: el.data (one {name, x, y} per
// curve) and el.layout.font.color (docs/interface.md). Text and grid take the page's colours
// from the stylesheet (css/panels.css, .line-chart), so the chart follows the colour scheme.

import { look } from "../heatmap/style.js";
import { setText, svg } from "../page/dom.js";

const DASHES = { solid: "", dash: "6 4", dot: "2 3", dashdot: "9 3 2 3" };
const TICKS = 5; // about this many tick labels on a value axis

const charts = new WeakMap(); // element -> {parts, spec, key, width, at}

function html(tag, className) {
  const el = document.createElement(tag);
  el.className = className;
  return el;
}

/**
 * Ticks 1, 2 or 5 times a power of ten apart covering [lo, hi]: {lo, hi, step, ticks}.
 * @param {number} lo
 * @param {number} hi
 * @param {number} [count]
 */
export function niceAxis(lo, hi, count = TICKS) {
  if (!(hi > lo)) {
    const pad = Math.abs(lo) > 0 ? Math.abs(lo) / 2 : 1;
    [lo, hi] = [lo - pad, hi + pad];
  }
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const first = Math.floor(lo / step), last = Math.ceil(hi / step);
  const ticks = [];
  for (let k = first; k <= last; k++) ticks.push(k * step);
  return { lo: first * step, hi: last * step, step, ticks };
}

// A tick label: as many decimals as the step needs, no more ("0.5", "1", "1.5").
function tickText(value, step) {
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return value.toFixed(decimals);
}

function valueText(y) {
  return Number.isFinite(y) ? String(Number(y.toPrecision(4))) : "—";
}

function build(el) {
  el.classList.add("line-chart");
  const parts = {
    title: html("div", "chart-title"),
    // arrow keys move the readout: an application (a screen reader passes its keys on), whose
    // readout is said as it changes
    svg: svg("svg", { class: "chart-plot", role: "application", "aria-roledescription": "chart",
                      tabindex: 0, focusable: "true" }),
    readout: html("p", "chart-readout"),
    legend: html("ul", "chart-legend"),
  };
  parts.readout.setAttribute("aria-live", "polite");
  el.replaceChildren(parts.title, parts.svg, parts.readout, parts.legend);
  // its name, said on focus, follows the curves at a calm rate (see draw)
  parts.svg.addEventListener("focus", () => nameNow(state));
  // The width is read here and then kept by the observer: reading it in every redraw would make
  // the browser lay out the page the redraw has just changed.
  const state = { parts, spec: null, key: null, width: el.clientWidth || 600, at: null, frame: null,
                  legendKey: null, named: null };
  charts.set(el, state);
  new ResizeObserver(() => {
    const width = el.clientWidth;
    if (width && width !== state.width && state.spec) {
      state.width = width;
      draw(el, state);
    }
  }).observe(el);
  const point = (e) => {
    if (!state.frame || !state.spec || state.spec.empty) return;
    const box = parts.svg.getBoundingClientRect();
    choose(el, state, state.frame.toStep(e.clientX - box.left));
  };
  parts.svg.addEventListener("pointermove", point);
  parts.svg.addEventListener("pointerdown", point);
  parts.svg.addEventListener("pointerleave", () => { if (document.activeElement !== parts.svg) choose(el, state, null); });
  parts.svg.addEventListener("blur", () => choose(el, state, null));
  parts.svg.addEventListener("keydown", (e) => {
    const last = state.frame ? state.frame.steps : 0;
    const at = state.at === null ? last : state.at;
    const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: last }[e.key];
    if (to === undefined || !state.spec || state.spec.empty) return;
    e.preventDefault();
    choose(el, state, Math.max(0, Math.min(last, to)));
  });
  return state;
}

/**
 * One curve of a line chart.
 * @typedef {Object} LineTrace
 * @property {string} name
 * @property {number[]} x
 * @property {number[]} y
 * @property {string} colour
 * @property {"solid"|"dash"|"dot"|"dashdot"} [dash]
 * @property {"y"|"y2"} [axis]
 * @property {boolean} [markers] a dot on each point
 */

/**
 * Draw `spec` in `el` (made a chart on first use); nothing is redrawn when spec.key and the
 * look are those already shown (a new width redraws by itself).
 *
 * spec: {key, title, xTitle, yTitle, y2: {title, lo, hi} | undefined, empty,
 *        traces: [{name, x, y, colour, dash: "solid" | "dash" | "dot" | "dashdot", axis: "y" | "y2",
 *                  markers}]}
 */
/**
 * @param {PlotElement} el the chart (its curves' names and points in el.data, as a figure's)
 * @param {{key: *, title: string, xTitle: string, yTitle: string, y2?: {title: string, lo: number, hi: number}, empty: boolean, traces: LineTrace[]}} spec
 */
export function drawLineChart(el, spec) {
  const state = charts.get(el) || build(el);
  const sizes = look();
  const key = JSON.stringify([spec.key, sizes]);
  el.data = spec.traces.map((t) => ({ name: t.name, x: t.x, y: t.y }));
  el.layout = { title: { text: spec.title }, font: { color: sizes.ink, size: sizes.size } };
  if (key === state.key) return;
  state.key = key;
  state.spec = spec;
  draw(el, state);
}

/**
 * The chart `el` drawn again `width` px wide, in a copy off screen (a figure saved for a
 * projector, js/figure/export.js), or null if it has nothing drawn; the caller removes it.
 */
/**
 * @param {PlotElement} el
 * @param {number} width
 * @returns {?PlotElement}
 */
export function chartCopy(el, width) {
  const state = charts.get(el);
  if (!state || !state.spec) return null;
  const copy = /** @type {PlotElement} */ (html("div", "line-chart"));
  copy.id = `${el.id}-copy`;
  Object.assign(copy.style, { position: "fixed", left: "-20000px", top: "0", width: `${width}px` });
  const parts = { title: html("div", "chart-title"), svg: svg("svg", { class: "chart-plot" }),
                  readout: html("p", "chart-readout"), legend: html("ul", "chart-legend") };
  copy.replaceChildren(parts.title, parts.svg, parts.readout, parts.legend);
  copy.data = el.data;
  document.body.append(copy);
  draw(copy, { parts, spec: state.spec, key: null, width, at: null, frame: null });
  return copy;
}

function draw(el, state) {
  const { spec, parts } = state;
  const { size, title: titleSize } = look();
  setText(parts.title, spec.title);
  parts.title.style.fontSize = `${titleSize}px`;
  parts.readout.style.fontSize = parts.legend.style.fontSize = `${size}px`;

  const left = spec.traces.filter((t) => t.axis !== "y2").flatMap((t) => t.y).filter(Number.isFinite);
  const y = niceAxis(left.length ? Math.min(...left) : 0, left.length ? Math.max(...left) : 1);
  const y2 = spec.y2 ? niceAxis(spec.y2.lo, spec.y2.hi) : null;
  const steps = Math.max(1, ...spec.traces.map((t) => t.x[t.x.length - 1] || 0));
  const chars = (axis) => Math.max(...axis.ticks.map((v) => tickText(v, axis.step).length));
  const width = state.width, height = Math.round(190 + 5 * size);
  const m = {
    l: Math.round(size * 2 + (spec.empty ? 0 : chars(y) * 0.62 * size) + 6),
    r: y2 ? Math.round(size * 2 + (spec.empty ? 0 : chars(y2) * 0.62 * size) + 6) : 12,
    t: Math.round(size * 0.8), b: Math.round(size * 3.2 + 6),
  };
  const w = Math.max(40, width - m.l - m.r), h = Math.max(40, height - m.t - m.b);
  const X = (v) => m.l + (v / steps) * w;
  const Y = (axis) => (v) => m.t + h - ((v - axis.lo) / (axis.hi - axis.lo)) * h;
  state.frame = { steps, toStep: (px) => Math.max(0, Math.min(steps, Math.round(((px - m.l) / w) * steps))) };
  parts.svg.setAttribute("width", width);
  parts.svg.setAttribute("height", height);
  parts.svg.setAttribute("viewBox", `0 0 ${width} ${height}`);

  const out = [];
  const font = { "font-size": size };
  const clip = `${el.id}-clip`;
  out.push(svg("clipPath", { id: clip }, undefined));
  out[0].append(svg("rect", { x: m.l, y: m.t - 3, width: w, height: h + 6 }));
  // the grid: a line at every tick of the left axis and of the step axis
  for (const v of y.ticks) out.push(svg("line", { class: "chart-grid", x1: m.l, x2: m.l + w, y1: Y(y)(v), y2: Y(y)(v) }));
  // steps are whole numbers: ticks 1, 2, 5, 10, 20... apart, about eight of them
  const xStep = Math.max(1, niceAxis(0, steps, 8).step);
  const xTicks = [];
  for (let v = 0; v <= steps; v += xStep) xTicks.push(v);
  for (const v of xTicks) out.push(svg("line", { class: "chart-grid", x1: X(v), x2: X(v), y1: m.t, y2: m.t + h }));
  if (!spec.empty) {
    for (const v of xTicks) {
      const g = svg("g", { class: "xtick" });
      g.append(svg("text", { x: X(v), y: m.t + h + size * 1.3, "text-anchor": "middle", ...font }, String(v)));
      out.push(g);
    }
    const ticks = (axis, x, anchor) => {
      for (const v of axis.ticks) {
        const g = svg("g", { class: "ytick" });
        g.append(svg("text", { x, y: Y(axis)(v) + size * 0.35, "text-anchor": anchor, ...font }, tickText(v, axis.step)));
        out.push(g);
      }
    };
    ticks(y, m.l - 5, "end");
    if (y2) ticks(y2, m.l + w + 5, "start");
  }
  const axisTitle = (text, x, yy, turn) => svg("text", {
    class: "chart-axis-title", x, y: yy, "text-anchor": "middle", ...font,
    ...(turn ? { transform: `rotate(${turn} ${x} ${yy})` } : {}) }, text);
  out.push(axisTitle(spec.xTitle, m.l + w / 2, height - size * 0.6));
  out.push(axisTitle(spec.yTitle, size * 0.9, m.t + h / 2, -90));
  if (y2) out.push(axisTitle(spec.y2.title, width - size * 0.9, m.t + h / 2, 90));

  // the curves, clipped to the plot (a value past a fixed axis range stays inside it)
  const curves = svg("g", { "clip-path": `url(#${clip})` });
  for (const t of spec.traces) {
    const Yt = Y(t.axis === "y2" ? y2 : y);
    let d = "";
    for (let i = 0; i < t.x.length; i++) {
      if (!Number.isFinite(t.y[i])) continue;
      d += `${d ? "L" : "M"}${X(t.x[i]).toFixed(1)} ${Yt(t.y[i]).toFixed(1)}`;
    }
    const attrs = { class: "curve", d, fill: "none", stroke: t.colour, "stroke-width": 2, "stroke-linejoin": "round" };
    if (DASHES[t.dash || "solid"]) attrs["stroke-dasharray"] = DASHES[t.dash];
    curves.append(svg("path", attrs));
    if (t.markers) {
      for (let i = 0; i < t.x.length; i++) {
        curves.append(svg("circle", { class: "curve-marker", cx: X(t.x[i]), cy: Yt(t.y[i]), r: 3, fill: t.colour }));
      }
    }
  }
  out.push(curves);
  state.guide = svg("line", { class: "chart-guide", x1: 0, x2: 0, y1: m.t, y2: m.t + h, visibility: "hidden" });
  out.push(state.guide);
  // What is drawn is hidden from screen readers, in a group kept from draw to draw: the chart
  // is one object to them, named by its summary. During Play it is redrawn at every step, and
  // redrawn text nodes, each an object come and gone, made so many events that Orca dropped
  // the panel's status in the flood (docs/accessibility.md, 4.1.3).
  if (!parts.drawn) {
    parts.drawn = svg("g", { "aria-hidden": "true" });
    parts.svg.replaceChildren(parts.drawn);
  }
  parts.drawn.replaceChildren(...out);
  nameLater(state, summary(spec));
  state.X = X;

  const legendKey = JSON.stringify(spec.traces.map((t) => [t.name, t.colour, t.dash]));
  if (legendKey === state.legendKey) {
    choose(el, state, state.at === null ? null : Math.min(state.at, steps));
    return;
  }
  state.legendKey = legendKey;
  parts.legend.replaceChildren(...spec.traces.map((t) => {
    const item = document.createElement("li");
    const mark = svg("svg", { width: 26, height: 10, "aria-hidden": "true" });
    const attrs = { class: "curve", x1: 1, x2: 25, y1: 5, y2: 5, stroke: t.colour, "stroke-width": 2 };
    if (DASHES[t.dash || "solid"]) attrs["stroke-dasharray"] = DASHES[t.dash];
    mark.append(svg("line", attrs));
    item.append(mark, document.createTextNode(t.name));
    return item;
  }));
  choose(el, state, state.at === null ? null : Math.min(state.at, steps));
}

// The chart's name (its summary) changes with every step drawn: set at most once a second while
// it changes, and at once when the chart takes the focus.
const NAME_EVERY_MS = 1000;
function nameLater(state, text) {
  state.named = text;
  if (state.nameTimer) return; // the running timer sets the newest name when it fires
  nameNow(state);
  state.nameTimer = setTimeout(function again() {
    state.nameTimer = null;
    if (state.parts.svg.getAttribute("aria-label") !== state.named) {
      nameNow(state);
      state.nameTimer = setTimeout(again, NAME_EVERY_MS);
    }
  }, NAME_EVERY_MS);
}

function nameNow(state) {
  if (state.named !== null && state.parts.svg.getAttribute("aria-label") !== state.named) {
    state.parts.svg.setAttribute("aria-label", state.named);
  }
}

// The step pointed at (or null): the guide there, and every curve's value at it in the readout.
function choose(el, state, at) {
  state.at = at;
  const { parts, spec } = state;
  if (!state.guide) return;
  if (at === null || !spec || spec.empty) {
    state.guide.setAttribute("visibility", "hidden");
    parts.readout.textContent = "";
    return;
  }
  const x = state.X(at).toFixed(1);
  state.guide.setAttribute("x1", x);
  state.guide.setAttribute("x2", x);
  state.guide.setAttribute("visibility", "visible");
  const values = spec.traces.map((t) => {
    const i = t.x.indexOf(at);
    return i < 0 ? null : `${t.name} ${valueText(t.y[i])}`;
  }).filter(Boolean);
  parts.readout.textContent = `step ${at}: ${values.join(", ")}`;
}

// What a screen reader hears for the chart: each curve's first and last value.
function summary(spec) {
  if (spec.empty) return `${spec.title}: no steps yet`;
  const parts = spec.traces.filter((t) => t.x.length).map((t) => {
    const n = t.x.length - 1;
    return `${t.name} ${valueText(t.y[0])} at step ${t.x[0]}, ${valueText(t.y[n])} at step ${t.x[n]}`;
  });
  return `${spec.title}: ${parts.join("; ")}. Left and right arrow keys read the values step by step.`;
}
