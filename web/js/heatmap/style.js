// What the heatmaps look like whatever they show: the colour scales, and the page's text colour
// and sizes now (dark mode, large text), shared by the figures (js/heatmap/draw.js), the painted
// cells (js/heatmap/bitmap.js) and the outlines laid over them (js/heatmap/shapes.js).

import { inkColour } from "../page/dom.js";

/** @typedef {Array<[number, string]>} ColourScale [[at, colour]], at from 0 to 1 */

// A diverging scale centred at zero (ColorBrewer RdBu, readable with the common colour-vision
// deficiencies): blue below zero, white at zero, red above.
/** @type {ColourScale} */
export const DIVERGING = [
  [0.0, "#2166ac"], [0.2, "#4393c3"], [0.4, "#d1e5f0"], [0.5, "#f7f7f7"],
  [0.6, "#fddbc7"], [0.8, "#d6604d"], [1.0, "#b2182b"],
];
// Probabilities are not signed: a sequential scale from white.
/** @type {ColourScale} */
export const SEQUENTIAL = [[0.0, "#f7f7f7"], [0.5, "#fdae6b"], [1.0, "#a63603"]];

/**
 * The colour scale a spec names ("sequential" or "diverging"), as Plotly's [[at, colour]].
 * @param {string} name
 * @returns {ColourScale}
 */
export function scaleOf(name) {
  return name === "sequential" ? SEQUENTIAL : DIVERGING;
}

// The page's text colour and size now (dark mode, large text), for Plotly's labels.
const WIDE = window.matchMedia ? window.matchMedia("(min-width: 1600px)") : { matches: false };
export function look() {
  const large = document.documentElement.classList.contains("large");
  // Large text (a projector): about 1.4x every text of the figure; on a wide screen (a
  // 1080p projector) numbers and ticks of 24 px, legible from the back of a lecture hall.
  if (large && WIDE.matches) return { ink: inkColour(), size: 24, title: 26, cellText: 24 };
  return { ink: inkColour(), size: large ? 15 : 11, title: large ? 18 : 13,
           cellText: large ? 16 : 11 };
}
