"""The small API every engine implements, and what is the same in all of them.

A test drives an `Engine` only through these methods, so it is written once and runs in
Chromium (Playwright), Firefox (WebDriver BiDi) and WebKit (classic WebDriver).
JavaScript is always passed as a function expression and called with JSON arguments; nothing is
ever handed to the page as a string to evaluate (the page's CSP has no 'unsafe-eval').
"""
import json
import time

# WebDriver's key codes (W3C WebDriver, "Keyboard actions"), by the names Playwright uses.
WEBDRIVER_KEYS = {
    "Enter": "\ue007", "Escape": "\ue00c", "Tab": "\ue004", "Backspace": "\ue003",
    "Delete": "\ue017", "Home": "\ue011", "End": "\ue010", "Space": " ",
    "ArrowLeft": "\ue012", "ArrowUp": "\ue013", "ArrowRight": "\ue014", "ArrowDown": "\ue015",
    "Shift": "\ue008", "Control": "\ue009", "Alt": "\ue00a", "Meta": "\ue03d",
}

# One evaluate call polls the predicate in the page for up to this long (a setTimeout loop:
# no round trip per poll, no animation frames forced); wait_for repeats it until its timeout.
POLL_SLICE_MS = 3000
POLL_JS = """async (args, sliceMs, everyMs) => {
    const end = performance.now() + sliceMs;
    for (;;) {
        const value = await (PREDICATE)(...args);
        if (value || performance.now() > end) return value === undefined ? null : value;
        await new Promise((r) => setTimeout(r, everyMs));
    }
}"""

# Scrolls an element into the middle of its frame's view and waits until it stands still (the
# same box and scroll in two frames running; at most 30 frames), as a person clicks what
# stopped moving (Playwright's clicks wait for "stable" alike): scrolling brings panels into view
# that draw then, and a drawing above the element moves it. If the page scrolled it away
# meanwhile (the focus of a Tab pressed just before, brought into view in the frame after it:
# js/page/focus-clear.js), it scrolls to it again, as a person would. Returns its box, or null.
BOX_JS = """async (selector) => {
    const el = document.querySelector(selector);
    if (!el) return null;
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    let r = null;
    for (let tries = 0; tries < 3; tries++) {
        el.scrollIntoView({block: "center", inline: "center"});
        let last = "", same = 0;
        for (let k = 0; k < 30 && same < 1; k++) {
            await frame();
            r = el.getBoundingClientRect();
            const now = [r.left, r.top, r.width, r.height, scrollX, scrollY].join();
            same = now === last ? same + 1 : 0;
            last = now;
        }
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        if (x >= 0 && y >= 0 && x <= innerWidth && y <= innerHeight) break;
    }
    return {x: r.left, y: r.top, width: r.width, height: r.height};
}"""


class EngineError(AssertionError):
    """An engine could not do what the test asked (an assertion failure: the test fails)."""


def webdriver_chord(key):
    """"Shift+Tab" -> (["\\ue008"], "\\ue004"): the modifiers held, and the key pressed."""
    parts = key.split("+")
    names = [WEBDRIVER_KEYS.get(p, p) for p in parts]
    last = names[-1]
    if len(last) == 1 and parts[:-1]:
        last = last.lower()  # Control+V is the "v" key with Control held
    return names[:-1], last


# Paper sizes in cm (WebDriver's Print Page and BiDi's browsingContext.print take cm).
PAPER_CM = {"A4": (21.0, 29.7), "Letter": (21.59, 27.94)}


class Engine:
    """One browser, one tab. Subclasses implement the primitives marked below."""

    name = "engine"
    narrowest = 0  # the narrowest viewport wider than asked that set_viewport accepts
    version = ""

    # ---- primitives (each engine) ----------------------------------------------------------
    def goto(self, url, wait="load"):
        """Navigate the tab; wait="load" returns after the load event, "commit" as soon as the
        new document exists (where the engine can tell; else after load)."""
        raise NotImplementedError

    def _call(self, function_source, args):
        """Call `function_source` in the current frame with `args` (JSON); await a promise;
        return its JSON result."""
        raise NotImplementedError

    def _pointer(self, selector, points, kind, press=True):
        """Press a pointer of `kind` ("mouse", "touch", "pen") at the first of `points`
        (offsets in CSS px from the element's centre), move through the rest, release; with
        `press` false, only move the mouse there (a hover)."""
        raise NotImplementedError

    def _keys(self, chord_or_text, text=False):
        raise NotImplementedError

    def enter_frame(self, selector):
        """Evaluate and act inside the iframe `selector` of the current document."""
        raise NotImplementedError

    def leave_frame(self):
        raise NotImplementedError

    def put_on_clipboard(self, text):
        """Put `text` on the engine's clipboard (as a person's copy would)."""
        raise NotImplementedError

    def set_files(self, selector, path):
        """Choose the file at `path` in the <input type="file"> `selector`, as the file chooser
        does (the browser reads the file from disk; change and input events fire)."""
        raise NotImplementedError

    def drop_file(self, selector, path):
        """Drop the file at `path` on the element `selector`.

        Firefox and WebKit get this one, a script-made drop: their drivers (WebDriver BiDi for
        Firefox, classic WebDriver for WebKitGTK) cannot drag a file from outside the page, so
        the browser reads the file from disk through a file input of the test's own (set_files)
        and the test's script dispatches dragenter, dragover and drop, untrusted DragEvents
        carrying it in a DataTransfer, at the element's centre. That checks the page's drop
        handlers and its reading of a dropped File; it does not check that the engine itself
        delivers a drop from the desktop to them. Only Chromium's drop is the browser's own (chromium.py: DevTools'
        Input.dispatchDragEvent, trusted events), and tests/browser/test_page_model_file.py
        drops an .npz and a .safetensors that way."""
        self.evaluate("""() => { let i = document.getElementById('__drop_source');
            if (!i) { i = document.createElement('input'); i.type = 'file'; i.id = '__drop_source';
                      i.style.cssText = 'position:fixed;left:0;top:0;opacity:0.01'; document.body.append(i); }
            window.__dropPicked = new Promise((r) => i.addEventListener('change', r, {once: true})); }""")
        self.set_files("#__drop_source", path)
        self.evaluate("""async (selector) => {
            await window.__dropPicked;
            const i = document.getElementById('__drop_source');
            const target = document.querySelector(selector);
            const r = target.getBoundingClientRect();
            const at = {clientX: r.left + r.width / 2, clientY: r.top + r.height / 2};
            const data = new DataTransfer();
            data.items.add(i.files[0]);
            for (const type of ['dragenter', 'dragover', 'drop']) {
                target.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true,
                                                          dataTransfer: data, ...at}));
            }
            i.remove(); delete window.__dropPicked; }""", selector)

    def set_viewport(self, width, height):
        raise NotImplementedError

    def screenshot(self, path):
        raise NotImplementedError

    def print_pdf(self, paper):
        """The page printed as the browser prints it, portrait on `paper` ("A4" or "Letter"),
        without background colours (the browsers' default), as a PDF's bytes; EngineError where
        the engine's driver cannot print (WebKitWebDriver has no Print Page command)."""
        raise EngineError("%s: its driver cannot print a page" % self.name)

    def console_errors(self):
        """Console errors and uncaught exceptions since the last goto."""
        raise NotImplementedError

    def close(self):
        raise NotImplementedError

    # ---- the same in every engine ----------------------------------------------------------
    def evaluate(self, function_source, *args):
        """Call a JavaScript function expression with JSON arguments; returns JSON."""
        return self._call(function_source, list(args))

    def wait_for(self, function_source, *args, timeout=30.0, every_ms=20):
        """Wait until the function returns something truthy (polled in the page); returns it."""
        deadline = time.monotonic() + timeout
        while True:
            slice_ms = max(50, min(POLL_SLICE_MS, int((deadline - time.monotonic()) * 1000)))
            value = self._call(POLL_JS.replace("PREDICATE", function_source.strip()),
                               [list(args), slice_ms, every_ms])
            if value:
                return value
            if time.monotonic() >= deadline:
                raise EngineError("%s: timed out after %.0f s waiting for %s%s" % (
                    self.name, timeout, " ".join(function_source.split())[:300],
                    " with %s" % json.dumps(args)[:200] if args else ""))

    def box(self, selector):
        box = self.evaluate(BOX_JS, selector)
        if box is None:
            raise EngineError("%s: no element matches %s" % (self.name, selector))
        if box["width"] < 1 or box["height"] < 1:
            raise EngineError("%s: %s is not visible (%r)" % (self.name, selector, box))
        return box

    def _at(self, selector, fractions):
        """Offsets from the element's centre of points given as fractions of its box."""
        box = self.box(selector)
        return [((fx - 0.5) * box["width"], (fy - 0.5) * box["height"]) for fx, fy in fractions]

    def click(self, selector, at=(0.5, 0.5)):
        """A real mouse click (press, release) at the element's centre, scrolled into view."""
        self._pointer(selector, self._at(selector, [at]), "mouse")

    def point(self, selector, at=(0.5, 0.5)):
        """The mouse moved onto the element (at fractions of its box), no button pressed."""
        self._pointer(selector, self._at(selector, [at]), "mouse", press=False)

    def tap(self, selector, at=(0.5, 0.5)):
        """A touch (finger) tap."""
        self._pointer(selector, self._at(selector, [at]), "touch")

    def pen(self, selector, at=(0.5, 0.5)):
        """A pen (stylus) tap."""
        self._pointer(selector, self._at(selector, [at]), "pen")

    def drag(self, selector, fractions, kind="mouse"):
        """Press at the first point, move through the others, release (a drawn stroke)."""
        self._pointer(selector, self._at(selector, fractions), kind)

    def type_keys(self, text):
        """Type `text` into the focused element, one key press per character."""
        self._keys(text, text=True)

    def press(self, key):
        """Press one key or chord: "Enter", "Escape", "Tab", "Shift+Tab", "ArrowDown",
        "Control+A", ..."""
        self._keys(key)

    def paste(self, text):
        """A real paste of `text` into the focused element: the clipboard, then Control+V."""
        focused = self.evaluate("() => { window.__engineFocus = document.activeElement;"
                                " return !!document.activeElement; }")
        self.put_on_clipboard(text)
        # Putting text on the clipboard may move the focus (WebKit copies from a text area):
        # give it back to the element that had it.
        if focused:
            self.evaluate("() => { const el = window.__engineFocus; delete window.__engineFocus;"
                          " if (el && document.activeElement !== el) el.focus(); }")
        self.press("Control+V")
