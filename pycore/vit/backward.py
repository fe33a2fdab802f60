"""The exact gradients of the head through the cross-entropy loss, and of the mistaken heads.

The head is ``logits = LayerNorm(h_cls) @ W_head`` (population variance, eps 1e-6, no
gamma/beta, no bias, no softmax). Through :func:`pycore.vit.loss.cross_entropy`::

    dlogits = (softmax(logits) - onehot(y)) / B                  (B, C)
    dW_head = h_hat.T @ dlogits                                   (D, C)
    dh_hat  = dlogits @ W_head.T                                  (B, D)
    dh_cls  = (dh_hat - mean(dh_hat) - h_hat * mean(dh_hat * h_hat)) / sqrt(var + eps)

(the last two means per row, over the D features). The same gradients are given for the
mistaken heads worth training ("softmax_inside", "no_layernorm", "bias"), with
:func:`head_backward`'s ``head=`` argument. docs/training.md, "The gradients", derives them.
"""

import numpy as np

from .checks import (as_float64, check_finite, cls_rows, expect_ndim, real_array, shape_text,
                     w_head_for)
from .head import EPS, normalize_rows, project
from .loss import check_labels, loss_and_probs
from .scalars import check_number
from .softmax import softmax

HEADS = ("correct", "softmax_inside", "no_layernorm", "bias")
"""The heads :func:`head_backward` and :func:`pycore.vit.training.train_head` know, the correct
one first."""


class HeadGradients(object):
    """One forward and backward pass of a head through the cross-entropy loss.

    Attributes
    ----------
    head : str
        Which head, one of :data:`HEADS`.
    loss : float
        The mean cross-entropy of ``logits``.
    logits : numpy.ndarray
        (B, C) what the head outputs, the input of the cross-entropy (for
        ``"softmax_inside"`` these are already probabilities).
    probs : numpy.ndarray
        (B, C) ``softmax(logits)``, as the loss applies it.
    dW_head : numpy.ndarray
        (D, C) d loss / d W_head.
    dh_cls : numpy.ndarray
        (B, D) d loss / d h_cls (through the LayerNorm, except for ``"no_layernorm"``).
    db : numpy.ndarray or None
        (C,) d loss / d b for ``"bias"``; None for the other heads.
    """

    __slots__ = ("head", "loss", "logits", "probs", "dW_head", "dh_cls", "db")

    def __init__(self, head, loss, logits, probs, dW_head, dh_cls, db=None):
        self.head = head
        self.loss = loss
        self.logits = logits
        self.probs = probs
        self.dW_head = dW_head
        self.dh_cls = dh_cls
        self.db = db

    def __repr__(self):
        B, C = self.logits.shape
        return "HeadGradients(head={!r}, B={}, D={}, C={}, loss={:.6g})".format(
            self.head, B, self.dh_cls.shape[1], C, self.loss)


def head_backward(h_cls, W_head, labels, eps=EPS, head="correct", b=None):
    """The loss of a head on labelled CLS rows, and its exact gradients.

    ``head="correct"`` (the default) is the ViT fine-tuning head, ``h_hat @ W_head``
    with ``h_hat = LayerNorm(h_cls)``; the loss is :func:`pycore.vit.loss.cross_entropy`
    of its logits.
    The mistaken heads, each trained with the same loss on what it outputs:

    * ``"softmax_inside"``: the head returns ``softmax(h_hat @ W_head)`` and the loss
      applies softmax again, so **the softmax is applied twice**;
    * ``"no_layernorm"``: ``h_cls @ W_head``, the raw rows;
    * ``"bias"``: ``h_hat @ W_head + b``, with ``db`` returned too (``b`` defaults to 0).

    The LayerNorm is :func:`pycore.vit.head.normalize_rows` (rows whose moments would
    overflow float64 are rescaled), and its backward is, per row,
    ``dh_cls = (dh_hat - mean(dh_hat) - h_hat * mean(dh_hat * h_hat)) / sqrt(var + eps)``.

    Parameters
    ----------
    h_cls : array_like
        (B, D) CLS rows, finite real numbers, B >= 1.
    W_head : array_like
        (D, C), C >= 1.
    labels : array_like
        (B,) integer class indices in [0, C) (see :func:`pycore.vit.loss.check_labels`).
    eps : float, optional
        LayerNorm epsilon, > 0 (1e-6): a constant row's gradient is 1/sqrt(eps) times
        the centred dh_hat, so eps = 0 would make it infinite.
    head : str, optional
        One of :data:`HEADS`.
    b : array_like, optional
        (C,) the bias of ``head="bias"``; refused for the other heads.

    Returns
    -------
    HeadGradients
        ``loss``, ``logits``, ``probs``, ``dW_head``, ``dh_cls`` and ``db``, all new arrays.

    Raises
    ------
    TypeError, ValueError
        As :func:`pycore.vit.head.head_from_cls` for h_cls and W_head (naming shapes and
        the first NaN/inf), as :func:`pycore.vit.loss.check_labels` for labels; ValueError
        for an unknown head, a bias with another head, a bias not (C,), eps <= 0, or logits
        that overflow.

    Examples
    --------
    >>> g = head_backward([[1.0, 0.0, -1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], [0])
    >>> round(g.loss, 4), g.dW_head.round(4).tolist()
    (0.2576, [[-0.2781, 0.2781], [0.0, 0.0], [0.2781, -0.2781]])
    >>> g.dh_cls.round(4).tolist()          # each row sums to 0
    [[-0.1391, 0.2781, -0.1391]]
    """
    eps = check_number(eps, "eps", low=0.0, low_open=True)
    h, W, y, b = checked_inputs(h_cls, W_head, labels, head, b)
    features, std = head_features(h, head, eps)                     # (B, D), (B, 1)
    loss, out, probs, dz = forward_backward(features, W, b, y, head)
    dW = features.T @ dz                                             # (D, C)
    d_features = dz @ W.T                                            # (B, D)
    dh = d_features if std is None else _layer_norm_backward(d_features, features, std)
    db = dz.sum(axis=0) if head == "bias" else None                  # (C,)
    return HeadGradients(head, loss, out, probs, dW, dh, db)


# ----------------------------------------------- the steps, shared with training.HeadTrainer

def check_head(head):
    """Refuse a head that is not one of :data:`HEADS`."""
    if head not in HEADS:
        raise ValueError("unknown head {!r}: choose one of {}".format(head, ", ".join(HEADS)))


def _check_bias(b, C):
    v = as_float64(real_array(b, "b"))
    expect_ndim(v, "b", 1, "(C,)")
    if v.shape[0] != C:
        raise ValueError("b has shape {} but W_head has C = {} columns: b must be ({},)".format(
            shape_text(v.shape), C, C))
    check_finite(v, "b")
    return v


def checked_inputs(h_cls, W_head, labels, head, b):
    """h_cls (B, D) and W (D, C) as float64, labels int64, b (C,) or None, all checked."""
    check_head(head)
    h = cls_rows(h_cls)
    if h.shape[0] < 1:
        raise ValueError("h_cls has shape {}: the loss is a mean over the batch, which needs "
                         "B >= 1 samples".format(shape_text(h.shape)))
    W = w_head_for(W_head, h.shape[1], "h_cls", h.shape)
    if W.shape[1] < 1:
        raise ValueError("W_head has shape {}: the loss needs C >= 1 classes".format(
            shape_text(W.shape)))
    y = check_labels(labels, h.shape[0], W.shape[1])
    if head == "bias":
        b = np.zeros(W.shape[1]) if b is None else _check_bias(b, W.shape[1])
    elif b is not None:
        raise ValueError("b is only used by head='bias'; got head={!r}".format(head))
    return h, W, y, b


def head_features(h, head, eps):
    """What multiplies W_head: h_hat for the heads with LayerNorm, h itself without.
    Returns (features, sigma) with sigma = sqrt(var + eps) per row (None without LayerNorm)."""
    if head == "no_layernorm":
        return h, None
    mean, var, h_hat = normalize_rows(h, eps)
    return h_hat, _row_std(h, var, eps)


def _row_std(h, var, eps):
    """sqrt(var + eps) (B, 1); rows whose variance overflowed float64 are rescaled first."""
    std = np.sqrt(var + eps)
    bad = ~np.isfinite(std[:, 0])
    if bad.any():
        x = h[bad]
        scale = np.max(np.abs(x), axis=1, keepdims=True)
        xs = x / scale
        xs -= xs.mean(axis=1, keepdims=True)
        var_s = np.mean(xs * xs, axis=1, keepdims=True)
        std[bad] = scale * np.sqrt(var_s + (eps / scale) / scale)
    return std


def forward_backward(features, W, b, y, head):
    """Loss, head output, probs and dz = d loss / d(features @ W + b), each (B, C)."""
    if head == "no_layernorm":
        with np.errstate(all="ignore"):
            z = features @ W                                         # (B, C)
        if not np.isfinite(z).all():
            check_finite(W, "W_head")
            raise ValueError("the logits overflowed float64: without LayerNorm, h_cls "
                             "(largest magnitude {:.3g}) reaches W_head unnormalized".format(
                                 float(np.max(np.abs(features)))))
    else:
        z = project(features, W)                                     # (B, C)
    if b is not None:
        z += b
    out = softmax(z) if head == "softmax_inside" else z              # what the head returns
    loss, probs = loss_and_probs(out, y)
    B = out.shape[0]
    dout = probs.copy()                                              # (B, C)
    dout[np.arange(B), y] -= 1.0
    dout /= B                                                        # (softmax - onehot) / B
    if head == "softmax_inside":
        # back through the head's own softmax: dz = q * (dout - sum(dout * q))
        dz = dout - np.einsum("ij,ij->i", dout, out)[:, None]
        dz *= out
    else:
        dz = dout
    return loss, out, probs, dz


def _layer_norm_backward(d_hat, h_hat, std):
    """d loss / d h from d loss / d h_hat (overwritten: it becomes the result), for
    ``h_hat = (h - mean) / std`` with the population variance and no gamma/beta."""
    D = h_hat.shape[1]
    along = np.einsum("ij,ij->i", d_hat, h_hat)[:, None] / D         # (B, 1) mean(d_hat * h_hat)
    d_hat -= d_hat.mean(axis=1, keepdims=True)
    d_hat -= h_hat * along
    d_hat /= std
    return d_hat
