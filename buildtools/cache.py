"""The download cache: every third-party file is fetched once, checked, and reused.

Layout under the cache folder (default $XDG_CACHE_HOME/vit-head-explorer, else
~/.cache/vit-head-explorer):
  npm/<scope-name>-<version>.tgz     npm tarballs, named as `npm pack` names them
  wheels/<file>.whl                   the NumPy wheel for Pyodide, once obtained
  wheels/<file>.whl.unavailable       why the last download attempt failed, and when
  unpacked/<name>-<version>-<hash>/   the few files a build copies out of each tarball

A file enters the cache only after its hash matched artifacts.json, so a cached file is trusted by
name; a build whose files are all cached makes no network request.
"""
import base64
import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request

from .errors import BuildError

USER_AGENT = "vit-head-explorer-build/1"
# A failed wheel download is not retried for this long by `--runtime auto`, so that a machine
# without internet builds the fallback host quickly, and a second build makes no request.
RETRY_AFTER_S = 24 * 3600


def default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vit-head-explorer")


def file_digest(path, algorithm):
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h


def sri_sha512(path):
    """The npm-style integrity string of a file."""
    return "sha512-" + base64.b64encode(file_digest(path, "sha512").digest()).decode("ascii")


def sha256_hex(path):
    return file_digest(path, "sha256").hexdigest()


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
    """Fetch url into dest (written to a temporary name first), showing progress."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    tmp = dest + ".part"
    with urllib.request.urlopen(request, timeout=timeout) as response:
        total = int(response.headers.get("Content-Length") or 0)
        progress = Progress(label, total)
        done = 0
        with open(tmp, "wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
                done += len(block)
                progress.update(done)
        progress.finish(done)
    os.replace(tmp, dest)


def _npm():
    npm = shutil.which("npm")
    if not npm:
        raise BuildError(
            "npm is missing: build.py asks the npm client where each pinned package is",
            "install Node.js 18 or newer (npm comes with it), or copy a cache folder from a "
            "machine that built this project (--cache-dir)")
    return npm


def npm_dist(spec):
    """The registry's `dist` record (tarball URL, integrity) of one package version."""
    cmd = [_npm(), "view", spec, "dist", "--json"]
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=180, universal_newlines=True)
    except subprocess.TimeoutExpired:
        raise BuildError("`%s` did not answer in 3 minutes" % " ".join(cmd[1:]),
                         "check the network connection to the npm registry and retry")
    if done.returncode != 0:
        raise BuildError("`npm view %s` failed: %s" % (spec, done.stderr.strip()[-400:]),
                         "check the network connection and that the version in "
                         "artifacts.json exists (`npm view %s versions`)" % spec.rsplit("@", 1)[0])
    try:
        dist = json.loads(done.stdout)
    except ValueError:
        raise BuildError("`npm view %s` printed something that is not JSON" % spec,
                         "run it by hand to see what npm says")
    if isinstance(dist, list):  # npm prints a list when a range matches several versions
        dist = dist[-1]
    return dist


MIRROR_ENV = "VIT_HEAD_MIRROR"


class Cache:
    """Fetches, checks and keeps artifacts. `log` receives one-line progress messages.

    `mirror`: a folder holding pinned files under their own names (npm tarballs as `npm pack`
    names them, the NumPy wheel by its file name), for machines that reach only some of the
    places the files come from. A file found there is checked against its pin like a download.
    """

    def __init__(self, root, log=print, offline=False, mirror=None):
        self.root = os.path.abspath(root)
        self.log = log
        self.offline = offline
        self.mirror = os.path.abspath(mirror) if mirror else None
        self.wheel_source = None  # how numpy_wheel() found the wheel, for build-info
        if self.mirror and not os.path.isdir(self.mirror):
            raise BuildError("the mirror folder %s does not exist" % self.mirror,
                             "pass an existing folder with --mirror (or %s), or neither"
                             % MIRROR_ENV)

    def _from_mirror(self, file_name, check, dest):
        """Copy `file_name` from the mirror to `dest` if it is there and check(path) passes.

        Returns True when copied. A mirrored file that fails its check is reported and ignored.
        """
        if not self.mirror:
            return False
        path = os.path.join(self.mirror, file_name)
        if not os.path.isfile(path):
            return False
        if not check(path):
            self.log("mirror: %s does not match its pin in artifacts.json; ignored" % path)
            return False
        tmp = dest + ".mirror"
        shutil.copyfile(path, tmp)
        os.replace(tmp, dest)
        self.log("mirror: took %s from %s" % (file_name, self.mirror))
        return True

    def _dir(self, *parts):
        path = os.path.join(self.root, *parts)
        os.makedirs(path, exist_ok=True)
        return path

    # ---- npm tarballs -------------------------------------------------------------------
    def npm_tarball(self, art):
        """Path of the artifact's tarball in the cache, downloaded and checked if needed."""
        path = os.path.join(self._dir("npm"), art.tarball_name)
        if os.path.exists(path):
            # Checked when it entered the cache; checked again here because it is cheap next
            # to what a corrupt runtime would cost to debug in a browser.
            if sri_sha512(path) == art.integrity:
                return path
            self.log("cached %s does not match artifacts.json; fetching it again" % art.spec)
            os.remove(path)
        if self._from_mirror(art.tarball_name, lambda p: sri_sha512(p) == art.integrity, path):
            return path
        if self.offline:
            raise BuildError("%s is not in the cache (%s) and --offline was given"
                             % (art.spec, path),
                             "build once without --offline on a machine that reaches npm, or "
                             "copy its cache folder here")
        dist = npm_dist(art.spec)
        if dist.get("integrity") != art.integrity:
            raise BuildError(
                "%s: the registry's integrity %s differs from artifacts.json's %s"
                % (art.spec, dist.get("integrity"), art.integrity),
                "if you changed the version in artifacts.json, paste the new integrity too; "
                "otherwise the registry serves a different file: do not build with it")
        tmp = path + ".download"
        try:
            self._fetch_npm(art, dist.get("tarball"), tmp)
            got = sri_sha512(tmp)
            if got != art.integrity:
                raise BuildError(
                    "%s: the downloaded tarball's sha512 (%s) differs from artifacts.json (%s); "
                    "it was rejected" % (art.spec, got, art.integrity),
                    "run the build again; if it happens again, the download is being altered "
                    "on the way (a proxy?) or artifacts.json is wrong")
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        return path

    def _fetch_npm(self, art, url, dest):
        """Download a tarball: plain HTTPS first (shows progress), `npm pack` if that fails."""
        if url:
            try:
                download(url, dest, art.spec)
                return
            except (OSError, urllib.error.URLError) as exc:
                self.log("direct download of %s failed (%s); trying `npm pack`" % (art.spec, exc))
        with tempfile.TemporaryDirectory() as tmp:
            self.log("  npm pack %s (no progress shown)" % art.spec)
            done = subprocess.run([_npm(), "pack", art.spec, "--pack-destination", tmp],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=3600)
            packed = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
            if done.returncode != 0 or len(packed) != 1:
                raise BuildError("could not download %s: %s" % (art.spec, done.stderr.strip()[-400:]),
                                 "check the network connection to the npm registry and retry")
            shutil.move(os.path.join(tmp, packed[0]), dest)

    # ---- the files a build needs, unpacked once ---------------------------------------------
    def unpacked(self, art):
        """A folder holding the artifact's selected files, laid out as under `dest`.

        Extracting from the 185 MB Pyodide 0.17 tarball takes seconds, so the selection is kept
        (keyed by the integrity hash, so a changed pin never reuses an old selection).
        """
        key = "%s-%s-%s" % (art.name, art.version,
                            art.integrity[7:23].replace("/", "_").replace("+", "-"))
        target = os.path.join(self._dir("unpacked"), key)
        stamp = os.path.join(target, ".complete.json")
        wanted = {"files": art.files, "exclude": art.exclude, "strip": art.strip}
        if os.path.exists(stamp):
            with open(stamp, encoding="utf-8") as f:
                if json.load(f).get("selection") == wanted:
                    return target
        tarball = self.npm_tarball(art)
        self.log("unpacking %s" % art.spec)
        tmp = tempfile.mkdtemp(dir=os.path.dirname(target), prefix=".unpack-")
        os.chmod(tmp, 0o755)  # mkdtemp's folder is private; copies of it are served
        try:
            names = extract_selection(tarball, art, tmp)
            with open(os.path.join(tmp, ".complete.json"), "w", encoding="utf-8") as f:
                json.dump({"selection": wanted, "files": names}, f)
            if os.path.exists(target):
                shutil.rmtree(target)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                shutil.rmtree(tmp)
        return target

    # ---- the NumPy wheel for Pyodide 314 -----------------------------------------------------
    def numpy_wheel(self, manifest, given=None, retry=False):
        """Find the pinned NumPy wheel: given path, cache, or download.

        Returns (path, None) or (None, reason). `retry` ignores a recent failed attempt.
        """
        wheel = manifest.numpy_wheel
        if given:
            if not os.path.isfile(given):
                raise BuildError("--numpy-wheel %s: no such file" % given,
                                 "pass the path of %s" % wheel.file_name)
            got = sha256_hex(given)
            if got != wheel.sha256:
                raise BuildError(
                    "--numpy-wheel %s: sha256 %s differs from the pinned %s (%s)"
                    % (given, got, wheel.sha256, wheel.file_name),
                    "pass the exact file named in Pyodide %s's pyodide-lock.json: %s"
                    % (manifest.npm[wheel.for_artifact].version, manifest.wheel_url()))
            cached = os.path.join(self._dir("wheels"), wheel.file_name)
            if os.path.abspath(given) != cached:
                shutil.copyfile(given, cached)  # later builds find it without the option
            self.wheel_source = "given with --numpy-wheel"
            return cached, None
        path = os.path.join(self._dir("wheels"), wheel.file_name)
        if os.path.exists(path):
            if sha256_hex(path) == wheel.sha256:
                self.wheel_source = "found in the cache"
                return path, None
            os.remove(path)
        if self._from_mirror(wheel.file_name, lambda p: sha256_hex(p) == wheel.sha256, path):
            self.wheel_source = "taken from the mirror %s" % self.mirror
            return path, None
        marker = path + ".unavailable"
        if self.offline:
            return None, "it is not in the cache and --offline was given"
        if os.path.exists(marker) and not retry:
            with open(marker, encoding="utf-8") as f:
                last = json.load(f)
            age = time.time() - last.get("time", 0)
            if age < RETRY_AFTER_S:
                return None, ("the last download attempt %.0f min ago failed (%s); not retried "
                              "before %d h have passed (or with --runtime pyscript)"
                              % (age / 60, last.get("error"), RETRY_AFTER_S // 3600))
        url = manifest.wheel_url()
        try:
            download(url, path + ".download", "NumPy %s for Pyodide" % wheel.version, timeout=30)
            got = sha256_hex(path + ".download")
            if got != wheel.sha256:
                raise BuildError("the downloaded %s has sha256 %s, not the pinned %s; rejected"
                                 % (wheel.file_name, got, wheel.sha256),
                                 "retry later; if it persists, check artifacts.json")
            os.replace(path + ".download", path)
        except (OSError, urllib.error.URLError, BuildError) as exc:
            reason = str(getattr(exc, "reason", None) or exc).splitlines()[0]
            with open(marker, "w", encoding="utf-8") as f:
                json.dump({"time": time.time(), "url": url, "error": reason}, f)
            return None, "downloading %s failed: %s" % (url, reason)
        finally:
            if os.path.exists(path + ".download"):
                os.remove(path + ".download")
        if os.path.exists(marker):
            os.remove(marker)
        self.wheel_source = "downloaded from %s" % url
        return path, None


def extract_selection(tarball, art, dest):
    """Copy the files of an npm tarball that the artifact's globs select into dest.

    Returns the list of written paths (relative to dest). Every glob must match at least one
    file: a package whose layout changed must stop the build, not produce a site missing a file.
    """
    written, matched = [], {pattern: 0 for pattern in art.files}
    try:
        archive = tarfile.open(tarball, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise BuildError("%s: %s is not a readable tarball (%s)" % (art.spec, tarball, exc),
                         "delete it and build again")
    with archive:
        for member in archive:
            if not member.isfile():
                continue
            # npm tarballs keep everything under one top folder, normally "package/"
            rel = member.name.split("/", 1)[1] if "/" in member.name else member.name
            hits = [p for p in art.files if fnmatch.fnmatchcase(rel, p)]
            if not hits or any(fnmatch.fnmatchcase(rel, p) for p in art.exclude):
                continue
            for p in hits:
                matched[p] += 1
            out_rel = rel[len(art.strip):] if art.strip and rel.startswith(art.strip) else rel
            if out_rel.startswith("/") or ".." in out_rel.split("/"):
                raise BuildError("%s: refusing the unsafe path %r" % (art.spec, member.name),
                                 "check the package; do not build with it")
            out = os.path.join(dest, *out_rel.split("/"))
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with archive.extractfile(member) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            written.append(out_rel)
    missing = [p for p, n in matched.items() if n == 0]
    if missing:
        raise BuildError("%s: no file matches %s in the package"
                         % (art.spec, ", ".join(missing)),
                         "the package's layout differs from what artifacts.json expects: fix "
                         "the 'files' list of %r" % art.name)
    return sorted(written)
