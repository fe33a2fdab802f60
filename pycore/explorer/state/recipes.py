"""Matrices described by how they were made: the compact form of big states.

A URL cannot carry 768,000 numbers, so a matrix that came from a preset is kept (and
written to JSON) as its recipe plus the cells the user changed::

    {"preset": "random", "seed": 1, "shape": [768, 1000], "scale": 0.02,
     "edits": [[767, 999, 0.5]]}

``"random"`` means ``np.random.RandomState(seed).standard_normal(shape) * scale``,
rounded to ``decimals`` places when that key is present (RandomState's stream is the
same in every NumPy version, so a recipe gives the same array everywhere).
``"zeros"`` is an all-zero matrix of ``shape`` (used for big, mostly-zero matrices).
``"tiny-vit"`` is the tiny trained ViT's (pycore/explorer/digits/images.py): with ``digits`` (the
pixels of B images, 64 characters each) its encoder output z_L (B, 17, 32) of them, without
its trained W_head (32, 10); the page's real-ViT mode writes both matrices this way, whatever
their size, so its links carry pixels rather than numbers.
After a resize two optional keys say what is left of the generated values: ``size``,
the matrix's current shape (default: ``shape``), and ``keep``, the leading block of
the generated matrix that is still there (default: all that fits in ``size``); cells
outside ``keep`` are zero. The edits (index..., value) are applied last, in order.
"""

import numpy as np

from ..digits.images import generate as tiny_vit_matrix


class Recipe(object):
    """How a matrix was generated, and the cells edited since.

    Parameters
    ----------
    preset : {"random", "zeros", "tiny-vit"}
    shape : tuple of int
        Shape of the generated matrix.
    seed : int, optional
        For ``"random"``: 0 <= seed < 2**32 (checked where recipes are read).
    scale : float, optional
        For ``"random"``: the standard deviation.
    decimals : int or None, optional
        For ``"random"``: round the generated values to this many decimals.
    keep, size : tuple of int, optional
        See the module docstring; both default to ``shape``.
    edits : dict, optional
        ``{index tuple: value}``, in the order they were made.
    digits : tuple of str, optional
        For ``"tiny-vit"``: the encoded images, in the link form of
        :func:`pycore.explorer.digits.images.pixels_text` (None for the model's W_head).

    Examples
    --------
    >>> r = Recipe("random", (2, 3), seed=0, scale=1.0, decimals=1)
    >>> r.materialize().tolist()
    [[1.8, 0.4, 1.0], [2.2, 1.9, -1.0]]
    """

    __slots__ = ("preset", "shape", "seed", "scale", "decimals", "keep", "size", "edits",
                 "digits")

    def __init__(self, preset, shape, seed=0, scale=1.0, decimals=None, keep=None,
                 size=None, edits=None, digits=None):
        self.preset = preset
        self.shape = tuple(int(s) for s in shape)
        self.seed = int(seed)
        self.scale = float(scale)
        self.decimals = None if decimals is None else int(decimals)
        self.size = self.shape if size is None else tuple(int(s) for s in size)
        self.keep = self._full_keep() if keep is None else tuple(int(k) for k in keep)
        self.edits = dict(edits or {})
        self.digits = None if digits is None else tuple(digits)

    def _full_keep(self):
        return tuple(min(a, b) for a, b in zip(self.shape, self.size))

    def generate(self):
        """The generated matrix of ``shape``, before resizes and edits."""
        if self.preset == "zeros":
            return np.zeros(self.shape)
        if self.preset == "tiny-vit":
            return tiny_vit_matrix(self.digits, self.shape)  # the model loads on first use
        with np.errstate(over="ignore"):          # overflow is reported by the caller
            values = np.random.RandomState(self.seed).standard_normal(self.shape) * self.scale
        if self.decimals is not None:
            values = np.round(values, self.decimals) + 0.0      # + 0.0 turns -0.0 into 0.0
        return values

    def materialize(self):
        """The matrix this recipe describes: generated, cut to ``keep``, sized to
        ``size``, then edited. A new C-contiguous float64 array."""
        if self.keep == self.shape and self.size == self.shape:
            out = self.generate()
        else:
            out = np.zeros(self.size)
            if all(self.keep):
                region = tuple(slice(0, k) for k in self.keep)
                out[region] = self.generate()[region]
        for index, value in self.edits.items():
            out[index] = value
        return out

    def resized(self, size):
        """The recipe of the same matrix resized to ``size`` (overlap kept, new cells
        zero, edits outside dropped)."""
        size = tuple(int(s) for s in size)
        keep = tuple(min(k, s) for k, s in zip(self.keep, size))
        edits = dict((i, v) for i, v in self.edits.items()
                     if all(a < s for a, s in zip(i, size)))
        return Recipe(self.preset, self.shape, self.seed, self.scale, self.decimals, keep,
                      size, edits, self.digits)

    def copy(self):
        """An independent copy (its own dict of edits)."""
        return Recipe(self.preset, self.shape, self.seed, self.scale, self.decimals, self.keep,
                      self.size, self.edits, self.digits)

    def to_json(self):
        """The compact JSON form (a dict), with only the keys that are needed."""
        out = {"preset": self.preset}
        if self.preset == "random":
            out["seed"] = self.seed
        out["shape"] = list(self.shape)
        if self.digits is not None:
            out["digits"] = list(self.digits)
        if self.preset == "random":
            out["scale"] = self.scale
            if self.decimals is not None:
                out["decimals"] = self.decimals
        if self.size != self.shape:
            out["size"] = list(self.size)
        if self.keep != self._full_keep():
            out["keep"] = list(self.keep)
        out["edits"] = [list(index) + [value] for index, value in self.edits.items()]
        return out

    def __eq__(self, other):
        if not isinstance(other, Recipe):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None

    def __repr__(self):
        return "Recipe({!r}, shape={}, seed={}, scale={}, decimals={}, size={}, " \
               "edits={})".format(self.preset, self.shape, self.seed, self.scale,
                                  self.decimals, self.size, len(self.edits))


def sparse_recipe(matrix):
    """A ``"zeros"`` recipe for a mostly-zero matrix (its nonzero cells as edits)."""
    index = np.argwhere(matrix != 0)
    values = matrix[tuple(index.T)] if len(index) else []
    edits = dict((tuple(int(i) for i in idx), float(v)) for idx, v in zip(index, values))
    return Recipe("zeros", matrix.shape, edits=edits)
