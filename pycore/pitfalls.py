"""The classic mistakes, each computing what the mistaken head would output.

Every entry of :data:`PITFALLS` has a ``key``, a short ``title``, an ``explanation``
for a student (what the mistake is and why it is wrong, citing the spec), and
``compute(W_head, cls=None, encoder_output=None, seed=0)``, which returns the mistaken
(B, C) output or raises ``ValueError`` with the message to show. Give exactly one of
``cls`` (B, D) and ``encoder_output`` (B, N+1, D). Random parameters (gamma/beta, the
bias) come from :func:`pycore.variants.variant_params` with ``seed``, so they are the
same as the variants'.

The spec (DESIGN.md): ``logits = LayerNorm(z_L[:, 0, :]) @ W_head`` with population
variance, eps 1e-6, no gamma/beta, no bias, no softmax.
"""

import collections

from .checks import (as_float64, check_finite, cls_rows, cls_rows_from_encoder,
                     real_array, shape_text, w_head_for)
from .head import EPS, normalize_rows
from .softmax import softmax
from .variants import variant_params

Pitfall = collections.namedtuple("Pitfall", "key title explanation compute")


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
        return _h_hat(h) @ W
    _, W, _, shape = _rows(W_head, None, encoder_output)   # the head's checks and messages
    last = as_float64(real_array(encoder_output, "encoder_output")[:, -1, :])
    check_finite(last, "encoder_output", lambda i: (i[0], shape[1] - 1, i[1]))
    return _h_hat(last) @ W


def softmax_inside(W_head, cls=None, encoder_output=None, seed=0):
    """Mistake: ``softmax(h_hat @ W_head)`` returned by the head.

    Examples
    --------
    >>> softmax_inside([[1.0, -1.0], [0.0, 0.0]], cls=[[1.0, 0.0]]).round(4).tolist()
    [[0.8808, 0.1192]]
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    return softmax(_h_hat(h) @ W)


def no_layernorm(W_head, cls=None, encoder_output=None, seed=0):
    """Mistake: LayerNorm skipped, ``h_cls @ W_head``.

    Examples
    --------
    >>> no_layernorm([[1.0], [0.0]], cls=[[3.0, 1.0]]).tolist()
    [[3.0]]
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    return h @ W


def affine(W_head, cls=None, encoder_output=None, seed=0):
    """Mistake: LayerNorm with gamma/beta, ``(gamma * h_hat + beta) @ W_head``.

    gamma and beta are ``variant_params(D, C, seed)["gamma"]`` and ``["beta"]``.

    Examples
    --------
    >>> affine([[1.0], [0.0]], cls=[[1.0, 0.0]], seed=0).shape
    (1, 1)
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    p = variant_params(W.shape[0], W.shape[1], seed=seed)
    return (_h_hat(h) * p["gamma"] + p["beta"]) @ W


def bias(W_head, cls=None, encoder_output=None, seed=0):
    """Mistake: a bias term, ``h_hat @ W_head + b`` with ``b = variant_params(D, C,
    seed)["b_head"]``.

    Examples
    --------
    >>> bias([[1.0], [0.0]], cls=[[1.0, 0.0]], seed=0).shape
    (1, 1)
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    p = variant_params(W.shape[0], W.shape[1], seed=seed)
    return _h_hat(h) @ W + p["b_head"]


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
    ValueError: h_hat has shape (1, 2) = (B, D) but W_head.T has shape (1, 2) = (C, D): h_hat @ W_head.T needs D = C, and here D = 2, C = 1, so the transposed head cannot even run
    """
    h, W, _, _ = _rows(W_head, cls, encoder_output)
    B, D = h.shape
    C = W.shape[1]
    if C != D:
        raise ValueError(
            "h_hat has shape {} = (B, D) but W_head.T has shape {} = (C, D): h_hat @ "
            "W_head.T needs D = C, and here D = {}, C = {}, so the transposed head cannot "
            "even run".format(shape_text((B, D)), shape_text((C, D)), D, C))
    return _h_hat(h) @ W.T


PITFALLS = (
    Pitfall(
        "last_position", "Position -1 instead of 0", (
            "The head must read the CLS token, which ViT puts at position 0 of the sequence "
            "(the spec: h_cls = z_L[:, 0, :]). Taking position -1 reads the last patch "
            "token instead, a vector that describes one corner of the image, not the "
            "whole image. With only the CLS rows there is a single position, so -1 and 0 "
            "coincide: switch to the full encoder output to see the difference."),
        last_position),
    Pitfall(
        "softmax_inside", "Softmax inside the head", (
            "The head returns raw logits: the spec ends at h_hat @ W_head, with no softmax. "
            "The softmax belongs to the cross-entropy loss, which applies it itself; "
            "applying it inside the head as well would squash the outputs into "
            "probabilities and the loss would apply a softmax a second time."),
        softmax_inside),
    Pitfall(
        "no_layernorm", "LayerNorm skipped", (
            "The spec normalizes the CLS vector before the linear map: (h - mean) / "
            "sqrt(var + 1e-6), per sample. Skipping it feeds W_head vectors with "
            "arbitrary offset and scale, so the logits change when a sample's features are "
            "all shifted or scaled, which the real head ignores."),
        no_layernorm),
    Pitfall(
        "affine", "Learnable gamma/beta added", (
            "The spec's LayerNorm has no gamma or beta: just (h - mean) / sqrt(var + 1e-6). "
            "Library LayerNorms add a learnable scale gamma and shift beta by default. "
            "They start at 1 and 0, but trained values differ, and then the output no "
            "longer matches the spec; here gamma and beta are seeded random values."),
        affine),
    Pitfall(
        "bias", "A bias term added", (
            "The spec's head is logits = h_hat @ W_head, with no bias. Most linear layers "
            "add a bias b by default, which shifts every sample's logit for a class by "
            "the same amount; here b is a seeded random vector."),
        bias),
    Pitfall(
        "transposed", "W_head transposed to (C, D)", (
            "W_head must be (D, C): one row per feature, one column per class, so that "
            "h_hat (B, D) @ W_head gives (B, C). Using it as (C, D) cannot multiply unless "
            "C equals D; and when it does, the mistake is silent and every logit uses the "
            "wrong weights."),
        transposed),
)
