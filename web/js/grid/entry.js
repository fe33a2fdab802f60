// What a person does in a matrix grid's cells (js/grid/grid.js): entering a cell, typing in it,
// leaving it, Escape, pasting a block, the keys that move between cells, and presses of a
// mouse, a finger or a pen that must leave the entered cell's text selected.
//
// The grid draws the cells and holds the entry (grid.entry: see its constructor); this module
// hears the cells' events, keeps the entry up to date and tells the page (the grid's onEdit and
// onPaste). Scrubbing (js/grid/scrub.js) is heard first where a key or a press may be a scrub.

/** @typedef {import("./grid.js").MatrixGrid} MatrixGrid */

export class CellEntry {
  /** @param {MatrixGrid} grid */
  constructor(grid) {
    this.grid = grid;
    this.pressed = null; // a cell that a pointer press is focusing (see onRelease)
    this.held = null; // a cell entered by a press, whose text stays selected (see onRelease)
    const spacer = grid.spacer;
    spacer.addEventListener("input", (e) => this.onInput(e));
    spacer.addEventListener("keydown", (e) => this.onKey(e));
    spacer.addEventListener("paste", (e) => this.onPaste(e));
    spacer.addEventListener("focusin", (e) => this.onFocus(e));
    spacer.addEventListener("focusout", (e) => this.onLeave(e));
    spacer.addEventListener("pointerdown", (e) => {
      this.pressed = e.target !== document.activeElement ? e.target : null;
      this.held = null;
      const p = grid.position(this.pressed);
      if (p) grid.scrubber.pressed(e, p[0], p[1]);
    });
    spacer.addEventListener("keyup", (e) => grid.scrubber.keyUp(e));
    spacer.addEventListener("mousedown", (e) => this.onPress(e));
    spacer.addEventListener("mouseup", (e) => this.onRelease(e));
    spacer.addEventListener("click", (e) => this.onRelease(e));
    // Where a text field's selection changes is told at the field (and bubbles) or at the
    // document, depending on the engine: both are heard.
    document.addEventListener("selectionchange", () => this.keepSelected());
    spacer.addEventListener("selectionchange", () => this.keepSelected(), true);
  }

  onFocus(e) {
    const g = this.grid;
    const p = g.position(e.target);
    if (!p) return;
    const previous = g.cells.get(`${g.active[0]},${g.active[1]}`);
    if (previous) previous.tabIndex = -1;
    e.target.tabIndex = 0;
    g.active = p;
    g.root.dataset.active = `${p[0]},${p[1]}`;
    if (!e.target.classList.contains("pending") && e.target.getAttribute("aria-invalid") !== "true") {
      g.fill(e.target, p[0], p[1]); // the full value
    }
    g.entry = { i: p[0], j: p[1], before: e.target.value, dirty: false };
    // Like a spreadsheet: entering a cell selects its text, so typing replaces it.
    e.target.select();
    g.scrubber.place();
  }

  // A press of a mouse, a finger or a pen that focuses a cell must leave its text selected, as
  // Tab does. Each engine places the caret where the cell was pressed, after focus selected the
  // text: Firefox as the press ends, WebKit as the button is released (typing "4.5" into "-1"
  // then gave "4.5-1"), and at times once more after the click. So the press's default (focus
  // and caret) is cancelled and the grid focuses the cell itself; the release's default is
  // cancelled too, and from the click on the cell is held (keepSelected) until a key or another
  // press. A second press in a focused cell places the caret as usual, to change part of the
  // number.
  onPress(e) {
    const input = e.target;
    if (input !== this.pressed || !this.grid.position(input) || e.button !== 0) return;
    e.preventDefault();
    input.focus({ preventScroll: true });
  }

  onRelease(e) {
    const input = e.target;
    if (input !== this.pressed || !this.grid.position(input)) return;
    const entry = this.grid.entry;
    if (entry && entry.dirty) {
      this.pressed = null;
      return;
    }
    if (e.type === "mouseup") {
      e.preventDefault();
      return;
    }
    this.pressed = null;
    this.held = input;
    this.keepSelected();
  }

  // The held cell's text is selected again if the browser collapsed it on its own.
  keepSelected() {
    const input = this.held;
    const entry = this.grid.entry;
    if (!input || document.activeElement !== input || (entry && entry.dirty)) return;
    if (input.selectionStart === input.selectionEnd) input.select();
  }

  onInput(e) {
    const g = this.grid;
    const p = g.position(e.target);
    if (!p) return;
    if (!g.entry || g.entry.i !== p[0] || g.entry.j !== p[1]) {
      g.entry = { i: p[0], j: p[1], before: String(g.value(p[0], p[1])), dirty: false };
    }
    if (g.entry.before === null) g.entry.before = String(g.value(p[0], p[1]));
    g.entry.dirty = true;
    this.pressed = null;
    g.scrubber.forget();
    g.scrubber.leave();
    g.opts.onEdit(p[0], p[1], e.target.value, performance.now(), false);
  }

  // Leaving a cell (Tab, Enter, an arrow, a click elsewhere) ends its entry: the page is told,
  // and what is in effect from then on is what the answer says.
  onLeave(e) {
    const g = this.grid;
    const p = g.position(e.target);
    if (this.held === e.target) this.held = null;
    g.scrubber.leave();
    g.scrubber.place();
    const entry = g.entry;
    if (!p || !entry || entry.i !== p[0] || entry.j !== p[1]) return;
    g.entry = null;
    this.endEntry(e.target, p[0], p[1], entry);
  }

  // An entry ends: what was typed is committed (the answer then shows what is in effect, the
  // typed number or, if it was refused, the value in use), or the cell shows its value again.
  endEntry(input, i, j, entry) {
    if (entry.dirty) this.grid.opts.onEdit(i, j, input.value, performance.now(), true);
    else this.grid.fill(input, i, j);
  }

  onPaste(e) {
    const g = this.grid;
    g.scrubber.flush();
    const p = g.position(e.target);
    const text = e.clipboardData.getData("text");
    // A single number is an ordinary edit; anything with separators is a block.
    if (!p || !/[\t\n,;[\s]/.test(text.trim())) return;
    e.preventDefault();
    g.opts.onPaste(p[0], p[1], text, performance.now());
  }

  onKey(e) {
    const g = this.grid;
    const p = g.position(e.target);
    if (!p) return;
    this.held = null; // from the first key on, the selection is the person's
    const [i, j] = p;
    const input = e.target;
    // Typing before Python is ready: the cell cannot take it yet, and the page says why.
    if (g.readOnly && (e.key.length === 1 || e.key === "Backspace" || e.key === "Delete")) {
      if (g.opts.onReadOnly) g.opts.onReadOnly();
      return;
    }
    if (g.scrubber.key(e, i, j, input)) return;
    g.scrubber.flush(); // the key acts on the number the cell shows
    const atStart = input.selectionStart === 0 && input.selectionEnd === 0;
    const atEnd = input.selectionStart === input.value.length && input.selectionEnd === input.value.length;
    const all = input.selectionStart === 0 && input.selectionEnd === input.value.length;
    const page = Math.max(1, Math.floor(g.body.clientHeight / g.ch) - 1);
    let target = null;
    switch (e.key) {
      case "ArrowUp": target = [i - 1, j]; break;
      case "ArrowDown": target = [i + 1, j]; break;
      case "ArrowLeft": if (atStart || all) target = [i, j - 1]; break;
      case "ArrowRight": if (atEnd || all) target = [i, j + 1]; break;
      case "Enter": target = [i + (e.shiftKey ? -1 : 1), j]; break;
      case "PageUp": target = [i - page, j]; break;
      case "PageDown": target = [i + page, j]; break;
      case "Home": if (e.ctrlKey) target = [0, 0]; break;
      case "End": if (e.ctrlKey) target = [g.rows - 1, g.cols - 1]; break;
      case "Escape": {
        // Take the entry back: the text the cell had when it was entered, and its value,
        // committed as typed text (why the grid, not Python, holds it: see grid.entry).
        e.preventDefault();
        if (g.scrubber.escape(i, j, input)) return;
        const entry = g.entry;
        if (!entry || !entry.dirty || entry.i !== i || entry.j !== j) return;
        input.value = entry.before === null ? String(g.value(i, j)) : entry.before;
        g.entry = { i, j, before: input.value, dirty: false };
        input.removeAttribute("aria-invalid");
        input.classList.remove("pending");
        input.select();
        g.opts.onEdit(i, j, input.value, performance.now(), true);
        return;
      }
      default: return;
    }
    if (!target) return;
    e.preventDefault();
    const ti = Math.max(0, Math.min(g.rows - 1, target[0]));
    const tj = Math.max(0, Math.min(g.cols - 1, target[1]));
    if (ti === i && tj === j) {
      // At the grid's edge (Enter in the bottom row): the entry ends here, as if the cell had
      // been left and entered again, so an invalid text never stays in the cell.
      const entry = g.entry;
      if (entry && entry.i === i && entry.j === j) {
        g.entry = { i, j, before: null, dirty: false };
        this.endEntry(input, i, j, entry);
      }
      input.select();
      return;
    }
    g.focusCell(ti, tj);
  }
}
