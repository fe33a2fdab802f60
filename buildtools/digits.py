"""The 8x8 handwritten digits, read out of the scikit-learn wheel pinned in artifacts.json.

The data: 1,797 images of 8x8 pixels with values 0..16 and their labels 0..9, the UCI ML
"Optical Recognition of Handwritten Digits" set by E. Alpaydin and C. Kaynak (CC BY 4.0), as
scikit-learn ships it in sklearn/datasets/data/digits.csv.gz: one image a line, 64 pixels in
row-major order, then the label, in the order of sklearn.datasets.load_digits().

scikit-learn itself is neither installed nor imported: the pinned wheel (artifacts.json,
"pypi") is fetched once into <cache>/pypi/, checked against its sha256, and only the one
member is read out of the zip.

    from buildtools.digits import load_digits
    images, labels = load_digits()    # uint8 (1797, 8, 8), int64 (1797,)
"""
import gzip
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile

import numpy as np

from . import cache as cache_mod
from . import manifest as manifest_mod
from .errors import BuildError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = "scikit-learn"  # the key under "pypi" in artifacts.json
SIDE = 8
PIXEL_MAX = 16
# PEP 691: the simple index answers in JSON (file URLs and their hashes) when asked to.
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def _stderr(message):
    sys.stderr.write(message + "\n")


def index_entry(pin, timeout=60):
    """Where the pinned file is, and the sha256 PyPI publishes for it: (url, sha256)."""
    url = "%s%s/" % (pin.index, pin.package.lower())
    request = urllib.request.Request(url, headers={"Accept": SIMPLE_JSON,
                                                   "User-Agent": cache_mod.USER_AGENT})
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
    pin : buildtools.manifest.PypiFile
        What to fetch and its sha256.
    cache : buildtools.cache.Cache, optional
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
    matches = lambda p: cache_mod.sha256_hex(p) == pin.sha256  # noqa: E731
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
        cache_mod.download(url, tmp, "%s %s (for its %s)" % (
            pin.package, pin.version, os.path.basename(pin.member) or "data"))
        got = cache_mod.sha256_hex(tmp)
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


def parse_digits_csv(data, name="digits.csv.gz"):
    """(images uint8 (n, 8, 8), labels int64 (n,)) from the gzipped CSV's bytes.

    Each line holds 64 pixels (0..16, row-major) and the label (0..9); the order is kept.
    """
    try:
        text = gzip.decompress(data).decode("ascii")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise BuildError("%s is not gzipped ASCII text (%s)" % (name, exc),
                         "check the pinned wheel and member in artifacts.json")
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split(",")
        try:
            values = [int(f) for f in fields]
        except ValueError:
            values = None
        if len(fields) != SIDE * SIDE + 1 or values is None:
            raise BuildError("%s line %d is not 64 pixels and a label (integers)" % (name, number),
                             "check the pinned wheel and member in artifacts.json")
        rows.append(values)
    if not rows:
        raise BuildError("%s holds no images" % name, "check the pinned wheel")
    table = np.array(rows, dtype=np.int64)
    pixels, labels = table[:, :-1], table[:, -1]
    if pixels.min() < 0 or pixels.max() > PIXEL_MAX or labels.min() < 0 or labels.max() > 9:
        raise BuildError("%s: pixels must be 0..16 and labels 0..9" % name,
                         "check the pinned wheel and member in artifacts.json")
    return pixels.reshape(-1, SIDE, SIDE).astype(np.uint8), labels


def load_digits(cache=None, manifest=None, log=None):
    """The 1,797 digits in load_digits() order: images uint8 (1797, 8, 8), labels int64 (1797,).

    Parameters
    ----------
    cache : buildtools.cache.Cache, optional
        See :func:`wheel_path`.
    manifest : buildtools.manifest.Manifest, optional
        Default: the repository's artifacts.json.
    log : callable, optional
        One-line messages.
    """
    if manifest is None:
        manifest = manifest_mod.load(os.path.join(ROOT, "artifacts.json"))
    if PIN not in manifest.pypi:
        raise BuildError("%s pins no pypi.%s" % (manifest.path, PIN),
                         "restore the 'pypi' section of artifacts.json from git")
    pin = manifest.pypi[PIN]
    wheel = wheel_path(pin, cache=cache, log=log)
    return parse_digits_csv(read_member(wheel, pin.member), pin.member)
