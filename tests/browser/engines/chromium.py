"""Chromium through Playwright (the system's Chromium, or Playwright's own when installed)."""
import os
import shutil

from buildtools.browser import CHROMIUM_FLAGS, SYSTEM_CHROMIUMS

from .base import Engine, EngineError

MISSING = ("no Chromium: install Debian's (`apt-get install chromium`) or Playwright's "
           "(`python3 -m playwright install chromium`)")


def chromium_path(playwright):
    """None for Playwright's own Chromium, else a system Chromium's path; EngineError if none."""
    try:
        own = playwright.chromium.executable_path
    except Exception:
        own = None
    if own and os.path.exists(own):
        return None
    for path in SYSTEM_CHROMIUMS + [shutil.which("chromium") or ""]:
        if path and os.path.exists(path):
            return path
    raise EngineError(MISSING)


class Chromium(Engine):
    name = "chromium"

    def __init__(self, playwright, dark=False):
        path = chromium_path(playwright)
        self.browser = playwright.chromium.launch(
            headless=True, args=list(CHROMIUM_FLAGS),
            **({"executable_path": path} if path else {}))
        self.version = self.browser.version
        self.context = self.browser.new_context(viewport={"width": 1280, "height": 720},
                                                color_scheme="dark" if dark else "light")
        # A real paste reads the system clipboard, which navigator.clipboard fills.
        self.context.grant_permissions(["clipboard-read", "clipboard-write"])
        self.page = self.context.new_page()
        self.frame = self.page.main_frame
        self.cdp = self.context.new_cdp_session(self.page)  # touch and pen input
        self._errors = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self._errors.append("uncaught: %s" % error))

    def print_pdf(self, paper):
        return self.page.pdf(format=paper)

    def _console(self, message):
        if message.type == "error":
            where = (message.location or {}).get("url") or ""
            if not where.endswith("/favicon.ico"):  # the browser's own guess, not the page's
                self._errors.append(message.text + (" (%s)" % where if where else ""))

    def goto(self, url, wait="load"):
        self._errors = []
        self.frame = self.page.main_frame
        self.page.goto(url, wait_until="commit" if wait == "commit" else "load", timeout=120000)

    def _call(self, function_source, args):
        # Playwright calls a function expression with one argument: spread it.
        return self.frame.evaluate("async (args) => await (%s)(...args)" % function_source.strip(),
                                   args)

    def _pointer(self, selector, points, kind, press=True):
        handle = self.frame.query_selector(selector)
        box = handle and handle.bounding_box()  # in the top-level viewport, frames included
        if not box:
            raise EngineError("chromium: %s is not on screen" % selector)
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        xy = [(cx + dx, cy + dy) for dx, dy in points]
        if kind == "mouse" and not press:
            for p in xy:
                self.page.mouse.move(*p, steps=2)
        elif kind == "mouse":
            mouse = self.page.mouse
            mouse.move(*xy[0])
            mouse.down()
            for p in xy[1:]:
                mouse.move(*p, steps=2)
            mouse.up()
        elif kind == "touch":
            # Input.dispatchTouchEvent: real touch events and touch pointer events, without
            # turning the whole context into a touch device (which changes media queries).
            self.cdp.send("Input.dispatchTouchEvent", {
                "type": "touchStart", "touchPoints": [{"x": xy[0][0], "y": xy[0][1]}]})
            for x, y in xy[1:]:
                self.cdp.send("Input.dispatchTouchEvent", {
                    "type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
            self.cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        elif kind == "pen":
            def pen(kind, x, y, buttons):
                self.cdp.send("Input.dispatchMouseEvent", {
                    "type": kind, "x": x, "y": y, "button": "left" if buttons else "none",
                    "buttons": buttons, "clickCount": 1, "pointerType": "pen", "force": 0.5})
            pen("mouseMoved", xy[0][0], xy[0][1], 0)
            pen("mousePressed", xy[0][0], xy[0][1], 1)
            for x, y in xy[1:]:
                pen("mouseMoved", x, y, 1)
            pen("mouseReleased", xy[-1][0], xy[-1][1], 0)
        else:
            raise EngineError("chromium: no %s pointer" % kind)

    def _keys(self, chord_or_text, text=False):
        if text:
            self.page.keyboard.type(chord_or_text)  # a keydown/keypress/input/keyup per char
        else:
            self.page.keyboard.press(chord_or_text)

    def enter_frame(self, selector):
        handle = self.frame.query_selector(selector)
        frame = handle and handle.content_frame()
        if not frame:
            raise EngineError("chromium: no frame %s" % selector)
        self.frame = frame

    def leave_frame(self):
        self.frame = self.page.main_frame

    def put_on_clipboard(self, text):
        self.page.main_frame.evaluate("(t) => navigator.clipboard.writeText(t)", text)

    def set_files(self, selector, path):
        self.frame.set_input_files(selector, path)

    def drop_file(self, selector, path):
        """A drag of the file from outside the page, delivered by the browser: dragenter,
        dragover and drop are trusted events whose DataTransfer holds the file read from disk."""
        box = self.box(selector)
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        data = {"items": [], "files": [path], "dragOperationsMask": 1}
        for kind in ("dragEnter", "dragOver", "drop"):
            self.cdp.send("Input.dispatchDragEvent", {"type": kind, "x": x, "y": y, "data": data})

    def set_viewport(self, width, height):
        self.page.set_viewport_size({"width": width, "height": height})

    def screenshot(self, path):
        self.page.screenshot(path=path)

    def console_errors(self):
        return list(self._errors)

    def close(self):
        self.browser.close()
