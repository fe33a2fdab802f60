"""WebKit: Debian's WebKitGTK MiniBrowser through WebKitWebDriver (classic WebDriver, Selenium).

MiniBrowser is a GTK program and needs an X display even under automation (it has no headless
mode that runs without one), so when $DISPLAY is unset this starts its own Xvfb on a free
display number and stops it on close. Classic WebDriver has no console log for WebKitGTK: the
engine installs a recorder of console.error and uncaught errors after each navigation, so
errors logged before that (during the first scripts) are not seen here; CSP violations are
caught by the test server's report-uri in every engine instead.
"""
import base64
import json
import os
import shutil
import subprocess
import time

from .base import PAPER_CM, Engine, EngineError, webdriver_chord

MISSING = ("no WebKit: install Debian's WebKitGTK WebDriver and an X server for it "
           "(`apt-get install webkit2gtk-driver xvfb`)")
MINIBROWSERS = ["/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
                "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
                "/usr/lib/x86_64-linux-gnu/webkitgtk-6.0/MiniBrowser"]

RECORD_ERRORS_JS = """() => {
    if (window.__engineErrors) return;
    const errors = window.__engineErrors = [];
    const original = console.error;
    console.error = function (...args) { errors.push(args.map(String).join(" ")); return original.apply(this, args); };
    window.addEventListener("error", (e) => errors.push("uncaught: " + (e.message || e.type)));
    window.addEventListener("unhandledrejection", (e) => errors.push("unhandled rejection: " + e.reason));
}"""


def start_xvfb():
    """(process, ":N") of a new Xvfb on the first free display number from 90."""
    if not shutil.which("Xvfb"):
        raise EngineError(MISSING + " ($DISPLAY is unset and there is no Xvfb)")
    for number in range(90, 190):
        if os.path.exists("/tmp/.X%d-lock" % number) or os.path.exists("/tmp/.X11-unix/X%d" % number):
            continue
        process = subprocess.Popen(["Xvfb", ":%d" % number, "-screen", "0", "1920x1200x24",
                                    "-nolisten", "tcp"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        for _ in range(100):  # up to 5 s for its socket
            if os.path.exists("/tmp/.X11-unix/X%d" % number):
                return process, ":%d" % number
            if process.poll() is not None:
                break
            time.sleep(0.05)
        process.kill()
        process.wait()
    raise EngineError("webkit: could not start Xvfb")


# In view: inside the window, and not scrolled away inside a box that scrolls (a grid's column
# past its editor's width: its centre inside the window, but the point shows another element).
# A grid draws only the cells in view (js/grid/grid.js), a frame after it scrolls: the element is
# found again once two frames have passed.
CENTRE_IN_VIEW_JS = """(selector) => new Promise((done) => {
    let el = document.querySelector(selector);
    let r = el.getBoundingClientRect();
    const hit = (b) => { const at = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
                         return at !== null && (at === el || el.contains(at)); };
    if (!(r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth || !hit(r))) {
        done([r.left + r.width / 2, r.top + r.height / 2]);
        return;
    }
    el.scrollIntoView({block: "nearest", inline: "nearest"});
    requestAnimationFrame(() => requestAnimationFrame(() => {
        el = document.querySelector(selector);
        r = el.getBoundingClientRect();
        done([r.left + r.width / 2, r.top + r.height / 2]);
    }));
})"""


class WebKit(Engine):
    name = "webkit"

    def __init__(self, width=1280, height=720, dark=False):
        driver_path = shutil.which("WebKitWebDriver")
        minibrowser = next((p for p in MINIBROWSERS if os.path.exists(p)), None)
        if not driver_path or not minibrowser:
            raise EngineError(MISSING)
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service
        self.xvfb, env = None, dict(os.environ)
        if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            self.xvfb, env["DISPLAY"] = start_xvfb()
        # WebKitGTK's pages prefer the dark scheme when GTK's theme is a dark one
        env["GTK_THEME"] = "Adwaita:dark" if dark else "Adwaita"
        # No accelerated compositing: without a GPU (Xvfb) its layers are drawn through Mesa's
        # software OpenGL, about 30 % of WebKit's CPU time here, taken from the other test
        # worker. Layout, script, canvas and what is painted are WebKit's own either way
        # (docs/hosts.md, "Browsers in the tests").
        env["WEBKIT_DISABLE_COMPOSITING_MODE"] = "1"
        options = Options()
        options.binary_location = minibrowser
        options.add_argument("--automation")
        try:
            self.driver = webdriver.WebKitGTK(
                options=options, service=Service(driver_path, env=env))
        except Exception:
            self._stop_xvfb()
            raise
        self.driver.set_script_timeout(60)
        self.version = self.driver.capabilities.get("browserVersion", "")
        self._frame = None
        self.set_viewport(width, height)

    def goto(self, url, wait="load"):
        # Classic WebDriver returns after the load event ("commit" is not available here).
        self._frame = None
        self.driver.switch_to.default_content()
        self.driver.get(url)
        self._call(RECORD_ERRORS_JS, [])

    def _call(self, function_source, args):
        script = ("const done = arguments[arguments.length - 1];"
                  "Promise.resolve().then(() => (%s)(...JSON.parse(arguments[0])))"
                  ".then((v) => done(JSON.stringify({ok: v === undefined ? null : v})),"
                  " (e) => done(JSON.stringify({error: String(e && e.stack || e)})));"
                  % function_source.strip())
        answer = json.loads(self.driver.execute_async_script(script, json.dumps(args)))
        if "error" in answer:
            raise EngineError("webkit: script error: %s" % answer["error"])
        return answer["ok"]

    def print_pdf(self, paper):
        # Selenium's print_page is WebDriver's Print Page command, which WebKitWebDriver 2.50
        # answers with "Unknown command": said as an EngineError, like any engine without it.
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.common.print_page_options import PrintOptions
        options = PrintOptions()
        options.page_width, options.page_height = PAPER_CM[paper]
        options.orientation = "portrait"
        options.margin_top = options.margin_bottom = options.margin_left = options.margin_right = 0
        try:
            return base64.b64decode(self.driver.print_page(options))
        except WebDriverException as e:
            raise EngineError("webkit: its driver cannot print a page (%s)" % " ".join(str(e).split())[:200])

    def _element(self, selector):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def _pointer(self, selector, points, kind, press=True):
        from selenium.webdriver.common.actions import interaction
        from selenium.webdriver.common.actions.action_builder import ActionBuilder
        from selenium.webdriver.common.actions.pointer_input import PointerInput
        element = self._element(selector)
        kinds = {"mouse": interaction.POINTER_MOUSE, "touch": interaction.POINTER_TOUCH,
                 "pen": interaction.POINTER_PEN}
        builder = ActionBuilder(self.driver, mouse=PointerInput(kinds[kind], kind))
        pointer = builder.pointer_action
        if self._frame:
            def move(dx, dy):
                pointer.move_to(element, round(dx), round(dy))
        else:
            # From the viewport's origin: WebKitWebDriver refuses a move relative to an element
            # as out of bounds once the press has started a stroke on the drawing pad (seen
            # with the pad fully in view); the page is scrolled to the element first, as a move
            # to the element would.
            x, y = self._call(CENTRE_IN_VIEW_JS, [selector])

            def move(dx, dy):
                pointer.move_to_location(round(x + dx), round(y + dy))
        move(*points[0])
        if press:
            pointer.pointer_down()
        for dx, dy in points[1:]:
            move(dx, dy)
        if press:
            pointer.pointer_up()
        builder.perform()
        builder.clear_actions()  # nothing stays pressed

    def _keys(self, chord_or_text, text=False):
        from selenium.webdriver.common.action_chains import ActionChains
        chain = ActionChains(self.driver)
        if text:
            for ch in chord_or_text:  # a keyDown and keyUp per character
                chain.key_down(ch).key_up(ch)
        else:
            held, key = webdriver_chord(chord_or_text)
            for k in held:
                chain.key_down(k)
            chain.key_down(key).key_up(key)
            for k in reversed(held):
                chain.key_up(k)
        chain.perform()

    def enter_frame(self, selector):
        self.driver.switch_to.frame(self._element(selector))
        self._frame = selector

    def leave_frame(self):
        self.driver.switch_to.default_content()
        self._frame = None

    def put_on_clipboard(self, text):
        # navigator.clipboard.writeText needs a user gesture, which a WebDriver script is not:
        # copy it as a person would, from a text area selected with Control+A, Control+C.
        self.evaluate("""(t) => { const a = document.createElement("textarea");
            a.id = "__engine_clipboard"; a.value = t;
            a.style.cssText = "position:fixed;left:0;top:0;width:4em;height:2em;z-index:2147483647";
            document.body.append(a); a.focus(); a.select(); }""", text)
        try:
            self.press("Control+A")
            self.press("Control+C")
        finally:
            self.evaluate("() => document.getElementById('__engine_clipboard').remove()")

    # MiniBrowser's toolbar keeps its window at least 447 px wide (WebKitGTK 2.50): a phone's
    # viewport is then that wide, a large phone's (phones are 360-430 px wide).
    narrowest = 460

    def set_files(self, selector, path):
        # WebDriver's Element Send Keys to a file input chooses the file at that path
        self._element(selector).send_keys(path)

    def set_viewport(self, width, height):
        # The window includes MiniBrowser's own toolbar: size it so the viewport is as asked.
        self.driver.set_window_size(width, height)
        for _ in range(3):
            inner = self.evaluate("() => [innerWidth, innerHeight]")
            if inner == [width, height]:
                return
            size = self.driver.get_window_size()
            # the window read while it is still being resized may be 0 x 0, or smaller than
            # the viewport it holds: then ask for the viewport's size again, and read it anew
            outer = (size["width"] + width - inner[0], size["height"] + height - inner[1])
            if outer[0] < width or outer[1] < height:
                outer = (width, height)
            self.driver.set_window_size(*outer)
            time.sleep(0.2)
        inner = self.evaluate("() => [innerWidth, innerHeight]")
        if inner[1] == height and width < inner[0] <= self.narrowest:
            return  # a phone as wide as MiniBrowser allows (its toolbar sets a minimum width)
        if inner != [width, height]:
            raise EngineError("webkit: MiniBrowser's window gives a %d x %d viewport, not %d x %d "
                              "(its toolbar sets a minimum width)" % (inner[0], inner[1], width, height))

    def screenshot(self, path):
        self.driver.save_screenshot(path)

    def console_errors(self):
        self.driver.switch_to.default_content()
        try:
            return self._call("() => window.__engineErrors || []", [])
        finally:
            if self._frame:
                self.driver.switch_to.frame(self._element(self._frame))

    def _stop_xvfb(self):
        if self.xvfb:
            self.xvfb.terminate()
            try:
                self.xvfb.wait(5)
            except subprocess.TimeoutExpired:
                self.xvfb.kill()
            self.xvfb = None

    def close(self):
        try:
            self.driver.quit()
        finally:
            self._stop_xvfb()
