"""A numerically stable softmax, used for display and by the "softmax inside" mistake."""

import numpy as np


def softmax(x, axis=-1):
    """Softmax along ``axis``, computed as ``exp(x - max) / sum``, so large logits do
    not overflow.

    Parameters
    ----------
    x : numpy.ndarray
        Finite float array.
    axis : int, optional

    Returns
    -------
    numpy.ndarray
        Same shape, each slice along ``axis`` sums to 1.

    Examples
    --------
    >>> softmax(np.array([[0.0, 0.0], [1000.0, 0.0]])).round(4).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    x = np.asarray(x, dtype=np.float64)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    """Log of the softmax along ``axis``, computed as ``(x - max) - log(sum(exp(x - max)))``.

    Never takes the log of a softmax that has underflowed to 0: a class far below the
    largest logit gets a large negative number, not ``-inf``. This is what the
    cross-entropy loss needs (:func:`pycore.vit.loss.cross_entropy`).

    Parameters
    ----------
    x : numpy.ndarray
        Finite float array, non-empty along ``axis``.
    axis : int, optional

    Returns
    -------
    numpy.ndarray
        float64, same shape; ``exp`` of each slice along ``axis`` sums to 1.

    Examples
    --------
    >>> log_softmax(np.array([[0.0, 0.0], [1000.0, 0.0]])).round(4).tolist()
    [[-0.6931, -0.6931], [0.0, -1000.0]]
    """
    x = np.asarray(x, dtype=np.float64)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    shifted -= np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return shifted
