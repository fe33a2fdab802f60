"""The fine-tuning part of the explorer state: one class label per sample, and the training
settings of the "Fine-tune the head" panel, with their defaults and the one check of each.

In a link (docs/training.md, "The panel"), both are top-level keys written only when they
differ from their defaults, so that every older link stays as it was::

    "labels": [0, 1, 2, ...]                      B whole numbers in [0, C); absent: all 0
    "train": {"lr": 0.02, "optimizer": "momentum"} any of TRAIN_DEFAULTS' keys

The state holds the labels as a tuple of ints and the settings as a plain dict (the compared
heads as a tuple), so copying a state never shares anything that can change.
"""
import math

import numpy as np

from ...vit.backward import HEADS
from ...vit.loss import check_labels as check_label_array
from ...vit.optimizers import OPTIMIZERS
from ..errors import StateError, shown

STARTS = ("current", "zero")
"""Where a training run starts: the W_head shown, or W_head = 0 (the paper's protocol)."""

COMPARED = tuple(h for h in HEADS if h != "correct")
"""The mistaken heads that can be trained side by side with the correct one."""

TRAIN_DEFAULTS = {"lr": 0.1, "optimizer": "sgd", "start": "current", "compare": COMPARED,
                  "input_scale": 1.0}
"""The training settings of a state that says nothing about them (every older link)."""

LR_DEFAULTS = {"sgd": TRAIN_DEFAULTS["lr"], "momentum": 0.02, "adam": 0.01}
"""The learning rate an optimizer gets when the person chooses it: on the class-means preset
each converges in 50-60 steps (SGD's 0.1 in about 100), none diverges on either preset."""


def _positive(value, where):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                    np.floating)):
        raise StateError("{} must be a positive finite number; got {}".format(
            where, shown(value)), key="train")
    try:
        number = float(value)
    except OverflowError:  # an int beyond float64
        number = math.inf
    if not (math.isfinite(number) and number > 0):
        raise StateError("{} must be a positive finite number; got {}".format(
            where, shown(value)), key="train")
    return number


def check_train_setting(name, value):
    """The one check of a training setting, from a link or from the page.

    Parameters
    ----------
    name : str
        One of :data:`TRAIN_DEFAULTS`: ``lr`` and ``input_scale`` (positive finite numbers),
        ``optimizer`` (``"sgd"``, ``"momentum"``, ``"adam"``), ``start`` (``"current"``,
        ``"zero"``), ``compare`` (a list of distinct names from :data:`COMPARED`).
    value : object

    Returns
    -------
    object
        The value to store: a float, a name, or the compared heads as a tuple in
        :data:`COMPARED`'s order.

    Raises
    ------
    StateError
        ``key="train"``, naming the setting, what it may be, and what it got.

    Examples
    --------
    >>> check_train_setting("lr", 1), check_train_setting("compare", ["bias", "no_layernorm"])
    (1.0, ('no_layernorm', 'bias'))
    >>> check_train_setting("lr", -1)
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: train.lr must be a positive finite number; got -1
    """
    where = "train." + str(name)
    if name in ("lr", "input_scale"):
        return _positive(value, where)
    if name in ("optimizer", "start"):
        allowed = OPTIMIZERS if name == "optimizer" else STARTS
        if not isinstance(value, str) or value not in allowed:
            raise StateError("{} must be one of {}; got {}".format(
                where, ", ".join('"%s"' % a for a in allowed), shown(value)), key="train")
        return value
    if name == "compare":
        if not isinstance(value, (list, tuple)) or not all(
                isinstance(v, str) and v in COMPARED for v in value) \
                or len(set(value)) != len(value):
            raise StateError("{} must be a list of distinct heads from {}; got {}".format(
                where, ", ".join('"%s"' % h for h in COMPARED), shown(value)), key="train")
        return tuple(h for h in COMPARED if h in value)
    raise StateError("there is no training setting {}".format(shown(name)), key="train")


def train_settings(value=None):
    """All the training settings: ``value``'s (checked) over :data:`TRAIN_DEFAULTS`.

    Examples
    --------
    >>> sorted(train_settings({"lr": 0.5}).items())[:2]
    [('compare', ('softmax_inside', 'no_layernorm', 'bias')), ('input_scale', 1.0)]
    """
    out = dict(TRAIN_DEFAULTS)
    for name, item in (value or {}).items():
        out[name] = check_train_setting(name, item)
    return out


def check_labels(value, B, C):
    """The labels of a state: :func:`pycore.vit.loss.check_labels` (B whole numbers, never
    booleans or floats, each a class index in [0, C)), with its refusal as a StateError. None
    means "no labels yet": every sample labelled 0.

    Parameters
    ----------
    value : list, tuple, numpy.ndarray or None
    B, C : int
        The state's samples and classes.

    Returns
    -------
    tuple of int

    Raises
    ------
    StateError
        ``key="labels"``, with ``index=(b,)`` when one label is wrong.

    Examples
    --------
    >>> check_labels([2, 0], B=2, C=3), check_labels(None, B=2, C=3)
    ((2, 0), (0, 0))
    >>> check_labels([0, 3], B=2, C=3)
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: labels[1] = 3 is out of range: a class index from 0 to 2 ...
    """
    if value is None:
        return (0,) * B
    try:
        labels = check_label_array(value, B, C, quote=shown)
    except (TypeError, ValueError) as error:
        raise StateError(str(error), key="labels",
                         index=getattr(error, "index", None)) from None
    return tuple(labels.tolist())


def parse_label(text, b, C):
    """A label as a person typed it: a whole number from 0 to C - 1 (spaces ignored).

    Raises
    ------
    StateError
        ``key="labels"``, ``index=(b,)``, saying what was typed and what is allowed.

    Examples
    --------
    >>> parse_label(" 7", 0, 10)
    7
    >>> parse_label("12", 3, 10)
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: labels[3] = 12 is out of range: a class index from 0 to ...
    """
    if not isinstance(text, str):
        raise StateError("labels[{}]: the text must be a string; got {}".format(
            b, shown(text)), key="labels", index=(b,))
    stripped = text.strip()
    if not stripped:
        raise StateError("labels[{}] is empty: type a class index from 0 to {}".format(
            b, C - 1), key="labels", index=(b,))
    if not (stripped.isdigit() and stripped.isascii()) or len(stripped) > 12:
        raise StateError("labels[{}]: {} is not a class index (a whole number from 0 to "
                         "{})".format(b, shown(stripped), C - 1), key="labels", index=(b,))
    label = int(stripped)
    if label >= C:
        raise StateError("labels[{}] = {} is out of range: a class index from 0 to {} "
                         "(C = {} classes)".format(b, label, C - 1, C), key="labels", index=(b,))
    return label


def resized_labels(labels, B, C):
    """The labels after a resize: removed samples drop theirs, new samples get label 0, and a
    label whose class no longer exists (C shrank) becomes 0, as a removed class's column of
    W_head is dropped and new cells are 0.

    Examples
    --------
    >>> resized_labels((2, 1), B=3, C=2)
    (0, 1, 0)
    """
    kept = [label if label < C else 0 for label in labels[:B]]
    return tuple(kept + [0] * (B - len(kept)))


def labels_to_json(labels):
    """The labels as a link writes them: None (left out) when every sample is labelled 0."""
    return list(labels) if any(labels) else None


def train_to_json(train):
    """The settings that differ from :data:`TRAIN_DEFAULTS` (None when none does).

    Examples
    --------
    >>> train_to_json(train_settings({"optimizer": "adam", "compare": ["bias"]}))
    {'optimizer': 'adam', 'compare': ['bias']}
    """
    out = {}
    for name in ("lr", "optimizer", "start", "compare", "input_scale"):
        if train[name] != TRAIN_DEFAULTS[name]:
            out[name] = list(train[name]) if name == "compare" else train[name]
    return out or None


def train_from_json(value):
    """The ``train`` object of a link: known settings checked, unknown ones ignored (a newer
    page may add some), as for ``options``.

    Raises
    ------
    StateError
        When ``train`` is not an object, or a known setting is wrong.
    """
    if value is None:
        return train_settings()
    if not isinstance(value, dict):
        raise StateError("train must be an object; got {}".format(shown(value)), key="train")
    return train_settings(dict((k, value[k]) for k in TRAIN_DEFAULTS if k in value))
