"""Fine-tuning the head on real frozen features: the preset
``"finetune-digits"`` and the held-out accuracy the panel reports as it trains.

The paper's protocol at toy scale: the tiny ViT's encoder is frozen, its CLS features of a
fixed, seeded subset of the training digits (the build picks 6 per class, B = 60, and writes
their pixels and labels into digits.json) become the CLS rows, W_head starts at zero, and the
panel trains it with cross-entropy. The held-out digits (the ones the model never saw) are
encoded too, once; their accuracy under the W_head being trained is the figure that says
whether the head generalizes, not just fits its 60 rows.

Nothing of the data set is in the repository: the page sends the pixels it read from
digits.json (the build read them out of the pinned scikit-learn wheel).

Examples
--------
>>> texts, labels = check_digit_set([["0" * 64, 3]], "train")
>>> labels.tolist()
[3]
"""
import numpy as np

from ..vit.head import layer_norm
from .digit_images import PIXEL_CHARS, image_from_text, model
from .errors import StateError
from .shared import DIGITS_PRESET as PRESET
from .state import ExplorerState, check_seed, shown

TRAIN_MAX = 64
"""At most this many training digits: the page's limit on samples (B)."""
HELD_OUT_MAX = 2000
"""At most this many held-out digits (the data set has 1,797 images in all)."""
DIGITS_LR = 0.5
"""SGD's learning rate for this preset: from W_head = 0 the loss falls below 0.1 in 10 steps."""


def check_digit_set(value, where, limit=HELD_OUT_MAX):
    """Labelled digits as the page sends them: a list of [pixels, label] pairs, pixels the
    64-character link form (:data:`~pycore.explorer.digit_images.PIXEL_CHARS`), label 0 to 9.

    Returns
    -------
    (tuple of str, numpy.ndarray of int64)

    Raises
    ------
    StateError
        Naming the entry that is wrong and what it must be.

    Examples
    --------
    >>> check_digit_set([["0" * 64, 10]], "train")
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: digits.train[0]: the label must be a digit 0 to 9; got 10
    """
    where = "digits." + where
    if not isinstance(value, list) or not 1 <= len(value) <= limit:
        raise StateError("%s must be a list of 1 to %d [pixels, label] pairs; got %s"
                         % (where, limit, shown(value)))
    texts, labels = [], []
    for i, item in enumerate(value):
        if not isinstance(item, list) or len(item) != 2:
            raise StateError("%s[%d] must be a [pixels, label] pair; got %s"
                             % (where, i, shown(item)))
        text, label = item
        if not isinstance(text, str) or len(text) != 64 or any(c not in PIXEL_CHARS
                                                                for c in text):
            raise StateError("%s[%d]: the pixels must be 64 characters from %s"
                             % (where, i, PIXEL_CHARS))
        if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label <= 9:
            raise StateError("%s[%d]: the label must be a digit 0 to 9; got %s"
                             % (where, i, shown(label)))
        texts.append(text)
        labels.append(label)
    return tuple(texts), np.array(labels, dtype=np.int64)


def features(texts):
    """The tiny ViT's frozen CLS features of the images ``texts`` (B, 32), float64.

    Examples
    --------
    >>> features(["0" * 64]).shape
    (1, 32)
    """
    return model().features(np.stack([image_from_text(t) for t in texts]))


class HeldOut(object):
    """The held-out digits' frozen features and labels, for the state they came with.

    Parameters
    ----------
    state : ExplorerState
        The preset's state: the accuracy is reported while the session's state is this one
        (edits keep it; another preset, a link or a drawing ends it) at D = 32, C = 10.
    h_cls : numpy.ndarray
        (n, 32): the held-out digits' CLS features.
    labels : numpy.ndarray
        (n,) their digits.

    Examples
    --------
    >>> s = ExplorerState(np.zeros((2, 2)), cls=[[1.0, -1.0]])
    >>> h = HeldOut(s, np.array([[1.0, -1.0], [-1.0, 1.0]]), np.array([0, 1]))
    >>> h.accuracy(np.array([[1.0, 0.0], [0.0, 1.0]]))
    1.0
    """

    def __init__(self, state, h_cls, labels):
        self.state = state
        self.h_hat = layer_norm(h_cls)   # frozen: normalized once
        self.labels = labels

    @property
    def count(self):
        return int(self.labels.shape[0])

    def applies(self, state):
        """Whether the accuracy still belongs to ``state``."""
        return state is self.state and state.W_head.shape == (self.h_hat.shape[1], 10)

    def accuracy(self, W_head):
        """The share of held-out digits whose arg-max logit (h_hat @ W_head) is their label."""
        predicted = np.argmax(np.dot(self.h_hat, W_head), axis=1)
        return float(np.mean(predicted == self.labels))


def digits_preset(value, seed=0):
    """The ``"finetune-digits"`` preset from the page's ``digits`` field.

    Parameters
    ----------
    value : dict
        ``{"train": [[pixels, label], ...], "held_out": [[pixels, label], ...]}`` (at most
        :data:`TRAIN_MAX` training digits), as js/finetune.js reads them out of digits.json.
    seed : int, optional
        Kept in the options, as for every preset (the subset itself is the build's).

    Returns
    -------
    (ExplorerState, HeldOut)
        The CLS rows are the training digits' frozen features (B, 32) with their labels,
        W_head = 0 (32, 10), SGD at lr :data:`DIGITS_LR` from zero.

    Raises
    ------
    StateError
        A missing or malformed field, or a site without the tiny ViT's weights.
    """
    if not isinstance(value, dict) or set(value) != {"train", "held_out"}:
        raise StateError("the %s preset needs digits: {train, held_out} (from digits.json); "
                         "got %s" % (PRESET, shown(value)))
    train, y = check_digit_set(value["train"], "train", TRAIN_MAX)
    held, y_held = check_digit_set(value["held_out"], "held_out")
    state = ExplorerState(np.zeros((model().D, 10)), cls=features(train),
                          options={"seed": check_seed(seed)}, copy=False, labels=y,
                          train={"lr": DIGITS_LR, "start": "zero"})
    return state, HeldOut(state, features(held), y_held)
