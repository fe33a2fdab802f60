"""The download cache: every third-party file is fetched once, checked, and reused.

Layout under the cache folder (default $XDG_CACHE_HOME/vit-head-explorer, else
~/.cache/vit-head-explorer):
  npm/<scope-name>-<version>.tgz     npm tarballs, named as `npm pack` names them
  wheels/<file>.whl                   the NumPy wheel for Pyodide, once obtained
  wheels/<file>.whl.unavailable       why the last download attempt failed, and when
  unpacked/<name>-<version>-<hash>/   the few files a build copies out of each tarball, and
                                      .complete.json: each one's sha256 and size, recorded
                                      while it was extracted from the checked tarball
  bundles/                            what buildtools/plotly_bundle.py makes

A file enters the cache only after its hash matched artifacts.json. Nothing is trusted by name
when it leaves: tarballs and the wheel are hashed again on every use, and every unpacked file is
hashed while it is copied into a site and compared with its record, so a byte flipped or a file
deleted in the cache is found, unpacked again from the tarball, and never shipped. The record
itself is trusted only once its digest (:func:`selection_digest`: every file's path, sha256 and
size) is the ``files_sha256`` artifacts.json pins for the artifact: a file changed together
with its record, or a record forged, is unpacked again from the checked tarball, and a
selection whose files are not the pinned ones never ships. A build whose files are all cached
makes no network request.
"""
import base64
import fnmatch
import gzip
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zlib

from . import atomic
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


def _matches(path, check):
    """check(path), with a file that cannot be read (gone, a folder, no permission) failing it."""
    try:
        return check(path)
    except OSError:
        return False


def remove(path):
    """Delete a file or a folder, if there is one: damaged cache entries can be either."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def discard(path):
    """remove(path) for a clean-up, which must not turn a success, or the error being reported,
    into another error (a leftover is removed later by remove_stale)."""
    try:
        remove(path)
    except OSError:
        pass


def remove_stale(folder, prefixes, age_s=3600):
    """Delete temporary entries that a killed build left in `folder` (an hour old or more;
    younger ones may belong to a build running right now)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.startswith(tuple(prefixes)):
            continue
        path = os.path.join(folder, name)
        try:
            if time.time() - os.lstat(path).st_mtime > age_s:
                remove(path)
        except OSError:
            pass  # another build removed it first, or it is not ours to remove


def write_hashed(source, dest):
    """Copy the open binary file `source` to the path `dest`; return its (sha256 hex, size)."""
    h, size = hashlib.sha256(), 0
    with open(dest, "wb") as out:
        for block in iter(lambda: source.read(1 << 20), b""):
            h.update(block)
            out.write(block)
            size += len(block)
    return h.hexdigest(), size


def copy_checked(src, dest, sha256, size=None):
    """Copy src to dest, hashing the bytes on their way; None when they are the expected ones,
    else why not (and dest is removed). What reaches dest is exactly what was hashed, in one
    read of src: a site is never filled from a file checked before it was copied. A file that
    cannot be read is a reason; one that cannot be written is an OSError (the site's problem).
    """
    try:
        source = open(src, "rb")
    except FileNotFoundError:
        return "is missing"
    except OSError as exc:
        return "cannot be read (%s)" % (exc.strerror or exc)
    h, got_size, why = hashlib.sha256(), 0, None
    with source, open(dest, "wb") as out:
        while True:
            try:
                block = source.read(1 << 20)
            except OSError as exc:
                why = "cannot be read (%s)" % (exc.strerror or exc)
                break
            if not block:
                break
            h.update(block)
            out.write(block)
            got_size += len(block)
    if why is None and size is not None and got_size != size:
        why = "has %d bytes, not the %d recorded" % (got_size, size)
    elif why is None and h.hexdigest() != sha256:
        why = "has sha256 %s, not the expected %s" % (h.hexdigest(), sha256)
    if why:
        os.remove(dest)
    return why


# The record that a cache folder is complete: {"version", "files": {path: {"sha256", "size"}}}
# plus what the folder was made from, which must still be what the build wants.
STAMP = ".complete.json"
STAMP_VERSION = 2


def _safe_relative(rel):
    """True for a plain relative path inside a folder (a record read back must not point out)."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def _valid_records(files):
    return isinstance(files, dict) and bool(files) and all(
        _safe_relative(rel) and rel != STAMP and isinstance(rec, dict)
        and isinstance(rec.get("sha256"), str) and _SHA256_HEX.match(rec["sha256"])
        and type(rec.get("size")) is int and rec["size"] >= 0
        for rel, rec in files.items())


def read_stamp(folder, expect):
    """The file records of a cache folder, or (None, why not); why is None for a folder that was
    never completed, a sentence for a record that is damaged, outdated or about other inputs."""
    path = os.path.join(folder, STAMP)
    if not os.path.lexists(path):
        return None, ("its record %s is missing" % path) if os.path.lexists(folder) else None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        return None, "its record %s is unreadable (%s)" % (path, str(exc).splitlines()[0][:120])
    if not isinstance(data, dict):
        return None, "its record %s is damaged" % path
    if "version" not in data:
        return None, "its record %s has no file hashes (an older build.py wrote it)" % path
    if data["version"] != STAMP_VERSION:
        return None, "its record %s is of another version" % path
    for key, value in expect.items():
        if data.get(key) != value:
            return None, "its record %s is about another %s" % (path, key)
    if not _valid_records(data.get("files")):
        return None, "its record %s is damaged" % path
    return data["files"], None


def selection_digest(files):
    """The sha256 of a selection's file records, as artifacts.json pins it (``files_sha256``):
    of the JSON of ``{path: {"sha256", "size"}}`` with sorted keys and no spaces, so the pin
    covers each file's bytes, and which files there are.

    Examples
    --------
    >>> selection_digest({"a.js": {"sha256": "0" * 64, "size": 1}})[:16]
    '56ecbe201b2b365c'
    """
    canonical = {rel: {"sha256": rec["sha256"], "size": rec["size"]} for rel, rec in files.items()}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_stamp(folder, made_from, files):
    with open(os.path.join(folder, STAMP), "w", encoding="utf-8") as f:
        json.dump(dict(made_from, version=STAMP_VERSION, files=files), f, indent=0,
                  sort_keys=True)


def copy_files(folder, files, dest):
    """Copy the recorded files of a cache folder into dest, each checked against its record.

    Returns None, or (path, why) for the first file that is not what was recorded; the files
    copied so far are removed then, so a retry or another source starts from a clean dest.
    """
    written = []
    for rel in sorted(files):
        out = os.path.join(dest, *rel.split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        why = copy_checked(os.path.join(folder, *rel.split("/")), out, files[rel]["sha256"],
                           files[rel]["size"])
        if why:
            for path in written:
                os.remove(path)
            return rel, why
        written.append(out)
    return None


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
            what = "is a file" if os.path.exists(self.mirror) else "does not exist"
            raise BuildError("the mirror folder %s %s" % (self.mirror, what),
                             "pass an existing folder with --mirror (or %s), or neither"
                             % MIRROR_ENV)
        if os.path.lexists(self.root) and not os.path.isdir(self.root):
            raise BuildError("the cache folder %s is a file" % self.root,
                             "pass a folder with --cache-dir (it is created when missing)")
        try:
            os.makedirs(self.root, exist_ok=True)
        except OSError as exc:
            raise BuildError("cannot create the cache folder %s: %s"
                             % (self.root, exc.strerror or exc),
                             "pass a folder you can write to with --cache-dir")

    def _from_mirror(self, file_name, check, dest):
        """Copy `file_name` from the mirror to `dest` if it is there and check(copy) passes.

        Returns True when copied. The copy is what is checked, so what enters the cache is what
        passed. A mirrored file that fails its check is reported and ignored.
        """
        if not self.mirror:
            return False
        path = os.path.join(self.mirror, file_name)
        if not os.path.isfile(path):
            return False
        tmp = dest + ".mirror"
        try:
            shutil.copyfile(path, tmp)
        except OSError as exc:
            self.log("mirror: cannot read %s (%s); ignored" % (path, exc.strerror or exc))
            remove(tmp)
            return False
        if not check(tmp):
            self.log("mirror: %s does not match its pin in artifacts.json; ignored" % path)
            os.remove(tmp)
            return False
        os.replace(tmp, dest)
        self.log("mirror: took %s from %s" % (file_name, self.mirror))
        return True

    def _dir(self, *parts):
        path = os.path.join(self.root, *parts)
        if os.path.lexists(path) and not os.path.isdir(path):
            self.log("cache: %s is not a folder; replaced by one" % path)
            remove(path)
        os.makedirs(path, exist_ok=True)
        return path

    # ---- npm tarballs -------------------------------------------------------------------
    def npm_tarball(self, art):
        """Path of the artifact's tarball in the cache, downloaded and checked if needed."""
        path = os.path.join(self._dir("npm"), art.tarball_name)
        if os.path.lexists(path):
            # Checked when it entered the cache; checked again here because it is cheap next
            # to what a corrupt runtime would cost to debug in a browser.
            if _matches(path, lambda p: sri_sha512(p) == art.integrity):
                return path
            self.log("cached %s does not match artifacts.json; fetching it again" % art.spec)
            remove(path)
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
            try:
                done = subprocess.run([_npm(), "pack", art.spec, "--pack-destination", tmp],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      universal_newlines=True, timeout=3600)
            except (OSError, subprocess.SubprocessError) as exc:
                raise BuildError("could not download %s with `npm pack`: %s" % (art.spec, exc),
                                 "check the network connection to the npm registry and retry")
            packed = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
            if done.returncode != 0 or len(packed) != 1:
                raise BuildError("could not download %s: %s" % (art.spec, done.stderr.strip()[-400:]),
                                 "check the network connection to the npm registry and retry")
            shutil.move(os.path.join(tmp, packed[0]), dest)

    # ---- the files a build needs, unpacked once ---------------------------------------------
    def unpacked(self, art, again=None):
        """(folder, records): a folder holding the artifact's selected files, laid out as under
        `dest`, and each file's {"sha256", "size"} as it came out of the checked tarball.

        Extracting from the 185 MB Pyodide 0.17 tarball takes seconds, so the selection is kept
        (keyed by the integrity hash, so a changed pin never reuses an old selection), with its
        record (STAMP), against which every copy out of it is checked. A missing, damaged or
        outdated record means unpacking again; so does `again`, the reason a file in it was
        found to differ from its record.
        """
        key = "%s-%s-%s" % (art.name, art.version,
                            art.integrity[7:23].replace("/", "_").replace("+", "-"))
        target = os.path.join(self._dir("unpacked"), key)
        made_from = {"package": art.spec, "integrity": art.integrity,
                     "selection": {"files": art.files, "exclude": art.exclude,
                                   "strip": art.strip}}
        files, why = (None, again) if again else read_stamp(target, made_from)
        if files is not None and not _covers(files, art):
            files, why = None, "its record %s lacks files of the selection" % target
        if files is not None and art.files_sha256 and selection_digest(files) != art.files_sha256:
            files, why = None, ("its record %s is not the file list artifacts.json pins"
                                % target)
        if files is not None:
            return target, files
        tarball = self.npm_tarball(art)
        self.log("unpacking %s%s" % (art.spec, " again: " + why if why else ""))
        parent = os.path.dirname(target)
        remove_stale(parent, (".unpack-",))
        tmp = tempfile.mkdtemp(dir=parent, prefix=".unpack-")
        os.chmod(tmp, 0o755)  # mkdtemp's folder is private; copies of it are served
        try:
            files = extract_selection(tarball, art, tmp)
            if STAMP in files:
                raise BuildError("%s contains a file named %s, the cache's own record"
                                 % (art.spec, STAMP), "leave it out of 'files' in artifacts.json")
            _check_pin(art, files)
            write_stamp(tmp, made_from, files)
            old = atomic.put_in_place(tmp, target, atomic.free_name(parent, ".unpack-old-"))
            if old:
                discard(old)
        finally:
            discard(tmp)
        return target, files

    def copy_unpacked(self, art, dest):
        """Copy the artifact's selected files into the folder dest, each one hashed on its way
        and compared with the record made when it was unpacked, whose digest is the
        ``files_sha256`` artifacts.json pins; returns the records.

        A file that differs or is missing was damaged in the cache after it was unpacked: the
        selection is unpacked again from the tarball (checked again first), once, and a second
        miss stops the build. Only recorded files are copied: nothing added to the cache ships.
        An artifact without a pinned ``files_sha256`` does not ship: the build says what to pin.
        """
        if not art.files_sha256:
            tarball = self.npm_tarball(art)
            with tempfile.TemporaryDirectory() as tmp:
                digest = selection_digest(extract_selection(tarball, art, tmp))
            raise BuildError(
                "artifacts.json pins no files_sha256 for %s: nothing of it ships unchecked"
                % art.spec, "if its files (from the tarball checked against its integrity) are "
                "the ones you mean to ship, pin them: \"files_sha256\": \"%s\"" % digest)
        folder, files = self.unpacked(art)
        bad = copy_files(folder, files, dest)
        if bad:
            folder, files = self.unpacked(art, again="%s %s" % (
                os.path.join(folder, *bad[0].split("/")), bad[1]))
            bad = copy_files(folder, files, dest)
        if bad:
            raise BuildError(
                "%s: %s %s, even right after unpacking it again from its checked tarball"
                % (art.spec, os.path.join(folder, *bad[0].split("/")), bad[1]),
                "something keeps changing the cache folder %s, or its disk is failing: delete "
                "that folder and build again; if it happens again, check the disk and what "
                "else writes there" % folder)
        return files

    # ---- the NumPy wheel for Pyodide 314 -----------------------------------------------------
    def numpy_wheel(self, manifest, given=None, retry=False):
        """Find the pinned NumPy wheel: given path, cache, mirror or download.

        Returns (path, None) or (None, reason). `retry` ignores a recent failed attempt.
        """
        wheel = manifest.numpy_wheel
        path = os.path.join(self._dir("wheels"), wheel.file_name)
        if given:
            return self._given_wheel(manifest, given, path), None
        if os.path.lexists(path):
            if _matches(path, lambda p: sha256_hex(p) == wheel.sha256):
                self.wheel_source = "found in the cache"
                return path, None
            self.log("cached %s does not match artifacts.json; ignored" % wheel.file_name)
            remove(path)
        if self._from_mirror(wheel.file_name, lambda p: sha256_hex(p) == wheel.sha256, path):
            self.wheel_source = "taken from the mirror %s" % self.mirror
            return path, None
        marker = path + ".unavailable"
        if self.offline:
            return None, "it is not in the cache and --offline was given"
        last = None if retry else self._last_failure(marker)
        if last and last[0] < RETRY_AFTER_S:
            return None, ("the last download attempt %.0f min ago failed (%s); not retried "
                          "before %d h have passed (or with --runtime pyscript)"
                          % (last[0] / 60, last[1], RETRY_AFTER_S // 3600))
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
            self._record_failure(marker, url, reason)
            return None, "downloading %s failed: %s" % (url, reason)
        finally:
            remove(path + ".download")
        remove(marker)
        self.wheel_source = "downloaded from %s" % url
        return path, None

    def _given_wheel(self, manifest, given, cached):
        """Copy the wheel given with --numpy-wheel into the cache (later builds find it without
        the option), checking the copy, not the original, against its pin."""
        wheel = manifest.numpy_wheel
        if not os.path.isfile(given):
            raise BuildError("--numpy-wheel %s: %s" % (given, "a folder, not the wheel" if
                                                      os.path.isdir(given) else "no such file"),
                             "pass the path of %s" % wheel.file_name)
        why = copy_checked(given, cached + ".given", wheel.sha256)
        if why:
            raise BuildError(
                "--numpy-wheel %s %s (%s)" % (given, why, wheel.file_name),
                "pass the exact file named in Pyodide %s's pyodide-lock.json: %s"
                % (manifest.npm[wheel.for_artifact].version, manifest.wheel_url()))
        os.replace(cached + ".given", cached)
        self.wheel_source = "given with --numpy-wheel"
        return cached

    def _last_failure(self, marker):
        """(age in s, error) of the failed download that `marker` records, or None. A damaged
        marker (or one from the future) is removed with a log line: it costs one download
        attempt, never the build."""
        if not os.path.lexists(marker):
            return None
        try:
            with open(marker, encoding="utf-8") as f:
                last = json.load(f)
            age = time.time() - last["time"]
            if not 0 <= age < 1e10:
                raise ValueError("its time is in the future")
            return age, str(last.get("error"))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            self.log("cache: %s is damaged (%s); removed" % (marker, str(exc)[:120]))
            remove(marker)
            return None

    def _record_failure(self, marker, url, reason):
        try:
            with open(marker + ".tmp", "w", encoding="utf-8") as f:
                json.dump({"time": time.time(), "url": url, "error": reason}, f)
            os.replace(marker + ".tmp", marker)
        except OSError as exc:
            self.log("cache: cannot write %s (%s); the next build tries again"
                     % (marker, exc.strerror or exc))

    def copy_wheel(self, manifest, path, dest):
        """Copy the checked NumPy wheel at `path` to dest, checking the copy against its pin.

        A wheel that changed since it was checked (a damaged cache) is obtained again once (cache,
        mirror or download); a second miss stops the build.
        """
        wheel = manifest.numpy_wheel
        why = copy_checked(path, dest, wheel.sha256)
        if why is None:
            return
        self.log("the NumPy wheel %s %s; obtaining it again" % (path, why))
        again, why_not = self.numpy_wheel(manifest, retry=True)
        why = copy_checked(again, dest, wheel.sha256) if again else why_not
        if why:
            raise BuildError("the NumPy wheel %s could not be copied into the site: %s"
                             % (wheel.file_name, why),
                             "delete %s and build again (with --numpy-wheel PATH or a mirror "
                             "where it cannot be downloaded)" % path)


def _check_pin(art, files):
    """BuildError unless the records of a selection just unpacked from the checked tarball
    have the digest artifacts.json pins (when it pins one)."""
    if art.files_sha256 and selection_digest(files) != art.files_sha256:
        raise BuildError(
            "%s: the files selected from its tarball have the digest %s, not the files_sha256 %s "
            "that artifacts.json pins" % (art.spec, selection_digest(files), art.files_sha256),
            "if you changed its version, files, exclude or strip, paste the new digest into "
            "artifacts.json; otherwise do not build with it")


def _covers(files, art):
    """True when every glob of the selection matches a recorded file (as extract_selection
    demands of the tarball), so a record that lost entries is not taken as complete."""
    names = list(files) + [art.strip + rel for rel in files]
    return all(any(fnmatch.fnmatchcase(n, p) for n in names) for p in art.files)


def extract_selection(tarball, art, dest):
    """Copy the files of an npm tarball that the artifact's globs select into dest.

    Returns {path relative to dest: {"sha256", "size"}} of what was written, hashed as it was
    written. Every glob must match at least one file: a package whose layout changed must stop
    the build, not produce a site missing a file.
    """
    written, matched = {}, {pattern: 0 for pattern in art.files}
    try:
        archive = tarfile.open(tarball, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise BuildError("%s: %s is not a readable tarball (%s)" % (art.spec, tarball, exc),
                         "delete it and build again")
    try:
        with archive:
            for member in archive:
                _extract_member(archive, member, art, dest, written, matched)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise BuildError("%s: %s is damaged (%s)" % (art.spec, tarball, exc),
                         "delete it and build again")
    missing = [p for p, n in matched.items() if n == 0]
    if missing:
        raise BuildError("%s: no file matches %s in the package"
                         % (art.spec, ", ".join(missing)),
                         "the package's layout differs from what artifacts.json expects: fix "
                         "the 'files' list of %r" % art.name)
    return written


def _extract_member(archive, member, art, dest, written, matched):
    if not member.isfile():
        return
    # npm tarballs keep everything under one top folder, normally "package/"
    rel = member.name.split("/", 1)[1] if "/" in member.name else member.name
    hits = [p for p in art.files if fnmatch.fnmatchcase(rel, p)]
    if not hits or any(fnmatch.fnmatchcase(rel, p) for p in art.exclude):
        return
    for p in hits:
        matched[p] += 1
    out_rel = rel[len(art.strip):] if art.strip and rel.startswith(art.strip) else rel
    parts = [part for part in out_rel.split("/") if part not in ("", ".")]
    if out_rel.startswith("/") or ".." in parts or not parts:
        raise BuildError("%s: refusing the unsafe path %r" % (art.spec, member.name),
                         "check the package; do not build with it")
    out = os.path.join(dest, *parts)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with archive.extractfile(member) as src:
        sha256, size = write_hashed(src, out)
    written["/".join(parts)] = {"sha256": sha256, "size": size}
