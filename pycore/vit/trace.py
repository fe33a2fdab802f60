"""Every intermediate of one head computation, for display, and the trace after a change to
one CLS row or one column of W_head, recomputing only what that change reaches."""

import numpy as np

from .checks import cls_rows, cls_rows_from_encoder, w_head_for
from .head import EPS, normalize_rows, project
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
        The LayerNorm epsilon, 1e-6 (a real head's own with ``real``).
    real : RealHead or None
        A real ViT's head (LayerNorm gamma/beta, a bias) when this is its trace: then
        ``y = gamma * h_hat + beta`` (B, D) is what W_head multiplies and ``logits = y @ W_head
        + b_head``. None for the head the page teaches.
    """

    __slots__ = ("h_cls", "mean", "var", "std", "h_hat", "logits", "predicted",
                 "display_softmax", "eps", "real", "y")

    def __init__(self, h_cls, mean, var, std, h_hat, logits, predicted, display_softmax,
                 eps, real=None, y=None):
        self.h_cls = h_cls
        self.mean = mean
        self.var = var
        self.std = std
        self.h_hat = h_hat
        self.logits = logits
        self.predicted = predicted
        self.display_softmax = display_softmax
        self.eps = eps
        self.real = real
        self.y = h_hat if y is None else y  # what W_head multiplies

    def __repr__(self):
        B, C = self.logits.shape
        return "HeadTrace(B={}, D={}, C={}, predicted={})".format(
            B, self.h_cls.shape[1], C, self.predicted.tolist())


class RealHead(object):
    """A real ViT's head beyond the page's: LayerNorm's ``gamma`` and ``beta`` (D,), the head's
    bias ``b_head`` (C,) and the LayerNorm ``eps``; a part the model lacks is None (gamma 1,
    beta 0, no bias)."""

    __slots__ = ("gamma", "beta", "b_head", "eps")

    def __init__(self, gamma=None, beta=None, b_head=None, eps=EPS):
        self.gamma, self.beta, self.b_head, self.eps = gamma, beta, b_head, float(eps)


def real_head_of(model, D, C):
    """The :class:`RealHead` of a model file's parts (a dict with ``ln_gamma``, ``ln_beta``,
    ``b_head``, ``eps``), or None when it has none of the three or they do not fit D and C."""
    if not model:
        return None
    parts = {"gamma": model.get("ln_gamma"), "beta": model.get("ln_beta"),
             "b_head": model.get("b_head")}
    if all(v is None for v in parts.values()):
        return None
    sizes = {"gamma": D, "beta": D, "b_head": C}
    if any(v is not None and np.shape(v) != (sizes[k],) for k, v in parts.items()):
        return None
    return RealHead(eps=model.get("eps", EPS), **parts)


def trace_head(W_head, cls=None, encoder_output=None, real=None):
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
        As :func:`pycore.vit.head.classification_head`; ``TypeError`` also when not exactly
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
    eps = EPS if real is None else real.eps
    mean, var, h_hat = normalize_rows(h_cls, eps)
    y = _affine(h_hat, real)
    if not np.isfinite(y).all():
        raise ValueError("the model's gamma and beta make LayerNorm's output overflow "
                         "float64")
    logits = project(y, W)
    if real is not None and real.b_head is not None:
        logits = _biased(logits, real.b_head)
        if not np.isfinite(logits).all():
            raise ValueError("the logits overflow float64 once the model's bias is added")
    predicted, probabilities = _predict(logits)
    return HeadTrace(h_cls=h_cls, mean=mean[:, 0], var=var[:, 0],
                     std=np.sqrt(var[:, 0] + eps), h_hat=h_hat, logits=logits,
                     predicted=predicted, display_softmax=probabilities, eps=eps,
                     real=real, y=y)


def _affine(h_hat, real):
    """A real ViT's LayerNorm output ``y = gamma * h_hat + beta`` (rows, D); ``h_hat`` itself
    for the head the page teaches (``real`` None) or a real head without gamma and beta. It may
    overflow: the callers check."""
    y = h_hat
    if real is not None:
        with np.errstate(all="ignore"):
            if real.gamma is not None:
                y = y * real.gamma                                            # (rows, D)
            if real.beta is not None:
                y = y + real.beta
    return y


def _biased(logits, b_head):
    """``logits + b_head`` (a real ViT's bias, (C,) or the one class's scalar); may overflow."""
    with np.errstate(all="ignore"):
        return logits + b_head


def _predict(logits):
    """The arg-max class of each row (-1 when there are no classes) and its display softmax.

    Parameters
    ----------
    logits : numpy.ndarray
        (rows, C), finite.

    Returns
    -------
    predicted, display_softmax : numpy.ndarray
        (rows,) int64 and (rows, C).
    """
    if logits.shape[1] > 0:
        return np.argmax(logits, axis=1).astype(np.int64), softmax(logits)
    return np.full(logits.shape[0], -1, dtype=np.int64), logits.copy()


def _with_row(whole, b, row):
    out = whole.copy()  # a new array: whoever holds the old trace keeps what it showed
    out[b] = row
    return out


def retrace_row(trace, W_head, h_cls, b):
    """The trace after a change to CLS row ``b`` alone (one cell of ``cls`` or of z_L[b, 0]).

    Only sample b's moments, h_hat, logits, prediction and softmax (and, for a real ViT's
    head, its y and bias) are computed, with the functions :func:`trace_head` uses, applied to
    the one row: LayerNorm and softmax give the
    same bits as on the whole batch; the product (1, D) @ (D, C) may differ from the row of
    the batched product in the last bits, as BLAS sums in another order.

    Parameters
    ----------
    trace : HeadTrace
        The trace of the state before the change (not modified).
    W_head : numpy.ndarray
        (D, C) float64, the state's.
    h_cls : numpy.ndarray
        (B, D) float64, the state's CLS rows after the change, finite.
    b : int
        The changed row.

    Returns
    -------
    HeadTrace or None
        A new trace sharing the unchanged arrays; None when the new logits are not finite,
        so that the caller runs :func:`trace_head`, which explains why.
    """
    real, eps = trace.real, trace.eps
    mean, var, h_hat = normalize_rows(h_cls[b:b + 1], eps)
    y = _affine(h_hat, real)
    with np.errstate(all="ignore"):
        logits = y @ W_head
    if real is not None and real.b_head is not None:
        logits = _biased(logits, real.b_head)
    if not (np.isfinite(y).all() and np.isfinite(logits).all()):
        return None
    predicted, probabilities = _predict(logits)
    return HeadTrace(h_cls=h_cls, mean=_with_row(trace.mean, b, mean[0, 0]),
                     var=_with_row(trace.var, b, var[0, 0]),
                     std=_with_row(trace.std, b, np.sqrt(var[:, 0] + eps)[0]),
                     h_hat=_with_row(trace.h_hat, b, h_hat[0]),
                     logits=_with_row(trace.logits, b, logits[0]),
                     predicted=_with_row(trace.predicted, b, predicted[0]),
                     display_softmax=_with_row(trace.display_softmax, b, probabilities[0]),
                     eps=eps, real=real,
                     y=None if real is None else _with_row(trace.y, b, y[0]))


def retrace_column(trace, W_head, c):
    """The trace after a change to column ``c`` of W_head alone (one cell of it).

    Only the logits of class c are multiplied out again, ``y @ W_head[:, c]`` (plus a real
    head's ``b_head[c]``; y is h_hat for the head the page teaches), which may differ from the
    column of the full product in the last bits; the predictions and the
    softmax of every sample are recomputed from the logits, as :func:`trace_head` does.

    Parameters
    ----------
    trace : HeadTrace
        The trace of the state before the change (not modified).
    W_head : numpy.ndarray
        (D, C) float64, the state's, after the change.
    c : int
        The changed column.

    Returns
    -------
    HeadTrace or None
        A new trace sharing h_cls, the moments and h_hat with ``trace``; None when the new
        logits are not finite, so that the caller runs :func:`trace_head`, which explains why.
    """
    real = trace.real
    with np.errstate(all="ignore"):
        column = (trace.h_hat if real is None else trace.y) @ W_head[:, c]
    if real is not None and real.b_head is not None:
        column = _biased(column, real.b_head[c])
    if not np.isfinite(column).all():
        return None
    logits = trace.logits.copy()
    logits[:, c] = column
    predicted, probabilities = _predict(logits)
    return HeadTrace(h_cls=trace.h_cls, mean=trace.mean, var=trace.var, std=trace.std,
                     h_hat=trace.h_hat, logits=logits, predicted=predicted,
                     display_softmax=probabilities, eps=trace.eps, real=real, y=trace.y)
