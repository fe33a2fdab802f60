"""The 8x8 handwritten digits, read out of the scikit-learn wheel pinned in artifacts.json.

The data: 1,797 images of 8x8 pixels with values 0..16 and their labels 0..9, the UCI ML
"Optical Recognition of Handwritten Digits" set by E. Alpaydin and C. Kaynak (CC BY 4.0), as
scikit-learn ships it in sklearn/datasets/data/digits.csv.gz: one image a line, 64 pixels in
row-major order, then the label, in the order of sklearn.datasets.load_digits().

scikit-learn itself is neither installed nor imported: the pinned wheel (artifacts.json,
"pypi") is fetched once into <cache>/pypi/, checked against its sha256, and only the one
member is read out of the zip.

    from buildtools.data.digits import load_digits
    images, labels = load_digits()    # uint8 (1797, 8, 8), int64 (1797,)
"""
import gzip
import os

import numpy as np

from ..artifacts import manifest as manifest_mod
from ..errors import BuildError
# (used by tests too)
from ..artifacts.pypi_files import index_entry, read_member, wheel_path  # noqa: F401

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PIN = "scikit-learn"  # the key under "pypi" in artifacts.json
SIDE = 8
PIXEL_MAX = 16


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
    cache : buildtools.artifacts.cache.Cache, optional
        See :func:`wheel_path`.
    manifest : buildtools.artifacts.manifest.Manifest, optional
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
