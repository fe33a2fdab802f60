"""The held-out digits the page offers to pick (digits.json), read out of the pinned wheel at build
time: nothing of the data set is committed to the repository.

The real-ViT panel lets a person draw a digit, or pick one the tiny ViT never saw in training:
the first PER_CLASS images of each digit among the model's held-out images (its
``test_indices``, in that order). digits.json holds their pixels and labels and the data set's
attribution; build-info.json records the same attribution and how many were written.

When they cannot be had (no PyPI and nothing in the cache or mirror, no NumPy in the build's
Python, no weights file), the build goes on: digits.json then says why, the page offers drawing
only and says so, and the build says so in one line.
"""
import os

from .errors import BuildError

FILE_NAME = "digits.json"
PER_CLASS = 3
WEIGHTS = os.path.join("pycore", "vit", "tiny_vit_weights.npz")
DATA_SET = {
    "name": "Optical Recognition of Handwritten Digits",
    "authors": "E. Alpaydin and C. Kaynak",
    "year": 1998,
    "repository": "UCI Machine Learning Repository",
    "url": "https://archive.ics.uci.edu/dataset/80/optical+recognition+of+handwritten+digits",
    "license": "CC BY 4.0",
    "license_url": "https://creativecommons.org/licenses/by/4.0/",
}


def held_out_digits(root, manifest, cache, log=print):
    """digits.json's content, and the entry build-info.json records about it.

    Parameters
    ----------
    root : str
        The checkout (its pycore/vit/tiny_vit_weights.npz names the held-out images).
    manifest : buildtools.manifest.Manifest
        Its "pypi" section pins the scikit-learn wheel the digits are read from.
    cache : buildtools.cache.Cache
        Where the wheel is (or is fetched to); its mirror and offline mode apply.
    log : callable
        Told one line: how many digits were written, or why none.

    Returns
    -------
    (dict, dict)
        ``{"available": true, "data_set", "source", "digits": [{"index", "label",
        "pixels": 64 ints}]}`` or ``{"available": false, "reason", "data_set"}``; and
        ``{"file", "available", "count", "reason", "data_set", "source"}``.
    """
    try:
        page, source = _read(root, manifest, cache)
    except BuildError as exc:
        reason = exc.what
        log("digits: no held-out digits on the page, drawing only (%s)" % reason)
        return ({"available": False, "reason": reason, "data_set": DATA_SET},
                {"file": FILE_NAME, "available": False, "count": 0, "reason": reason,
                 "data_set": DATA_SET, "source": None})
    log("digits: %d held-out digits for the page, from %s (%s, %s)"
        % (len(page), source["file_name"], DATA_SET["name"], DATA_SET["license"]))
    return ({"available": True, "data_set": DATA_SET, "source": source, "digits": page},
            {"file": FILE_NAME, "available": True, "count": len(page), "reason": None,
             "data_set": DATA_SET, "source": source})


def _read(root, manifest, cache):
    """(the digits for the page, where they came from); BuildError says why they cannot be had."""
    weights = os.path.join(root, WEIGHTS)
    if not os.path.isfile(weights):
        raise BuildError("%s is missing" % WEIGHTS.replace(os.sep, "/"))
    if "scikit-learn" not in manifest.pypi:
        raise BuildError("artifacts.json pins no pypi.scikit-learn wheel")
    try:  # NumPy: only here and in a child Python, so a build without it still makes a site
        import numpy as np
        from . import digits
    except ImportError as exc:
        raise BuildError("the build's Python cannot import NumPy: %s" % exc)
    images, labels = digits.load_digits(cache=cache, manifest=manifest, log=cache.log)
    try:
        with np.load(weights, allow_pickle=False) as data:
            test_indices = [int(i) for i in data["test_indices"]]
    except (OSError, KeyError, ValueError) as exc:
        raise BuildError("%s holds no test_indices (%s)" % (WEIGHTS, exc))
    chosen = []
    for digit in range(10):
        of_digit = [i for i in test_indices if 0 <= i < len(labels) and labels[i] == digit]
        chosen += of_digit[:PER_CLASS]
    if not chosen:
        raise BuildError("none of the held-out indices is an image of the data set")
    pin = manifest.pypi["scikit-learn"]
    source = {"package": pin.package, "version": pin.version, "file_name": pin.file_name,
              "sha256": pin.sha256, "member": pin.member}
    page = [{"index": i, "label": int(labels[i]), "pixels": [int(v) for v in images[i].ravel()]}
            for i in chosen]
    return page, source
