// Outlines laid over the heatmaps with Plotly's shapes: the predicted-class marks of a spec,
// the linked views' overlays (js/panels/linked.js) and the walk-through's highlights
// (js/panels/walkthrough.js). Each setter lays them all again, so none removes another's.

// An outline must show over every colour of the scales (WCAG 1.4.11: 3:1 for what a figure
// needs to be understood), which no one colour does. So each is a line over a halo 3 px wider
// in a contrasting colour: against any cell one of the two has 3:1, and against each other
// they have more (tests/test_cell_ink.py checks every pair on every colour of every scale).
export const OUTLINES = {
  mark: { line: "#111111", halo: "#ffffff" }, // a predicted class
  linked: { line: "#ffa500", halo: "#111111" }, // the logit pointed at: its row and column
  walk: { line: "#ffa500", halo: "#111111" }, // the cells a walk-through step uses (wider)
};

/**
 * A rectangle `box` (x0, x1, y0, y1) outlined: its halo shape, then its line, named `name`.
 * @param {{x0: number, x1: number, y0: number, y1: number}} box
 * @param {string} name
 * @param {{line: string, halo: string}} outline
 * @param {number} width
 * @returns {Object[]}
 */
export function outlinedBox(box, name, outline, width) {
  const rect = { type: "rect", xref: "x", yref: "y", fillcolor: "rgba(0, 0, 0, 0)", ...box };
  return [{ ...rect, name: `${name}-halo`, line: { color: outline.halo, width: width + 3 } },
          { ...rect, name, line: { color: outline.line, width } }];
}

// Shapes laid over a heatmap by the linked views (js/panels/linked.js): id -> Plotly shapes. They are
// drawn with the heatmap's own marks, and kept across its redraws.
const overlays = new Map();

// The predicted-class marks: a dark outline per cell, named "mark".
function markShapes(spec) {
  return (spec.marks || []).flatMap(([r, c]) =>
    outlinedBox({ x0: c - 0.5, x1: c + 0.5, y0: r - 0.5, y1: r + 0.5 }, "mark", OUTLINES.mark, 3));
}

// Everything laid over heatmap `id`: its marks, the linked views' overlays, the walk-through's
// highlights (drawn last, on top). Each setter redraws them all, so none removes another's.
// Only shapes inside the matrix `m` now shown are laid: an overlay set for another size (the
// cell focused in a 768 x 1000 W_head, kept while a preset of 4 x 3 replaces it) would stretch
// the axes to its place, and Plotly would then lay out (and measure) a tick label for each of
// a thousand columns: minutes of main thread.
/**
 * @param {string} id
 * @param {HeatmapSpec} [spec]
 * @param {Matrix} [m]
 * @returns {Object[]}
 */
export function allShapes(id, spec, m) {
  const inside = (s) => !m || s.xref !== "x" || (
    Math.min(s.x0, s.x1) >= -0.5 - 1e-9 && Math.max(s.x0, s.x1) <= m.cols - 0.5 + 1e-9 &&
    Math.min(s.y0, s.y1) >= -0.5 - 1e-9 && Math.max(s.y0, s.y1) <= m.rows - 0.5 + 1e-9);
  return markShapes(spec || {}).concat(overlays.get(id) || [], highlightShapes(id)).filter(inside);
}

/**
 * Lay `boxes` over heatmap `id` (replacing those laid before), now and after its redraws.
 * @param {string} id
 * @param {Object[]} boxes Plotly shapes, or lists of them (outlinedBox)
 */
export function setOverlay(id, boxes) {
  const shapes = boxes.flat(); // an outlined box is two shapes (outlinedBox)
  const before = overlays.get(id) || [];
  // the same outlines again (the focused cell's, after each edit): nothing to lay out
  if (JSON.stringify(shapes) === JSON.stringify(before)) return Promise.resolve();
  overlays.set(id, shapes);
  const el = /** @type {PlotElement} */ (document.getElementById(id));
  if (!el || !el.data || !el.vitHover) return Promise.resolve();
  return window.Plotly.relayout(el, { shapes: allShapes(id, el.vitHover.spec, el.vitHover.m) });
}

// ---- highlights: the cells a walk-through step uses (js/panels/walkthrough.js) -----------------------

const highlights = new Map(); // id -> [[row0, col0, row1, col1]], inclusive

// A thick orange frame on a dark halo (OUTLINES), wider than the linked views' so that the
// two are told apart, drawn above the predicted-class marks; visible on a projector. No wash
// inside: a tint would change the cells' colours, which must match the colour key. The frames
// are named "highlight" (and "highlight-halo").
function highlightShapes(id) {
  return (highlights.get(id) || []).flatMap(([r0, c0, r1, c1]) => outlinedBox(
    { x0: c0 - 0.5, x1: c1 + 0.5, y0: r0 - 0.5, y1: r1 + 0.5 }, "highlight", OUTLINES.walk, 5));
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
  const el = /** @type {PlotElement} */ (document.getElementById(id));
  if (!el || !el.data || before === JSON.stringify(rects)) return Promise.resolve();
  /** @type {{spec?: HeatmapSpec, m?: StoredMatrix}} */
  const shown = el.vitHover || {};
  return window.Plotly.relayout(el, { shapes: allShapes(id, shown.spec, shown.m) });
}
