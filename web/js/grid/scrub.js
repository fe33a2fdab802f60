// Scrubbing: change a grid's number continuously and watch every stage follow.
//
// - Keyboard, in a cell: Alt+ArrowUp / Alt+ArrowDown step the number by 0.1 (Shift: 1, Ctrl:
//   0.01), repeating while held (the key's own auto-repeat).
// - Pointer: the focused cell shows a handle at its right edge; dragging it left or right
//   changes the number by 0.01 per pixel (Shift: 0.1, Ctrl: 0.001), with a mouse, a finger or a
//   pen. With a mouse, a horizontal drag that starts on any other cell scrubs it too.
// - Esc during a drag, or after key steps in the cell, puts the number back as it was.
//
// Each change goes to the page at once (onScrub(i, j, value, t0, final)); `final` marks the
// last one of a drag or of a held key. The grid shows the number as it changes; screen readers
// hear it through a polite live region once it stops changing (js/page/announce.js): a held key or a
// drag says where it ended, once.

import { calmly } from "../page/announce.js";

const DRAG_START_PX = 5; // a mouse press that moves this far sideways scrubs instead of focusing
const SHOW_LATE_MS = 100; // a cell whose answer is slower shows its number without it

export class Scrubber {
  constructor(grid, onScrub) {
    this.grid = grid;
    this.onScrub = onScrub || null;
    this.session = null; // {i, j, start, value}: the cell being scrubbed, and its number before
    this.drag = null; // {pointerId, x0, start, target}
    this.press = null; // a mouse press on a cell that may become a drag
    this.handle = document.createElement("div");
    this.handle.className = "scrub-handle";
    this.handle.hidden = true;
    this.handle.title = "Drag sideways to change the number (or Alt+\u2191 / Alt+\u2193 in the cell)";
    this.handle.setAttribute("aria-hidden", "true"); // the keys do the same for keyboard users
    this.live = document.createElement("div");
    this.live.className = "visually-hidden";
    this.live.id = `${grid.root.parentElement.id}-scrub-said`;
    this.live.setAttribute("aria-live", "polite");
    this.say = calmly(this.live.id);
    this.showing = null; // the cell's text to show with the next redraw: {input, text}
    this.showTimer = 0;
    grid.spacer.append(this.handle);
    grid.root.append(this.live);
    this.handle.addEventListener("pointerdown", (e) => this.startDrag(e, grid.active[0], grid.active[1], e.target));
    // the cell keeps the focus (a press on the handle would otherwise give it to the page)
    this.handle.addEventListener("mousedown", (e) => e.preventDefault());
    // the handle is inside the grid's spacer: its events bubble there
    grid.spacer.addEventListener("pointermove", (e) => this.move(e));
    grid.spacer.addEventListener("pointerup", (e) => this.endDrag(e));
    grid.spacer.addEventListener("pointercancel", (e) => this.endDrag(e));
  }

  get enabled() { return Boolean(this.onScrub) && !this.grid.readOnly; }

  // The handle sits at the right edge of the grid's focused cell.
  place() {
    const g = this.grid;
    const input = g.cells.get(`${g.active[0]},${g.active[1]}`);
    const show = this.enabled && Boolean(input) && input === document.activeElement;
    this.handle.hidden = !show;
    if (show) this.handle.style.transform = `translate(${(g.active[1] + 1) * g.cw}px, ${g.active[0] * g.ch}px)`;
  }

  // Alt+ArrowUp / Alt+ArrowDown in cell (i, j): one step. Returns whether the key was taken.
  key(e, i, j, input) {
    if (!this.enabled || !e.altKey || (e.key !== "ArrowUp" && e.key !== "ArrowDown")) return false;
    e.preventDefault();
    const step = e.shiftKey ? 1 : e.ctrlKey ? 0.01 : 0.1;
    const from = this.current(i, j, input);
    if (from === null) return true; // a text that is not a number: nothing to step from
    this.change(i, j, input, stepped(from, e.key === "ArrowUp" ? step : -step, step), false);
    return true;
  }

  // A key released: the end of a held Alt+Arrow, whose last step is then final.
  keyUp(e) {
    if (!this.session || this.drag || (e.key !== "ArrowUp" && e.key !== "ArrowDown" && e.key !== "Alt")) return;
    const { i, j, value } = this.session;
    this.finish(i, j, value);
  }

  // Esc: the number as it was before this scrub. Returns whether there was one to undo.
  escape(i, j, input) {
    const s = this.session;
    if (!s || s.i !== i || s.j !== j) return false;
    this.drag = null;
    this.grid.root.classList.remove("scrubbing");
    this.change(i, j, input, s.start, true);
    this.session = null;
    return true;
  }

  // The cell was left (or typed in): its scrub is over; a later Esc is the grid's own.
  leave() {
    this.flush();
    if (!this.drag) this.session = null;
  }

  // A mouse press on a cell: a drag sideways from it scrubs it.
  pressed(e, i, j) {
    this.press = this.enabled && e.pointerType === "mouse" && e.button === 0
      ? { pointerId: e.pointerId, x: e.clientX, y: e.clientY, i, j, target: e.target } : null;
  }

  startDrag(e, i, j, capture) {
    if (!this.enabled) return;
    const input = this.grid.cells.get(`${i},${j}`);
    const start = this.current(i, j, input);
    if (start === null) return;
    e.preventDefault();
    this.press = null;
    capture.setPointerCapture(e.pointerId);
    this.drag = { pointerId: e.pointerId, x0: e.clientX, start, i, j };
    // Esc during this drag puts back the number it started from
    this.session = { i, j, start, value: start, live: true };
    this.grid.root.classList.add("scrubbing");
  }

  move(e) {
    const p = this.press;
    if (p && e.pointerId === p.pointerId && !this.drag) {
      const dx = e.clientX - p.x, dy = e.clientY - p.y;
      if (Math.abs(dx) >= DRAG_START_PX && Math.abs(dx) > Math.abs(dy)) {
        this.grid.focusCell(p.i, p.j);
        this.startDrag(e, p.i, p.j, p.target);
        if (this.drag) this.drag.x0 = p.x;
      }
      return;
    }
    const d = this.drag;
    if (!d || e.pointerId !== d.pointerId) return;
    e.preventDefault();
    const rate = e.shiftKey ? 0.1 : e.ctrlKey ? 0.001 : 0.01;
    const dx = Math.round(e.clientX - d.x0);
    const value = dx === 0 ? d.start : stepped(d.start, dx * rate, rate);
    if (value !== this.session.value) this.change(d.i, d.j, this.grid.cells.get(`${d.i},${d.j}`), value, false);
  }

  endDrag(e) {
    if (this.press && e.pointerId === this.press.pointerId) this.press = null;
    const d = this.drag;
    if (!d || e.pointerId !== d.pointerId) return;
    this.drag = null;
    this.grid.root.classList.remove("scrubbing");
    this.finish(d.i, d.j, this.session.value);
  }

  // The number the cell holds now: what was typed in it if that is a number, else its value.
  current(i, j, input) {
    const s = this.session;
    if (s && s.i === i && s.j === j) return s.value;
    const typed = input && this.grid.entry && this.grid.entry.dirty && this.grid.typing(i, j) ? Number(input.value) : this.grid.value(i, j);
    return Number.isFinite(typed) ? typed : null;
  }

  // The change goes to Python first; the cell shows it with the answer (show).
  change(i, j, input, value, final) {
    const t0 = performance.now();
    if (!this.session || this.session.i !== i || this.session.j !== j) {
      this.session = { i, j, start: this.current(i, j, input), value };
    }
    this.session.value = value;
    this.session.live = !final;
    this.onScrub(i, j, value, t0, final);
    const text = String(value);
    if (input) this.show(input, text, final);
    this.grid.scrubbed(i, j);
    this.say(`${this.grid.opts.label(i, j)} = ${text}`);
  }

  // A focused field's new text, selected (typing then replaces it), makes the browser lay the
  // page out at once, and a frame drawn for it alone would hold the answer's redraw back to the
  // frame after. So the cell shows its new text with the answer's redraw (js/page/render.js calls
  // flush()), in the same frame as the heatmaps; if no answer is drawn within SHOW_LATE_MS, on
  // its own. A final change shows at once, and the grid calls flush() before anything else
  // happens in the cell (a key, a paste, leaving it).
  show(input, text, now) {
    this.showing = { input, text };
    if (now) this.flush();
    else if (!this.showTimer) this.showTimer = setTimeout(() => this.flush(), SHOW_LATE_MS);
  }

  flush() {
    const s = this.forget();
    if (!s || s.input.value === s.text) return;
    s.input.value = s.text;
    if (s.input === document.activeElement) s.input.select();
  }

  // The text waiting to be shown, no longer to be shown (the person typed over it).
  forget() {
    clearTimeout(this.showTimer);
    this.showTimer = 0;
    const s = this.showing;
    this.showing = null;
    return s;
  }

  finish(i, j, value) {
    if (this.session) this.session.live = false;
    this.say(`${this.grid.opts.label(i, j)} = ${value}`);
    this.onScrub(i, j, value, performance.now(), true);
  }
}

/**
 * `run(x)` for each x pushed, one at a time: an x pushed while a run is under way waits, and
 * replaces any that was waiting, so the newest is always run and none falls behind.
 * @param {(x: any) => Promise<unknown>} run
 * @returns {(x: any) => void} push
 */
export function latestOnly(run) {
  let next = null, waiting = false, running = false;
  return async function push(x) {
    next = x;
    waiting = true;
    if (running) return;
    running = true;
    while (waiting) {
      const current = next;
      waiting = false;
      await run(current);
    }
    running = false;
  };
}

// from + delta, rounded to the step's decimals or the start's (up to 6), whichever is finer: a
// step of 0.1 from 0.537 gives 0.637, and no binary noise (0.1 + 0.2 gives 0.3).
function stepped(from, delta, step) {
  return Number((from + delta).toFixed(Math.max(decimals(step), decimals(from))));
}

function decimals(x) {
  const text = String(x);
  if (/e/i.test(text)) return 6;
  const dot = text.indexOf(".");
  return dot < 0 ? 0 : Math.min(6, text.length - dot - 1);
}

/**
 * Scrubbing for a number field outside the grids (the fine-tuning settings): Alt+ArrowUp /
 * Alt+ArrowDown step it as a cell (0.1; Shift 1; Ctrl 0.01), and a mouse drag sideways that
 * starts on it while it is not focused changes it by 0.01 per pixel (Shift 0.1, Ctrl 0.001).
 * `onValue(text)` gets each new number as text, at most one at a time: values that come while
 * one is being applied replace each other, and the last is always applied.
 * @param {HTMLInputElement} input
 * @param {(text: string) => Promise<unknown>} onValue
 */
export function scrubField(input, onValue) {
  let drag = null;
  const send = latestOnly(onValue);
  const apply = (value) => {
    input.value = String(value);
    send(input.value);
  };
  input.addEventListener("keydown", (e) => {
    if (!e.altKey || (e.key !== "ArrowUp" && e.key !== "ArrowDown")) return;
    const from = Number(input.value);
    e.preventDefault();
    if (input.value.trim() === "" || !Number.isFinite(from)) return;
    const step = e.shiftKey ? 1 : e.ctrlKey ? 0.01 : 0.1;
    apply(stepped(from, e.key === "ArrowUp" ? step : -step, step));
  });
  input.addEventListener("pointerdown", (e) => {
    const from = Number(input.value);
    drag = e.pointerType === "mouse" && e.button === 0 && input !== document.activeElement &&
      input.value.trim() !== "" && Number.isFinite(from) ? { id: e.pointerId, x0: e.clientX, from, on: false } : null;
  });
  input.addEventListener("pointermove", (e) => {
    if (!drag || e.pointerId !== drag.id) return;
    const dx = Math.round(e.clientX - drag.x0);
    if (!drag.on && Math.abs(dx) < DRAG_START_PX) return;
    if (!drag.on) {
      drag.on = true;
      input.setPointerCapture(e.pointerId);
      input.classList.add("scrubbing");
    }
    e.preventDefault();
    const rate = e.shiftKey ? 0.1 : e.ctrlKey ? 0.001 : 0.01;
    const value = stepped(drag.from, dx * rate, rate);
    if (String(value) !== input.value) apply(value);
  });
  const end = (e) => {
    if (!drag || e.pointerId !== drag.id) return;
    input.classList.remove("scrubbing");
    drag = null;
  };
  input.addEventListener("pointerup", end);
  input.addEventListener("pointercancel", end);
}
