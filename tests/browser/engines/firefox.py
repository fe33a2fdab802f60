"""Firefox (ESR) driven over WebDriver BiDi directly: no geckodriver, no Playwright."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

from .base import PAPER_CM, Engine, EngineError, webdriver_chord
from .bidi import BiDiError, BiDiSession

MISSING = "no Firefox: install Debian's Firefox ESR (`apt-get install firefox-esr`)"
BINARIES = ["firefox-esr", "firefox"]

# A profile for a test browser: no updates, telemetry, first-run or default-browser pages, no
# network of its own; only WebDriver BiDi (not the old CDP) listens.
USER_JS = {
    "remote.active-protocols": 1,
    "app.update.disabledForTesting": True,
    "app.update.auto": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.page": 0,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "startup.homepage_welcome_url": "about:blank",
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.unified": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "browser.newtabpage.enabled": False,
    "dom.disable_open_during_load": False,
}


def firefox_binary():
    for name in BINARIES:
        path = shutil.which(name)
        if path:
            return path
    raise EngineError(MISSING)


class Firefox(Engine):
    name = "firefox"

    def __init__(self, width=1280, height=720, dark=False, forced_colours=False):
        binary = firefox_binary()
        self.profile = tempfile.mkdtemp(prefix="engine-firefox-")
        # pages' prefers-color-scheme: 0 dark, 1 light (ESR 153's BiDi cannot emulate it)
        prefs = dict(USER_JS, **{"layout.css.prefers-color-scheme.content-override": 0 if dark else 1})
        if forced_colours:
            # "Override the colours specified by the page with your selections above: Always"
            # (Settings, Colours): Firefox's forced colours mode, `forced-colors: active`, its
            # colours the light defaults. ESR 153's BiDi has no
            # emulation.setForcedColorsModeThemeOverride (it answers "unknown command").
            prefs["browser.display.document_color_use"] = 2
        with open(os.path.join(self.profile, "user.js"), "w") as f:
            for key, value in prefs.items():
                f.write("user_pref(%s, %s);\n" % (json.dumps(key), json.dumps(value)))
        self.process = subprocess.Popen(
            [binary, "--headless", "--remote-debugging-port=0", "--profile", self.profile,
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
        self.session = None
        try:
            self.session = BiDiSession(self._listening_url(time.monotonic() + 60) + "/session")
        except Exception:
            self.close()
            raise
        self.version = self.session.capabilities.get("browserVersion", "")
        # The page runs in a tab made in the foreground: the tab Firefox opens with never gets
        # the focus, headless, and a page without focus is sent no focus events (focus,
        # focusin, focusout), which a person's page always gets.
        self.session.top = self.session.conn.command(
            "browsingContext.create", {"type": "tab", "background": False})["context"]
        self.context = self.session.top
        self._errors = []
        self.session.conn.on("log.entryAdded", self._log)
        self.session.subscribe("log.entryAdded")
        self.set_viewport(width, height)

    def _listening_url(self, deadline):
        """Read stderr until "WebDriver BiDi listening on ws://..."; keep draining it after."""
        found = []
        ready = threading.Event()

        def drain():
            for line in self.process.stderr:
                match = re.search(r"WebDriver BiDi listening on (ws://\S+)", line)
                if match and not found:
                    found.append(match.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=drain, name="firefox-stderr", daemon=True).start()
        ready.wait(max(0.0, deadline - time.monotonic()))
        if not found:
            raise EngineError("firefox did not start its WebDriver BiDi server")
        return found[0]

    def _log(self, params):
        if params.get("level") == "error":
            source = (params.get("source") or {}).get("context")
            text = params.get("text") or ""
            if "favicon.ico" not in text:
                self._errors.append("%s (%s)" % (text, params.get("type")) if source else text)

    def goto(self, url, wait="load"):
        self._errors = []
        self.context = self.session.top
        self.session.navigate(url, wait="none" if wait == "commit" else "complete")
        if wait == "commit":  # "none" returns before the new document exists: wait for it
            self.wait_for("(u) => location.href === u", url, timeout=60)

    def _call(self, function_source, args):
        # Results travel as JSON text: one string, whatever the function returns.
        wrapped = ("async (json) => { const value = await (%s)(...JSON.parse(json));"
                   " return value === undefined ? 'null' : JSON.stringify(value); }"
                   % function_source.strip())
        try:
            text = self.session.call(wrapped, [json.dumps(args)], context=self.context)
        except BiDiError as e:
            raise EngineError("firefox: %s" % e)
        return json.loads(text)

    def _element(self, selector):
        node = self.session.call("(s) => document.querySelector(s)", [selector],
                                 context=self.context, raw=True)
        if node.get("type") != "node":
            raise EngineError("firefox: no element matches %s" % selector)
        return {"sharedId": node["sharedId"]}

    def _pointer(self, selector, points, kind, press=True):
        origin = {"type": "element", "element": self._element(selector)}
        moves = [{"type": "pointerMove", "x": round(dx), "y": round(dy), "origin": origin,
                  "duration": 16} for dx, dy in points]
        actions = [moves[0], {"type": "pointerDown", "button": 0}]
        actions += moves[1:] + [{"type": "pointerUp", "button": 0}]
        if not press:
            actions = moves
        self.session.perform([{"type": "pointer", "id": kind,
                               "parameters": {"pointerType": kind}, "actions": actions}],
                             context=self.context)

    def _keys(self, chord_or_text, text=False):
        if text:
            keys, held = list(chord_or_text), []
        else:
            held, key = webdriver_chord(chord_or_text)
            keys = [key]
        actions = [{"type": "keyDown", "value": k} for k in held]
        for k in keys:
            actions += [{"type": "keyDown", "value": k}, {"type": "keyUp", "value": k}]
        actions += [{"type": "keyUp", "value": k} for k in reversed(held)]
        self.session.perform([{"type": "key", "id": "keyboard", "actions": actions}],
                             context=self.session.top)

    def enter_frame(self, selector):
        src = self.evaluate("(s) => { const f = document.querySelector(s); return f && f.src; }",
                            selector)
        for context, url in self.session.children(self.context):
            if src and url.split("#")[0] == src.split("#")[0]:
                self.context = context
                return
        raise EngineError("firefox: no frame %s" % selector)

    def leave_frame(self):
        self.context = self.session.top

    def put_on_clipboard(self, text):
        # writeText needs a user activation, which a BiDi call may grant.
        self.session.call("(t) => navigator.clipboard.writeText(t)", [text],
                          context=self.session.top, user_activation=True)

    def set_files(self, selector, path):
        self.session.conn.command("input.setFiles", {
            "context": self.context, "element": self._element(selector), "files": [path]})

    def set_viewport(self, width, height):
        self.session.set_viewport(width, height)

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(self.session.screenshot_png())

    def print_pdf(self, paper):
        return self.session.print_pdf(*PAPER_CM[paper])

    def console_errors(self):
        return list(self._errors)

    def close(self):
        if self.session:
            self.session.end()
        else:
            self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)
