#!/usr/bin/env python3
"""What a real screen reader says for the page's announcements (WCAG 4.1.3): Orca, GNOME's
screen reader, reading Firefox ESR on an X server of its own (Xvfb), with keys typed by xdotool
into the real Firefox window. A manual check, not part of pytest (docs/accessibility.md, 4.1.3).

    python3 build.py                                  # the site in dist/ (VIT_HEAD_MIRROR set)
    python3 benchmarks/screen_reader_check.py         # then this, about two minutes
    python3 benchmarks/screen_reader_check.py --keep-log /tmp/orca.log   # Orca's whole debug log

Needs Debian's packages: apt-get install orca at-spi2-core dbus-x11 speech-dispatcher
espeak-ng xdotool python3-pyatspi xvfb firefox-esr. It runs with the system's Python (pyatspi
is a Debian package), re-starting itself under /usr/bin/python3 when needed.

How it hears: Orca runs with its debug log (--debug-file), in which every utterance it sends to
the speech synthesizer is a "SPEECH OUTPUT: '...'" line, each inside the block of the event
that caused it: a key (Orca's echo of the key, or its own command), an object event (a focus
moving, text selected), or "PRESENT LIVE REGION MESSAGE" (a live region's change, queued by
Orca's live region manager). Speech goes through speech-dispatcher and espeak-ng to ALSA's null
device, so it is synthesized as it would be heard, but silently. Orca's settings are its
defaults (a new user's: key echo on, live regions on).

Each action puts the focus where a person would be (through AT-SPI, as Orca's own navigation
would), waits for quiet, then presses keys with xdotool and waits until nothing more is said.
What was said is listed by cause; a page announcement is a live region's or an alert's message.
The check passes when each action's result was said exactly once, and no other page
announcement was made.

Exit status: 0 when every action was said once and nothing else from the page was; 1 when not;
2 when something needed is missing (printed).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SYSTEM_PYTHON = "/usr/bin/python3"
AT_SPI_BUS = "/usr/libexec/at-spi-bus-launcher"
PACKAGES = ("orca at-spi2-core dbus-x11 speech-dispatcher espeak-ng xdotool python3-pyatspi "
            "xvfb firefox-esr")
PROGRAMS = {"orca": "orca", "Xvfb": "xvfb", "dbus-daemon": "dbus", "xdotool": "xdotool",
            "firefox-esr": "firefox-esr", "speech-dispatcher": "speech-dispatcher",
            "espeak-ng": "espeak-ng"}

# Orca's debug log opened line-buffered, so that it can be read while Orca runs (orca opens it
# with the default buffer, written out only now and then).
ORCA_LAUNCHER = r"""
import builtins, runpy, sys
log = sys.argv[1]
_open = builtins.open
def _open_lined(f, mode="r", *a, **k):
    if f == log and "w" in mode:
        return _open(f, mode, buffering=1, encoding="utf-8", errors="replace")
    return _open(f, mode, *a, **k)
builtins.open = _open_lined
sys.argv = ["orca", "--debug-file=" + log] + sys.argv[2:]
runpy.run_path("/usr/bin/orca", run_name="__main__")
"""

FIREFOX_PREFS = {
    "accessibility.force_disabled": 0,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.aboutwelcome.enabled": False,
    "browser.startup.page": 0,
    "browser.newtabpage.enabled": False,
    "browser.sessionstore.resume_from_crash": False,
    "browser.tabs.warnOnClose": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.update.enabled": False,
    "app.normandy.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.safebrowsing.update.enabled": False,
    "extensions.autoDisableScopes": 15,
}


def missing():
    """What this check needs and does not find, as a list of words."""
    lacking = [name for name in PROGRAMS if not shutil.which(name)]
    if not os.path.exists(AT_SPI_BUS):
        lacking.append(AT_SPI_BUS)
    if not os.path.exists(SYSTEM_PYTHON) or subprocess.run(
            [SYSTEM_PYTHON, "-c", "import pyatspi"], capture_output=True).returncode:
        lacking.append("pyatspi (python3-pyatspi) for " + SYSTEM_PYTHON)
    return lacking


def version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def package_version(name):
    return version(["dpkg-query", "-W", "-f", "${Version}", name]) or "?"


# ---- Orca's log, read by cause ------------------------------------------------------------------

BLOCK_OPEN = re.compile(r"^vvvvv (?:(PRESENT LIVE REGION MESSAGE)|(PROCESS|CONSUME) "
                        r"(?:OBJECT EVENT (\S+)|ATSPI_KEY_\w+: '(.*)' \(\d+\)))\s*vvvvv")
BLOCK_CLOSE = re.compile(r"^\^\^\^\^\^ ")
SPOKEN = re.compile(r"SPEECH OUTPUT: '(.*)'( )?(?:voice=\w+)?\s*\{")
ATTRIBUTES = re.compile(r"^\s+attributes='(.*)'$")
NAME_ROLE = re.compile(r"^\s+app\.name='.*?' name='(.*)' role='([^']*)'$")
LIVE_EVENT = re.compile(r"OBJECT EVENT: object:(text-changed:insert\S*|children-changed:add\S*) \(.*?, (.*)\)$")


class Utterance:
    def __init__(self, text, cause, source=""):
        self.text, self.cause, self.source = text, cause, source

    def __repr__(self):
        return "%-14s %-22s %r" % (self.cause, self.source, self.text)


def read_speech(log_text):
    """The utterances in a stretch of Orca's debug log, each with its cause: 'key' (in a key
    event's block: the key's echo or Orca's own command), 'live region' (in a PRESENT LIVE REGION
    MESSAGE block), 'alert' (an alert presented by its children-changed event), 'description'
    (the focused object's description changed, which Orca says), 'focus' (any
    other object event: a focus or caret moving, text selected), 'other' (outside any block).
    Also the changes of live regions that Orca received and handled as such: (id, text)."""
    said, changes = [], []
    block = None  # {"kind", "what", "id", "name", "role", "live"}
    for line in log_text.splitlines():
        m = BLOCK_OPEN.match(line)
        if m:
            if m.group(1):
                block = {"kind": "live region", "what": "", "id": ""}
            elif m.group(3):
                block = {"kind": "object", "what": m.group(3), "id": "", "event": ""}
            else:  # a key: CONSUME when Orca took it as one of its commands
                block = {"kind": "key", "what": m.group(4) + (" (Orca's command)" if m.group(2) == "CONSUME" else ""),
                         "id": ""}
            continue
        if BLOCK_CLOSE.match(line):
            if block and block.get("live") and block.get("event"):
                changes.append((block["id"], block["event"]))
            block = None
            continue
        if block is not None and block["kind"] == "object":
            m = LIVE_EVENT.search(line)
            if m and not block["event"]:
                block["event"] = m.group(2)
            m = NAME_ROLE.match(line)
            if m and "name" not in block:
                block["name"] = m.group(1)
            m = ATTRIBUTES.match(line)
            if m and not block["id"]:
                ident = re.search(r"(?:^|, )id:([^,]*)", m.group(1))
                block["id"] = "#" + ident.group(1) if ident else ""
            if "WEB: Event to be handled as live region" in line:
                block["live"] = True
            if "WEB: Presenting event.any_data" in line:
                block["alert"] = True
        m = SPOKEN.search(line)
        if not m:
            continue
        text = m.group(1)
        if block is None:
            said.append(Utterance(text, "other"))
        elif block["kind"] == "object" and block.get("alert"):
            said.append(Utterance(text, "alert", block["id"]))
        elif block["kind"] == "object" and block["what"] == "object:property-change:accessible-description":
            said.append(Utterance(text, "description", block.get("name", "")))
        elif block["kind"] == "object":
            said.append(Utterance(text, "focus", "%s %s" % (block["what"], block["id"])))
        else:
            said.append(Utterance(text, block["kind"], block["what"]))
    # a live region's message is attributed to the region whose change holds its text
    for u in said:
        if u.cause == "live region":
            for ident, text in reversed(changes):
                # Orca's log shortens a long text to its start and " (...)"
                text = re.sub(r"^\d+, ", "", text)
                text = text[:-6] if text.endswith(" (...)") else text
                if text and (text in u.text or u.text in text):
                    u.source = ident
                    break
    return said, changes


# ---- the machine: X server, buses, Orca, Firefox -------------------------------------------------

class Desktop:
    """Xvfb, a D-Bus session bus, the AT-SPI bus, Orca and Firefox, all of them started here and
    ended here by their own process ids."""

    def __init__(self, work, url, verbose=False):
        self.work, self.url, self.verbose = Path(work), url, verbose
        self.procs = []
        self.log = self.work / "orca.log"
        self.env = dict(os.environ)
        for var in ("WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS"):
            self.env.pop(var, None)
        home, run = self.work / "home", self.work / "run"
        home.mkdir(parents=True)
        run.mkdir(mode=0o700)
        self.env.update(HOME=str(home), XDG_RUNTIME_DIR=str(run), XDG_CONFIG_HOME=str(home / ".config"),
                        XDG_DATA_HOME=str(home / ".local/share"), XDG_CACHE_HOME=str(home / ".cache"),
                        GNOME_ACCESSIBILITY="1", GTK_MODULES="gail:atk-bridge", NO_AT_BRIDGE="0",
                        MOZ_ENABLE_WAYLAND="0", LANG="en_US.UTF-8" if "LANG" not in os.environ else os.environ["LANG"])

    def start(self, name, cmd, **kw):
        out = open(self.work / ("%s.out" % name), "w")
        p = subprocess.Popen(cmd, env=self.env, stdout=kw.pop("stdout", out), stderr=out,
                             start_new_session=True, **kw)
        self.procs.append((name, p))
        return p

    def up(self):
        # the X server: it writes its display number to the pipe when it is ready
        r, w = os.pipe()
        self.start("xvfb", ["Xvfb", "-displayfd", str(w), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                   pass_fds=(w,))
        os.close(w)
        with os.fdopen(r) as f:
            display = f.readline().strip()
        self.env["DISPLAY"] = ":" + display
        # the session bus
        bus = self.start("dbus", ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                         stdout=subprocess.PIPE, text=True)
        self.env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().strip()
        # the accessibility bus, turned on for everyone who asks (Firefox, Orca)
        self.start("at-spi", [AT_SPI_BUS, "--launch-immediately"])
        for _ in range(50):
            if self.dbus_set("IsEnabled"):
                break
            time.sleep(0.2)
        else:
            raise RuntimeError("the AT-SPI bus did not start (see %s)" % (self.work / "at-spi.out"))
        self.dbus_set("ScreenReaderEnabled")
        # speech-dispatcher: espeak-ng through ALSA's null device (a machine without sound)
        conf = self.work / "home/.config/speech-dispatcher"
        conf.mkdir(parents=True)
        text = Path("/etc/speech-dispatcher/speechd.conf").read_text()
        text = re.sub(r"(?m)^#\s*AudioOutputMethod .*$", 'AudioOutputMethod "alsa"', text, count=1)
        text = re.sub(r"(?m)^#\s*AudioALSADevice .*$", 'AudioALSADevice "null"', text, count=1)
        (conf / "speechd.conf").write_text(text)
        for sub in ("modules", "clients"):
            (conf / sub).symlink_to("/etc/speech-dispatcher/" + sub)
        # Orca, with its defaults and its debug log
        prefs = self.work / "orca-prefs"
        prefs.mkdir()
        self.start("orca", [SYSTEM_PYTHON, "-c", ORCA_LAUNCHER, str(self.log), "-u", str(prefs)])
        self.wait_log(lambda t: "SPEECH OUTPUT: 'Screen reader on.'" in t, 60, "Orca to start")
        # Firefox, with accessibility on
        profile = self.work / "firefox-profile"
        profile.mkdir()
        (profile / "user.js").write_text("".join(
            'user_pref("%s", %s);\n' % (k, str(v).lower() if isinstance(v, bool) else
                                        v if isinstance(v, int) else '"%s"' % v)
            for k, v in FIREFOX_PREFS.items()))
        self.start("firefox", ["firefox-esr", "--no-remote", "--new-instance", "--profile", str(profile), self.url])

    def dbus_set(self, prop):
        return subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.a11y.Bus", "/org/a11y/bus",
             "org.freedesktop.DBus.Properties.Set", "string:org.a11y.Status", "string:" + prop,
             "variant:boolean:true"], env=self.env, capture_output=True).returncode == 0

    def focus_mode(self):
        """Whether Orca is in focus mode (keys go to the page), by the last state it logged."""
        modes = re.findall(r"_inFocusMode: (True|False)", self.log_since(max(0, self.log_size() - 200000)))
        return bool(modes) and modes[-1] == "True"

    def log_size(self):
        return self.log.stat().st_size if self.log.exists() else 0

    def log_since(self, offset):
        with open(self.log, "rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")

    def wait_log(self, ok, timeout, what):
        end = time.time() + timeout
        while time.time() < end:
            if self.log.exists() and ok(self.log_since(0)):
                return
            for name, p in self.procs:
                if p.poll() is not None and name in ("orca", "firefox"):
                    raise RuntimeError("%s ended (%s): %s" % (name, p.returncode, (self.work / (name + ".out")).read_text()[-2000:]))
            time.sleep(0.5)
        raise RuntimeError("timed out waiting for %s (log: %s)" % (what, self.log))

    def wait_quiet(self, since, quiet=4.0, timeout=60.0):
        """Waits until Orca has said nothing and handled no text change for `quiet` seconds."""
        end, last_size, last_change = time.time() + timeout, -1, time.time()
        busy = re.compile(r"SPEECH OUTPUT|PROCESS OBJECT EVENT object:(text-changed|children-changed)|PRESENT LIVE REGION")
        seen = 0
        while time.time() < end:
            text = self.log_since(since)
            n = len(busy.findall(text))
            if n != seen or len(text) != last_size and n != seen:
                seen, last_change = n, time.time()
            last_size = len(text)
            if time.time() - last_change >= quiet:
                return True
            time.sleep(0.25)
        return False

    def down(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(5)
        # speech-dispatcher, which Orca started and which left Orca's session: this run's own,
        # found by its socket under this run's folder
        for pid in os.listdir("/proc"):
            try:
                cmdline = Path("/proc/%s/cmdline" % pid).read_bytes().decode("utf-8", "replace")
            except (OSError, ValueError):
                continue
            if pid.isdigit() and "speech-dispatcher" in cmdline and str(self.work) in cmdline:
                try:
                    os.kill(int(pid), signal.SIGTERM)
                except ProcessLookupError:
                    pass


# ---- the page, through AT-SPI --------------------------------------------------------------------

def document():
    import pyatspi
    for app in pyatspi.Registry.getDesktop(0):
        if app is not None and app.name == "Firefox":
            doc = pyatspi.findDescendant(app, lambda o: o.getRole() == pyatspi.ROLE_DOCUMENT_WEB)
            if doc is not None:
                return doc
    return None


def named(name, role=None):
    """The page's object of accessible name `name` (and role name `role`), or None."""
    import pyatspi
    doc = document()
    if doc is None:
        return None
    return pyatspi.findDescendant(doc, lambda o: o.name == name and (role is None or o.getRoleName() == role))


def region_text(ident):
    """The text of the page's element of id `ident` ('#id'), as Firefox exposes it, or None."""
    import pyatspi
    doc = document()
    if doc is None:
        return None
    attr = "id:" + ident.lstrip("#")

    def has_id(o):
        try:
            return attr in o.getAttributes()
        except Exception:
            return False
    obj = pyatspi.findDescendant(doc, has_id)
    if obj is None:
        return None
    try:
        text = obj.queryText()
        return text.getText(0, -1).replace("\ufffc", "")
    except NotImplementedError:
        return obj.name


def wait_for(find, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        try:
            found = find()
        except Exception:  # the tree changes while it is read
            found = None
        if found is not None:
            return found
        time.sleep(0.5)
    raise RuntimeError("timed out waiting for %s" % what)


def focus(name, role=None):
    """Gives the focus to the page's object `name`; `role` first, any role if none has it."""
    try:
        obj = wait_for(lambda: named(name, role), 10, "%r in the page" % name)
    except RuntimeError:
        if role is None:
            raise
        obj = wait_for(lambda: named(name), 10, "%r in the page" % name)
    obj.queryComponent().grabFocus()


def keys(desktop, *args):
    subprocess.run(["xdotool", *args], env=desktop.env, check=True)


# ---- the actions ---------------------------------------------------------------------------------

# Each action: where the focus goes first, the keys, the live regions whose messages are its
# result (by id), and what the result must say (a regular expression), as the page writes it.
ACTIONS = [
    {"name": "edit: '-1.25' typed in cls[0,0], then Enter",
     "focus": ("cls[0,0]", "entry"), "keys": [("type", "-1.25"), ("key", "Return")],
     "result": ["#prediction-said"], "says": r"^Sample 0 predicts class \d"},
    {"name": "refused: 'abc' typed in cls[0,1], then Enter",
     "focus": ("cls[0,1]", "entry"), "keys": [("type", "abc"), ("key", "Return")],
     "result": ["#alert-said"], "says": r"^cls\[0,1\]: 'abc' is not a number"},
    {"name": "refused: 'abc' typed in cls[1,2], then Tab",
     "focus": ("cls[1,2]", "entry"), "keys": [("type", "abc"), ("key", "Tab")],
     "result": ["#alert-said"], "says": r"^cls\[1,2\]: 'abc' is not a number"},
    {"name": "scrub: Alt+Up 5 times in cls[0,3]",
     "focus": ("cls[0,3]", "entry"), "keys": [("key", "--delay", "150", *["alt+Up"] * 5)],
     "result": ["#grid-input-scrub-said", "#prediction-said"], "says": r"\d", "each": True},
    {"name": "walk-through: started (Enter on its button)",
     "focus": ("Start the walk-through", "push button"), "keys": [("key", "Return")],
     "result": ["#walk-said"], "says": r"^\S"},
    {"name": "walk-through: Next (Enter on Next)",
     "focus": ("Next →", "push button"), "keys": [("key", "Return")],
     "result": ["#walk-said"], "says": r"^\S"},
    {"name": "walk-through: ended (Enter on its button)",
     "focus": ("End the walk-through", "toggle button"), "keys": [("key", "Return")],
     "result": [], "says": None},
    {"name": "fine-tuning: Play (Enter), until it stops",
     "focus": ("Play", "toggle button"), "keys": [("key", "Return")],
     "result": ["#ft-said"], "says": r"\S", "max": 2, "timeout": 90},
    {"name": "drawing pad: 11 keys (arrows, Space, 5, Enter, Delete, 9)",
     "focus": ("pixel 0,0: 0", "table cell"),
     "keys": [("key", "--delay", "250", "Right", "Right", "Down", "space", "Down", "5", "Right",
               "Return", "Delete", "Down", "9")],
     "result": ["#digit-said"], "says": r"\S", "quiet": 10.0, "timeout": 90},
]


def run(desktop, actions, out):
    results = []
    for action in actions:
        name, role = action["focus"]
        start = desktop.log_size()
        focus(name, role)
        desktop.wait_quiet(start, quiet=2.5, timeout=20)
        if role in ("entry", "table cell") and not desktop.focus_mode():
            # Orca enters focus mode by itself when the focus moves to a field; should it not
            # have, Orca's own key for it (Insert+A), as a person would press it
            keys(desktop, "key", "Insert+a")
            desktop.wait_quiet(start, quiet=2.5, timeout=20)
        navigation, _ = read_speech(desktop.log_since(start))
        mark = desktop.log_size()
        for k in action["keys"]:
            if k[0] == "type":
                keys(desktop, "type", "--delay", "150", "--", k[1])
            else:
                keys(desktop, *k)
        settled = desktop.wait_quiet(mark, quiet=action.get("quiet", 5.0), timeout=action.get("timeout", 45))
        said, changes = read_speech(desktop.log_since(mark))
        shown = {ident: region_text(ident) for ident in action["result"]}
        results.append(judge(action, navigation, said, changes, settled, shown, out))
    return results


def judge(action, navigation, said, changes, settled, shown, out):
    page = [u for u in said if u.cause in ("live region", "alert", "description")]
    result = [u for u in page if u.source in action["result"]]
    unrelated = [u for u in page if u.source not in action["result"]]
    most = action.get("max", 1)
    says = action["says"]
    if action.get("each"):  # one result in each region (a scrub: its number, then the prediction)
        most = len(action["result"])
        counted = all(sum(u.source == r for u in result) <= 1 for r in action["result"])
    else:
        counted = True
    # the result the page holds at the end is the one said last
    final = all(not text or any(u.source == ident and (text in u.text or u.text in text) for u in result)
                for ident, text in shown.items())
    ok = (settled and not unrelated and counted and final
          and (len(result) == 0 if says is None else 1 <= len(result) <= most)
          and all(re.search(says, u.text) for u in result if says))
    # a result said twice (the same text) is not once
    texts = [u.text for u in result]
    if len(set(texts)) != len(texts):
        ok = False
    print("\n== %s" % action["name"], file=out)
    print("   before it, moving the focus there, Orca said: %s" % (
        " | ".join(u.text for u in navigation) or "nothing"), file=out)
    for u in said:
        print("   %r" % u, file=out)
    if not said:
        print("   (nothing said)", file=out)
    print("   the page's live regions now hold: %s" % (
        "; ".join("%s %r" % kv for kv in shown.items()) or "-"), file=out)
    print("   live region changes Orca received: %s" % (
        "; ".join("%s %r" % c for c in changes) or "none"), file=out)
    verdict = "OK" if ok else "NOT OK"
    detail = "page announcements: %d of its result (%s), %d unrelated%s%s" % (
        len(result), ", ".join(action["result"]) or "none expected", len(unrelated),
        "" if final else "; the text the page holds now was not said",
        "" if settled else "; speech had not stopped at the time limit")
    print("   %s: %s" % (verdict, detail), file=out)
    return {"action": action["name"], "ok": ok, "said": said, "result": result, "unrelated": unrelated}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=str(ROOT / "dist"), help="the built site (default: dist/)")
    ap.add_argument("--keep-log", metavar="PATH", help="copy Orca's debug log here")
    ap.add_argument("--only", metavar="WORD", help="run only the actions whose name contains WORD")
    args = ap.parse_args()

    lacking = missing()
    if lacking:
        print("orca not installed (or what it needs): missing %s\n  apt-get install %s"
              % (", ".join(lacking), PACKAGES), file=sys.stderr)
        return 2
    try:
        import pyatspi  # noqa: F401
    except ImportError:  # the project's Python: run again with the system's, which has pyatspi
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, *sys.argv])
    site = Path(args.site)
    if not (site / "index.html").exists():
        print("no site at %s: build it first (python3 build.py)" % site, file=sys.stderr)
        return 2

    sys.path.insert(0, str(ROOT))
    from buildtools.serve import serve_in_thread
    server, url = serve_in_thread(str(site))
    print("Orca %s; %s; at-spi2-core %s; speech-dispatcher %s; espeak-ng %s" % (
        version(["orca", "--version"]).replace("orca ", ""), version(["firefox-esr", "--version"]),
        package_version("at-spi2-core"), package_version("speech-dispatcher"), package_version("espeak-ng")))
    print("site %s, served at %s" % (site, url))

    work = tempfile.mkdtemp(prefix="screen-reader-")
    desktop = Desktop(work, url)
    os.environ.update({k: desktop.env[k] for k in ("HOME", "XDG_RUNTIME_DIR")})
    try:
        desktop.up()
        os.environ.update(DISPLAY=desktop.env["DISPLAY"],
                          DBUS_SESSION_BUS_ADDRESS=desktop.env["DBUS_SESSION_BUS_ADDRESS"])
        # the page is ready when its first cell is in the accessibility tree and all is quiet
        wait_for(lambda: named("cls[0,0]", "entry"), 120, "the page's cells in Firefox's accessibility tree")
        window = wait_for(lambda: (subprocess.run(["xdotool", "search", "--name", "Mozilla Firefox"],
                                                  env=desktop.env, capture_output=True, text=True)
                                   .stdout.split() or [None])[-1], 30, "Firefox's window")
        # the keyboard's focus to Firefox's window, once: a window activated again later puts
        # Orca back in browse mode
        keys(desktop, "windowfocus", "--sync", window)
        desktop.wait_quiet(0, quiet=3.0, timeout=60)
        # Orca reads a page that has loaded from its top (say all), as a person would hear it;
        # Control stops it, as it would for them
        keys(desktop, "key", "ctrl")
        desktop.wait_quiet(0, quiet=4.0, timeout=120)
        loaded, _ = read_speech(desktop.log_since(0))
        print("on loading, Orca said: %s" % " | ".join(u.text for u in loaded))
        actions = [a for a in ACTIONS if not args.only or args.only in a["name"]]
        results = run(desktop, actions, sys.stdout)
    finally:
        desktop.down()
        server.shutdown()
        if args.keep_log and desktop.log.exists():
            shutil.copy(desktop.log, args.keep_log)
        shutil.rmtree(work, ignore_errors=True)
    bad = [r["action"] for r in results if not r["ok"]]
    print("\n%d of %d actions said once, with nothing else from the page%s" % (
        len(results) - len(bad), len(results), "" if not bad else "; not: " + "; ".join(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
