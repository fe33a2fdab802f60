"""The ViT fine-tuning classification head (Dosovitskiy et al. 2020, Sec. 3.1 and Eq. 4)::

    h_cls  = z_L[:, 0, :]                  (B, D)   position 0 is the CLS token
    h_hat  = LayerNorm(h_cls)              (B, D)   population variance, eps 1e-6, no gamma/beta
    logits = h_hat @ W_head                (B, C)   no bias, no softmax, no activation

The first three functions below are these lines. What makes them exact for every finite
float64 input (rows whose moments overflow, constant rows, a reused workspace) is written
after them, in its own section. docs/math.md derives the worked example by hand.
"""

import numpy as np

from .checks import (as_float64, check_finite, cls_rows, cls_rows_from_encoder,
                     explain_nonfinite_logits, real_array, shape_text, w_head_for)

EPS = 1e-6


def classification_head(encoder_output, W_head):
    """The ViT fine-tuning classification head: CLS token, LayerNorm, linear map.

    ``logits = LayerNorm(encoder_output[:, 0, :]) @ W_head`` with population
    variance, ``eps = 1e-6`` and no gamma/beta. No bias, no softmax, no activation:
    the raw logits are returned (cross-entropy applies the softmax during training).

    Parameters
    ----------
    encoder_output : array_like
        z_L, shape (B, N+1, D), real numbers (lists, ints and float32 are accepted and
        computed in float64). Only position 0 is read: the patch tokens are not even
        checked, and the array is neither copied whole nor modified.
    W_head : array_like
        Shape (D, C), finite real numbers. Not modified.

    Returns
    -------
    numpy.ndarray
        The logits, float64, shape (B, C).

    Raises
    ------
    TypeError
        For non-numeric data (text, None, booleans) or complex numbers.
    ValueError
        For a wrong number of dimensions (saying which shape was expected), shapes that
        do not fit (naming both, and saying W_head looks transposed when it is (C, D)),
        a NaN or infinity (naming the first index), or logits that overflow float64.

    Notes
    -----
    The normalized rows go into a (B, D) workspace kept per thread between calls
    (0.4 MB at ViT-B/16 scale), which spares CPython a fresh temporary per call.

    Examples
    --------
    >>> cls = [[2, -1, 0, 3], [1, 1, -1, -1]]
    >>> W = [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]]
    >>> z = np.array(cls, dtype=float)[:, None, :]      # B=2, N+1=1, D=4
    >>> classification_head(z, W).round(4).tolist()
    [[0.8854, -1.3914, 1.5811], [0.2, -0.1, -1.4]]
    """
    h_cls, z_shape = cls_rows_from_encoder(encoder_output, check=False)     # (B, D)
    W_head = w_head_for(W_head, h_cls.shape[1], "encoder_output", z_shape)  # (D, C)
    h_hat = _layer_norm_rows(h_cls, lambda: check_finite(                  # (B, D)
        h_cls, "encoder_output", lambda i: (i[0], 0, i[1])))
    logits = project(h_hat, W_head)                                         # (B, C)
    return logits


def head_from_cls(cls, W_head):
    """The head applied to CLS rows given directly (B, D): LayerNorm, then ``@ W_head``.

    Same checks and errors as :func:`classification_head`, with ``cls`` in place of
    ``encoder_output``.

    Examples
    --------
    >>> head_from_cls([[1.0, 2.0]], [[1.0], [0.0]]).round(4).tolist()
    [[-1.0]]
    """
    h_cls = cls_rows(cls, check=False)                                      # (B, D)
    W_head = w_head_for(W_head, h_cls.shape[1], "cls", h_cls.shape)         # (D, C)
    h_hat = _layer_norm_rows(h_cls, lambda: check_finite(h_cls, "cls"))     # (B, D)
    logits = project(h_hat, W_head)                                         # (B, C)
    return logits


def layer_norm(x, eps=EPS):
    """LayerNorm over the last axis, without affine parameters.

    ``(x - mean) / sqrt(var + eps)`` per row, with the population variance (divide
    by D, not D-1). A constant row gives zeros.

    Parameters
    ----------
    x : array_like
        Real numbers, at least 1-D, last axis non-empty, finite.
    eps : float, optional
        Non-negative; 1e-6 as in the ViT head.

    Returns
    -------
    numpy.ndarray
        float64, same shape as ``x``; ``x`` is not modified.

    Raises
    ------
    TypeError
        For non-numeric or complex data.
    ValueError
        For a 0-d input, an empty last axis, NaN/inf (naming the first index), or a
        negative or non-finite eps.

    Examples
    --------
    >>> layer_norm([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]).round(4).tolist()
    [[0.0, 0.0, 0.0], [-1.2247, 0.0, 1.2247]]
    """
    eps = float(eps)
    if not (eps >= 0.0 and np.isfinite(eps)):
        raise ValueError("eps must be a finite number >= 0; got {!r}".format(eps))
    arr = real_array(x, "x")
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError("layer_norm needs at least one value along the last axis; got "
                         "shape {}".format(shape_text(arr.shape)))
    arr = as_float64(arr)
    check_finite(arr, "x")
    rows = arr.reshape(-1, arr.shape[-1])
    return normalize_rows(rows, eps)[2].reshape(arr.shape)


def extract_cls(encoder_output):
    """Return the CLS rows ``encoder_output[:, 0, :]`` (position 0, never -1).

    Parameters
    ----------
    encoder_output : array_like
        Shape (B, N+1, D), real numbers.

    Returns
    -------
    numpy.ndarray
        Shape (B, D). For a float64 ndarray this is a view of position 0 (nothing is
        copied); other dtypes get a float64 copy of the CLS slice only.

    Raises
    ------
    TypeError, ValueError
        See :func:`classification_head`.

    Examples
    --------
    >>> z = np.arange(24.0).reshape(2, 3, 4)
    >>> extract_cls(z).tolist()
    [[0.0, 1.0, 2.0, 3.0], [12.0, 13.0, 14.0, 15.0]]
    >>> np.shares_memory(extract_cls(z), z)
    True
    """
    return cls_rows_from_encoder(encoder_output)[0]


# ---- the numerics: each step above, exact for every finite float64 input ---------------------

def normalize_rows(x, eps=EPS, check=None, out=None):
    """LayerNorm core on a trusted finite float64 array; also returns the moments.

    The rows are shifted by their first element before the mean is taken, so a
    constant row gives exact zeros (not tiny rounding residues, never NaN), and the
    variance is the two-pass population variance of the centred values. Rows whose
    moments would overflow float64 are rescaled first.

    Parameters
    ----------
    x : numpy.ndarray
        float64, 2-D (rows), last axis non-empty. Not modified. Finite, unless
        ``check`` is given.
    eps : float
        Added to the variance inside the square root.
    check : callable, optional
        Called (before the overflow fallback) when some row's mean or variance is not
        finite, which every NaN or infinity in ``x`` causes; it should raise if ``x``
        holds one. This spares the head a separate pass over its input.
    out : numpy.ndarray, optional
        float64 array shaped like ``x`` (and not ``x``) to hold ``h_hat``.

    Returns
    -------
    mean, var : numpy.ndarray
        Per-row mean and population variance, shape (rows, 1).
    h_hat : numpy.ndarray
        ``(x - mean) / sqrt(var + eps)``, a new array shaped like ``x``.

    Examples
    --------
    >>> mean, var, h_hat = normalize_rows(np.array([[2.0, -1.0, 0.0, 3.0]]))
    >>> float(mean[0, 0]), float(var[0, 0]), np.round(h_hat, 4).tolist()
    (1.0, 2.5, [[0.6325, -1.2649, -0.6325, 1.2649]])
    """
    with np.errstate(all="ignore"):                        # overflowing rows are redone below
        h_hat = np.subtract(x, x[:, :1], out=out)                    # (rows, D) x - x[:, 0]
        shift = h_hat.mean(axis=-1, keepdims=True)                   # (rows, 1)
        h_hat -= shift                                               # x - mean
        var = np.einsum("ij,ij->i", h_hat, h_hat)[:, None] / x.shape[-1]  # (rows, 1) divide by D
        h_hat /= np.sqrt(var + eps)                                  # (x - mean) / sqrt(var + eps)
        mean = x[:, :1] + shift                                      # (rows, 1)
    if eps <= 0.0:
        h_hat[var[:, 0] == 0.0] = 0.0                                # a constant row: 0 / 0 -> 0
    overflowed = ~(np.isfinite(var) & np.isfinite(mean))[:, 0]      # (rows,)
    if overflowed.any():
        if check is not None:
            check()                                                  # a NaN or inf shows here too
        mean[overflowed], var[overflowed], h_hat[overflowed] = _normalize_scaled(
            x[overflowed], eps)
    return mean, var, h_hat


def _normalize_scaled(x, eps):
    """:func:`normalize_rows` for rows whose moments overflow float64 (values near 1e154 and
    above): each row is divided by its largest magnitude s first, since
    (x - mean) / sqrt(var + eps) = (x/s - mean/s) / sqrt(var/s**2 + eps/s**2)."""
    scale = np.max(np.abs(x), axis=-1, keepdims=True)
    xs = x / scale
    centered = xs - xs[..., :1]
    centered -= centered.mean(axis=-1, keepdims=True)
    var_s = np.mean(centered * centered, axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        denom = np.sqrt(var_s + (eps / scale) / scale)
        h_hat = np.where(denom > 0, centered / denom, 0.0)
        mean = xs.mean(axis=-1, keepdims=True) * scale
        var = var_s * scale * scale
    return mean, var, h_hat


def project(h_hat, W):
    """``h_hat @ W``, the head's last step, with its one check: finite logits (a column whose
    sum overflowed on the way to a finite logit is redone scaled, :func:`_project_scaled`).

    Parameters
    ----------
    h_hat : numpy.ndarray
        (B, D) float64, finite (normalized CLS rows).
    W : numpy.ndarray
        (D, C) float64.

    Returns
    -------
    numpy.ndarray
        (B, C) float64.

    Raises
    ------
    ValueError
        Naming W_head's first NaN or infinity, or saying that the product overflowed float64.

    Examples
    --------
    >>> project(np.array([[1.0, -1.0]]), np.array([[2.0], [1.0]])).tolist()
    [[1.0]]
    """
    with np.errstate(all="ignore"):
        logits = h_hat @ W
    if not np.isfinite(logits).all():
        _project_scaled(h_hat, W, logits)
        if not np.isfinite(logits).all():
            explain_nonfinite_logits(W)
    return logits


def _project_scaled(h_hat, W, logits):
    """Redo in place the columns of ``logits = h_hat @ W`` that came out NaN or infinite, with
    W scaled down by a power of two and the result scaled back: a finite logit whose terms'
    partial sums overflow in the BLAS's order of summation (terms near 1e308 that cancel) is
    then computed, whatever that order. Each |h_hat| is at most sqrt(D) (a LayerNorm row's
    squares sum to D), so with W scaled by 2^-S, S > log2(D^1.5), no partial sum of a row's D
    terms can overflow. A logit that truly overflows, or one of a W_head holding a NaN or an
    infinity, stays non-finite (the caller says which).
    """
    D = h_hat.shape[1]
    shift = int(np.ceil(1.5 * np.log2(max(D, 2)))) + 1
    bad = ~np.isfinite(logits).all(axis=0)                              # (C,)
    with np.errstate(all="ignore"):
        logits[:, bad] = (h_hat @ (W[:, bad] * 2.0 ** -shift)) * 2.0 ** shift


def _layer_norm_rows(h_cls, refuse_nonfinite):
    """LayerNorm of the head's (B, D) rows into the reused workspace; ``refuse_nonfinite``
    raises, naming the first NaN or infinity, when the rows' moments show there is one."""
    return normalize_rows(h_cls, EPS, refuse_nonfinite, out=_scratch(h_cls.shape))[2]


try:
    import threading
    _workspace = threading.local()
except ImportError:          # a runtime without threads support: one workspace is enough
    _workspace = type("Workspace", (object,), {})()
_WORKSPACE_MAX_BYTES = 8 * 2 ** 20


def _scratch(shape):
    """A float64 buffer the head reuses, per thread, for its temporary h_hat.

    Allocating a fresh 0.4 MB temporary on every call costs page faults in CPython
    (the allocator hands such blocks back to the OS between calls), about a sixth of
    the whole head at ViT-B/16 scale. The buffer never leaves the head: only the new
    logits array is returned. Buffers above 8 MB are not kept.
    """
    if shape[0] * shape[1] * 8 > _WORKSPACE_MAX_BYTES:
        return np.empty(shape)
    buf = getattr(_workspace, "buf", None)
    if buf is None or buf.shape != shape:
        buf = np.empty(shape)
        _workspace.buf = buf
    return buf
