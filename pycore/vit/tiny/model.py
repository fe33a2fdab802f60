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

This module is the model: its forward pass and the loading of its shipped weights. The blocks it
composes (GELU, LayerNorm, softmax, patches) are in tiny_vit_layers.py; the weights' names,
shapes and checks in tiny_vit_params.py.
"""

import json
import math

import numpy as np

from ..head import classification_head
from .layers import IMAGE_SIDE, PIXEL_MAX, check_images, gelu, layer_norm_affine, patchify, softmax
from .params import WEIGHTS_PATH, check_params


class TinyViT(object):
    """A tiny ViT encoder and its head weights; see :func:`load_tiny_vit`.

    Parameters
    ----------
    params : dict of str to array_like
        Every weight named by :func:`pycore.vit.tiny.params.parameter_shapes` (extra keys are an
        error); stored as float64 copies.
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
    D, L, heads, mlp_dim, patch_size, N : int
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
    >>> from pycore.vit.tiny.params import parameter_shapes
    >>> rng = np.random.RandomState(0)
    >>> shapes = parameter_shapes(4, D=8, L=1, mlp_dim=16)
    >>> model = TinyViT({k: rng.randn(*s) for k, s in shapes}, heads=2, patch_size=4)
    >>> model.encode(np.zeros((3, 8, 8))).shape
    (3, 5, 8)
    """

    def __init__(self, params, heads, patch_size, test_indices=None, meta=None):
        self.params, (D, L, mlp_dim) = check_params(params, patch_size)
        if int(heads) != heads or heads < 1 or D % heads:
            raise ValueError("heads must divide D = {}; got {!r}".format(D, heads))
        self.D, self.L, self.heads, self.mlp_dim = D, L, int(heads), mlp_dim
        self.patch_size = int(patch_size)
        self.N = (IMAGE_SIDE // self.patch_size) ** 2
        self.W_head = self.params["W_head"]
        self.test_indices = (np.zeros(0, dtype=np.int64) if test_indices is None
                             else np.asarray(test_indices, dtype=np.int64))
        self.meta = dict(meta or {})

    def __repr__(self):
        return "TinyViT(patch_size={}, N={}, D={}, L={}, heads={}, mlp_dim={})".format(
            self.patch_size, self.N, self.D, self.L, self.heads, self.mlp_dim)

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
        z = self._embed(check_images(images))
        attn, cls_rows = None, [z[:, 0, :]]
        for l in range(self.L):
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
        >>> h.shape == (model.L + 1, 2, model.D)
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
        images = check_images(images)
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
    """The trained tiny ViT that ships with pycore (``weights.npz``).

    Parameters
    ----------
    path : str, optional
        Another weights file of the same layout (the training script writes one).

    Returns
    -------
    TinyViT
        With ``encode``, ``cls_attention``, ``W_head`` (D, 10) float64,
        ``test_indices`` (the held-out images' indices in ``load_digits()`` order),
        ``patch_size``, ``D``, ``L``, ``heads`` and ``meta`` (how it was trained).

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
