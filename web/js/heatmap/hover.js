// Pointing at a heatmap: which cell is under the pointer (for the bitmaps too, whose trace
// Plotly does not hover), and the label that shows its exact value, from the spec's hover
// template, with the classes' names where the spec says x_labels ("classes", or a list of them).

import { shortNumber } from "../page/numbers.js";

// The classes' names (the answers' labels), for hovers whose spec says x_labels: "classes";
// their whole names where the labels cut some short (a model file's long ones: class_titles).
let classLabels = [];
let classTitles = null;

/**
 * @param {string[]} names
 * @param {?string[]} [titles]
 */
export function setClassLabels(names, titles = null) {
  classLabels = names || [];
  classTitles = titles || null;
}

/**
 * The name of class `j` (the answers' labels), or "class j": the whole name, for the hover.
 * @param {number} j
 * @returns {string}
 */
export function className(j) { return (classTitles && classTitles[j]) || classLabels[j] || `class ${j}`; }

/**
 * The whole name of class `j` where its label is cut short, else null.
 * @param {number} j
 * @returns {?string}
 */
export function classTitle(j) {
  return classTitles && classTitles[j] !== classLabels[j] ? classTitles[j] : null;
}

/**
 * The class shown in column j of a heatmap: j, or the spec's own list's j-th class when the
 * figure shows some classes only (x_labels: [class, ...], the head at every depth of a model
 * with many classes).
 * @param {HeatmapSpec} spec
 * @param {number} j
 * @returns {number}
 */
export function columnClass(spec, j) { return Array.isArray(spec.x_labels) ? spec.x_labels[j] : j; }

/**
 * The cell of heatmap `el` under the point (clientX, clientY), or null outside it: from the
 * axes' ranges, so it works for the bitmaps too (their trace is not hovered by Plotly).
 * @param {PlotElement} el
 * @param {number} clientX
 * @param {number} clientY
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

// ---- the label: the cell's value, from the spec's hover template -----------------------------

// The hover template's fields, filled in one pass by a function (never a replacement string, whose
// $& and $' a class name could hold, nor in turns, where a class name holding %{z} would be filled)
const FIELDS = /%\{(x|y|customdata|z)\}/g;

export function hoverOver(el) {
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
    const c = columnClass(spec, col);
    const field = { x: String(c), y: String(row), customdata: className(c) };
    label.replaceChildren(...spec.hover.replace(FIELDS, (_, name) => field[name] ?? shortNumber(value)).split("<br>").flatMap((line, n) => (n ? [document.createElement("br"), line] : [line])));
    const own = box.getBoundingClientRect();
    label.hidden = false;
    // right of the pointer, or left of it where the box ends first: the plot's box clips what
    // crosses its sides (css/pipeline.css), and a narrow stage's last column lost its label
    const x = event.clientX - own.left;
    const wide = label.offsetWidth;
    const left = x + 12 + wide <= own.width ? x + 12 : Math.max(0, Math.min(x - 12 - wide, own.width - wide));
    label.style.left = `${left}px`;
    label.style.top = `${event.clientY - own.top + 12}px`;
  });
  el.addEventListener("mouseleave", () => { label.hidden = true; });
}

// Esc dismisses a value shown on hover without moving the pointer (WCAG 2.2, 1.4.13); it comes
// back when the pointer moves again.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  for (const label of document.querySelectorAll(".hover-value:not([hidden])")) /** @type {HTMLElement} */ (label).hidden = true;
});
