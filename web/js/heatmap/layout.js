// A heatmap's figure as Plotly lays it out, apart from its values: its size for its rows and
// the page's text size, its title wrapped to its width, its axes, and the compact and bare
// figures of the embed and the walk-through on a small screen. js/heatmap/draw.js draws it,
// js/figure/print.js lays it out again for paper (through draw.js's layoutAt).

import { look, scaleOf } from "./style.js";
import { allShapes } from "./shapes.js";

const COARSE = window.matchMedia ? window.matchMedia("(pointer: coarse)") : { matches: false };

// Tick labels are never hidden for passing the figure's edge (the margins grow to hold them):
// Plotly's default check ("hide past div") measures every label once per label, a layout of the
// page each time, tens of ms per redraw of a figure.
export const TICK_LABELS_STAY = "allow";

function axis(title, n, colour) {
  const a = { title: { text: title, standoff: 6 }, zeroline: false, showgrid: false, fixedrange: false,
              automargin: true, color: colour, ticklabeloverflow: TICK_LABELS_STAY };
  if (n <= 24) a.dtick = 1;
  return a;
}

// Plotly never wraps a title: break a long one at spaces so that it fits the plot's width, each
// line measured in the title's font (a canvas's measureText: an estimate per character cut
// "h_hat = LayerNorm(h_cls) (B × D)" in Firefox, whose glyphs are wider than Chromium's), clear
// of the "Download figure" button at its right (js/figure/menu.js: 28 px and a margin, 44 px on
// a touch screen, whose figures have a title band that much taller: MENU_BAND); a figure whose
// width changes is drawn again (js/heatmap/draw.js: widths). A word wider than the room stays whole, and so does
// a shape in parentheses, "(B × D)" (WebKit's wider text left "(B" and "× D)" on two lines).
const MENU_ROOM = COARSE.matches ? 50 : 34;
const MENU_BAND = COARSE.matches ? 14 : 0;
const FONT_FAMILY = "system-ui, sans-serif"; // the figures' text (layout.font)
let measurer = null;
function titleWidth(text, size) {
  if (!measurer) measurer = document.createElement("canvas").getContext("2d");
  measurer.font = `${size}px ${FONT_FAMILY}`;
  return measurer.measureText(text).width;
}
export function wrapTitle(text, width, size) {
  const room = width - 12 - MENU_ROOM;
  const lines = [];
  let line = "";
  for (const word of text.split(/ +(?![^(]*\))/)) { // not at a space inside (...)
    const longer = line ? `${line} ${word}` : word;
    if (line && titleWidth(longer, size) > room) {
      lines.push(line);
      line = word;
    } else {
      line = longer;
    }
  }
  lines.push(line);
  return { text: lines.join("<br>"), lines: lines.length };
}

// Compact figures (fewer pixels a row, no axis titles): in the embed, and while the walk-through
// is docked in a short window (200 % or 300 % zoom: js/panels/walkthrough.js draws them again as it
// docks and undocks), where a step's figures and its equation must share 540 px or less.
// On a phone, while it runs, the figures are two by two above its panel: compact too.
const SHORT = window.matchMedia ? window.matchMedia("(max-height: 620px)") : { matches: false };
const NARROW = window.matchMedia ? window.matchMedia("(max-width: 600px)") : { matches: false };
export function compactFigures() {
  const root = document.documentElement;
  return root.classList.contains("embed") || (root.dataset.walkDock === "true" && SHORT.matches) ||
    (root.dataset.walking === "true" && NARROW.matches);
}
// Bare figures (compact, and no title nor colour key): while the walk-through runs on a phone,
// or docked in a window 420 px tall or less (300 % zoom of a 1080p screen), where two rows of
// figures and the step's equation share a window too small for more. The stages' headings name
// the figures there; the equation gives the numbers. Never on paper.
const SHORTEST = window.matchMedia ? window.matchMedia("(max-height: 420px)") : { matches: false };
export function bareFigures() {
  const root = document.documentElement;
  if (root.dataset.walking !== "true" || root.classList.contains("printing")) return false;
  return NARROW.matches || (root.dataset.walkDock === "true" && SHORTEST.matches);
}
// A figure's title wrapped for `width`, or none for a bare figure.
export function titleOf(text, width, size) {
  return bareFigures() ? { text: "", lines: 1 } : wrapTitle(text, width, size);
}

// The figure Plotly draws for `spec` and `m` as the heatmap `id`, `width` px wide (the figure's
// box as last measured: js/heatmap/draw.js's widthOf; 0 if not yet known): its invisible trace
// (z not yet in it: see drawHeatmap), its layout, the width the title was wrapped for, and
// whether it is compact.
export function figureParts(id, spec, m, width) {
  const { rows, cols } = m;
  const compact = compactFigures();
  const bare = compact && bareFigures();
  // z is given to the trace once Plotly has taken it (drawHeatmap): Plotly's colour clean-up walks
  // every object in a trace, and would take each typed-array row of z for one (768 rows of
  // 1,000 keys made into strings at ViT-B/16 size, 80 ms a draw). Plotly draws nothing from it.
  const trace = {
    type: "heatmap",
    zmin: spec.zmin,
    zmax: spec.zmax,
    colorscale: scaleOf(spec.scale),
    // z for the page's interface: the canvas under the plot is what is seen
    visible: false, // and so never hovered by Plotly: the page's own label is (hoverOver)
    showscale: false, // the colour key is the page's own (see colourKey)
  };
  const style = look();
  const cell = rows <= 8 ? (compact ? 19 : 34) : rows <= 32 ? (compact ? 8 : 16) : 0;
  // a bare figure: its cells and their ticks only (the title's 22 px and the minimum gone; its
  // columns' numbers in its bottom margin, which Plotly's own 8 px cut off)
  const frame = bare ? 40 : compact ? 70 : 90;
  const height = cell ? Math.max(bare ? 60 : compact ? 96 : 150, frame + rows * cell) : (compact ? 200 : 340);
  const title = titleOf(spec.title, width || 600, style.title);
  // Plotly sets lines 1.3 em apart and centres a multi-line title on its first line's place:
  // half of the extra lines go above it unless the pad makes room.
  const extra = (title.lines - 1) * Math.ceil(style.title * 1.3);
  // Plotly places the title by its own estimate of the text's height; Firefox's text box is
  // about 0.3 em taller, which large titles' 4 px pad does not cover (the box stood 1.4 px above
  // the figure at Large text): larger titles get more room above them, and the plot moves down.
  const above = bare ? 0 : Math.ceil(Math.max(0, style.title - 13) / 2);
  // a compact figure's title band: one line of its title and 5 px (22 px at 13 px; at Large
  // text's 18 px, 29: 22 left a third line of "(B x D)" on the outline of the plot's top row)
  const band = bare ? 4 : Math.ceil(style.title * 1.3) + 5;
  const layout = {
    title: { text: title.text, font: { size: style.title, color: style.ink }, x: 0, xanchor: "left",
             y: 1, yref: "container", yanchor: "top", pad: { t: 4 + above + Math.ceil(extra / 2) } },
    height: Math.round(height * (style.size / 11)) + extra + above + (compact ? Math.max(0, band - 22) : MENU_BAND),
    margin: compact ? { l: 8, r: 6, t: band + extra + above, b: bare ? 20 : 8 }
      : { l: 10, r: 10, t: 30 + extra + above + MENU_BAND, b: 10 },
    // In the compact embed the axes keep their ticks but not their titles: a 600-pixel frame has
    // no room for both, and the plot's title and the hover say what rows and columns are.
    xaxis: Object.assign(axis(compact ? "" : spec.x_title, cols, style.ink),
                         { range: [-0.5, cols - 0.5], autorange: false },
                         // some classes only: each column's tick is its class's index
                         Array.isArray(spec.x_labels) ? { tickvals: spec.x_labels.map((_, j) => j),
                                                          ticktext: spec.x_labels.map(String) } : {}),
    yaxis: Object.assign(axis(compact ? "" : spec.y_title, rows, style.ink),
                         { range: [rows - 0.5, -0.5], autorange: false }),
    // On a touch screen a swipe scrolls the page: no dragging in the plot (css/pipeline.css too).
    dragmode: COARSE.matches ? false : "zoom",
    shapes: allShapes(id, spec, m),
    // A fixed uirevision keeps the user's zoom across updates; it changes with the shape, so a
    // resize starts from the full view.
    uirevision: `${id}:${rows}x${cols}`,
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    font: { family: FONT_FAMILY, size: style.size, color: style.ink },
  };
  return { trace, layout, width, compact };
}

