#!/usr/bin/env python3
"""What a real screen reader says for the page's announcements (WCAG 4.1.3): Orca, GNOME's
screen reader, reading Firefox ESR on an X server of its own (Xvfb), with keys typed by xdotool
into the real Firefox window. A manual check, not part of pytest (docs/accessibility.md, 4.1.3).
Its parts: desktop.py (the machine), speech.py (Orca's log), actions.py (the page and what
is done to it).

    python3 build.py                                  # the site in dist/ (VIT_HEAD_MIRROR set)
    python3 benchmarks/screen_reader         # then this, about two minutes
    python3 benchmarks/screen_reader --keep-log /tmp/orca.log   # Orca's whole debug log

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
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/: this package
from screen_reader.actions import ACTIONS, keys, named, run, wait_for  # noqa: E402
from screen_reader.desktop import (PACKAGES, ROOT, SYSTEM_PYTHON, Desktop, missing,  # noqa: E402
                                   package_version, version)
from screen_reader.speech import read_speech  # noqa: E402


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
