"""Every intermediate of one head computation, for display."""

import numpy as np

from .checks import cls_rows, cls_rows_from_encoder, explain_nonfinite_logits, w_head_for
from .head import EPS, normalize_rows
from .softmax import softmax


class HeadTrace(object):
    """What the page shows for one call of the head.

    Attributes
    ----------
    h_cls : numpy.ndarray
        (B, D) the CLS rows, position 0 of the encoder output.
    mean, var, std : numpy.ndarray
        (B,) per-sample mean, population variance, and ``std = sqrt(var + eps)``,
        the number LayerNorm divides by.
    h_hat : numpy.ndarray
        (B, D) ``(h_cls - mean) / std``.
    logits : numpy.ndarray
        (B, C) ``h_hat @ W_head``: what the head returns.
    predicted : numpy.ndarray
        (B,) int, the arg-max class per sample (the first one on ties).
    display_softmax : numpy.ndarray
        (B, C) softmax of the logits, FOR DISPLAY ONLY: the head itself returns raw
        logits; during training the cross-entropy loss applies the softmax.
    eps : float
        The LayerNorm epsilon, 1e-6.
    """

    __slots__ = ("h_cls", "mean", "var", "std", "h_hat", "logits", "predicted",
                 "display_softmax", "eps")

    def __init__(self, h_cls, mean, var, std, h_hat, logits, predicted, display_softmax,
                 eps):
        self.h_cls = h_cls
        self.mean = mean
        self.var = var
        self.std = std
        self.h_hat = h_hat
        self.logits = logits
        self.predicted = predicted
        self.display_softmax = display_softmax
        self.eps = eps

    def __repr__(self):
        B, C = self.logits.shape
        return "HeadTrace(B={}, D={}, C={}, predicted={})".format(
            B, self.h_cls.shape[1], C, self.predicted.tolist())


def trace_head(W_head, cls=None, encoder_output=None):
    """Run the head once and keep every intermediate.

    Give exactly one of ``cls`` (the CLS rows, (B, D)) or ``encoder_output``
    ((B, N+1, D), of which only position 0 is read).

    Parameters
    ----------
    W_head : array_like
        (D, C).
    cls : array_like, optional
        (B, D).
    encoder_output : array_like, optional
        (B, N+1, D).

    Returns
    -------
    HeadTrace

    Raises
    ------
    TypeError, ValueError
        As :func:`pycore.head.classification_head`; ``TypeError`` also when not exactly
        one of ``cls`` and ``encoder_output`` is given.

    Examples
    --------
    >>> t = trace_head([[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2],
    ...                 [0.7, -0.3, 0.8]], cls=[[2, -1, 0, 3], [1, 1, -1, -1]])
    >>> t.mean.tolist(), t.var.tolist(), t.predicted.tolist()
    ([1.0, 0.0], [2.5, 1.0], [2, 0])
    """
    if (cls is None) == (encoder_output is None):
        raise TypeError("trace_head needs exactly one of cls (B, D) or encoder_output "
                        "(B, N+1, D)")
    if cls is not None:
        h_cls = cls_rows(cls)
        W = w_head_for(W_head, h_cls.shape[1], "cls", h_cls.shape)
    else:
        h_cls, z_shape = cls_rows_from_encoder(encoder_output)
        W = w_head_for(W_head, h_cls.shape[1], "encoder_output", z_shape)
    mean, var, h_hat = normalize_rows(h_cls, EPS)
    with np.errstate(all="ignore"):
        logits = h_hat @ W
    if not np.isfinite(logits).all():
        explain_nonfinite_logits(W)
    if logits.shape[1] > 0:
        predicted = np.argmax(logits, axis=1).astype(np.int64)
        probabilities = softmax(logits)
    else:
        predicted = np.full(logits.shape[0], -1, dtype=np.int64)
        probabilities = logits.copy()
    return HeadTrace(h_cls=h_cls, mean=mean[:, 0], var=var[:, 0],
                     std=np.sqrt(var[:, 0] + EPS), h_hat=h_hat, logits=logits,
                     predicted=predicted, display_softmax=probabilities, eps=EPS)
