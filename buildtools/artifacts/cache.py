"""The download cache: every third-party file is fetched once, checked, and reused.

Layout under the cache folder (default $XDG_CACHE_HOME/vit-head-explorer, else
~/.cache/vit-head-explorer):
  npm/<scope-name>-<version>.tgz     npm tarballs, named as `npm pack` names them
  wheels/<file>.whl                   the NumPy wheel for Pyodide, once obtained
  wheels/<file>.whl.unavailable       why the last download attempt failed, and when
  unpacked/<name>-<version>-<hash>/   the few files a build copies out of each tarball, and
                                      .complete.json: each one's sha256 and size, recorded
                                      while it was extracted from the checked tarball
  bundles/                            what buildtools/javascript/plotly_bundle.py makes

A file enters the cache only after its hash matched artifacts.json. Nothing is trusted by name
when it leaves: tarballs and the wheel are hashed again on every use, and every unpacked file is
hashed while it is copied into a site and compared with its record, so a byte flipped or a file
deleted in the cache is found, unpacked again from the tarball, and never shipped. The record
itself is trusted only once its digest (`unpacked.selection_digest`: every file's path, sha256 and
size) is the ``files_sha256`` artifacts.json pins for the artifact: a file changed together
with its record, or a record forged, is unpacked again from the checked tarball, and a
selection whose files are not the pinned ones never ships. A build whose files are all cached
makes no network request.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error

from . import atomic
from .checked import copy_checked, discard, matches, remove, remove_stale, sha256_hex, sri_sha512
from ..errors import BuildError
from .fetch import download, npm_command, npm_dist
from .unpacked import (STAMP, check_pin, copy_files, covers, extract_selection, read_stamp,
                       selection_digest, write_stamp)

# A failed wheel download is not retried for this long by `--runtime auto`, so that a machine
# without internet builds the fallback host quickly, and a second build makes no request.
RETRY_AFTER_S = 24 * 3600


def default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "vit-head-explorer")


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
            if matches(path, lambda p: sri_sha512(p) == art.integrity):
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
                done = subprocess.run([npm_command(), "pack", art.spec, "--pack-destination", tmp],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      universal_newlines=True, timeout=3600)
            except (OSError, subprocess.SubprocessError) as exc:
                raise BuildError("could not download %s with `npm pack`: %s" % (art.spec, exc),
                                 "check the network connection to the npm registry and retry")
            packed = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
            if done.returncode != 0 or len(packed) != 1:
                raise BuildError("could not download %s: %s"
                                 % (art.spec, done.stderr.strip()[-400:]),
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
        if files is not None and not covers(files, art):
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
            check_pin(art, files)
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
            if matches(path, lambda p: sha256_hex(p) == wheel.sha256):
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


