// "Download figure": a small menu button at the top right of each heatmap and line chart
// (.figure-menu, in the figure's box, before the figure in the Tab order), named with the
// figure's title: "Download figure: logits = h_hat @ W_head (B × C)". It opens a menu of three
// (WAI-ARIA's menu button: Enter, Space or ArrowDown open it on its first item, ArrowUp on its
// last; arrows, Home and End move; Escape closes it and gives the focus back; Tab leaves it),
// and each item saves the figure as it is shown (js/figure/export.js): PNG at 2x, PNG for a
// 1920 x 1080 projector, SVG. A figure with nothing to save (a comparison not chosen, curves
// with no step yet) hides its button.

import { FORMATS, exportable, figureTitle, makeFigure, saveBlob } from "./export.js";
import { setData, setHidden, svg } from "../page/dom.js";
import { notify } from "../page/share.js";

const menus = new WeakMap(); // figure element -> {root, button, list, items}
let open = null; // the menu open now

function icon() {
  const mark = svg("svg", { viewBox: "0 0 16 16", width: 16, height: 16, "aria-hidden": "true",
                           focusable: "false" });
  // an arrow down onto a tray: "download"
  mark.append(svg("path", { d: "M8 2v8M4.5 6.8 8 10.3l3.5-3.5M2.5 13.5h11", fill: "none",
                            stroke: "currentColor", "stroke-width": "1.7",
                            "stroke-linecap": "round", "stroke-linejoin": "round" }));
  return mark;
}

function build(el) {
  const root = document.createElement("div");
  root.className = "figure-menu";
  root.hidden = true;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "figure-menu-button";
  button.id = `${el.id}-download`;
  button.setAttribute("aria-haspopup", "menu");
  button.setAttribute("aria-expanded", "false");
  button.append(icon());
  const list = document.createElement("div");
  list.className = "figure-menu-list";
  list.id = `${el.id}-download-menu`;
  list.setAttribute("role", "menu");
  list.hidden = true;
  button.setAttribute("aria-controls", list.id);
  const items = Object.entries(FORMATS).map(([format, { label }]) => {
    const item = document.createElement("button");
    item.type = "button";
    item.className = "figure-menu-item";
    item.setAttribute("role", "menuitem");
    item.tabIndex = -1;
    item.dataset.format = format;
    item.textContent = label;
    item.addEventListener("click", () => choose(el, format));
    list.append(item);
    return item;
  });
  root.append(button, list);
  const menu = { root, button, list, items, el };

  button.addEventListener("click", () => (list.hidden ? show(menu, 0) : hide(menu, true)));
  button.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      show(menu, e.key === "ArrowDown" ? 0 : items.length - 1);
    }
  });
  list.addEventListener("keydown", (e) => {
    const at = items.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[e.key];
    if (to !== undefined) {
      e.preventDefault();
      items[(to + items.length) % items.length].focus();
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation(); // the menu's Escape, not the page's (a hover label, a selection)
      hide(menu, true);
    } else if (e.key === "Tab") {
      hide(menu, false); // Tab leaves the menu, as from the button
    }
  });
  // A press in the menu keeps the focus where it is: WebKit does not focus a button it clicks,
  // and the focus leaving for the page would close the menu before the click.
  root.addEventListener("mousedown", (e) => e.preventDefault());
  // the focus gone elsewhere (a click outside, Tab): closed
  root.addEventListener("focusout", (e) => {
    if (!root.contains(/** @type {Node} */ (e.relatedTarget))) hide(menu, false);
  });
  const box = el.parentElement;
  if (getComputedStyle(box).position === "static") box.style.position = "relative";
  box.insertBefore(root, el);
  menus.set(el, menu);
  return menu;
}

function show(menu, first) {
  if (open && open !== menu) hide(open, false);
  open = menu;
  setHidden(menu.list, false);
  menu.button.setAttribute("aria-expanded", "true");
  menu.items[first].focus();
}

function hide(menu, focusButton) {
  if (menu.list.hidden) return;
  setHidden(menu.list, true);
  menu.button.setAttribute("aria-expanded", "false");
  if (open === menu) open = null;
  if (focusButton) menu.button.focus();
}

// A click anywhere outside the open menu closes it (a click on the page does not always move
// the focus: on a figure's plot, say).
document.addEventListener("pointerdown", (e) => {
  if (open && !open.root.contains(e.target)) hide(open, false);
});

async function choose(el, format) {
  const menu = menus.get(el);
  hide(menu, true);
  if (!exportable(el)) return;
  setData(menu.root, "busy", "true");
  menu.button.setAttribute("aria-busy", "true");
  try {
    const made = await makeFigure(el, format);
    saveBlob(made.blob, made.filename);
    // for the tests and benchmarks: what was made, and how long it took (docs/figures.md)
    setData(menu.root, "made", `${made.filename} ${made.width}x${made.height} ${Math.round(made.ms)} ms`);
    notify(`Saved ${made.filename}`);
  } catch (err) {
    notify(`The figure could not be saved: ${err && err.message ? err.message : err}`);
  } finally {
    setData(menu.root, "busy", "false");
    menu.button.removeAttribute("aria-busy");
  }
}

/**
 * The figure `el` is drawn (or redrawn): its button shown, named after its title as it is now,
 * or hidden when it has nothing to save.
 * @param {HTMLElement} el a heatmap's element, or a line chart's (js/figure/line-chart.js)
 */
export function figureMenu(el) {
  const menu = menus.get(el) || build(el);
  const can = exportable(el);
  setHidden(menu.root, !can);
  if (!can) {
    hide(menu, false);
    return;
  }
  const title = figureTitle(el);
  if (menu.title !== title) {
    menu.title = title;
    const label = `Download figure: ${title}`;
    menu.button.setAttribute("aria-label", label);
    menu.button.title = label;
    menu.list.setAttribute("aria-label", `Download “${title}” as`);
  }
}

/** The figure `el` shows nothing now (js/heatmap/draw.js: clearHeatmap): its button hidden. */
export function hideFigureMenu(el) {
  const menu = menus.get(el);
  if (!menu) return;
  hide(menu, false);
  setHidden(menu.root, true);
}
