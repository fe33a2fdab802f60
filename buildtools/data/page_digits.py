"""The held-out digits the page offers to pick (digits.json), read out of the pinned wheel at build
time: nothing of the data set is committed to the repository.

The digit panel lets a person draw a digit, or pick one the tiny ViT never saw in training:
the first PER_CLASS images of each digit among the model's held-out images (its
``test_indices``, in that order). digits.json holds their pixels and labels and the data set's
attribution; build-info.json records the same attribution and how many were written.

It also holds the data of the fine-tuning panel's "real features" preset,
under ``"finetune"``: a fixed, seeded subset of the *training* digits (FINETUNE_PER_CLASS of
each digit, drawn with ``np.random.RandomState(FINETUNE_SEED)`` from the images the model was
trained on, 60 in all, within the page's limit B <= 64) and every held-out digit, each as
``[pixels, label]`` with the pixels in the link form (64 characters 0-9a-g), which the page
sends as they are (pycore/explorer/finetune/digits.py).

When they cannot be had (no PyPI and nothing in the cache or mirror, no NumPy in the build's
Python, no weights file), the build goes on: digits.json then says why, the page offers drawing
only and says so, and the build says so in one line.
"""
import os

from ..errors import BuildError

FILE_NAME = "digits.json"
PER_CLASS = 3
FINETUNE_PER_CLASS = 6
FINETUNE_SEED = 0
PIXEL_CHARS = "0123456789abcdefg"   # pycore.explorer.digits.images.PIXEL_CHARS: pixel v is char v
WEIGHTS = os.path.join("pycore", "vit", "tiny", "weights.npz")
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
        The checkout (its pycore/vit/tiny/weights.npz names the held-out images).
    manifest : buildtools.artifacts.manifest.Manifest
        Its "pypi" section pins the scikit-learn wheel the digits are read from.
    cache : buildtools.artifacts.cache.Cache
        Where the wheel is (or is fetched to); its mirror and offline mode apply.
    log : callable
        Told one line: how many digits were written, or why none.

    Returns
    -------
    (dict, dict)
        ``{"available": true, "data_set", "source", "digits": [{"index", "label",
        "pixels": 64 ints}], "finetune": {"seed", "per_class", "train": [[pixels, label]],
        "train_indices", "held_out": [[pixels, label]]}}`` or ``{"available": false, "reason",
        "data_set"}``; and
        ``{"file", "available", "count", "reason", "data_set", "source"}``.
    """
    try:
        page, finetune, source = _read(root, manifest, cache)
    except BuildError as exc:
        reason = exc.what
        log("digits: no held-out digits on the page, drawing only (%s)" % reason)
        return ({"available": False, "reason": reason, "data_set": DATA_SET},
                {"file": FILE_NAME, "available": False, "count": 0, "reason": reason,
                 "data_set": DATA_SET, "source": None})
    log("digits: %d held-out digits for the page, from %s (%s, %s)"
        % (len(page), source["file_name"], DATA_SET["name"], DATA_SET["license"]))
    return ({"available": True, "data_set": DATA_SET, "source": source, "digits": page,
             "finetune": finetune},
            {"file": FILE_NAME, "available": True, "count": len(page), "reason": None,
             "data_set": DATA_SET, "source": source})


def _read(root, manifest, cache):
    """(the digits for the page, the fine-tuning preset's, where they came from); BuildError
    says why they cannot be had."""
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
    return page, finetune_digits(images, labels, test_indices), source


def finetune_digits(images, labels, test_indices):
    """The fine-tuning preset's digits: FINETUNE_PER_CLASS training images of each digit, drawn
    with RandomState(FINETUNE_SEED) in digit order (then sorted by index), and every held-out
    image, in held-out order.

    Examples
    --------
    >>> import numpy as np
    >>> images = np.zeros((30, 8, 8), dtype=np.uint8); labels = np.arange(30) % 10
    >>> out = finetune_digits(images, labels, [0, 1])
    >>> len(out["train"]), out["held_out"][1], out["train"][0][0][:4]
    (28, ['0000000000000000000000000000000000000000000000000000000000000000', 1], '0000')
    """
    import numpy as np
    held = set(int(i) for i in test_indices)
    rng = np.random.RandomState(FINETUNE_SEED)
    picked = []
    for digit in range(10):
        pool = [i for i in range(len(labels)) if labels[i] == digit and i not in held]
        picked += [int(i) for i in rng.choice(pool, min(FINETUNE_PER_CLASS, len(pool)),
                                              replace=False)]
    picked.sort()
    pair = lambda i: ["".join(PIXEL_CHARS[int(v)] for v in images[i].ravel()), int(labels[i])]
    return {"seed": FINETUNE_SEED, "per_class": FINETUNE_PER_CLASS, "train_indices": picked,
            "train": [pair(i) for i in picked],
            "held_out": [pair(i) for i in test_indices if 0 <= i < len(labels)]}
