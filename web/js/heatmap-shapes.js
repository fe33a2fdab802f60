// Outlines laid over the heatmaps with Plotly's shapes: the predicted-class marks of a spec,
// the linked views' overlays (js/linked.js) and the walk-through's highlights
// (js/walkthrough.js). Each setter lays them all again, so none removes another's.

import { look } from "./heatmap-style.js";

// Shapes laid over a heatmap by the linked views (js/linked.js): id -> Plotly shapes. They are
// drawn with the heatmap's own marks, and kept across its redraws.
const overlays = new Map();

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
export function allShapes(id, spec, m) {
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
