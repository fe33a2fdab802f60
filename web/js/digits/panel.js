// The digit panel: an 8 x 8 drawing pad, the held-out digits to pick from, the prediction and
// the CLS token's attention over the drawing. Python does the work (pycore/explorer/digits/mode.py):
// this file only collects pixels and shows what the answers say (js/protocol.js: Answer, its "digit").

import { component } from "../page/components.js";
import { DigitPad } from "./pad.js";
import { setData, setText } from "../page/dom.js";
import { MAX, SIDE } from "./ink.js";
import { PANEL_IDS } from "../shared.js";
import { calmly, RESULT_TURN } from "../page/announce.js";
import { figureMenu, hideFigureMenu } from "../figure/menu.js";

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
let send = null; // (request, t0) -> promise: the page's, once Python is ready (connect)
let call = null; // request -> promise of the answer, drawing nothing (connect)
// What a request says of the equations (js/panels/text.js), and the panels out of view
// (js/page/offscreen.js).
let equationsLater = () => undefined;
let laterSections = () => [];
// While the pen is down each change asks only for the tiny ViT's reading (digit_preview: the
// top 3 and the attention; the newest drawing, at most one request a frame). While the pipeline
// shows one drawn digit already, it follows too: "digit" requests that redraw every stage, one
// at a time, each with the newest drawing, their link left for the pen's lift (as a scrubbed
// number's). From any other state it waits for the lift: the new state's sizes would move the
// page, and the pad under the pen. Once the pen lifts (or a key, a pick, Clear changes the
// pixels) one "digit" request draws the drawing and writes the link.
// <section id="digit" data-drawing>: "pending" while the pipeline is behind the drawing,
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
  const request = { op: "digit", images: [imageRows(pixels)], equations: equationsLater() };
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
// <section id="digit" data-preview-ms data-previews>: the milliseconds from the change to
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
const sayReading = calmly("digit-said", { turn: RESULT_TURN, rank: 1 });
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
  figureMenu($("digit-top")); // "Download figure" (js/figure/menu.js)
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

// The panel's controls, once Python is ready (js/app.js: connect): page.send(request, t0)
// draws the answer, page.call(request) asks without drawing; page.equationsLater() is a request's
// "equations" and page.laterSections() the sections whose panels are out of view.
export function connect(page) {
  ({ send, call, equationsLater, laterSections } = page);
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

/** @param {import("../protocol.js").Answer["digit"]} d the answer's "digit" section */
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
