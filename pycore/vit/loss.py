"""The loss fine-tuning minimizes: the softmax cross-entropy of the head's raw logits.

The head returns raw logits (no softmax); the loss applies the softmax itself::

    loss = mean_b( -log softmax(logits)[b, y_b] )
         = mean_b( logsumexp(logits[b]) - logits[b, y_b] )

with ``y`` one class index per sample, checked by :func:`check_labels` (the one check of
labels: the explorer's state uses it too). docs/training.md, "The loss".
"""

import numbers

import numpy as np

from .checks import as_float64, check_finite, expect_ndim, real_array, shape_text
from .scalars import is_bool
from .softmax import log_softmax

_QUOTE_CHARS = 20


def _repr_cut(value):
    """How a message shows a refused label by default: its repr, cut short."""
    if isinstance(value, int) and value.bit_length() > 64:  # repr of a huge int is slow or refused
        return "an integer of {} bits".format(value.bit_length())
    text = repr(value)
    return text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "..."


def _refuse(kind, message, index=None):
    """``kind(message)`` with ``index``, the entry at fault ((i,) or None), attached."""
    error = kind(message)
    error.index = index
    raise error


def check_labels(labels, B, C, quote=_repr_cut):
    """Check class labels against a batch of B samples and C classes; return them as int64.

    Labels are class indices: integers only. Floats are refused even when they are
    whole numbers (``2.0``), so that a regression target or a one-hot row passed by
    mistake is never silently truncated; cast with ``.astype(int)`` when that is meant.

    Parameters
    ----------
    labels : array_like
        Shape (B,), integers in [0, C).
    B, C : int
        The batch size and the number of classes.
    quote : callable, optional
        How a message shows a refused value: its repr, cut to 20 characters, by default
        (the explorer passes its own, which uses JSON's words, as its links do).

    Returns
    -------
    numpy.ndarray
        (B,) int64 (a new array unless ``labels`` already is one).

    Raises
    ------
    TypeError
        For booleans, floats, text or other non-integers, naming the first offending entry.
    ValueError
        For a shape other than (B,), or a label outside [0, C), naming the entry.

    Either error has an ``index`` attribute: ``(i,)`` when entry i is at fault, else None.

    Examples
    --------
    >>> check_labels([2, 0], 2, 3).tolist()
    [2, 0]
    >>> check_labels([0, 3], 2, 3)
    Traceback (most recent call last):
    ...
    ValueError: labels[1] = 3 is out of range: a class index from 0 to 2 (C = 3 classes)
    """
    if isinstance(labels, np.ndarray) and labels.dtype.kind != "O":
        arr = labels
    else:
        try:
            arr = np.array(labels, dtype=object)
        except ValueError:  # nested sequences NumPy cannot lay out
            arr = None
        if arr is None or arr.ndim == 0:
            _refuse(ValueError, "labels must be a list of B = {} class indices; got {}".format(
                B, quote(labels)))
    if arr.ndim != 1:
        _refuse(ValueError, "labels has shape {} but must have shape ({},): one class index "
                "per sample (B = {})".format(shape_text(arr.shape), B, B))
    if arr.shape[0] != B:
        _refuse(ValueError, "labels has {} entries but there are B = {} samples: one class "
                "index per sample".format(arr.shape[0], B))
    if arr.dtype.kind == "O":
        for i, value in enumerate(arr):
            if is_bool(value) or not isinstance(value, numbers.Integral):
                _refuse(TypeError, "labels[{}] is {}, not a class index (a whole number from 0 "
                        "to {})".format(i, quote(value), C - 1), (i,))
        arr = np.array([int(v) for v in arr], dtype=object)
    kind = arr.dtype.kind
    if kind == "b":
        _refuse(TypeError, "labels is boolean (dtype bool): labels must be integer class "
                "indices")
    if kind not in "iuO":
        _refuse(TypeError, "labels has dtype {}: labels must be integer class indices (cast "
                "whole-number floats with .astype(int))".format(arr.dtype))
    bad = np.nonzero((arr < 0) | (arr >= C))[0] if B else ()
    if len(bad):
        i = int(bad[0])
        _refuse(ValueError, "labels[{}] = {} is out of range: a class index from 0 to {} "
                "(C = {} classes)".format(i, quote(int(arr[i])), C - 1, C), (i,))
    if arr.dtype == np.int64:
        return arr
    return arr.astype(np.int64)


def mean_loss(values):
    """The mean of the per-sample losses (B,), shifted by the first: equal entries give that
    entry exactly (the mean of B copies of log C is log C, not one rounding off)."""
    first = values[0]
    return float(first + (values - first).sum() / values.shape[0])


def cross_entropy(logits, labels):
    """Mean cross-entropy of raw logits: ``mean_b( -log softmax(logits)[b, labels[b]] )``.

    Computed with a stable log-softmax (log-sum-exp with the row maximum subtracted), in
    float64, so logits of any finite size give a finite loss. Equal per-sample losses
    give exactly that value: all-zero logits give exactly ``log(C)``.

    Parameters
    ----------
    logits : array_like
        (B, C) real numbers, finite, B >= 1 and C >= 1: the head's output, before any softmax.
    labels : array_like
        (B,) integer class indices in [0, C); floats are refused, even whole ones (see
        :func:`check_labels`).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        Non-numeric or boolean logits; non-integer or boolean labels (naming the entry).
    ValueError
        Logits not 2-D, empty, or holding NaN/inf (naming the index); labels of the wrong
        shape (naming both shapes) or out of range (naming the entry).

    Examples
    --------
    >>> round(cross_entropy([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [0, 2]), 6)
    0.669079
    >>> import math
    >>> cross_entropy(np.zeros((4, 10)), [0, 1, 2, 3]) == math.log(10)
    True
    """
    z = as_float64(real_array(logits, "logits"))                     # (B, C)
    expect_ndim(z, "logits", 2, "(B, C)")
    if z.shape[0] < 1 or z.shape[1] < 1:
        raise ValueError("logits has shape {}: the loss needs B >= 1 samples and C >= 1 "
                         "classes".format(shape_text(z.shape)))
    check_finite(z, "logits")
    y = check_labels(labels, z.shape[0], z.shape[1])                 # (B,)
    picked = log_softmax(z)[np.arange(z.shape[0]), y]                # (B,)
    return mean_loss(-picked)


def loss_and_probs(logits, y):
    """``(cross_entropy(logits, y), softmax(logits))`` of finite, checked logits (B, C) in
    one exp pass; the probabilities are a new array."""
    rows = np.arange(logits.shape[0])
    probs = logits - logits.max(axis=1, keepdims=True)               # (B, C) shifted, <= 0
    picked = probs[rows, y]                                          # (B,) z_y - max
    np.exp(probs, out=probs)
    total = probs.sum(axis=1, keepdims=True)                         # (B, 1) in [1, C]
    probs /= total
    return mean_loss(np.log(total[:, 0]) - picked), probs
