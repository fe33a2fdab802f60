// Paper: the page printed as a handout (css/embed-print.css). Plotly draws each heatmap
// at the width it had on screen, wider than a column of A4 or Letter paper, and the browser
// prints what is drawn: the figures ran off the page. Before the browser lays the page out for
// printing (beforeprint), html.printing lays it out on screen as on paper, one width for A4 and
// Letter (the narrower's), and each figure shown is drawn again at its width there, its title
// wrapped anew; after printing (afterprint), each is drawn as it was. The line charts are SVG
// with a viewBox, which the print rules scale to their column.
//
// Every engine the page runs in sends beforeprint and afterprint around printing, and Firefox
// prints a copy of the page made after beforeprint: the figures must be drawn by then, not when
// the print media query starts matching.

import { fitNextFrame, layoutAt, numbersAt } from "../heatmap/draw.js";
import { paintBitmap } from "../heatmap/bitmap.js";

const ROOT = document.documentElement;
const kept = []; // [figure, its layout values before, its element's height before, its vitText]
const tables = []; // [table, its zoom before]
// A table of numbers wider than its column is drawn smaller to fit it, down to this much of
// its size; smaller still it is left out of the paper (its heatmap has the same numbers).
const SMALLEST = 0.55;

function drawForPaper() {
  if (ROOT.classList.contains("printing")) return;
  ROOT.classList.add("printing");
  // the paper's ink (html.printing: the light scheme's), for figures drawn in a dark one
  const ink = getComputedStyle(ROOT).getPropertyValue("--ink").trim();
  for (const el of /** @type {NodeListOf<PlotElement>} */ (document.querySelectorAll(".js-plotly-plot"))) {
    if (!el._fullLayout || !el.offsetParent || !el.layout || !el.layout.font) continue;
    // a figure made ahead out of sight (css/pipeline.css) is not printed: it keeps the width
    // it will be shown at
    if (getComputedStyle(el).visibility === "hidden") continue;
    const width = el.clientWidth; // laid out for paper now (a read of the layout, once)
    const resized = width && Math.abs(width - el._fullLayout.width) >= 1 ? layoutAt(el, width) : null;
    const inked = ink && el.layout.font.color !== ink
      ? { "font.color": ink, "title.font.color": ink, "xaxis.color": ink, "yaxis.color": ink } : null;
    if (!resized && !inked) continue;
    /** @type {Object<string, any>} */
    const update = { ...resized, ...inked };
    const before = {};
    for (const key of Object.keys(update)) before[key] = valueAt(el.layout, key);
    kept.push([el, before, el.style.height, el.vitText]);
    if (resized) {
      el.style.height = `${update.height}px`;
      el.vitText = numbersAt(el, width); // numbers only where the cells still hold them
    }
    // Plotly draws the axes at once; its event, on which the page repaints the cells, comes a
    // turn later, after Firefox has copied the page for printing: the cells painted now too
    window.Plotly.relayout(el, update);
    paintBitmap(el);
  }
  for (const table of /** @type {NodeListOf<HTMLTableElement>} */ (document.querySelectorAll(".table-scroll > table"))) {
    const box = /** @type {HTMLElement} */ (table.parentElement);
    if (!box.offsetParent || box.scrollWidth <= box.clientWidth + 1) continue;
    const fit = box.clientWidth / box.scrollWidth;
    tables.push([table, table.style.zoom]);
    if (fit >= SMALLEST) table.style.zoom = String(Math.floor(fit * 100) / 100);
    else box.dataset.printOmitted = "true";
  }
}

function drawForScreen() {
  ROOT.classList.remove("printing");
  for (const [table, zoom] of tables.splice(0)) {
    table.style.zoom = zoom;
    delete table.parentElement.dataset.printOmitted;
  }
  for (const [el, before, height, text] of kept.splice(0)) {
    el.style.height = height;
    el.vitText = text;
    // its width unset again, Plotly takes the one it measured when it first drew the figure,
    // not its box's now (a stage's width follows its editor's grid): fitted to it after
    window.Plotly.relayout(el, before).then(() => fitNextFrame(el));
    paintBitmap(el);
  }
}

// layout["title.pad.t"]: the value at a dotted key, or null (unset: Plotly's own again)
function valueAt(layout, key) {
  const value = key.split(".").reduce((o, k) => (o == null ? undefined : o[k]), layout);
  return value === undefined ? null : value;
}

window.addEventListener("beforeprint", drawForPaper);
window.addEventListener("afterprint", drawForScreen);
