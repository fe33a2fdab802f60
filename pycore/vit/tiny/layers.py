"""The tiny ViT's building blocks, each a plain NumPy function of arrays: exact GELU (and the
erf it needs), the encoder's LayerNorm with gamma and beta, softmax, and cutting images into
patches, plus the check every image batch passes before the encoder reads it.

:class:`pycore.vit.tiny.model.TinyViT` composes them into the encoder; the training script
(training/train_tiny_vit.py) uses the same functions for its forward pass.
"""

import math

import numpy as np

IMAGE_SIDE = 8
PIXEL_MAX = 16.0
LN_EPS = 1e-6

_erf_elementwise = np.frompyfunc(math.erf, 1, 1)


def shape_text(shape):
    """A shape as a message writes it: ``(3,)`` or ``(2, 8, 8)``."""
    shape = tuple(int(s) for s in shape)
    if len(shape) == 1:
        return "({},)".format(shape[0])
    return "(" + ", ".join(str(s) for s in shape) + ")"


def erf(x):
    """The error function, element by element, as ``math.erf`` computes it.

    NumPy has no erf of its own; ``math.erf`` is exact to float64 rounding.

    Examples
    --------
    >>> erf(np.array([0.0, 1.0, -2.0])).round(6).tolist()
    [0.0, 0.842701, -0.995322]
    """
    x = np.asarray(x, dtype=np.float64)
    return _erf_elementwise(x).astype(np.float64)


def gelu(x):
    """Exact GELU: ``x * Phi(x)`` with ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``.

    Examples
    --------
    >>> gelu(np.array([-1.0, 0.0, 1.0])).round(6).tolist()
    [-0.158655, 0.0, 0.841345]
    """
    x = np.asarray(x, dtype=np.float64)
    return x * 0.5 * (1.0 + erf(x / math.sqrt(2.0)))


def layer_norm_affine(x, gamma, beta, eps=LN_EPS):
    """LayerNorm over the last axis with gamma and beta (the encoder's LN).

    ``(x - mean) / sqrt(var + eps) * gamma + beta`` with the population variance.

    Examples
    --------
    >>> layer_norm_affine(np.array([[0.0, 2.0]]), np.array([1.0, 2.0]),
    ...                   np.array([0.5, 0.0])).round(4).tolist()
    [[-0.5, 2.0]]
    """
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    return centered / np.sqrt(var + eps) * gamma + beta


def softmax(s, axis=-1):
    """Softmax along ``axis``, shifted by the maximum so that exp cannot overflow.

    Examples
    --------
    >>> softmax(np.array([0.0, math.log(3.0)])).round(4).tolist()
    [0.25, 0.75]
    """
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def patchify(x, patch_size):
    """Cut images (B, 8, 8) into patches (B, N, P*P), N = (8 / P)**2.

    Patches run row-major over the patch grid; each patch is flattened row-major.

    Examples
    --------
    >>> patchify(np.arange(64.0).reshape(1, 8, 8), 4)[0, 1].tolist()[:6]
    [4.0, 5.0, 6.0, 7.0, 12.0, 13.0]
    """
    B = x.shape[0]
    g = IMAGE_SIDE // patch_size
    grid = x.reshape(B, g, patch_size, g, patch_size).transpose(0, 1, 3, 2, 4)
    return grid.reshape(B, g * g, patch_size * patch_size)


def check_images(images):
    """images as float64 (B, 8, 8), after refusing non-numbers, other shapes and NaN or infinity
    with a message that names what was wrong."""
    arr = np.asarray(images)
    if arr.dtype.kind not in "iuf":
        raise TypeError("images must be real numbers on the 0..16 scale; got dtype {}"
                        .format(arr.dtype))
    if arr.ndim != 3 or arr.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE) or arr.shape[0] < 1:
        raise ValueError("images must have shape (B, 8, 8) with B >= 1; got shape {}{}".format(
            shape_text(arr.shape),
            " (one image? pass images[None])" if arr.shape == (IMAGE_SIDE, IMAGE_SIDE) else ""))
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError("images must be finite; images{} is {}".format(
            list(index), arr[index]))
    return arr
