// "Show the numbers" under each heatmap: its values as a table (the first TABLE_MAX rows and
// columns), built when it is opened and again on each change while it is open: the cells are a
// picture, and this is how a screen reader, or anyone, reads them.

import { columnClass } from "./heatmap-hover.js";

const TABLE_MAX = 24; // rows and columns listed (the exports have them all)

function cellText(value) {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "inf" : "-inf";
  if (Math.abs(value) >= 1e6) return value.toExponential(4);
  const text = value.toFixed(4);
  return /^-0\.0+$/.test(text) ? text.slice(1) : text; // never "-0.0000"
}

export function numbersTable(el, spec, m) {
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
    th.textContent = `${spec.x_title} ${columnClass(spec, j)}`;
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
