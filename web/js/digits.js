// The real-ViT panel: an 8 x 8 drawing pad, the held-out digits to pick from, the prediction and
// the CLS token's attention over the drawing. Python does the work (pycore/explorer/digits.py):
// this file only collects pixels and shows what the answers say (js/protocol.js: Answer, its "digit").
//
// Pixels are whole numbers from 0 (paper) to 16 (ink), the data set's scale. The pad is a
// WAI-ARIA grid of 64 cells with one tab stop: arrows move, Space or Enter paints the cell with
// the brush (ink 16, or 0 when erasing), 0-9 set its ink from none to full (9 is 16), Delete
// erases it. A mouse, pen or finger draws as the data set's digits were made: a round pen on a
// 32 x 32 bitmap, each pixel the number of inked bitmap points in its 4 x 4 block (0..16). So a
// stroke through a pixel's middle inks it fully and its neighbours not at all, one along a
// pixel's edge inks both halfway: strokes of the digits' width, not blobs (js/ink.js).
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

import { component } from "./components.js";
import { setData, setText } from "./dom.js";
import { BITMAP, FINE, MAX, SIDE, between, count, inkPoints, prepared } from "./ink.js";
import { PANEL_IDS } from "./shared.js";
import { calmly } from "./announce.js";
import { figureMenu, hideFigureMenu } from "./figure-menu.js";

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
        cell.dataset.r = r;
        cell.dataset.c = c;
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
export class Debounced {
  constructor(send, onSettled) {
    this.send = send; // async (pixels, t0) => void
    this.onSettled = onSettled || (() => {});
    this.next = null;
    this.frame = 0;
    this.busy = false;
  }

  push(pixels, t0) {
    this.onSettled(false);
    this.next = { pixels, t0: this.next ? this.next.t0 : t0 };
    if (!this.frame && !this.busy) this.frame = requestAnimationFrame(() => this.flush());
  }

  // Drop the change waiting for its frame (one being answered still ends as it would).
  cancel() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.next = null;
  }

  async flush() {
    this.frame = 0;
    if (!this.next || this.busy) return;
    const { pixels, t0 } = this.next;
    this.next = null;
    this.busy = true;
    try {
      await this.send(pixels, t0);
    } finally {
      this.busy = false;
      if (this.next) this.frame = requestAnimationFrame(() => this.flush());
      else this.onSettled(true);
    }
  }
}

// The held-out digits the build wrote (digits.json), as buttons with a picture of each.
export async function loadGallery(host, note, onPick) {
  let data;
  try {
    const response = await fetch("digits.json");
    data = response.ok ? await response.json() : { available: false, reason: `digits.json: HTTP ${response.status}` };
  } catch (err) {
    data = { available: false, reason: String(err.message || err) };
  }
  if (!data.available) {
    note.textContent = `No held-out digits in this build (${data.reason}): draw your own.`;
    return;
  }
  note.textContent = `${data.digits.length} digits the model never saw in training (the first of each `
    + "digit in its held-out set). Pick one to see how the model reads it.";
  // One canvas draws every thumbnail; each is shown as a picture. Thirty canvases in the page
  // would be thirty composited layers (and thirty more for what overlaps them), which Chromium
  // re-examines on every frame, slowing each keystroke's first frame anywhere on the page.
  const canvas = document.createElement("canvas");
  canvas.width = SIDE;
  canvas.height = SIDE;
  const ctx = canvas.getContext("2d");
  const thumbnail = (pixels) => {
    const image = ctx.createImageData(SIDE, SIDE);
    pixels.forEach((v, i) => {
      const shade = Math.round(255 * (1 - v / MAX));
      image.data.set([shade, shade, shade, 255], 4 * i);
    });
    ctx.putImageData(image, 0, 0);
    const img = document.createElement("img");
    img.alt = ""; // the button's label says which digit it is
    img.width = SIDE;
    img.height = SIDE;
    img.src = canvas.toDataURL();
    return img;
  };
  const buttons = data.digits.map((d) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "digit-thumb";
    button.setAttribute("aria-label", `Held-out digit ${d.label} (image ${d.index} of the data set)`);
    button.dataset.index = String(d.index);
    button.dataset.label = String(d.label);
    const label = document.createElement("span");
    label.textContent = String(d.label);
    button.append(thumbnail(d.pixels), label);
    button.addEventListener("click", () => onPick(d, performance.now()));
    return button;
  });
  host.replaceChildren(...buttons);
}

// ---- the panel: the answer's "digit" section, and the pad's requests -------------------------

const $ = (id) => document.getElementById(id);
let send = null; // (request, t0) -> promise: the page's, once Python is ready (bindDigits)
let call = null; // request -> promise of the answer, drawing nothing (bindDigits)
// What a request says of the equations (js/panels.js), and the panels out of view
// (js/offscreen.js).
let stepsLater = () => undefined;
let laterSections = () => [];
// While the pen is down each change asks only for the tiny ViT's reading (digit_preview: the
// top 3 and the attention; the newest drawing, at most one request a frame). While the pipeline
// shows one drawn digit already, it follows too: "digit" requests that redraw every stage, one
// at a time, each with the newest drawing, their link left for the pen's lift (as a scrubbed
// number's). From any other state it waits for the lift: the new state's sizes would move the
// page, and the pad under the pen. Once the pen lifts (or a key, a pick, Clear changes the
// pixels) one "digit" request draws the drawing and writes the link.
// <section id="real-vit" data-drawing>: "pending" while the pipeline is behind the drawing,
// "done" once the newest drawing is drawn.
const reading = new Debounced((pixels, t0) => previewDigit(pixels, t0));
const drawing = new Debounced((pixels, t0) => sendDigit(pixels, t0),
                              (settled) => setData($(PANEL_IDS.digit), "drawing", settled ? "done" : "pending"));
const pad = new DigitPad($("digit-pad"), $("digit-attention-layer"), {
  onStroke: (pixels, t0) => {
    setData($(PANEL_IDS.digit), "drawing", "pending");
    showModelView(pixels);
    reading.push(pixels, t0);
    if (lastDigit && lastDigit.images && lastDigit.images.length === 1) drawing.push(pixels, t0);
  },
  onChange: (pixels, t0) => drawing.push(pixels, t0),
});
let lastDigit = null;

const imageRows = (pixels) => Array.from({ length: SIDE }, (_, r) => pixels.slice(SIDE * r, SIDE * r + SIDE));

async function sendDigit(pixels, t0, head) {
  if (!send) return; // before Python is ready the pad only draws
  const request = { op: "digit", images: [imageRows(pixels)], steps: stepsLater() };
  if (head) request.head = head;
  if (pad.last) { // the pen is down: the link, and the panels out of view, once it lifts
    request.link = "later";
    const later = laterSections().filter((name) => name !== "digit");
    if (later.length) request.later = later;
  }
  await send(request, t0);
  // an answer without a new digit section (the drawing came back to the state's) leaves the
  // reading of the stroke's last preview: show the state's again
  if (lastDigit && lastDigit.images && !behindThePen(lastDigit)) showReading(readingOf(lastDigit));
}

// Whether a digit section is of an earlier drawing than the one under the pen (answers to the
// "digit" requests that follow a stroke arrive after the pen has moved on): the image beside the
// pad and the reading then stay the newest drawing's, whose preview is on its way.
function behindThePen(d) {
  if (!pad.last || !pad.shown) return false;
  return d.images[0].some((v, i) => v !== pad.shown[i]);
}

// The reading of a drawing in progress, at once (the pipeline follows as fast as it is redrawn).
// <section id="real-vit" data-preview-ms data-previews>: the milliseconds from the change to
// its reading on screen, and how many readings were shown.
async function previewDigit(pixels, t0) {
  if (!call) return;
  const res = await call({ op: "digit_preview", images: [imageRows(pixels)] });
  if (!res.ok || !pad.last) return; // a refusal is said by the pen lift's request; so is a late reading
  showReading(res.digit_preview);
  const panel = $(PANEL_IDS.digit);
  setData(panel, "previewMs", (performance.now() - t0).toFixed(1));
  setData(panel, "previews", String(Number(panel.dataset.previews || 0) + 1));
}

// A digit section's reading of image 0 (the pad's), as digit_preview gives one.
const readingOf = (d) => ({ prediction: d.prediction, top: d.top, attention: d.attention[0] });

// The prediction line, the top 3 as bars, and the attention over the pad.
const sayReading = calmly("digit-said");
function showReading(r) {
  setText($("digit-prediction"), r.prediction);
  sayReading(r.prediction);
  const items = $("digit-top").children;
  for (let k = 0; k < items.length; k++) {
    const [name, p] = r.top[k] || ["", 0];
    const [label, bar, value] = items[k].children;
    setText(label, name);
    bar.firstElementChild.style.width = `${(100 * p).toFixed(1)}%`;
    setText(value, name ? p.toFixed(3) : "");
    items[k].hidden = !name;
  }
  figureMenu($("digit-top")); // "Download figure" (js/figure-menu.js)
  pad.attention(r.attention); // kept in data-attention; the wash is shown only when asked for
}

// The 8 x 8 image the model reads (the pad's drawing prepared, or as it is), beside the pad;
// its pixels in data-pixels.
function showModelView(pixels) {
  const img = $("digit-model-image");
  const canvas = document.createElement("canvas");
  canvas.width = SIDE;
  canvas.height = SIDE;
  const ctx = canvas.getContext("2d");
  const image = ctx.createImageData(SIDE, SIDE);
  (pixels || []).forEach((v, i) => {
    const shade = Math.round(255 * (1 - v / MAX));
    image.data.set([shade, shade, shade, 255], 4 * i);
  });
  if (!pixels) image.data.fill(255);
  ctx.putImageData(image, 0, 0);
  img.src = canvas.toDataURL();
  setData(img, "pixels", pixels ? pixels.join(",") : "");
}

// The panel's controls, once Python is ready; sendRequest(request, t0) is the page's send,
// callPython(request) asks without drawing; views.stepsLater() is a request's "steps" and
// views.laterSections() the sections whose panels are out of view.
export function bindDigits(sendRequest, callPython, views) {
  send = sendRequest;
  call = callPython;
  ({ stepsLater, laterSections } = views);
  $("digit-erase").addEventListener("click", (e) => {
    pad.erasing = !pad.erasing;
    e.target.setAttribute("aria-pressed", String(pad.erasing));
  });
  $("digit-clear").addEventListener("click", () => {
    pad.set(new Array(SIDE * SIDE).fill(0));
    drawing.push(pad.modelPixels(), performance.now());
  });
  $("digit-trained").addEventListener("click", () => sendDigit(pad.modelPixels(), performance.now(), "trained"));
  $("digit-show-attention").addEventListener("change", () => showDigit(lastDigit));
  loadGallery($("digit-gallery"), $("digit-gallery-note"), (d, t0) => {
    pad.set(d.pixels);
    drawing.push(pad.modelPixels(), t0);
  });
}

/** @param {import("./protocol.js").Answer["digit"]} d the answer's "digit" section */
function showDigit(d) {
  lastDigit = d;
  const panel = $(PANEL_IDS.digit);
  const active = Boolean(d && d.images);
  setData(panel, "active", active ? "true" : "false");
  setData(panel, "lens", d && d.lens ? "true" : "false"); // a model file's hidden_cls: its lens
  const showAttention = $("digit-show-attention").checked;
  setData(panel, "showAttention", showAttention && active ? "true" : "false");
  // the Example menu says what the pipeline shows: the drawn digit's model, or not
  if (active) $("preset").value = "digit";
  else if ($("preset").value === "digit") $("preset").value = "link";
  if (!active) {
    pad.attention(null);
    showModelView(null);
    setText($("digit-prediction"), "(draw a digit or pick one)");
    for (const item of $("digit-top").children) item.hidden = true;
    hideFigureMenu($("digit-top"));
    setText($("digit-edits"), "");
    return;
  }
  // the pixels the state was computed from, unless the person is drawing newer ones (or they
  // are the pad's already: its pen bitmap stays as drawn)
  if (!drawing.next && !pad.last) {
    const read = pad.modelPixels();
    if (d.images[0].some((v, i) => v !== read[i])) pad.set(d.images[0]);
  }
  if (!behindThePen(d)) {
    showModelView(d.images[0]);
    showReading(readingOf(d));
  }
  const notes = [];
  if (d.images.length > 1) notes.push(`The pad shows image 0 of ${d.images.length}.`);
  const w = d.edits.W_head;
  if (w) notes.push(`W_head: ${w} weight${w === 1 ? "" : "s"} edited (Trained W_head puts them back).`);
  else if (w === null) notes.push("W_head is not the trained one.");
  const z = d.edits.encoder_output;
  if (z) notes.push(`z_L: ${z} value${z === 1 ? "" : "s"} edited (drawing again encodes anew).`);
  notes.push(`Encoded in ${d.encode_ms.toFixed(1)} ms per image by Python in this browser.`);
  setData(panel, "encodeMs", String(d.encode_ms));
  setText($("digit-edits"), notes.join(" "));
}

// A new session: an empty pad with the pen (not the eraser), the attention shown as the page
// opens with it, and no drawing waiting to be sent (the reset's answer draws the rest).
function resetPad() {
  drawing.cancel();
  reading.cancel();
  pad.last = null;
  pad.erasing = false;
  $("digit-erase").setAttribute("aria-pressed", "false");
  pad.setActive(0);
  pad.set(new Array(SIDE * SIDE).fill(0));
  const attention = $("digit-show-attention");
  attention.checked = attention.defaultChecked;
  lastDigit = null;
}

component("digit", { draw: (d) => { showDigit(d); }, reset: resetPad });
