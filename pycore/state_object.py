"""The explorer state: everything a person can edit, in one plain object."""

import numpy as np

from .checks import first_nonfinite, real_array, shape_text, value_word
from .errors import StateError
from .limits import check_limits

DEFAULT_OPTIONS = {"sample": 0, "logit_class": 0, "pitfall": None, "variant": None,
                   "activation": "tanh", "seed": 0}

_DIMS = {"W_head": ("D", "C"), "cls": ("B", "D"), "encoder_output": ("B", "N1", "D")}
PATTERN = {"W_head": "D × C", "cls": "B × D", "encoder_output": "B × (N+1) × D"}


def dims_text(shape):
    return " × ".join(str(s) for s in shape)


def owned_matrix(value, key, copy=True):
    """``value`` as a finite float64 C-contiguous array of the right rank for ``key``
    (a copy the state owns, unless ``copy`` is False), within :data:`LIMITS`."""
    ndim = len(_DIMS[key])
    try:
        arr = real_array(value, key)
    except (TypeError, ValueError) as exc:
        raise StateError("{} must be a {}-D array of real numbers ({}): {}".format(
            key, ndim, PATTERN[key], exc), key=key) from None
    if copy:
        arr = np.array(arr, dtype=np.float64, order="C")
    else:
        arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.ndim != ndim:
        raise StateError("{} must be {}-D ({}); got {}-D with shape {}".format(
            key, ndim, PATTERN[key], arr.ndim, shape_text(arr.shape)), key=key)
    check_limits(**dict(zip(_DIMS[key], arr.shape)))
    bad = first_nonfinite(arr)
    if bad is not None:
        raise StateError("{}[{}] is {}: every number must be finite".format(
            key, ",".join(str(i) for i in bad), value_word(arr[bad])), key=key, index=bad)
    return arr


def check_fit(W_head, inputs, input_key):
    """StateError unless W_head is (D, C) for the inputs' D (and say if transposed)."""
    D = inputs.shape[-1]
    if W_head.shape[0] != D:
        if W_head.shape[1] == D:
            raise StateError(
                "W_head looks transposed: its shape is {} (C × D) but it must be D × C = "
                "{} × {} to match {} of shape {}".format(
                    dims_text(W_head.shape), D, W_head.shape[0], input_key,
                    dims_text(inputs.shape)), key="W_head")
        raise StateError(
            "W_head has shape {} but must have D = {} rows: {} has shape {}, so W_head must "
            "be {} × C".format(dims_text(W_head.shape), D, input_key,
                               dims_text(inputs.shape), D), key="W_head")


class ExplorerState(object):
    """What a person can edit: ``W_head`` (D, C), exactly one of ``cls`` (B, D) or
    ``encoder_output`` (B, N+1, D), and view ``options``.

    The arrays are float64, C-contiguous, finite and owned by the state (the
    constructor copies its inputs unless ``copy=False``). ``generated`` maps the keys of
    matrices that came from a preset to their :class:`~pycore.recipes.Recipe`, kept
    up to date by the editing helpers, so that big states have a compact JSON form.

    Parameters
    ----------
    W_head : array_like
    cls : array_like, optional
    encoder_output : array_like, optional
    options : dict, optional
        Merged over :data:`DEFAULT_OPTIONS` (``sample``, ``logit_class``, ``pitfall``,
        ``variant``, ``activation``, ``seed``). A plain dict the page may update.
    generated : dict, optional
    copy : bool, optional

    Raises
    ------
    StateError
        For anything that is not a valid state (shapes, limits, NaN/inf).

    Examples
    --------
    >>> s = ExplorerState([[1.0], [2.0]], cls=[[0.5, 0.25]])
    >>> s.mode, s.B, s.D, s.C, s.N
    ('cls', 1, 2, 1, None)
    """

    __slots__ = ("W_head", "cls", "encoder_output", "options", "generated")

    def __init__(self, W_head, cls=None, encoder_output=None, options=None, generated=None,
                 copy=True):
        if (cls is None) == (encoder_output is None):
            raise StateError("a state needs exactly one of cls (B × D) or encoder_output "
                             "(B × (N+1) × D)", key="cls" if cls is None else None)
        self.W_head = owned_matrix(W_head, "W_head", copy)
        if cls is not None:
            self.cls = owned_matrix(cls, "cls", copy)
            self.encoder_output = None
            check_fit(self.W_head, self.cls, "cls")
        else:
            self.encoder_output = owned_matrix(encoder_output, "encoder_output", copy)
            self.cls = None
            check_fit(self.W_head, self.encoder_output, "encoder_output")
        merged = dict(DEFAULT_OPTIONS)
        merged.update(options or {})
        self.options = merged
        self.generated = dict(generated or {})

    @property
    def mode(self):
        """``"cls"`` or ``"encoder"``."""
        return "cls" if self.cls is not None else "encoder"

    @property
    def inputs(self):
        """``cls`` or ``encoder_output``, whichever this state holds."""
        return self.cls if self.cls is not None else self.encoder_output

    @property
    def input_key(self):
        return "cls" if self.cls is not None else "encoder_output"

    @property
    def B(self):
        return int(self.inputs.shape[0])

    @property
    def D(self):
        return int(self.W_head.shape[0])

    @property
    def C(self):
        return int(self.W_head.shape[1])

    @property
    def N(self):
        """Number of patch tokens; None in cls mode."""
        return None if self.cls is not None else int(self.encoder_output.shape[1]) - 1

    @property
    def h_cls(self):
        """The CLS rows (B, D): ``cls``, or a view of ``encoder_output[:, 0, :]``."""
        return self.cls if self.cls is not None else self.encoder_output[:, 0, :]

    def matrix(self, key):
        """The array named ``key`` (``"W_head"``, ``"cls"`` or ``"encoder_output"``)."""
        return {"W_head": self.W_head, "cls": self.cls,
                "encoder_output": self.encoder_output}[key]

    def copy(self):
        """A deep copy (arrays, options and recipes)."""
        from .recipes import Recipe
        generated = dict((k, Recipe(r.preset, r.shape, r.seed, r.scale, r.decimals, r.keep,
                                    r.size, r.edits)) for k, r in self.generated.items())
        return ExplorerState(self.W_head, self.cls, self.encoder_output,
                             dict(self.options), generated)

    def __eq__(self, other):
        if not isinstance(other, ExplorerState):
            return NotImplemented
        return (self.mode == other.mode and self.options == other.options
                and np.array_equal(self.W_head, other.W_head)
                and np.array_equal(self.inputs, other.inputs))

    __hash__ = None

    def __repr__(self):
        return "ExplorerState(mode={!r}, W_head {}, {} {}, options={!r})".format(
            self.mode, dims_text(self.W_head.shape), self.input_key,
            dims_text(self.inputs.shape), self.options)
