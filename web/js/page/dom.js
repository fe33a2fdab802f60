// Writes to the page that happen on every answer, made only when they change something: a
// write, even of the same text, marks the page for layout, and Plotly measures the page as it
// draws, so each needless write before a redraw costs a relayout of the whole page.

// An element that holds one text node has that node's data changed: setting textContent would
// replace the node (hundreds of table cells in every Play round).
/**
 * @param {Element} el
 * @param {string} text
 */
export function setText(el, text) {
  const node = /** @type {Text} */ (el.firstChild);
  if (node && node.nodeType === Node.TEXT_NODE && node === el.lastChild) {
    if (node.data !== text) node.data = text;
  } else if (el.textContent !== text) {
    el.textContent = text;
  }
}

/**
 * @param {HTMLElement} el
 * @param {boolean} hidden
 */
export function setHidden(el, hidden) {
  if (el.hidden !== hidden) el.hidden = hidden;
}

/**
 * @param {HTMLElement | SVGElement} el
 * @param {string} key
 * @param {string} value
 */
export function setData(el, key, value) {
  if (el.dataset[key] !== value) el.dataset[key] = value;
}

// A responsive figure (Plotly's `responsive`) is sized to its element when the window is
// resized: Plotly then reads the element's height, not the layout's, and an element of no height
// of its own is only as tall as its CSS minimum (every heatmap dropped to 120 px on a resize).
// The element is given the figure's height, so that a resize keeps it; the width follows the
// page's layout.
/**
 * @param {HTMLElement} el
 * @param {number} [height] in px; none: nothing changes
 */
export function holdHeight(el, height) {
  if (!height) return;
  const css = `${height}px`;
  if (el.style.height !== css) el.style.height = css;
}

/**
 * @param {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} input
 * @param {string} value
 */
export function setValue(input, value) {
  if (input.value !== value) input.value = value;
}

// The page's text colour (--ink, which the colour scheme sets), for what Plotly draws. Read
// once per scheme, not per figure: reading a computed style makes the browser restyle the page
// first, and in the middle of a redraw (Plotly has just changed the document) that would be a
// restyle in every edit. Callbacks given to onColourScheme run once the old colour is dropped,
// so what they draw reads the new one.
// Forced colours (Windows High Contrast) are a scheme too: the figures keep their own light
// paper there (css/forced-colours.css), so their text is dark whatever the system's colours are.
const DARK = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
const FORCED = window.matchMedia ? window.matchMedia("(forced-colors: active)") : null;
const FORCED_INK = "#111111";
let ink = null;
if (DARK) DARK.addEventListener("change", () => { ink = null; });

/** @returns {string} */
export function inkColour() {
  if (ink === null) ink = getComputedStyle(document.documentElement).getPropertyValue("--ink").trim() || "#1d2330";
  return FORCED && FORCED.matches ? FORCED_INK : ink;
}

// Another colour of the page's scheme (--line, ...), read once per scheme like the ink.
const colours = new Map();
if (DARK) DARK.addEventListener("change", () => colours.clear());

/**
 * @param {string} name a custom property of the page ("--line")
 * @param {string} fallback where the page does not set it
 * @returns {string}
 */
export function cssColour(name, fallback) {
  if (!colours.has(name)) {
    colours.set(name, getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback);
  }
  return colours.get(name);
}

/** @param {() => void} callback */
export function onColourScheme(callback) {
  if (DARK) DARK.addEventListener("change", () => callback());
  if (FORCED) FORCED.addEventListener("change", () => callback());
}

// An SVG element with its attributes (and text): the charts and the figure menus draw with it.
/**
 * @param {string} tag
 * @param {Object<string, string | number>} attrs
 * @param {string} [text]
 * @returns {SVGElement}
 */
export function svg(tag, attrs, text) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}
