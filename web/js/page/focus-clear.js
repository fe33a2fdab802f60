// Focus never hidden (WCAG 2.2, 2.4.11): the browser scrolls a focused element into the window,
// but not out from under what floats over the page's bottom edge, the walk-through's pinned
// panel and the notices (the alert, the toast, the link's note). After each focus move, a
// focused element that such a layer covers is scrolled up until it stands clear of it.
// Elements inside a layer are never covered by it; the walk-through docked at the window's
// right covers no content (the page is padded beside it).

const LAYERS = ".walk[data-active=\"true\"], .notices > :not([hidden])";
const GAP_PX = 8; // between the focused element and the layer's top

// "sticky" or "fixed" if `layer` floats over the page, or is laid out in a box that does (a
// notice, in the fixed .notices box of no height); else "".
function floating(layer) {
  for (let e = layer; e && e !== document.body; e = e.parentElement) {
    const position = getComputedStyle(e).position;
    if (position === "sticky" || position === "fixed") return position;
  }
  return "";
}

// The top of the lowest-reaching layer that covers `box` (a DOMRect) horizontally: a sticky
// panel while it is pinned at the window's bottom edge, a notice (fixed, just above that edge)
// while it is shown; or Infinity.
function coveredFrom(el, box) {
  let top = Infinity;
  for (const layer of document.querySelectorAll(LAYERS)) {
    if (layer.contains(el)) continue;
    const position = floating(layer);
    if (!position) continue;
    // a panel stuck to the bottom moves up from its place, never down: what follows it in the
    // page is never under it (taken for covered, it was scrolled up, and the panel stuck over it)
    if (position === "sticky" && (layer.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)) continue;
    const r = layer.getBoundingClientRect();
    if (!r.height) continue;
    if (position === "sticky" && r.bottom < window.innerHeight - 2) continue; // not pinned there
    if (r.left >= box.right || r.right <= box.left) continue; // beside it (the docked panel)
    top = Math.min(top, r.top);
  }
  return top;
}

function clear(el, tabbed) {
  if (!el || el === document.body || !el.getBoundingClientRect) return;
  let box = el.getBoundingClientRect();
  if (!box.height) return;
  // Tab scrolls the element it focuses into view; WebKitGTK at times does not: a grid's first
  // cell (W_head[0,0], stage 3), reached by Tab from stage 2's statistics lower in the same row,
  // stayed above the window. Only for Tab: a focus the page moves itself without scrolling
  // (focus({preventScroll})) stays where it was put.
  if (tabbed && (box.bottom <= 0 || box.top >= window.innerHeight)) {
    el.scrollIntoView({ block: "nearest", inline: "nearest" });
    box = el.getBoundingClientRect();
  }
  const top = coveredFrom(el, box);
  if (box.bottom + GAP_PX <= top) return;
  // up by the overlap, never so far that the element's top leaves the window
  const by = Math.min(box.bottom + GAP_PX - top, Math.max(0, box.top - GAP_PX));
  if (by > 0) window.scrollBy({ top: by, behavior: "instant" });
}

export function keepFocusClear() {
  // whether the focus moves by Tab: the key's default moves it, in the same task as its keydown
  let tabbing = false;
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Tab") return;
    tabbing = true;
    setTimeout(() => { tabbing = false; }, 0);
  }, true);
  // after the browser's own scroll into view, which happens with the focus
  document.addEventListener("focusin", (e) => {
    const tabbed = tabbing;
    requestAnimationFrame(() => {
      if (document.activeElement === e.target) clear(e.target, tabbed);
    });
  });
}
