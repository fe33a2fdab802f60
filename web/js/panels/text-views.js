// The text panels' two renderers: bars and tables. Python computes and formats every value
// (js/protocol.js: the answer's sections); these only place them, always as text.

import { setText } from "../page/dom.js";

/**
 * Bars into the list `list`, one <li class="bar"> per bar: its label, its factors (if any), a
 * track with its fill, and its value as text. A bar beyond float64 (value null, its sign in its
 * text) is drawn full length; the others are scaled to the largest finite one.
 * @param {HTMLElement} list an <ol> or <ul class="bars">
 * @param {{label: string, value: ?number, text: string, factors: (string|null|undefined),
 *          rest: (boolean|undefined), d: (number|null|undefined), mark: (boolean|undefined)}[]} items
 *   rest (or d null): the bar that sums the others (drawn fainter); mark: outlined (the
 *   predicted class)
 * @param {{signed: boolean}} how signed: half the track each side of zero, negative values
 *   growing left (a logit's terms); otherwise every bar from the left edge (probabilities)
 */
export function bars(list, items, { signed }) {
  list.classList.toggle("unsigned", !signed);
  const size = (bar) => (bar.value === null ? Infinity : Math.abs(bar.value));
  const negative = (bar) => signed && (bar.value === null ? bar.text.startsWith("-") : bar.value < 0);
  const top = Math.max(...items.map(size).filter(Number.isFinite), 1e-300);
  list.replaceChildren(...items.map((bar) => {
    const li = document.createElement("li");
    li.className = negative(bar) ? "bar negative" : "bar";
    if (bar.rest || bar.d === null) li.classList.add("rest");
    if (bar.mark) li.classList.add("marked");
    const label = document.createElement("span");
    label.className = "bar-label";
    label.textContent = bar.label;
    const track = document.createElement("span");
    track.className = "bar-track";
    const fill = document.createElement("span");
    fill.className = "bar-fill";
    const half = signed ? 50 : 100;
    const width = Math.min(half, (half * size(bar)) / top);
    fill.style.width = `${width}%`;
    fill.style.left = !signed ? "0%" : negative(bar) ? `${50 - width}%` : "50%";
    track.append(fill);
    const factors = document.createElement("span");
    factors.className = "bar-factors";
    factors.textContent = bar.factors ? `${bar.factors} =` : "";
    const value = document.createElement("span");
    value.className = "bar-value";
    setText(value, bar.text);
    li.append(label, factors, track, value);
    return li;
  }));
}

// t: {caption, header: [str], rows: [{label, cells: [str], mark: int|null}], k?: int}
// A top-k table (t.k: one column per rank) is "ranked": on a phone each sample's row is laid
// out as a list, every cell named by its rank (css/panels.css), instead of scrolling sideways.
// Its parts then carry their table roles explicitly, since a table laid out as blocks loses
// them in some browsers' accessibility trees.
// A table of the same shape as the one shown (a scrubbed number changes its numbers, not its
// rows and columns) has its texts and marks changed in place: new rows would each be styled and
// laid out again.
export function table(el, t) {
  const shape = JSON.stringify([Boolean(t.k), t.header, t.rows.map((row) => [row.label, row.cells.length])]);
  if (el.dataset.shape === shape && patchTable(el, t)) return;
  buildTable(el, t);
  el.dataset.shape = shape;
}

function patchTable(el, t) {
  const rows = el.tBodies[0] ? el.tBodies[0].rows : [];
  if (!el.caption || rows.length !== t.rows.length) return false;
  setText(el.caption, t.caption);
  t.rows.forEach((row, r) => {
    row.cells.forEach((text, c) => {
      const td = rows[r].cells[c + 1];
      setText(td, text);
      const predicted = row.mark === c;
      if (td.classList.contains("predicted") !== predicted) {
        td.classList.toggle("predicted", predicted);
        if (predicted) td.title = "predicted class";
        else td.removeAttribute("title");
      }
    });
  });
  return true;
}

function buildTable(el, t) {
  const ranked = Boolean(t.k);
  const role = (node, name) => { if (ranked) node.setAttribute("role", name); return node; };
  el.classList.toggle("ranked", ranked);
  role(el, "table");
  const caption = document.createElement("caption");
  caption.textContent = t.caption;
  const head = role(document.createElement("thead"), "rowgroup");
  const hr = role(document.createElement("tr"), "row");
  for (const h of t.header) {
    // The corner above the row labels is no column's header: an empty <th> would be announced.
    const th = role(document.createElement(h ? "th" : "td"), h ? "columnheader" : "cell");
    if (h) th.scope = "col";
    th.textContent = h;
    hr.append(th);
  }
  head.append(hr);
  const body = role(document.createElement("tbody"), "rowgroup");
  for (const row of t.rows) {
    const tr = role(document.createElement("tr"), "row");
    const th = role(document.createElement("th"), "rowheader");
    th.scope = "row";
    th.textContent = row.label;
    tr.append(th);
    row.cells.forEach((text, c) => {
      const td = role(document.createElement("td"), "cell");
      td.textContent = text;
      if (ranked) td.dataset.rank = t.header[c + 1];
      if (row.mark === c) {
        td.className = "predicted";
        td.title = "predicted class";
      }
      tr.append(td);
    });
    body.append(tr);
  }
  el.replaceChildren(caption, head, body);
}

