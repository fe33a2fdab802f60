"""Downloads for the build: a file by HTTP with its progress on stderr, and npm's record of a
package (where its tarball is, its integrity), asked of the npm client. What is fetched is
checked by the caller (buildtools/artifacts/cache.py) before it enters the cache.
"""
import http.client
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

from .checked import remove
from ..errors import BuildError


USER_AGENT = "vit-head-explorer-build/1"


class Progress:
    """Download progress on stderr: a rewritten line on a terminal, every 10 % otherwise."""

    def __init__(self, label, total, stream=None):
        self.label, self.total = label, total
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last_decile = -1
        self.start = time.monotonic()

    def update(self, done):
        mb = done / 1e6
        if self.total:
            pct = 100.0 * done / self.total
            text = "  downloading %s: %.1f / %.1f MB (%d%%)" % (
                self.label, mb, self.total / 1e6, pct)
            decile = int(pct // 10)
        else:
            text = "  downloading %s: %.1f MB" % (self.label, mb)
            decile = int(mb // 10)
        if self.tty:
            self.stream.write("\r" + text)
        elif decile != self.last_decile:
            self.stream.write(text + "\n")
        self.last_decile = decile
        self.stream.flush()

    def finish(self, done):
        secs = time.monotonic() - self.start
        end = "  downloaded %s: %.1f MB in %.1f s" % (self.label, done / 1e6, secs)
        self.stream.write(("\r" + end + " " * 20 + "\n") if self.tty else end + "\n")
        self.stream.flush()


def download(url, dest, label, timeout=60):
    """Fetch url into dest (written to a temporary name first), showing progress.

    Every way a transfer fails is an OSError, which the callers handle: http.client's own
    exceptions (a body cut off before its Content-Length, a garbled status line) are not.
    """
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    tmp = dest + ".part"
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length") or "0"
            total = int(length) if length.isdigit() else 0
            progress = Progress(label, total)
            done = 0
            with open(tmp, "wb") as out:
                for block in iter(lambda: response.read(1 << 20), b""):
                    out.write(block)
                    done += len(block)
                    progress.update(done)
            progress.finish(done)
        os.replace(tmp, dest)
    except http.client.HTTPException as exc:
        raise OSError("the download of %s broke off (%s: %s)" % (url, type(exc).__name__, exc))
    finally:
        if os.path.lexists(tmp):
            os.remove(tmp)


def npm_command():
    npm = shutil.which("npm")
    if not npm:
        raise BuildError(
            "npm is missing: build.py asks the npm client where each pinned package is",
            "install Node.js 18 or newer (npm comes with it), or copy a cache folder from a "
            "machine that built this project (--cache-dir)")
    return npm


def npm_dist(spec):
    """The registry's `dist` record (tarball URL, integrity) of one package version."""
    cmd = [npm_command(), "view", spec, "dist", "--json"]
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=180, universal_newlines=True)
    except subprocess.TimeoutExpired:
        raise BuildError("`%s` did not answer in 3 minutes" % " ".join(cmd[1:]),
                         "check the network connection to the npm registry and retry")
    except OSError as exc:
        raise BuildError("cannot run %s: %s" % (cmd[0], exc.strerror or exc),
                         "repair the Node.js installation (npm must run), or copy a cache "
                         "folder from a machine that built this project (--cache-dir)")
    package = spec.rsplit("@", 1)[0]
    if done.returncode != 0:
        raise BuildError("`npm view %s` failed: %s" % (spec, done.stderr.strip()[-400:]),
                         "check the network connection and that the version in "
                         "artifacts.json exists (`npm view %s versions`)" % package)
    if not done.stdout.strip():  # what npm prints for a version the registry does not have
        raise BuildError("`npm view %s` found no such version" % spec,
                         "fix the version in artifacts.json (`npm view %s versions` lists them)"
                         % package)
    try:
        dist = json.loads(done.stdout)
    except ValueError:
        raise BuildError("`npm view %s` printed something that is not JSON" % spec,
                         "run it by hand to see what npm says")
    if isinstance(dist, list) and dist:  # npm prints a list when a range matches several
        dist = dist[-1]
    if not isinstance(dist, dict):
        raise BuildError("`npm view %s` printed no dist record (%s)" % (spec, done.stdout[:200]),
                         "run it by hand to see what npm says")
    return dist
