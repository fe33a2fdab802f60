// Plotly heatmaps, always updated with Plotly.react and new array objects, axes kept fixed.
//
// What each heatmap shows (title, axes, range, marks) is decided in Python (pycore/explorer/panels.py);
// this file only turns that spec into a Plotly trace and layout.

import { setData, setHidden, setText } from "./dom.js";

// A diverging scale centred at zero (ColorBrewer RdBu, readable with the common colour-vision
// deficiencies): blue below zero, white at zero, red above.
const DIVERGING = [
  [0.0, "#2166ac"], [0.2, "#4393c3"], [0.4, "#d1e5f0"], [0.5, "#f7f7f7"],
  [0.6, "#fddbc7"], [0.8, "#d6604d"], [1.0, "#b2182b"],
];
// Probabilities are not signed: a sequential scale from white.
const SEQUENTIAL = [[0.0, "#f7f7f7"], [0.5, "#fdae6b"], [1.0, "#a63603"]];

const CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };

function axis(title, n, labels) {
  const a = { title: { text: title, standoff: 4 }, zeroline: false, showgrid: false, fixedrange: false };
  if (labels && n <= 24) {
    a.tickmode = "array";
    a.tickvals = labels.map((_, i) => i);
    a.ticktext = labels;
  } else if (n <= 24) {
    a.dtick = 1;
  }
  return a;
}

// What each heatmap shows now: id -> {spec (as JSON), z}. A heatmap asked to show exactly that
// again is left alone; this is how the first view drawn while Python boots costs nothing more
// once Python's own, identical answer arrives.
const shown = new Map();

function sameRows(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.length !== y.length) return false;
    for (let j = 0; j < x.length; j++) if (x[j] !== y[j]) return false;
  }
  return true;
}

// spec: {title, x_title, y_title, x_labels?, y_labels?, zmin, zmax, scale: "diverging"|"sequential",
//        text: bool, hover: str, marks: [[row, col], ...]}
export function drawHeatmap(id, spec, z) {
  const el = document.getElementById(id);
  const specText = JSON.stringify(spec);
  const before = shown.get(id);
  if (before && el.data && before.spec === specText && sameRows(before.z, z)) return Promise.resolve(el);
  shown.delete(id);
  const rows = z.length;
  const cols = rows ? z[0].length : 0;
  const compact = document.documentElement.classList.contains("embed");
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
  if (spec.zmid !== undefined && spec.zmid !== null) trace.zmid = spec.zmid;
  if (spec.text) {
    trace.texttemplate = spec.text_format || "%{z:.2f}";
    trace.textfont = { size: 11 };
  }
  const cell = rows <= 8 ? (compact ? 19 : 34) : rows <= 32 ? (compact ? 8 : 16) : 0;
  const height = cell ? Math.max(compact ? 84 : 150, (compact ? 54 : 80) + rows * cell) : (compact ? 200 : 340);
  const layout = {
    title: { text: spec.title, font: { size: 13 }, x: 0, xanchor: "left" },
    height,
    margin: compact ? { l: 44, r: 6, t: 22, b: 30 } : { l: 64, r: 10, t: 30, b: 40 },
    xaxis: axis(spec.x_title, cols, spec.x_labels),
    yaxis: Object.assign(axis(spec.y_title, rows, spec.y_labels), { autorange: "reversed" }),
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
    font: { family: "system-ui, sans-serif", size: 11 },
  };
  const label = `${spec.title}: heatmap of ${rows} by ${cols} values`;
  if (el.getAttribute("aria-label") !== label) {
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", label);
  }
  // The key changes the page's layout: only after Plotly has measured it (the react calls of
  // one render all run before any of them resolves).
  return window.Plotly.react(el, [trace], layout, CONFIG).then((drawn) => {
    shown.set(id, { spec: specText, z });
    colourKey(el, spec, keyShown);
    return drawn;
  });
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

export function clearHeatmap(id) {
  shown.delete(id);
  const el = document.getElementById(id);
  const key = el && el.nextElementSibling;
  if (key && key.classList.contains("colour-key")) setHidden(key, true);
  if (el && el.data) window.Plotly.purge(el);
}
