// The digit panel's 8 x 8 drawing pad (js/digits/panel.js shows what Python reads of it).
//
// Pixels are whole numbers from 0 (paper) to 16 (ink), the data set's scale. The pad is a
// WAI-ARIA grid of 64 cells with one tab stop: arrows move, Space or Enter paints the cell with
// the brush (ink 16, or 0 when erasing), 0-9 set its ink from none to full (9 is 16), Delete
// erases it. A mouse, pen or finger draws as the data set's digits were made: a round pen on a
// 32 x 32 bitmap, each pixel the number of inked bitmap points in its 4 x 4 block (0..16). So a
// stroke through a pixel's middle inks it fully and its neighbours not at all, one along a
// pixel's edge inks both halfway: strokes of the digits' width, not blobs (js/digits/ink.js).
//
// The data set's digits were scaled to the full height of their box and centred before they
// were counted; a drawing on the pad is any size, anywhere. So what the model reads of a pen
// drawing is its strokes fitted to the data set's box and drawn again with the same pen
// (ink.prepared), shown beside the pad ("The model reads"). Pixels set by keys or the eraser, a
// picked digit or a link are read as they are.
//
// While the pen is down each change goes to onStroke (the panel reads the drawing at once, and
// the pipeline may follow); when it lifts, or a key or a pick changes the pixels, the drawing
// goes to onChange (the pipeline is redrawn, and the link written).

import { BITMAP, FINE, MAX, SIDE, between, count, inkPoints, prepared } from "./ink.js";

const PATCH = 2; // the model's 2 x 2 patches: a 4 x 4 grid of 16 patch tokens
// A pixel set to v from outside the pen (a key, a picked digit, a link) inks its v points
// nearest its middle, so a pen stroke across it later adds to what is shown.
const FILL_ORDER = Array.from({ length: FINE * FINE }, (_, k) => k).sort((a, b) => {
  const d = (k) => Math.hypot((k >> 2) - 1.5, (k & 3) - 1.5);
  return d(a) - d(b) || a - b;
});
// A key 0-9 sets this much ink: 0, 2, 4, 5, 7, 9, 11, 12, 14, 16.
const KEY_INK = (n) => Math.round((n * MAX) / 9);

export class DigitPad {
  // host: the pad's element; onStroke(pixels: number[64], t0) for each change while the pen is
  // down, onChange(pixels, t0) once a change is complete (the pen lifted, a key)
  constructor(host, overlay, { onStroke, onChange }) {
    this.host = host;
    this.onStroke = onStroke;
    this.onChange = onChange;
    this.pixels = new Array(SIDE * SIDE).fill(0);
    this.bitmap = new Uint8Array(BITMAP * BITMAP); // the pen's ink (see the top of this file)
    // The pen's strokes since the pad was last set (each a list of [row, column] positions), or
    // null once a key or the eraser changed a pixel: then the pixels are read as they are.
    this.strokes = [];
    this.strokeChanged = false; // whether the stroke under way changed a pixel
    this.shown = null; // the model's pixels last handed to onStroke (null once the pad is set)
    this.erasing = false;
    this.active = 0; // the cell in the tab order
    this.last = null; // the pointer's last position while drawing, in pixels
    this.cells = [];
    host.setAttribute("role", "grid");
    for (let r = 0; r < SIDE; r++) {
      const row = document.createElement("div");
      row.setAttribute("role", "row");
      row.className = "pad-row";
      for (let c = 0; c < SIDE; c++) {
        const cell = document.createElement("div");
        cell.setAttribute("role", "gridcell");
        cell.className = "pad-cell";
        cell.tabIndex = r * SIDE + c === this.active ? 0 : -1;
        cell.dataset.r = String(r);
        cell.dataset.c = String(c);
        row.append(cell);
        this.cells.push(cell);
      }
      host.append(row);
    }
    this.patches = [];
    for (let p = 0; p < (SIDE / PATCH) ** 2; p++) {
      const patch = document.createElement("div");
      patch.className = "pad-patch";
      overlay.append(patch);
      this.patches.push(patch);
    }
    this.paintAll();
    host.addEventListener("pointerdown", (e) => this.down(e));
    host.addEventListener("pointermove", (e) => this.move(e));
    host.addEventListener("pointerup", () => this.up());
    host.addEventListener("pointercancel", () => this.up());
    host.addEventListener("keydown", (e) => this.key(e));
    host.addEventListener("focusin", (e) => {
      const i = this.cells.indexOf(e.target);
      if (i >= 0) this.setActive(i);
    });
  }

  // ---- what is shown -----------------------------------------------------------------------

  set(pixels) {
    this.shown = null;
    this.pixels = Array.from(pixels, (v) => Math.max(0, Math.min(MAX, Math.round(v))));
    this.pixels.forEach((v, i) => this.fill(i, v));
    this.strokes = this.pixels.some((v) => v) ? null : []; // an empty pad starts a pen drawing
    this.paintAll();
  }

  // The 64 pixels the model reads: a pen drawing prepared as the data set's digits were (see the
  // top of this file), anything else as it is.
  modelPixels() {
    return this.strokes ? prepared(this.strokes) : this.pixels.slice();
  }

  // Pixel i's block of the bitmap holds v points, those nearest its middle.
  fill(i, v) {
    const r0 = Math.floor(i / SIDE) * FINE;
    const c0 = (i % SIDE) * FINE;
    FILL_ORDER.forEach((k, n) => { this.bitmap[(r0 + (k >> 2)) * BITMAP + c0 + (k & 3)] = n < v ? 1 : 0; });
  }

  paintAll() { for (let i = 0; i < this.cells.length; i++) this.paint(i); }

  paint(i) {
    const v = this.pixels[i];
    const cell = this.cells[i];
    const shade = Math.round(255 * (1 - v / MAX));
    cell.style.backgroundColor = `rgb(${shade}, ${shade}, ${shade})`;
    cell.dataset.value = String(v);
    cell.setAttribute("aria-label", `pixel ${cell.dataset.r},${cell.dataset.c}: ${v}`);
  }

  // The CLS token's attention to each patch (16 values, row-major over the 4 x 4 patches), or
  // null: drawn as an orange wash whose strength is the share of the largest.
  attention(values) {
    const top = values ? Math.max(...values) : 0;
    this.patches.forEach((patch, p) => {
      const a = values ? values[p] : 0;
      patch.dataset.attention = values ? String(a) : "";
      patch.style.opacity = top > 0 ? String((0.5 * a) / top) : "0"; // the ink stays readable
      patch.title = values ? `patch ${Math.floor(p / 4)},${p % 4}: attention ${a.toFixed(3)}` : "";
    });
  }

  // ---- drawing with a pointer -----------------------------------------------------------------

  at(e) {
    const box = this.host.getBoundingClientRect();
    return [((e.clientY - box.top) / box.height) * SIDE, ((e.clientX - box.left) / box.width) * SIDE];
  }

  down(e) {
    if (e.button !== undefined && e.button > 0) return;
    e.preventDefault();
    this.host.setPointerCapture && this.host.setPointerCapture(e.pointerId);
    this.last = this.at(e);
    this.strokeChanged = false;
    if (this.erasing) this.strokes = null;
    else if (this.strokes) this.strokes.push([this.last]);
    this.stroke([this.last], performance.now());
  }

  move(e) {
    if (!this.last) return;
    const to = this.at(e);
    const points = between(this.last, to); // fast strokes leave gaps between events
    this.last = to;
    if (this.strokes && this.strokes.length) this.strokes[this.strokes.length - 1].push(to);
    this.stroke(points, performance.now());
  }

  // The pen lifts: a stroke that changed the drawing is complete (its redraw is timed from here).
  up() {
    if (!this.last) return;
    this.last = null;
    if (this.strokeChanged) this.onChange(this.modelPixels(), performance.now());
    this.strokeChanged = false;
  }

  // Ink (or erase) the bitmap within the pen's radius of each point (in pixels: row, column).
  stroke(points, t0) {
    const touched = inkPoints(this.bitmap, points, this.erasing ? 0 : 1);
    let changed = false;
    for (const i of touched) {
      const v = count(this.bitmap, i);
      if (v !== this.pixels[i]) {
        this.pixels[i] = v;
        this.paint(i);
        changed = true;
      }
    }
    // a pen drawing is read fitted to its box: a stroke that only extends within its cells
    // changes the model's pixels too
    const model = this.modelPixels();
    const moved = this.shown !== null && model.some((v, i) => v !== this.shown[i]);
    if (!changed && !moved) return;
    this.strokeChanged = true;
    this.shown = model;
    this.onStroke(model, t0);
  }

  // ---- the keyboard ---------------------------------------------------------------------------

  setActive(i) {
    this.cells[this.active].tabIndex = -1;
    this.active = i;
    this.cells[i].tabIndex = 0;
  }

  key(e) {
    const i = this.cells.indexOf(e.target);
    if (i < 0) return;
    const r = Math.floor(i / SIDE);
    const c = i % SIDE;
    const move = { ArrowUp: [r - 1, c], ArrowDown: [r + 1, c], ArrowLeft: [r, c - 1], ArrowRight: [r, c + 1],
                   Home: [r, 0], End: [r, SIDE - 1] }[e.key];
    let value = null;
    if (move) {
      const [tr, tc] = move;
      if (tr >= 0 && tc >= 0 && tr < SIDE && tc < SIDE) {
        this.setActive(tr * SIDE + tc);
        this.cells[tr * SIDE + tc].focus();
      }
    } else if (e.key === " " || e.key === "Enter") value = this.erasing ? 0 : MAX;
    else if (/^[0-9]$/.test(e.key)) value = KEY_INK(Number(e.key));
    else if (e.key === "Delete" || e.key === "Backspace") value = 0;
    else return;
    e.preventDefault();
    if (value !== null && value !== this.pixels[i]) {
      this.pixels[i] = value;
      this.fill(i, value);
      this.paint(i);
      this.strokes = null; // a pixel set by hand: the drawing is read as it is from now on
      this.onChange(this.pixels.slice(), performance.now());
    }
  }
}

// One request per update, never a queue: a change waits for the next animation frame, and while
// Python is still answering the previous one, only the newest pixels are kept and sent after it.
// onSettled(settled): false once a change waits, true once the newest one is on screen.
