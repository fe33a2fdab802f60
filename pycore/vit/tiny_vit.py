"""A tiny Vision Transformer for 8x8 digits, whose CLS token feeds the page's head.

The encoder follows the ViT paper's equations (Dosovitskiy et al. 2020, eq. 1-3):

1. cut each image into non-overlapping P x P patches ``x_p^i`` (row-major over the
   patch grid, each patch flattened row-major) and embed them linearly:
   ``z_0 = [x_class; x_p^1 E; ...; x_p^N E] + E_pos`` (``E`` has a bias ``b_E``);
2. L pre-LayerNorm blocks, each
   ``z' = z + MSA(LN(z))`` then ``z = z' + MLP(LN(z'))``, where LN has gamma/beta and
   eps 1e-6, MSA is multi-head softmax self-attention and the MLP is
   Linear -> exact GELU ``x * Phi(x)`` -> Linear;
3. nothing else: the encoder returns z_L, shape (B, N+1, D), CLS at position 0.

The classifier is the page's head, unchanged: ``classification_head(z_L, W_head)``,
LayerNorm of ``z_L[:, 0, :]`` without gamma/beta, times ``W_head`` (D, 10), no bias.

Pixels are read on the data set's 0..16 scale and divided by 16 before patching.
"""

import json
import math
import os

import numpy as np

from .head import classification_head

IMAGE_SIDE = 8
PIXEL_MAX = 16.0
LN_EPS = 1e-6
CLASSES = 10
WEIGHTS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_vit_weights.npz")

_BLOCK_PARAMS = ("ln1_gamma", "ln1_beta", "W_qkv", "b_qkv", "W_o", "b_o",
                 "ln2_gamma", "ln2_beta", "W_1", "b_1", "W_2", "b_2")
_erf_elementwise = np.frompyfunc(math.erf, 1, 1)


def _shape_text(shape):
    shape = tuple(int(s) for s in shape)
    if len(shape) == 1:
        return "({},)".format(shape[0])
    return "(" + ", ".join(str(s) for s in shape) + ")"


def parameter_shapes(patch_size, D, depth, mlp_dim, classes=CLASSES):
    """The name and shape of every weight of a tiny ViT, in a fixed order.

    Parameters
    ----------
    patch_size : int
        P, a divisor of 8: the image is cut into N = (8 / P)**2 patches.
    D : int
        Width of every token.
    depth : int
        L, the number of encoder blocks.
    mlp_dim : int
        Hidden width of each block's MLP.
    classes : int, optional
        Columns of W_head.

    Returns
    -------
    list of (str, tuple)
        ``E`` (P*P, D), ``b_E`` (D,), ``x_class`` (D,), ``E_pos`` (N+1, D), then for
        each block ``l`` the names ``block{l}.ln1_gamma`` ... ``block{l}.b_2``, then
        ``W_head`` (D, classes).

    Raises
    ------
    ValueError
        For a patch size that does not divide 8, or sizes below 1.

    Examples
    --------
    >>> shapes = dict(parameter_shapes(4, D=8, depth=1, mlp_dim=16))
    >>> shapes["E"], shapes["E_pos"], shapes["block0.W_qkv"], shapes["W_head"]
    ((16, 8), (5, 8), (8, 24), (8, 10))
    """
    for name, value in (("patch_size", patch_size), ("D", D), ("depth", depth),
                        ("mlp_dim", mlp_dim), ("classes", classes)):
        if int(value) != value or value < 1:
            raise ValueError("{} must be a positive integer; got {!r}".format(name, value))
    if IMAGE_SIDE % patch_size:
        raise ValueError("patch_size must divide {}; got {}".format(IMAGE_SIDE, patch_size))
    N = (IMAGE_SIDE // patch_size) ** 2
    shapes = [("E", (patch_size * patch_size, D)), ("b_E", (D,)), ("x_class", (D,)),
              ("E_pos", (N + 1, D))]
    for l in range(depth):
        p = "block{}.".format(l)
        shapes += [(p + "ln1_gamma", (D,)), (p + "ln1_beta", (D,)),
                   (p + "W_qkv", (D, 3 * D)), (p + "b_qkv", (3 * D,)),
                   (p + "W_o", (D, D)), (p + "b_o", (D,)),
                   (p + "ln2_gamma", (D,)), (p + "ln2_beta", (D,)),
                   (p + "W_1", (D, mlp_dim)), (p + "b_1", (mlp_dim,)),
                   (p + "W_2", (mlp_dim, D)), (p + "b_2", (D,))]
    shapes.append(("W_head", (D, classes)))
    return shapes


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


def _check_images(images):
    arr = np.asarray(images)
    if arr.dtype.kind not in "iuf":
        raise TypeError("images must be real numbers on the 0..16 scale; got dtype {}"
                        .format(arr.dtype))
    if arr.ndim != 3 or arr.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE) or arr.shape[0] < 1:
        raise ValueError("images must have shape (B, 8, 8) with B >= 1; got shape {}{}".format(
            _shape_text(arr.shape),
            " (one image? pass images[None])" if arr.shape == (IMAGE_SIDE, IMAGE_SIDE) else ""))
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError("images must be finite; images{} is {}".format(
            list(index), arr[index]))
    return arr


class TinyViT(object):
    """A tiny ViT encoder and its head weights; see :func:`load_tiny_vit`.

    Parameters
    ----------
    params : dict of str to array_like
        Every weight named by :func:`parameter_shapes` (extra keys are an error);
        stored as float64 copies.
    heads : int
        Number of attention heads; must divide D.
    patch_size : int
        P, a divisor of 8.
    test_indices : array_like of int, optional
        Indices (in ``load_digits()`` order) of the images held out from training.
    meta : dict, optional
        How the weights were made (seed, split, epochs, accuracies).

    Attributes
    ----------
    D, depth, heads, mlp_dim, patch_size, N : int
        Sizes; N = (8 / P)**2 patches, so z_L has N+1 tokens.
    W_head : numpy.ndarray
        (D, 10) float64, the page's head weights.

    Raises
    ------
    ValueError
        For a missing, unknown or misshapen weight (naming it and both shapes), or heads
        that do not divide D.

    Examples
    --------
    >>> rng = np.random.RandomState(0)
    >>> shapes = parameter_shapes(4, D=8, depth=1, mlp_dim=16)
    >>> model = TinyViT({k: rng.randn(*s) for k, s in shapes}, heads=2, patch_size=4)
    >>> model.encode(np.zeros((3, 8, 8))).shape
    (3, 5, 8)
    """

    def __init__(self, params, heads, patch_size, test_indices=None, meta=None):
        E = np.asarray(params.get("E")) if "E" in params else None
        E_pos = np.asarray(params.get("E_pos")) if "E_pos" in params else None
        if E is None or E.ndim != 2 or E_pos is None or E_pos.ndim != 2:
            raise ValueError("params needs E (P*P, D) and E_pos (N+1, D)")
        D = E.shape[1]
        depth = 0
        while "block{}.W_qkv".format(depth) in params:
            depth += 1
        W_1 = params.get("block0.W_1")
        if depth < 1 or W_1 is None:
            raise ValueError("params needs at least one block (block0.W_qkv, block0.W_1, ...)")
        mlp_dim = np.asarray(W_1).shape[-1]
        expected = parameter_shapes(patch_size, D, depth, mlp_dim)
        unknown = sorted(set(params) - set(name for name, _ in expected))
        if unknown:
            raise ValueError("unknown weights: {}".format(", ".join(unknown)))
        self.params = {}
        for name, shape in expected:
            if name not in params:
                raise ValueError("the weight {} {} is missing".format(name, _shape_text(shape)))
            value = np.array(params[name], dtype=np.float64)
            if value.shape != shape:
                raise ValueError("{} must have shape {}; got {}".format(
                    name, _shape_text(shape), _shape_text(value.shape)))
            if not np.isfinite(value).all():
                raise ValueError("{} holds NaN or infinity".format(name))
            self.params[name] = value
        if int(heads) != heads or heads < 1 or D % heads:
            raise ValueError("heads must divide D = {}; got {!r}".format(D, heads))
        self.D, self.depth, self.heads, self.mlp_dim = D, depth, int(heads), mlp_dim
        self.patch_size = int(patch_size)
        self.N = (IMAGE_SIDE // self.patch_size) ** 2
        self.W_head = self.params["W_head"]
        self.test_indices = (np.zeros(0, dtype=np.int64) if test_indices is None
                             else np.asarray(test_indices, dtype=np.int64))
        self.meta = dict(meta or {})

    def __repr__(self):
        return "TinyViT(patch_size={}, N={}, D={}, depth={}, heads={}, mlp_dim={})".format(
            self.patch_size, self.N, self.D, self.depth, self.heads, self.mlp_dim)

    def _embed(self, x):
        p = self.params
        B = x.shape[0]
        tokens = patchify(x / PIXEL_MAX, self.patch_size) @ p["E"] + p["b_E"]   # (B, N, D)
        x_class = np.broadcast_to(p["x_class"], (B, 1, self.D))
        return np.concatenate([x_class, tokens], axis=1) + p["E_pos"]          # z_0

    def _msa(self, y, l):
        """Multi-head self-attention of the LayerNormed tokens y (B, T, D).

        Returns the block's attention output (B, T, D) and attn (B, heads, T, T).
        """
        p = self.params
        pre = "block{}.".format(l)
        B, T, D = y.shape
        d_head = D // self.heads
        qkv = y @ p[pre + "W_qkv"] + p[pre + "b_qkv"]                            # (B, T, 3D)
        qkv = qkv.reshape(B, T, 3, self.heads, d_head).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]                                         # (B, h, T, d)
        attn = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(d_head))          # (B, h, T, T)
        out = (attn @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
        return out @ p[pre + "W_o"] + p[pre + "b_o"], attn

    def _forward(self, images):
        """z_L, the last block's attention weights, and the CLS row at every depth
        (L+1, B, D): z_0's (the embedded tokens) and each block's output's."""
        p = self.params
        z = self._embed(_check_images(images))
        attn, cls_rows = None, [z[:, 0, :]]
        for l in range(self.depth):
            pre = "block{}.".format(l)
            msa, attn = self._msa(
                layer_norm_affine(z, p[pre + "ln1_gamma"], p[pre + "ln1_beta"]), l)
            z = z + msa
            y = layer_norm_affine(z, p[pre + "ln2_gamma"], p[pre + "ln2_beta"])
            z = z + gelu(y @ p[pre + "W_1"] + p[pre + "b_1"]) @ p[pre + "W_2"] + p[pre + "b_2"]
            cls_rows.append(z[:, 0, :])
        return z, attn, np.stack(cls_rows)

    def encode(self, images):
        """The encoder: images (B, 8, 8) on the 0..16 scale -> z_L (B, N+1, D).

        Parameters
        ----------
        images : array_like
            Real numbers, shape (B, 8, 8), B >= 1, finite; the data set's pixels go
            from 0 (white) to 16 (black ink). Not modified.

        Returns
        -------
        numpy.ndarray
            z_L, float64, shape (B, N+1, D): position 0 is the CLS token, positions
            1..N the patches in row-major order. Feed it to
            ``pycore.classification_head(z_L, model.W_head)``.

        Raises
        ------
        TypeError
            For non-numeric or boolean data.
        ValueError
            For a shape other than (B, 8, 8) (naming it), or NaN/infinity.

        Examples
        --------
        >>> from pycore import classification_head
        >>> model = load_tiny_vit()
        >>> z_L = model.encode(np.zeros((2, 8, 8)))
        >>> z_L.shape == (2, model.N + 1, model.D), z_L.dtype
        (True, dtype('float64'))
        >>> classification_head(z_L, model.W_head).shape
        (2, 10)
        """
        return self._forward(images)[0]

    def logits(self, images):
        """``classification_head(self.encode(images), self.W_head)``: (B, 10) float64."""
        return classification_head(self.encode(images), self.W_head)

    def predict(self, images):
        """The predicted digit of each image: the argmax of :meth:`logits`, (B,) int."""
        return self.logits(images).argmax(axis=1)

    def cls_attention(self, images):
        """How much the CLS token attends to each patch in the last block.

        Parameters
        ----------
        images : array_like
            As for :meth:`encode`.

        Returns
        -------
        numpy.ndarray
            float64, shape (B, N): ``attn[:, :, 0, 1:]`` of the last block averaged
            over the heads. A row sums to 1 minus the CLS token's attention to itself;
            ``reshape(B, 8 // P, 8 // P)`` lays it over the patch grid.

        Examples
        --------
        >>> model = load_tiny_vit()
        >>> a = model.cls_attention(np.zeros((1, 8, 8)))
        >>> a.shape == (1, model.N), bool(0 < a.sum() <= 1)
        (True, True)
        """
        return self.encode_with_attention(images)[1]

    def encode_with_attention(self, images):
        """:meth:`encode` and :meth:`cls_attention` from one forward pass.

        The page shows both after every stroke of a drawn digit; one pass costs half of two.

        Returns
        -------
        (numpy.ndarray, numpy.ndarray)
            z_L (B, N+1, D) and the CLS token's attention to the patches (B, N).

        Examples
        --------
        >>> model = load_tiny_vit()
        >>> z_L, attention = model.encode_with_attention(np.zeros((2, 8, 8)))
        >>> z_L.shape == (2, model.N + 1, model.D), attention.shape == (2, model.N)
        (True, True)
        """
        z, attn, _ = self._forward(images)
        return z, attn[:, :, 0, 1:].mean(axis=1)

    def hidden_cls(self, images):
        """The CLS token's row at every depth: z_0[:, 0, :] (the embedded tokens, before the
        first block) and each block's output's, the last being z_L[:, 0, :].

        The head was trained to read only the last; applied to the others
        (:func:`pycore.vit.readout.logit_lens`) it shows how early the class can be read.

        Returns
        -------
        numpy.ndarray
            float64, shape (L+1, B, D); ``[-1]`` is bit for bit ``encode(images)[:, 0, :]``.

        Examples
        --------
        >>> model = load_tiny_vit()
        >>> h = model.hidden_cls(np.zeros((2, 8, 8)))
        >>> h.shape == (model.depth + 1, 2, model.D)
        True
        >>> bool((h[-1] == model.encode(np.zeros((2, 8, 8)))[:, 0, :]).all())
        True
        """
        return self._forward(images)[2]

    def encode_all(self, images):
        """:meth:`encode`, :meth:`cls_attention` and :meth:`hidden_cls` from one forward pass:
        (z_L (B, N+1, D), attention (B, N), hidden CLS rows (L+1, B, D))."""
        z, attn, hidden = self._forward(images)
        return z, attn[:, :, 0, 1:].mean(axis=1), hidden

    def features(self, images, batch_size=256):
        """The frozen CLS features ``z_L[:, 0, :]`` of images, for training a head on them.

        Fine-tuning a new head on a frozen encoder needs only these rows: the head reads
        nothing else (``classification_head(z_L, W) == head_from_cls(features, W)``).

        Parameters
        ----------
        images : array_like
            As for :meth:`encode`, any number B >= 1 of them.
        batch_size : int, optional
            Images encoded at a time, which bounds the memory of the attention maps
            (B x heads x 17 x 17 values) for the whole training set.

        Returns
        -------
        numpy.ndarray
            float64, shape (B, D), row b the CLS token of image b, bit for bit the rows
            :meth:`encode` gives.

        Raises
        ------
        TypeError, ValueError
            As for :meth:`encode`; ValueError for a batch_size below 1.

        Examples
        --------
        >>> model = load_tiny_vit()
        >>> images = np.zeros((3, 8, 8))
        >>> model.features(images, batch_size=2).shape == (3, model.D)
        True
        """
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError("batch_size must be a whole number >= 1; got {!r}".format(batch_size))
        images = _check_images(images)
        batch_size = int(batch_size)
        return np.concatenate([self.encode(images[i:i + batch_size])[:, 0, :]
                               for i in range(0, images.shape[0], batch_size)], axis=0)

    def training_indices(self, n_images):
        """The indices of the images the model was trained on: all of ``range(n_images)``
        (``load_digits()`` order) but :attr:`test_indices`, in increasing order.

        Examples
        --------
        >>> model = load_tiny_vit()
        >>> len(model.training_indices(1797)), len(model.test_indices)
        (1438, 359)
        """
        keep = np.ones(int(n_images), dtype=bool)
        keep[self.test_indices[self.test_indices < n_images]] = False
        return np.flatnonzero(keep)


def load_tiny_vit(path=None):
    """The trained tiny ViT that ships with pycore (``tiny_vit_weights.npz``).

    Parameters
    ----------
    path : str, optional
        Another weights file of the same layout (the training script writes one).

    Returns
    -------
    TinyViT
        With ``encode``, ``cls_attention``, ``W_head`` (D, 10) float64,
        ``test_indices`` (the held-out images' indices in ``load_digits()`` order),
        ``patch_size``, ``D``, ``depth``, ``heads`` and ``meta`` (how it was trained).

    Raises
    ------
    OSError
        When the file cannot be read.
    ValueError
        When it lacks a weight or holds one of the wrong shape.

    Examples
    --------
    >>> model = load_tiny_vit()
    >>> model.W_head.shape == (model.D, 10), model.W_head.dtype
    (True, dtype('float64'))
    >>> bool(model.meta["test_accuracy"] >= 0.95)
    True
    """
    with np.load(path or WEIGHTS_PATH, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        test_indices = data["test_indices"]
        params = {name: data[name] for name in data.files
                  if name not in ("meta", "test_indices")}
    return TinyViT(params, heads=meta["heads"], patch_size=meta["patch_size"],
                   test_indices=test_indices, meta=meta)
