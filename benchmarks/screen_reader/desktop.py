"""The machine the screen reader check runs on: Xvfb, a D-Bus session bus, the AT-SPI bus,
Orca (its debug log opened line by line) and Firefox ESR, each started and ended here, and what
the check needs from Debian's packages."""
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


