"""The classic mistakes, each computing what the mistaken head would output.

The head is ``logits = LayerNorm(z_L[:, 0, :]) @ W_head`` with population variance, eps 1e-6,
no gamma/beta, no bias, no softmax. Each function here computes one way of getting it wrong,
``f(W_head, cls=None, encoder_output=None, seed=0)`` with exactly one of ``cls`` (B, D) and
``encoder_output`` (B, N+1, D), and returns the mistaken (B, C) output. The inputs are checked
as the head checks them; the output is NOT: a mistaken head may overflow where the real one does
not (no LayerNorm on huge inputs), and its inf is part of what the mistake shows. Random
parameters (gamma/beta, the bias) come from :func:`pycore.vit.variants.variant_params` with
``seed``, so they are the variants'. What each mistake teaches, in words, is in
pycore/explorer/comparisons/registry.py.

Two functions here are not mistakes in a real model: :func:`affine` and :func:`bias` add what
real ViT checkpoints keep and the head taught here drops (LayerNorm's gamma/beta, the head's
bias). The page lists them among the other heads; they live here because they differ from the
taught head exactly as the mistakes do, by one change to the same computation.
"""

import numpy as np

from .checks import (as_float64, check_finite, cls_rows, cls_rows_from_encoder, real_array,
                     shape_text, w_head_for)
from .head import EPS, normalize_rows
from .softmax import softmax
from .variants import variant_params

def _rows(W_head, cls, encoder_output):
    """(h_cls, W, name, shape): the CLS rows and W_head, checked, for one input."""
    if (cls is None) == (encoder_output is None):
        raise TypeError("give exactly one of cls (B, D) or encoder_output (B, N+1, D)")
    if cls is not None:
        h = cls_rows(cls)
        return h, w_head_for(W_head, h.shape[1], "cls", h.shape), "cls", h.shape
    h, shape = cls_rows_from_encoder(encoder_output)
    return h, w_head_for(W_head, h.shape[1], "encoder_output", shape), "encoder_output", shape


def _h_hat(h):
    return normalize_rows(h, EPS)[2]


def _times(a, b):
    """a @ b, overflowing to inf silently (see the module docstring)."""
    with np.errstate(all="ignore"):
        return a @ b


def last_position(W_head, cls=None, encoder_output=None, seed=0):
    """Mistake: ``z_L[:, -1, :]`` (the last patch token) instead of position 0.

    With ``cls`` alone the state is a sequence of one token, so position -1 *is*
    position 0 and the output equals the correct head's: the mistake only shows with
    an ``encoder_output`` that has patch tokens.

    Examples
    --------
    >>> z = [[[1.0, 0.0], [0.0, 1.0]]]
    >>> last_position([[1.0], [0.0]], encoder_output=z).round(4).tolist()
    [[-1.0]]
    """
    if encoder_output is None:
        h, W, _, _ = _rows(W_head, cls, None)
        return _times(_h_hat(h), W)
    _, W, _, shape = _rows(W_head, None, encoder_output)   # the head's checks and messages
    last = as_float64(real_array(encoder_output, "encoder_output")[:, -1, :])
    check_finite(last, "encoder_output", lambda i: (i[0], shape[1] - 1, i[1]))
    return _times(_h_hat(last), W)


def softmax_inside(W_head, cls=None, encoder_output=None, seed=0):
    """Mistake: ``softmax(h_hat @ W_head)`` returned by the head.

    Examples
    --------
    >>> softmax_inside([[1.0, -1.0], [0.0, 0.0]], cls=[[1.0, 0.0]]).round(4).tolist()
    [[0.8808, 0.1192]]
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    return softmax(_times(_h_hat(h), W))


def no_layernorm(W_head, cls=None, encoder_output=None, seed=0):
    """Mistake: LayerNorm skipped, ``h_cls @ W_head``.

    Examples
    --------
    >>> no_layernorm([[1.0], [0.0]], cls=[[3.0, 1.0]]).tolist()
    [[3.0]]
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    return _times(h, W)


def affine(W_head, cls=None, encoder_output=None, seed=0):
    """Real ViTs' LayerNorm with gamma/beta, ``(gamma * h_hat + beta) @ W_head``.

    gamma and beta are ``variant_params(D, C, seed)["gamma"]`` and ``["beta"]``.

    Examples
    --------
    >>> affine([[1.0], [0.0]], cls=[[1.0, 0.0]], seed=0).shape
    (1, 1)
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    p = variant_params(W.shape[0], W.shape[1], seed=seed, names=("gamma", "beta"))
    return _times(_h_hat(h) * p["gamma"] + p["beta"], W)


def bias(W_head, cls=None, encoder_output=None, seed=0):
    """Real ViTs' bias in the head, ``h_hat @ W_head + b`` with ``b = variant_params(D, C,
    seed)["b_head"]``.

    Examples
    --------
    >>> bias([[1.0], [0.0]], cls=[[1.0, 0.0]], seed=0).shape
    (1, 1)
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    p = variant_params(W.shape[0], W.shape[1], seed=seed, names=("b_head",))
    with np.errstate(all="ignore"):
        return _times(_h_hat(h), W) + p["b_head"]


def transposed(W_head, cls=None, encoder_output=None, seed=0):
    """Mistake: W_head stored or used transposed, ``h_hat @ W_head.T``.

    ``h_hat`` is (B, D) and ``W_head.T`` is (C, D). The product needs the inner sizes
    to agree, D == C, so for C != D it can only fail: this raises ``ValueError`` with
    the shapes, the message a student would see. When C == D the shapes happen to fit
    and the mistake is silent: it computes ``h_hat @ W_head.T``, which mixes up which
    weight belongs to which (feature, class) pair and gives wrong logits without any
    error. That is why shape errors are a gift and square matrices are risky.

    Examples
    --------
    >>> transposed([[1.0, 0.0], [0.0, 0.0]], cls=[[1.0, 0.0]]).round(4).tolist()
    [[1.0, 0.0]]
    >>> transposed([[1.0], [0.0]], cls=[[1.0, 0.0]])
    Traceback (most recent call last):
    ...
    ValueError: h_hat has shape (1, 2) = (B, D) but W_head.T has shape (1, 2) = (C, D): h_hat @ ...
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    B, D = h.shape
    C = W.shape[1]
    if C != D:
        raise ValueError(
            "h_hat has shape {} = (B, D) but W_head.T has shape {} = (C, D): h_hat @ "
            "W_head.T needs D = C, and here D = {}, C = {}, so the transposed head cannot "
            "even run".format(shape_text((B, D)), shape_text((C, D)), D, C))
    return _times(_h_hat(h), W.T)
