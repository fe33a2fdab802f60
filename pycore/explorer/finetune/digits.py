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

from ...vit.backward import head_backward
from ...vit.head import layer_norm
from ..digits.images import PIXEL_CHARS, image_from_text, model
from ..errors import StateError
from ..shared import DIGITS_PRESET as PRESET
from ..state.explorer_state import ExplorerState, check_seed, shown

TRAIN_MAX = 64
"""At most this many training digits: the page's limit on samples (B)."""
HELD_OUT_MAX = 2000
"""At most this many held-out digits (the data set has 1,797 images in all)."""
DIGITS_LR = 0.5
"""SGD's learning rate for this preset: from W_head = 0 the loss falls below 0.1 in 10 steps."""


def check_digit_set(value, where, limit=HELD_OUT_MAX):
    """Labelled digits as the page sends them: a list of [pixels, label] pairs, pixels the
    64-character link form (:data:`~pycore.explorer.digits.images.PIXEL_CHARS`), label 0 to 9.

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


PROBE_STEPS = 200
"""Full-batch SGD steps of each depth's probe, at :data:`DIGITS_LR` from zero."""


def features(texts):
    """The tiny ViT's frozen CLS features of the images ``texts`` (B, 32), float64.

    Examples
    --------
    >>> features(["0" * 64]).shape
    (1, 32)
    """
    return model().features(np.stack([image_from_text(t) for t in texts]))


def features_by_depth(texts, batch=256):
    """The CLS row of the images ``texts`` at every depth, (L+1, B, 32): after the embedding
    and after each block (the last is :func:`features`), from one forward pass a batch."""
    images = np.stack([image_from_text(t) for t in texts])
    return np.concatenate([model().hidden_cls(images[i:i + batch])
                           for i in range(0, len(images), batch)], axis=1)


def probes(train, y, held, y_held, steps=PROBE_STEPS, lr=DIGITS_LR):
    """A linear probe at every depth: the head (LayerNorm without gamma/beta, then W) trained
    from W = 0 on each depth's CLS features of the training digits with cross-entropy, by
    full-batch SGD with exact gradients (:func:`pycore.vit.backward.head_backward`), and
    scored on the training and the held-out digits.

    Parameters
    ----------
    train, held : numpy.ndarray
        (L+1, n, D) and (L+1, m, D): :func:`features_by_depth` of each set.
    y, y_held : numpy.ndarray
        (n,) and (m,) labels 0..9.

    Returns
    -------
    dict
        ``depths`` [0..L], ``train`` and ``held_out`` accuracies per depth (0 to 1), ``steps``,
        ``lr``, and ``text``: one line for the panel.

    Examples
    --------
    >>> rs = np.random.RandomState(0)
    >>> y = np.arange(20) % 10
    >>> h = rs.normal(size=(2, 20, 32)); h[1, np.arange(20), y] += 5.0   # depth 1 separates
    >>> p = probes(h, y, h, y, steps=50)
    >>> p["depths"], p["held_out"][1]
    ([0, 1], 1.0)
    """
    out = {"depths": [], "train": [], "held_out": [], "steps": int(steps), "lr": float(lr)}
    for depth in range(train.shape[0]):
        W = np.zeros((train.shape[2], 10))
        for _ in range(int(steps)):
            W -= lr * head_backward(train[depth], W, y).dW_head
        out["depths"].append(depth)
        for key, h, labels in (("train", train[depth], y), ("held_out", held[depth], y_held)):
            out[key].append(float(np.mean(np.argmax(np.dot(layer_norm(h), W), axis=1)
                                          == labels)))
    out["text"] = ("Where the digit becomes linearly readable: a head trained on each depth's "
                   "CLS features of the %d digits (%d SGD steps from zero, exact gradients), "
                   "held-out accuracy %s. At \u2113 = 0 the CLS token has not met the image yet: "
                   "it is the same learned vector for every digit."
                   % (train.shape[1], steps, ", ".join(
                       "\u2113 = %d: %.0f %%" % (d, 100 * a)
                       for d, a in zip(out["depths"], out["held_out"]))))
    return out


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

    def __init__(self, state, h_cls, labels, probes=None):
        self.state = state
        self.h_hat = layer_norm(h_cls)   # frozen: normalized once
        self.labels = labels
        self.probes = probes  # the probe at every depth (:func:`probes`), or None

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
        :data:`TRAIN_MAX` training digits), as js/panels/finetune.js reads them out of digits.json.
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
    train_h, held_h = features_by_depth(train), features_by_depth(held)
    state = ExplorerState(np.zeros((model().D, 10)), cls=train_h[-1],
                          options={"seed": check_seed(seed)}, copy=False, labels=y,
                          train={"lr": DIGITS_LR, "start": "zero"})
    return state, HeldOut(state, held_h[-1], y_held, probes(train_h, y, held_h, y_held))
