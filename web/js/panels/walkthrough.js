// The lecture walk-through: Back / Next (and a presenter's clicker: Page Down / Page Up, the
// arrows, Space, from anywhere on the page while it is on) step one sample through the head: extract CLS, mean, variance, normalize, one dot product, all logits,
// prediction. Every number, equation and outlined cell comes from Python (the answer's "walk",
// pycore/explorer/panels/walkthrough.py); this file only places them and asks for another step.
// Its position is the state's options walk / sample / walk_class, so the link carries it.

import { component } from "../page/components.js";
import { highlight } from "../heatmap/shapes.js";
import { redrawAll } from "../heatmap/draw.js";
import { bareFigures, compactFigures } from "../heatmap/layout.js";
import { labelsNow, typeset } from "./text.js";
import { setData, setHidden, setText } from "../page/dom.js";
import { HEATMAP_IDS, PANEL_IDS } from "../shared.js";

// The heatmaps a step may outline: every one of them is cleared or outlined at each step.
const FIGURES = ["encoder", "cls", "normalized", "y", "W_head", "bias", "logits"].map((name) => HEATMAP_IDS[name]);
// Keys that move the walk while it is on, wherever the focus is, except where the key already
// means something: typing in a cell or a field, a select, the drawing pad, the logits heatmap's
// arrows (js/panels/linked.js), a button's or a summary's Space. PageUp/PageDown are what presentation
// clickers send; some send the arrows or Space.
// From anywhere on the page, the keys a presenter's clicker sends (Page Down / Up, or the
// arrows → / ←) move the step; ↓, ↑ and Space scroll the page as usual, and move the step only
// inside the walk-through's panel (a keyboard user scrolls with them).
const NEXT = new Set(["ArrowRight", "PageDown"]);
const BACK = new Set(["ArrowLeft", "PageUp"]);
const NEXT_INSIDE = new Set(["ArrowDown", " "]);
const BACK_INSIDE = new Set(["ArrowUp"]);
const OWN_KEYS = `input, select, textarea, [contenteditable], dialog, .digit-pad, #${HEATMAP_IDS.logits}`;
// Where the panel goes while the walk is on (html[data-walk-dock], css/walkthrough.css): docked at the
// window's right, full height, beside the pipeline's figures, on a projector with Large text and
// in any short landscape window (a 1080p screen at 200 % or 300 % zoom, a phone held sideways),
// where a panel pinned to the bottom would leave no room for the figures; pinned to the bottom
// otherwise.
const WIDE = window.matchMedia("(min-width: 1000px)");
const SHORT = window.matchMedia("(orientation: landscape) and (max-height: 620px) and (min-width: 560px)");
// compact figures (js/heatmap/layout.js) where the window is short or narrow
const SHORTER = window.matchMedia("(max-height: 620px)");
const NARROW = window.matchMedia("(max-width: 600px)");
const SHORTEST = window.matchMedia("(max-height: 420px)"); // bare figures (js/heatmap/layout.js)

class WalkThrough {
  /**
   * @param {HTMLElement} root the walk-through's section (#walk)
   * @param {(name: string, value: *) => Promise<*>} option sends one "option" request
   */
  constructor(root, option) {
    this.root = root;
    this.option = option;
    this.walk = null; // the answer's "walk" now shown (null: off)
    this.moved = false; // the last request was the walk's own: bring its figure into view
    const $ = /** @type {ById} */ ((id) => document.getElementById(id));
    this.el = {
      start: $("walk-start"), back: $("walk-back"), next: $("walk-next"), position: $("walk-position"),
      sample: $("walk-sample"), cls: $("walk-class"), progress: $("walk-progress"), title: $("walk-title"),
      math: $("walk-math"), note: $("walk-note"), notes: $("walk-notes"), said: $("walk-said"),
    };
    this.bind();
  }

  bind() {
    const { start, back, next, sample, cls } = this.el;
    start.addEventListener("click", () => {
      if (this.walk) this.go(null);
      else this.go(0).then(() => this.el.next.focus());
    });
    // the toolbar's way in, above the pipeline: starts it (or ends it) from the top of the page
    document.getElementById("walk-open").addEventListener("click", () => start.click());
    back.addEventListener("click", () => this.step(-1));
    next.addEventListener("click", () => this.step(1));
    sample.addEventListener("change", () => this.request("sample", Number(sample.value)));
    cls.addEventListener("change", () => this.request("walk_class", cls.value === "" ? null : Number(cls.value)));
    document.addEventListener("keydown", (e) => this.key(e));
    const place = () => this.place();
    WIDE.addEventListener("change", place);
    SHORT.addEventListener("change", place);
    SHORTER.addEventListener("change", place);
    NARROW.addEventListener("change", place);
    SHORTEST.addEventListener("change", place);
    // The page's layout changed under the walk (docked or undocked in projector mode, large
    // text, a resize): the figures follow the pipeline's new width (Plotly resizes its responsive
    // figures on a window's resize only), then the step's cells come into view again. Not when
    // only the pipeline's height changes (a focused figure's terms shown below it): the page
    // stays where the reader, or the Tab key, took it.
    let timer = 0;
    let width = 0;
    // <aside id="walk" data-settling>: "true" while the figures wait for the layout to settle
    const again = () => {
      clearTimeout(timer);
      if (!this.walk) return;
      setData(this.root, "settling", "true");
      timer = setTimeout(() => {
        setData(this.root, "settling", "false");
        if (this.walk) this.reveal(this.walk);
      }, 300);
    };
    new MutationObserver(() => { place(); again(); })
      .observe(document.documentElement, { attributeFilter: ["class"] });
    new ResizeObserver(([entry]) => {
      const now = Math.round(entry.contentRect.width);
      const changed = Boolean(width) && now !== width;
      width = now;
      if (!changed) return;
      window.dispatchEvent(new Event("resize"));
      again();
    }).observe(document.getElementById("pipeline"));
  }

  // Docked or pinned to the bottom, as the window and the text size are now.
  place() {
    const root = document.documentElement;
    const dock = Boolean(this.walk) && (SHORT.matches || (WIDE.matches && root.classList.contains("large")));
    setData(root, "walkDock", dock ? "true" : "false");
    const compact = `${compactFigures()} ${bareFigures()}`;
    if (this.compact !== undefined && compact !== this.compact) redrawAll();
    this.compact = compact;
  }

  key(e) {
    if (!this.walk || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const at = e.target instanceof Element ? e.target : document.body;
    if (at.closest(OWN_KEYS)) return;
    if (e.key === " " && at.closest("button, summary, a")) return; // Space presses it
    const inside = this.root.contains(at);
    let to = null;
    if (NEXT.has(e.key) || (inside && NEXT_INSIDE.has(e.key))) {
      to = e.shiftKey && e.key === " " ? this.walk.step - 1 : this.walk.step + 1;
    } else if (BACK.has(e.key) || (inside && BACK_INSIDE.has(e.key))) to = this.walk.step - 1;
    else if (e.key === "Home" && inside) to = 0;
    else if (e.key === "End" && inside) to = this.walk.count - 1;
    if (to === null) return;
    e.preventDefault(); // the page does not scroll: the walk does
    if (to >= 0 && to < this.walk.count && to !== this.walk.step) this.go(to);
  }

  step(delta) {
    if (!this.walk) return;
    const to = this.walk.step + delta;
    if (to >= 0 && to < this.walk.count) this.go(to);
  }

  go(step) { return this.request("walk", step); }

  request(name, value) {
    this.moved = true;
    return Promise.resolve(this.option(name, value));
  }

  /**
   * Show the answer's "walk" (null: the walk-through is off).
   * @param {?import("../protocol.js").Walk} w
   */
  show(w) {
    const was = this.walk;
    this.walk = w;
    const active = Boolean(w);
    setData(this.root, "active", active ? "true" : "false");
    setData(document.documentElement, "walking", active ? "true" : "false");
    this.place();
    this.el.start.setAttribute("aria-pressed", String(active));
    setText(this.el.start, active ? "End the walk-through" : "Start the walk-through");
    document.getElementById("walk-open").setAttribute("aria-pressed", String(active));
    // Started or ended: the pipeline's columns change (a phone shows its figures two by two while
    // it runs) though the window's width does not; Plotly sizes its figures to theirs on a
    // window's resize only.
    if (Boolean(was) !== active) requestAnimationFrame(() => window.dispatchEvent(new Event("resize")));
    const outlined = FIGURES.map((id) => highlight(id, (w && w.highlights[id]) || []));
    if (!w) {
      this.moved = false;
      setText(this.el.said, ""); // what was said is not left to be found once the walk has ended
      return Promise.all(outlined);
    }
    const { back, next, position, sample, cls, progress, title, math, note, notes } = this.el;
    // aria-disabled, not disabled: a disabled button loses the focus, and with it the arrow keys
    back.setAttribute("aria-disabled", String(w.step === 0));
    next.setAttribute("aria-disabled", String(w.step === w.count - 1));
    setText(position, `Step ${w.step + 1} of ${w.count}`);
    setData(this.root, "step", String(w.step));
    const labels = labelsNow();
    fill(sample, labels.samples.map((label, i) => [String(i), label]), String(w.sample));
    fill(cls, [["", `predicted (${labels.classes[w.predicted_class] || "class " + w.predicted_class})`]]
      .concat(labels.classes.map((label, i) => [String(i), label])),
    w.class_chosen ? String(w.class) : "");
    this.progress(progress, w);
    setText(title, w.title);
    setText(note, w.note || "");
    notes.replaceChildren(...w.notes.map((text) => {
      const li = document.createElement("li");
      li.textContent = text;
      return li;
    }));
    setHidden(notes, !w.notes.length);
    const drawn = typeset(math, w.tex);
    // a new step is said whole, once: its title (which says where it is) and its note (the
    // equation is there to read, MathML, with the focus kept on Next)
    if (!was || was.step !== w.step) setText(this.el.said, `${w.title}. ${w.note || ""}`.trim());
    const moved = this.moved || !was || was.step !== w.step;
    this.moved = false;
    return Promise.all(outlined.concat([drawn])).then(() => { if (moved) this.reveal(w); });
  }

  // The step's names as buttons: where the walk is, and a way to jump.
  progress(list, w) {
    if (list.children.length !== w.count) {
      list.replaceChildren(...w.names.map((name, k) => {
        const li = document.createElement("li");
        const button = document.createElement("button");
        button.type = "button";
        // where the panel is short, only the number shows (css/walkthrough.css); the name is still
        // the button's, for a screen reader and as its tooltip
        const number = document.createElement("span");
        number.textContent = String(k + 1);
        const rest = document.createElement("span");
        rest.className = "walk-step-name";
        rest.textContent = `. ${name}`;
        button.append(number, rest);
        button.title = `${k + 1}. ${name}`;
        button.addEventListener("click", () => this.go(k));
        li.append(button);
        return li;
      }));
    }
    [...list.querySelectorAll("button")].forEach((button, k) => {
      if (k === w.step) button.setAttribute("aria-current", "step");
      else button.removeAttribute("aria-current");
    });
  }

  // Bring every figure the step outlines into view at once, beside or above the panel (docked
  // at the window's right in projector mode, pinned to its bottom otherwise): the page scrolls
  // as little as it can; if they cannot all fit, the first one's top goes to the top.
  reveal(w) {
    setData(this.root, "revealed", String(w.step)); // <aside id="walk" data-revealed>: the step last revealed
    const shown = FIGURES.filter((id) => id in w.highlights)
      .map((id) => document.getElementById(id))
      .filter((el) => el && el.offsetParent !== null);
    if (!shown.length) return;
    const panel = this.root.getBoundingClientRect();
    const docked = document.documentElement.dataset.walkDock === "true";
    const bottom = docked ? innerHeight : Math.min(innerHeight, panel.top);
    const boxes = shown.map((el) => el.closest(".plot-box").getBoundingClientRect());
    const end = Math.max(...boxes.map((b) => b.bottom)) + 4;
    // with their stages' headings if those fit too
    const headed = Math.min(...shown.map((el) => el.closest(".stage, .panel").getBoundingClientRect().top)) - 6;
    const top = end - headed <= bottom ? headed : Math.min(...boxes.map((b) => b.top)) - 6;
    let by = 0;
    if (end - top > bottom || top < 0) by = top;
    else if (end > bottom) by = end - bottom;
    if (Math.abs(by) >= 1) window.scrollBy({ top: by, left: 0, behavior: "instant" });
  }
}

// A select's options from [[value, label]], rebuilt only when they change.
function fill(select, items, value) {
  const key = items.map(([v, l]) => `${v}:${l}`).join("|");
  if (select.dataset.items !== key) {
    select.replaceChildren(...items.map(([v, l]) => new Option(l, v)));
    select.dataset.items = key;
  }
  select.value = value;
}

let sendOption = null; // (name, value) -> promise: one "option" request, once Python is ready
const walk = new WalkThrough(document.getElementById(PANEL_IDS.walk),
                             (name, value) => sendOption && sendOption(name, value));

/**
 * The walk-through's requests, once Python is ready (js/app.js: connect): each an "option",
 * drawn by page.send.
 * @param {{send: function(Object, number): Promise<Object>}} page
 */
export function connect(page) {
  sendOption = (name, value) => page.send({ op: "option", name, value }, performance.now());
}

// Its position is the state's (options walk, sample, walk_class): a reset's answer ends it.
component("walk", { last: (w) => walk.show(w) });
