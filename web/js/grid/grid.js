import { shortNumber } from "../page/numbers.js";
import { Scrubber } from "./scrub.js";
import { CellEntry } from "./entry.js";

// A spreadsheet-like editor for one matrix, virtualized: only the cells in view are <input>s,
// so a 768 x 1000 W_head costs a few hundred elements, not 768,000.
//
// The grid owns no truth: it shows the values it was given, reports what the person types
// (onEdit, for every keystroke, and once more with commit = true when they leave the cell) and
// pastes (onPaste), and shows what it is told is invalid. The cell being typed in keeps its text;
// every other cell shows the value in use. Keyboard: arrows, Enter / Shift+Enter, PageUp /
// PageDown, Ctrl+Home / Ctrl+End, Escape to take the entry back (js/grid/entry.js hears the
// cells); Alt+ArrowUp / Alt+ArrowDown and a drag sideways scrub the number (js/grid/scrub.js). This
// module lays the cells out and draws them. Tab enters and leaves the grid
// as one stop (a roving tabindex, as WAI-ARIA recommends for grids), so a keyboard user never has
// to tab through 768,000 cells to reach the next control.

// A cell's size comes from the stylesheet (--cell-w, --cell-h: larger on touch screens and with
// large text), read again whenever the grid is laid out anew (resize()).
const COARSE = window.matchMedia ? window.matchMedia("(pointer: coarse)") : { matches: false };
const OVERSCAN = 2;

/**
 * What a grid is told: its names, and whom it tells of edits, pastes and scrubs (t0: the
 * event's time, performance.now()).
 * @typedef {Object} GridOptions
 * @property {string} name
 * @property {(i: number, j: number) => string} label a cell's accessible name
 * @property {(i: number) => string} rowHeader
 * @property {(j: number) => string} colHeader
 * @property {(i: number) => ?string} [rowClass]
 * @property {(i: number, j: number, text: string, t0: number, commit: boolean) => void} onEdit
 * @property {(i: number, j: number, text: string, t0: number) => void} onPaste
 * @property {(i: number, j: number, value: number, t0: number, final: boolean) => void} onScrub
 * @property {() => void} [onReadOnly] a key typed while the grid is read-only
 */

// The room left under a sideways-scrolling grid's last row for a scrollbar drawn over it.
const OVERLAY_BAR_PX = 16;

export class MatrixGrid {
  /**
   * @param {HTMLElement} host
   * @param {GridOptions} opts
   */
  constructor(host, opts) {
    this.opts = opts;
    this.rows = 0;
    this.cols = 0;
    this.data = new Float64Array(0);
    // The cell being typed in: {i, j, before (its text on entry; null: the value in use), dirty}.
    // Python's editing.Typing record (Session._typing) is the source of truth for the value in
    // use while typing: a text that is not a number, or one that makes the logits overflow,
    // puts back the value the cell held on entry, and writing it back restores the matrix's
    // recipe exactly. `before` is kept here for Escape only, for two reasons: the cell shows
    // it at once, before any answer; and Python's record ends with any request that may change
    // the state (the read-only ones, a pending link, panels scrolled into view, pointing at a
    // logit, keep it), among them the fine-tuning panel's "train" requests, which Play keeps
    // sending while a person types, so by the time Escape comes Python may no longer know the
    // entry's value. Escape therefore commits `before`'s text (String of a float64: it reads
    // back as the same number), not a "put it back" request.
    this.entry = null;
    this.cells = new Map(); // "i,j" -> rendered <input>
    this.frame = 0;
    this.readOnly = false;
    this.cw = 68;
    this.ch = 28;
    this.active = [0, 0]; // the one cell in the tab order

    // Each grid is a <form> of its own, never submitted. At each keystroke Chrome's autofill
    // reads the field's form in the main thread, while Python computes the answer; a form of
    // one grid's cells gives it less to read than the whole page (docs/performance.md).
    this.root = el("form", "grid");
    this.root.addEventListener("submit", (e) => e.preventDefault());
    // named, a form is a landmark of its own ("CLS vectors, form"): role="group" is not allowed
    // on a form (ARIA in HTML)
    this.root.setAttribute("aria-label", opts.name);
    this.corner = el("div", "grid-corner");
    this.colHead = el("div", "grid-colhead");
    this.rowHead = el("div", "grid-rowhead");
    this.body = el("div", "grid-body");
    this.spacer = el("div", "grid-spacer");
    this.body.append(this.spacer);
    this.root.append(this.corner, this.colHead, this.rowHead, this.body);
    host.replaceChildren(this.root);
    this.measure();
    this.scrubber = new Scrubber(this, opts.onScrub);

    this.body.addEventListener("scroll", () => {
      if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
    });
    // A grid wider than its stage scrolls sideways, and its scrollbar lies along the rows'
    // bottom: a classic one takes its height from the rows' view, an overlay one (WebKitGTK's,
    // macOS's, a phone's: no height in the layout) is drawn over the last row, where a click on
    // the row's lower half hit the bar (cls[2,4] in WebKit at 1280 x 720). The body grows by the
    // bar's height, or by OVERLAY_BAR_PX, so that the last row stays whole and can be clicked.
    // (At the next frame: the body resized inside its own observer's callback is a
    // "ResizeObserver loop" error in WebKit's console.)
    let barFrame = 0;
    const fitBar = () => {
      if (barFrame) return;
      barFrame = requestAnimationFrame(() => {
        barFrame = 0;
        const classic = this.body.offsetHeight - this.body.clientHeight - 2; // less the 1 px borders
        const sideways = this.body.scrollWidth > this.body.clientWidth + 1;
        const bar = sideways ? Math.max(classic, OVERLAY_BAR_PX) : Math.max(0, classic);
        this.root.style.setProperty("--bar-h", `${bar}px`);
      });
    };
    const bars = new ResizeObserver(fitBar);
    bars.observe(this.body);
    bars.observe(this.spacer); // its width, the columns', decides whether the body scrolls sideways
    this.entries = new CellEntry(this); // focus, typing, paste, keys, presses: js/grid/entry.js
  }

  // The cell size the stylesheet gives now.
  measure() {
    const style = getComputedStyle(this.root);
    this.cw = parseFloat(style.getPropertyValue("--cell-w")) || 68;
    this.ch = parseFloat(style.getPropertyValue("--cell-h")) || 28;
  }

  // Lay every cell out again, at the cell size the stylesheet gives now (large text toggled).
  relayout() {
    this.measure();
    for (const input of this.cells.values()) input.remove();
    this.cells.clear();
    this.layout();
    this.render(true);
  }

  layout() {
    this.spacer.style.width = `${this.cols * this.cw}px`;
    this.spacer.style.height = `${this.rows * this.ch}px`;
    this.root.style.setProperty("--view-w", `${Math.min(this.cols, 8) * this.cw + 2}px`);
    this.root.style.setProperty("--view-h", `${Math.min(this.rows, 10) * this.ch + 2}px`);
  }

  // m: {rows, cols, data: Float64Array (row-major)}
  setMatrix(m) {
    const reshaped = m.rows !== this.rows || m.cols !== this.cols;
    if (reshaped) {
      this.clear();
      this.body.scrollTop = 0;
      this.body.scrollLeft = 0;
    }
    this.rows = m.rows;
    this.cols = m.cols;
    this.data = m.data;
    if (reshaped || !this.cells.size) {
      if (reshaped) this.layout();
      this.render(true);
      return;
    }
    // The same shape: the cells on screen stay (which cells those are depends on the scroll,
    // not on the numbers), each with its new value. render() would measure the grid, and so
    // lay out the page that the redraw around this call has just changed (a drawing in
    // progress refills the editors at every change).
    for (const [key, input] of this.cells) {
      const [i, j] = key.split(",").map(Number);
      if (!this.typing(i, j)) this.fill(input, i, j);
    }
  }

  // No cells until the next matrix (cells with other labels are coming: the input's mode
  // changed). Nothing is measured or scrolled (its spacer of no size leaves nothing to scroll),
  // so the page's layout is done once, by what follows, not here too.
  clear() {
    this.entry = null;
    for (const input of this.cells.values()) input.remove();
    this.cells.clear();
    this.rows = this.cols = 0;
    this.data = new Float64Array(0);
    this.active = [0, 0];
    this.layout();
  }

  value(i, j) { return this.data[i * this.cols + j]; }

  // The matrix after some of its cells changed (an answer's patches): only those are redrawn,
  // except the cell being typed in, which keeps the person's text.
  patch(m, cells) {
    if (m.rows !== this.rows || m.cols !== this.cols) return this.setMatrix(m);
    this.data = m.data;
    for (const [i, j] of cells) {
      const input = this.cells.get(`${i},${j}`);
      if (input && !this.typing(i, j)) this.fill(input, i, j);
    }
  }

  // Show cell (i, j)'s value again, unless it is being typed in.
  refill(i, j) {
    const input = this.cells.get(`${i},${j}`);
    if (input && !this.typing(i, j)) this.fill(input, i, j);
  }

  // Whether cell (i, j) shows the person's number rather than the answers': typed text, or a
  // number being scrubbed (the answers to its earlier values arrive after it).
  typing(i, j) {
    const s = this.scrubber.session;
    if (s && s.live && s.i === i && s.j === j) return true;
    return this.entry !== null && this.entry.i === i && this.entry.j === j && this.entry.dirty;
  }

  // Cell (i, j) took a scrubbed number: what was typed there is replaced, nothing is invalid.
  scrubbed(i, j) {
    if (this.entry && this.entry.i === i && this.entry.j === j) this.entry.dirty = false;
    const input = this.cells.get(`${i},${j}`);
    if (input) {
      input.removeAttribute("aria-invalid");
      input.classList.remove("pending");
    }
  }

  // Read-only while the runtime boots: the numbers are visible before they are editable.
  setReadOnly(flag) {
    this.readOnly = flag;
    this.root.classList.toggle("readonly", flag);
    for (const input of this.cells.values()) input.readOnly = flag;
  }

  // Whether the text being typed in cell (i, j) is in effect: invalid (not a number) or
  // pending (it may still become one, e.g. "-" or "1e"). Only the cell being typed in is marked.
  // It is not described by the alert box (#alert): the box's text changes at every key ('a',
  // 'ab', 'abc' is not a number), and a screen reader says the focused field's description each
  // time it changes (Orca did, key by key), which is the refusal said before the entry ends.
  mark(i, j, how) {
    const input = this.cells.get(`${i},${j}`);
    if (!input) return;
    if (how === "invalid" && this.typing(i, j)) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
    input.classList.toggle("pending", how === "pending" && this.typing(i, j));
  }

  render(refresh = false) {
    const top = this.body.scrollTop;
    const left = this.body.scrollLeft;
    const h = this.body.clientHeight || this.ch * 10;
    const w = this.body.clientWidth || this.cw * 8;
    const r0 = Math.max(0, Math.floor(top / this.ch) - OVERSCAN);
    const r1 = Math.min(this.rows, Math.ceil((top + h) / this.ch) + OVERSCAN);
    const c0 = Math.max(0, Math.floor(left / this.cw) - OVERSCAN);
    const c1 = Math.min(this.cols, Math.ceil((left + w) / this.cw) + OVERSCAN);
    const active = document.activeElement;

    for (const [key, input] of this.cells) {
      const [i, j] = key.split(",").map(Number);
      const isActive = i === this.active[0] && j === this.active[1];
      if ((i < r0 || i >= r1 || j < c0 || j >= c1) && input !== active && !isActive) {
        input.remove();
        this.cells.delete(key);
      }
    }
    const fresh = document.createDocumentFragment();
    const [ai, aj] = this.active;
    if (ai < this.rows && aj < this.cols && !this.cells.has(`${ai},${aj}`)) {
      const input = this.makeCell(ai, aj);
      this.cells.set(`${ai},${aj}`, input);
      fresh.append(input);
    }
    for (let i = r0; i < r1; i++) {
      for (let j = c0; j < c1; j++) {
        const key = `${i},${j}`;
        let input = this.cells.get(key);
        if (!input) {
          input = this.makeCell(i, j);
          this.cells.set(key, input);
          fresh.append(input);
        } else if (refresh && !this.typing(i, j)) {
          this.fill(input, i, j);
        }
      }
    }
    this.spacer.append(fresh);
    this.renderHeaders(r0, r1, c0, c1, top, left);
    this.scrubber.place();
  }

  makeCell(i, j) {
    const input = document.createElement("input");
    input.type = "text";
    // A phone's decimal keypad may lack the minus sign (iOS): touch screens get the full one.
    input.inputMode = COARSE.matches ? "text" : "decimal";
    input.autocomplete = "off";
    input.spellcheck = false;
    input.className = "cell";
    input.readOnly = this.readOnly;
    input.tabIndex = i === this.active[0] && j === this.active[1] ? 0 : -1;
    const cls = this.opts.rowClass && this.opts.rowClass(i);
    if (cls) input.classList.add(cls);
    input.dataset.i = i;
    input.dataset.j = j;
    input.setAttribute("aria-label", this.opts.label(i, j));
    input.style.transform = `translate(${j * this.cw}px, ${i * this.ch}px)`;
    this.fill(input, i, j);
    return input;
  }

  // A cell reads its value in the short form (js/page/numbers.js); the focused one in full, so that
  // typing starts from, and Esc gives back, the exact number.
  fill(input, i, j) {
    const v = this.value(i, j);
    const text = input === document.activeElement ? String(v) : shortNumber(v);
    if (input.value !== text) {
      input.value = text;
      // The focused cell's new text is selected, as on entering it: typing replaces it.
      if (input === document.activeElement) input.select();
    }
    input.removeAttribute("aria-invalid");
    input.classList.remove("pending");
  }

  renderHeaders(r0, r1, c0, c1, top, left) {
    const cols = document.createDocumentFragment();
    for (let j = c0; j < c1; j++) {
      const d = el("div", "grid-h");
      d.textContent = this.opts.colHeader(j);
      d.style.transform = `translateX(${j * this.cw - left}px)`;
      cols.append(d);
    }
    this.colHead.replaceChildren(cols);
    const rows = document.createDocumentFragment();
    for (let i = r0; i < r1; i++) {
      const d = el("div", "grid-h");
      const cls = this.opts.rowClass && this.opts.rowClass(i);
      if (cls) d.classList.add(cls);
      d.textContent = this.opts.rowHeader(i);
      d.style.transform = `translateY(${i * this.ch - top}px)`;
      rows.append(d);
    }
    this.rowHead.replaceChildren(rows);
  }

  focusCell(i, j) {
    i = Math.max(0, Math.min(this.rows - 1, i));
    j = Math.max(0, Math.min(this.cols - 1, j));
    // Scroll just enough to bring the cell into view, then draw it before focusing.
    const b = this.body;
    const y = i * this.ch, x = j * this.cw;
    if (y < b.scrollTop) b.scrollTop = y;
    else if (y + this.ch > b.scrollTop + b.clientHeight) b.scrollTop = y + this.ch - b.clientHeight;
    if (x < b.scrollLeft) b.scrollLeft = x;
    else if (x + this.cw > b.scrollLeft + b.clientWidth) b.scrollLeft = x + this.cw - b.clientWidth;
    this.render();
    const input = this.cells.get(`${i},${j}`);
    if (input) {
      input.focus({ preventScroll: true });
      input.select();
    }
  }

  position(target) {
    if (!target || !target.classList || !target.classList.contains("cell")) return null;
    return [Number(target.dataset.i), Number(target.dataset.j)];
  }
}

function el(tag, cls) {
  const d = document.createElement(tag);
  d.className = cls;
  return d;
}
