// "Show the numbers" under each heatmap: its values as a table of at most TABLE_MAX rows and
// columns, built when it is opened and again on each change while it is open: the cells are a
// picture, and this is how a screen reader, or anyone, reads them. A larger matrix (h_hat or
// dW_head at ViT-B/16 size) is read a window at a time: two fields choose the window's first
// row and first column, so every value is reachable without a mouse.

import { columnClass } from "./hover.js";

const TABLE_MAX = 24; // rows and columns listed at a time

function cellText(value) {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "inf" : "-inf";
  if (Math.abs(value) >= 1e6) return value.toExponential(4);
  const text = value.toFixed(4);
  return /^-0\.0+$/.test(text) ? text.slice(1) : text; // never "-0.0000"
}

/**
 * @param {PlotElement} el
 * @param {HeatmapSpec} spec
 * @param {Matrix} m
 */
export function numbersTable(el, spec, m) {
  // the table of the matrix last drawn (box.vitNumbers), filled while open
  let box = /** @type {HTMLDetailsElement & {vitNumbers?: {spec: HeatmapSpec, m: Matrix}}} */ (
    el.parentElement.querySelector("details.numbers-toggle"));
  if (!box) {
    box = document.createElement("details");
    box.className = "numbers-toggle";
    const summary = document.createElement("summary");
    summary.textContent = "Show the numbers";
    box.append(summary);
    // closed, it lets go of its window's fields (opened again, it starts at the first cell)
    box.addEventListener("toggle", () => {
      if (box.open) fillNumbers(box);
      else box.querySelector(".numbers-window")?.remove();
    });
    el.parentElement.append(box);
  }
  box.vitNumbers = { spec, m };
  if (box.open) fillNumbers(box);
}

// The window's fields ("From row", "from column"), made once per open table, only when the
// matrix is larger than a window. Each keeps a valid first row or column (0 .. size - 1).
function windowFields(box) {
  let form = box.querySelector(".numbers-window");
  if (form) return form;
  form = document.createElement("form");
  form.className = "numbers-window";
  form.addEventListener("submit", (e) => e.preventDefault());
  for (const [name, words] of [["row", "From row"], ["col", "from column"]]) {
    const label = document.createElement("label");
    const field = document.createElement("input");
    field.type = "number";
    field.min = "0";
    field.step = "1";
    field.value = "0";
    field.name = name;
    field.addEventListener("change", () => fillNumbers(box));
    label.append(`${words} `, field);
    form.append(label, " ");
  }
  box.querySelector("summary").after(form);
  return form;
}

function first(field, size) {
  const at = Math.floor(Number(field.value));
  const ok = Number.isFinite(at) ? Math.max(0, Math.min(size - 1, at)) : 0;
  field.max = String(size - 1);
  if (field.value !== String(ok)) field.value = String(ok);
  return ok;
}

function fillNumbers(box) {
  const { spec, m } = box.vitNumbers;
  const windowed = m.rows > TABLE_MAX || m.cols > TABLE_MAX;
  const form = windowed ? windowFields(box) : null;
  if (!windowed) box.querySelector(".numbers-window")?.remove(); // fields only where they help
  const r0 = windowed ? first(form.elements.row, m.rows) : 0;
  const c0 = windowed ? first(form.elements.col, m.cols) : 0;
  const rows = Math.min(m.rows - r0, TABLE_MAX);
  const cols = Math.min(m.cols - c0, TABLE_MAX);
  const table = document.createElement("table");
  table.className = "numbers";
  const caption = document.createElement("caption");
  caption.textContent = spec.title + (windowed
    ? ` (rows ${r0} to ${r0 + rows - 1} of ${m.rows}, columns ${c0} to ${c0 + cols - 1} of ` +
      `${m.cols}: the fields above choose the first row and column)` : "");
  const head = document.createElement("tr");
  head.append(document.createElement("td"));
  for (let j = c0; j < c0 + cols; j++) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = `${spec.x_title} ${columnClass(spec, j)}`;
    head.append(th);
  }
  const thead = document.createElement("thead");
  thead.append(head);
  const body = document.createElement("tbody");
  for (let i = r0; i < r0 + rows; i++) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = `${spec.y_title} ${i}`;
    tr.append(th);
    for (let j = c0; j < c0 + cols; j++) {
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
