"""Heads worth comparing with the fine-tuning head, each from its source.

* :func:`mlp_pretraining_head` -- ViT's pre-training head: an MLP with one hidden
  layer (Dosovitskiy et al. 2020, Sec. 3.1). The paper's released code uses tanh; GELU,
  the activation of the encoder's own MLP blocks, is a common alternative. Both are offered.
* :func:`gap_head` -- global average pooling over the patch tokens instead of the CLS
  token (the paper, Appendix D.3, reports it works about as well).
* :func:`bert_pooler` -- BERT's pooler, ``tanh(W_pool h + b_pool)`` (Devlin et al.
  2019), for comparison: ViT's fine-tuning head has no pooler.
* :func:`layer_norm_affine` and :func:`head_with_bias` -- LayerNorm with learnable
  gamma/beta and a linear head with a bias: common elsewhere, not in this head.

All take and return float64 arrays with rows as samples; none modifies its inputs.
"""

import math

import numpy as np

from .checks import (as_float64, check_finite, cls_rows, expect_ndim, real_array, shape_text,
                     w_head_for)
from .head import EPS, classification_head, layer_norm, normalize_rows

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _vector(x, name, length):
    v = as_float64(real_array(x, name))
    expect_ndim(v, name, 1, "({},)".format(length))
    if v.shape[0] != length:
        raise ValueError("{} has shape {} but must have {} entries".format(
            name, shape_text(v.shape), length))
    check_finite(v, name)
    return v


def _matrix(x, name, rows, pattern):
    M = as_float64(real_array(x, name))
    expect_ndim(M, name, 2, pattern)
    if M.shape[0] != rows:
        raise ValueError("{} has shape {} but must be {} with {} rows".format(
            name, shape_text(M.shape), pattern, rows))
    check_finite(M, name)
    return M


def gelu(x):
    """The exact GELU, ``x * Phi(x) = x / 2 * (1 + erf(x / sqrt(2)))``.

    NumPy has no erf, so this uses ``math.erf`` element by element (fine for the
    page's sizes). The tanh approximation of GELU is not used anywhere.

    Parameters
    ----------
    x : array_like
        Real numbers.

    Returns
    -------
    numpy.ndarray
        float64, same shape.

    Examples
    --------
    >>> gelu([-1.0, 0.0, 1.0]).round(4).tolist()
    [-0.1587, 0.0, 0.8413]
    """
    x = as_float64(real_array(x, "x"))
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def mlp_pretraining_head(h_cls, W1, b1, W2, b2, activation="tanh"):
    """ViT's pre-training head: ``act(h @ W1 + b1) @ W2 + b2``.

    The paper (Sec. 3.1) says the classification head is "implemented by a MLP with one
    hidden layer at pre-training time and by a single linear layer at fine-tuning time".
    The paper's released code uses **tanh** for that hidden layer; **GELU**, the activation of
    the encoder's MLP blocks (the paper's Eq. 3), is a common alternative in re-implementations.
    Pass ``activation="tanh"`` or ``"gelu"`` (exact erf GELU).

    No LayerNorm is applied here: in ViT the encoder's final LayerNorm comes first, so
    pass ``h_hat = layer_norm(h_cls)`` to compare like with like (the explorer does).

    Parameters
    ----------
    h_cls : array_like
        (B, D): the (normalized) CLS rows.
    W1 : array_like
        (D, H).
    b1 : array_like
        (H,).
    W2 : array_like
        (H, C).
    b2 : array_like
        (C,).
    activation : {"tanh", "gelu"}

    Returns
    -------
    numpy.ndarray
        (B, C) logits, float64.

    Raises
    ------
    TypeError, ValueError
        For non-numeric data, wrong shapes (naming them), NaN/inf, or an unknown
        activation.

    Examples
    --------
    >>> mlp_pretraining_head([[1.0, -1.0]], [[1.0], [0.0]], [0.0], [[2.0]], [0.5]).round(4)
    array([[2.0232]])
    """
    if activation not in ("tanh", "gelu"):
        raise ValueError("activation must be 'tanh' (the paper's code) or 'gelu'; got "
                         "{!r}".format(activation))
    h = cls_rows(h_cls)
    D = h.shape[1]
    W1 = _matrix(W1, "W1", D, "(D, H)")
    b1 = _vector(b1, "b1", W1.shape[1])
    W2 = _matrix(W2, "W2", W1.shape[1], "(H, C)")
    b2 = _vector(b2, "b2", W2.shape[1])
    pre = h @ W1 + b1
    hidden = np.tanh(pre) if activation == "tanh" else gelu(pre)
    return hidden @ W2 + b2


def gap_head(encoder_output, W_head):
    """Global average pooling head: mean over patch tokens 1..N, LayerNorm, ``@ W_head``.

    The ViT paper (Appendix D.3) compares this with the CLS token and reports that both
    work about as well (with different learning rates). Position 0 (the CLS token) is
    left out of the mean.

    Parameters
    ----------
    encoder_output : array_like
        (B, N+1, D) with N >= 1.
    W_head : array_like
        (D, C).

    Returns
    -------
    numpy.ndarray
        (B, C) logits, float64.

    Raises
    ------
    TypeError, ValueError
        As :func:`pycore.vit.head.classification_head`, and when there is no patch token.

    Examples
    --------
    >>> z = [[[9.0, 9.0], [1.0, 3.0], [3.0, 1.0], [2.0, 8.0]]]   # patch mean [2, 4]
    >>> gap_head(z, [[1.0], [0.0]]).round(4).tolist()
    [[-1.0]]
    """
    z = real_array(encoder_output, "encoder_output")
    expect_ndim(z, "encoder_output", 3, "(B, N+1, D)")
    if z.shape[1] < 2:
        raise ValueError("global average pooling needs at least one patch token: "
                         "encoder_output has shape {} (N = 0)".format(shape_text(z.shape)))
    patches = as_float64(z[:, 1:, :])
    check_finite(patches, "encoder_output", lambda i: (i[0], i[1] + 1, i[2]))
    pooled = patches.mean(axis=1)
    W = w_head_for(W_head, z.shape[2], "encoder_output", z.shape)
    return normalize_rows(pooled, EPS)[2] @ W


def bert_pooler(h, W_pool, b_pool):
    """BERT's pooler: ``tanh(h @ W_pool + b_pool)``.

    BERT (Devlin et al. 2019) writes it ``tanh(W h + b)`` for a column vector h; with
    samples as rows that is ``h @ W_pool``. ViT's fine-tuning head has no pooler.

    Parameters
    ----------
    h : array_like
        (B, D).
    W_pool : array_like
        (D, D).
    b_pool : array_like
        (D,).

    Returns
    -------
    numpy.ndarray
        (B, D), values in (-1, 1).

    Examples
    --------
    >>> bert_pooler([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [0.0, 0.0]).round(4).tolist()
    [[0.7616, 0.0]]
    """
    h = cls_rows(h)
    D = h.shape[1]
    W_pool = _matrix(W_pool, "W_pool", D, "(D, D)")
    b_pool = _vector(b_pool, "b_pool", W_pool.shape[1])
    return np.tanh(h @ W_pool + b_pool)


def layer_norm_affine(x, gamma, beta, eps=1e-6):
    """LayerNorm with learnable parameters: ``gamma * (x - mean) / sqrt(var + eps) + beta``.

    This is the default of common LayerNorm layers. The fine-tuning head's LayerNorm, as this
    explorer teaches it, has **no** gamma/beta (equivalently gamma = 1, beta = 0).

    Parameters
    ----------
    x : array_like
        (..., D).
    gamma, beta : array_like
        (D,).
    eps : float, optional

    Returns
    -------
    numpy.ndarray
        float64, shaped like ``x``.

    Examples
    --------
    >>> layer_norm_affine([[0.0, 2.0]], [2.0, 2.0], [1.0, 1.0]).round(4).tolist()
    [[-1.0, 3.0]]
    """
    h_hat = layer_norm(x, eps)
    D = h_hat.shape[-1]
    return h_hat * _vector(gamma, "gamma", D) + _vector(beta, "beta", D)


def head_with_bias(encoder_output, W_head, b):
    """The head plus a bias: ``LayerNorm(z[:, 0, :]) @ W_head + b``.

    A linear layer usually has a bias; ViT's fine-tuning head does not.

    Parameters
    ----------
    encoder_output : array_like
        (B, N+1, D).
    W_head : array_like
        (D, C).
    b : array_like
        (C,).

    Returns
    -------
    numpy.ndarray
        (B, C) float64.

    Examples
    --------
    >>> head_with_bias([[[0.0, 2.0]]], [[1.0], [0.0]], [0.5]).round(4).tolist()
    [[-0.5]]
    """
    logits = classification_head(encoder_output, W_head)
    return logits + _vector(b, "b", logits.shape[1])


DRAW_BLOCK = 2 ** 16
"""Numbers :func:`variant_params` draws at a time (512 KB of float64): an array it makes, or
skips, never costs a second array of its size."""


def _uniform(rs, k, shape, keep):
    """``rs.uniform(-k, k, size=shape)``, drawn a block at a time into the array it returns
    (the same numbers: each is ``-k + 2k * u`` of one draw u), or drawn and dropped when not
    ``keep`` (None), so that the draws after it are the same."""
    out = np.empty(shape) if keep else None
    flat = out.reshape(-1) if keep else None
    total = int(np.prod(shape))
    for start in range(0, total, DRAW_BLOCK):
        block = rs.uniform(-k, k, size=min(DRAW_BLOCK, total - start))
        if keep:
            flat[start:start + block.size] = block
    return out


def variant_params(D, C, seed=0, H=None, names=None):
    """Seeded parameters for the variants and mistakes, at a sensible scale.

    Weights and biases follow the common default of a linear layer: uniform on
    ``[-1/sqrt(fan_in), 1/sqrt(fan_in)]``. gamma is ``1 + 0.25 * N(0, 1)`` and beta
    ``0.25 * N(0, 1)`` (trained values differ from the initial 1 and 0, which would hide
    the mistake); the extra head bias ``b_head`` is ``U(-1/sqrt(D), 1/sqrt(D))``.
    Drawn from ``np.random.RandomState(seed)`` in the order W1, b1, W2, b2, W_pool,
    b_pool, gamma, beta, b_head, so the same (D, C, seed, H) gives the same arrays in
    every NumPy version.

    Parameters
    ----------
    D, C : int
        Hidden size and number of classes.
    seed : int, optional
    H : int, optional
        Hidden width of the pre-training MLP; D by default.
    names : iterable of str, optional
        Only these arrays (all by default): the others before them are drawn a block at a
        time and dropped, so each holds the same numbers either way, and a mistake that needs
        only the bias does not make the D × D and D × C matrices.

    Returns
    -------
    dict
        ``W1`` (D, H), ``b1`` (H,), ``W2`` (H, C), ``b2`` (C,), ``W_pool`` (D, D),
        ``b_pool`` (D,), ``gamma`` (D,), ``beta`` (D,), ``b_head`` (C,); only ``names``
        when given.

    Examples
    --------
    >>> p = variant_params(4, 3, seed=0)
    >>> p["W1"].shape, p["W2"].shape, p["W_pool"].shape, p["b_head"].shape
    ((4, 4), (4, 3), (4, 4), (3,))
    >>> bool((variant_params(4, 3, seed=0, names=["b_head"])["b_head"] == p["b_head"]).all())
    True
    """
    H = D if H is None else H
    rs = np.random.RandomState(seed)
    k_d, k_h = 1.0 / math.sqrt(D), 1.0 / math.sqrt(H)
    order = ("W1", "b1", "W2", "b2", "W_pool", "b_pool", "gamma", "beta", "b_head")
    wanted = set(order if names is None else names)
    last = max(order.index(name) for name in wanted) if wanted else -1
    uniform = {"W1": (k_d, (D, H)), "b1": (k_d, (H,)), "W2": (k_h, (H, C)), "b2": (k_h, (C,)),
               "W_pool": (k_d, (D, D)), "b_pool": (k_d, (D,)), "b_head": (k_d, (C,))}
    params = {}
    for name in order[:last + 1]:
        if name in uniform:
            k, shape = uniform[name]
            value = _uniform(rs, k, shape, name in wanted)
        elif name == "gamma":
            value = 1.0 + 0.25 * rs.standard_normal(D)
        else:
            value = 0.25 * rs.standard_normal(D)
        if name in wanted:
            params[name] = value
    return params
