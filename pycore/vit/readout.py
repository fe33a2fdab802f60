"""Reading the head's output: where one logit comes from, and which classes lead.

A logit is a dot product, ``logits[b, c] = sum_d h_hat[b, d] * W_head[d, c]`` (the ViT paper's
head: no bias). Its D terms say which features push sample b towards class c and which pull it
away; :func:`contributions` returns them. :func:`top_k` ranks the classes of each sample the
way ``argmax`` picks the first: by logit, ties to the lower class index.

Runs on Python 3.8 / NumPy 1.17 and Python 3.14 / NumPy 2.x (NumPy and the standard library only).
"""
import numpy as np

from .head import head_from_cls


def contributions(h_hat, W_head, b, c):
    """The D terms of one logit: ``h_hat[b, d] * W_head[d, c]`` for every feature d.

    Parameters
    ----------
    h_hat : numpy.ndarray
        (B, D) LayerNorm output.
    W_head : numpy.ndarray
        (D, C) head weights.
    b : int
        The sample, 0 <= b < B.
    c : int
        The class, 0 <= c < C.

    Returns
    -------
    numpy.ndarray
        (D,) float64; their sum is ``logits[b, c]`` (up to the order of the float additions).

    Raises
    ------
    ValueError
        When the shapes do not chain or b or c is out of range.

    Examples
    --------
    >>> h_hat = np.array([[1.0, -1.0]])
    >>> W = np.array([[0.5, 2.0], [0.25, 1.0]])
    >>> contributions(h_hat, W, 0, 0).tolist()
    [0.5, -0.25]
    """
    h_hat = np.asarray(h_hat, dtype=np.float64)
    W_head = np.asarray(W_head, dtype=np.float64)
    if h_hat.ndim != 2 or W_head.ndim != 2 or h_hat.shape[1] != W_head.shape[0]:
        raise ValueError("h_hat (B, D) and W_head (D, C) must share D; got %s and %s"
                         % (h_hat.shape, W_head.shape))
    B, C = h_hat.shape[0], W_head.shape[1]
    if not (0 <= int(b) < B and 0 <= int(c) < C):
        raise ValueError("logit (%d, %d) is outside the (%d, %d) logits" % (int(b), int(c), B, C))
    return h_hat[int(b)] * W_head[:, int(c)]


def top_k(logits, k):
    """The k largest logits of each sample: their classes, best first, ties to the lower index.

    ``top_k(logits, 1)[:, 0]`` is ``logits.argmax(axis=1)``: a stable sort of the negated
    logits keeps tied classes in index order, so the first of a tie wins, as in argmax.

    Parameters
    ----------
    logits : numpy.ndarray
        (B, C) real numbers (NaN sorts last).
    k : int
        How many classes per sample, 1 <= k; more than C gives all C.

    Returns
    -------
    numpy.ndarray
        (B, min(k, C)) int64 class indices.

    Raises
    ------
    ValueError
        When logits is not 2-D or k < 1.

    Examples
    --------
    >>> top_k(np.array([[0.5, 2.0, 2.0, -1.0]]), 3).tolist()
    [[1, 2, 0]]
    """
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2:
        raise ValueError("logits must be (B, C); got shape %s" % (logits.shape,))
    k = int(k)
    if k < 1:
        raise ValueError("k must be at least 1; got %d" % k)
    order = np.argsort(-logits, axis=1, kind="stable")  # mergesort: stable in NumPy 1.17 too
    return order[:, :min(k, logits.shape[1])].astype(np.int64)


def logit_lens(hidden_cls, W_head):
    """The head applied to the CLS row at every depth of the encoder (a "logit lens").

    Parameters
    ----------
    hidden_cls : array_like
        (L+1, B, D): the CLS row of z_0 (the embedded tokens) and of each block's output.
    W_head : array_like
        (D, C).

    Returns
    -------
    numpy.ndarray
        (L+1, B, C): ``[l]`` is ``LayerNorm(hidden_cls[l]) @ W_head`` (no gamma/beta, eps 1e-6,
        no bias), the page's head; ``[-1]`` is the head's own logits. The head was trained on
        the last depth only: the rows before it show where the class becomes readable by it,
        not what the model "thinks" there.

    Raises
    ------
    TypeError, ValueError
        As :func:`pycore.vit.head.head_from_cls`, and for ``hidden_cls`` not 3-D.

    Examples
    --------
    >>> logit_lens([[[1.0, 2.0]], [[2.0, 1.0]]], [[1.0], [0.0]]).round(4).tolist()
    [[[-1.0]], [[1.0]]]
    """
    hidden = np.asarray(hidden_cls, dtype=np.float64)
    if hidden.ndim != 3:
        raise ValueError("hidden_cls must be (L+1, B, D); got shape {}".format(hidden.shape))
    return np.stack([head_from_cls(h, W_head) for h in hidden])        # (L+1, B, C)
