"""The explorer state: everything a person can edit, in one plain object, and the checks every
way into it shares (sizes, whole numbers, seeds, options), each written once.

The size limits keep the page responsive in a browser. ``N1`` is N+1, the number of tokens (the
CLS token plus N patch tokens). Each dimension has its limit (:data:`LIMITS`), and each matrix a
limit on the numbers it holds (:data:`ELEMENT_LIMITS`): without the latter a 200-character link
of a seeded random encoder output (64 × 257 × 1024) made Python hold hundreds of MB, which
WebAssembly's memory never gives back.
"""

import numpy as np

from ...vit.checks import describe_nonfinite, real_array, shape_text, w_head_for
from ...vit.trace import real_head_of
from ..errors import StateError, shown
from .finetuning import check_labels, train_settings

LIMITS = {"B": 64, "N1": 257, "D": 1024, "C": 1000}
INPUT_ELEMENTS_MAX = 2 ** 21
"""The most numbers the inputs may hold (B × (N+1) × D; B × D in cls mode never reaches it):
2,097,152, 16 MB of float64, e.g. 13 samples of ViT-B/16's whole encoder output (197 × 768).
With the largest W_head (1024 × 1000) such a state loads from a link in about 0.3 s and
20-30 MB of Python memory (docs/interface.md, "Limits")."""
ELEMENT_LIMITS = {"W_head": LIMITS["D"] * LIMITS["C"], "cls": INPUT_ELEMENTS_MAX,
                  "encoder_output": INPUT_ELEMENTS_MAX}
"""The most numbers each matrix may hold (W_head's follows from the limits on D and C)."""
SEED_LIMIT = 2 ** 32
ACTIVATIONS = ("tanh", "gelu")
WALK_STEPS = (
    ("extract", "Extract CLS"),
    ("mean", "Mean"),
    ("variance", "Variance"),
    ("normalize", "Normalize"),
    ("dot", "One dot product"),
    ("logits", "All logits"),
    ("prediction", "Prediction"),
)
"""The lecture walk-through's steps (key, short name), in the order a lecture takes them:
``options.walk`` is an index into it (pycore/explorer/panels/walkthrough.py writes each step)."""
# walk: the walk-through's step (None: off); walk_class: the class of its dot product (None:
# the sample's predicted class). Links made before they existed hold neither: both stay off.
# head: which head the pipeline shows when a model file brought a real ViT's LayerNorm gamma/beta
# or bias: None, the model's own; "page", the head the page teaches (no gamma/beta, no bias).
DEFAULT_OPTIONS = {"sample": 0, "logit_class": 0, "mistake": None, "variant": None,
                   "activation": "tanh", "seed": 0, "walk": None, "walk_class": None,
                   "head": None}

_MEANING = {
    "B": "samples (rows of cls)",
    "N1": "tokens per sample (N+1: the CLS token plus N patch tokens)",
    "D": "features (the hidden size D)",
    "C": "classes (columns of W_head)",
}
_DIMS = {"W_head": ("D", "C"), "cls": ("B", "D"), "encoder_output": ("B", "N1", "D")}
PATTERN = {"W_head": "D × C", "cls": "B × D", "encoder_output": "B × (N+1) × D"}


def dims_text(shape):
    return " × ".join(str(s) for s in shape)


QUOTE_CHARS = 60
"""A message quotes at most about this many characters of what was sent (a 5 MB key must not
come back as a 5 MB answer)."""


def quoted(value, limit=QUOTE_CHARS):
    """What a message quotes of a text, an index or a name it refuses, the way Python writes it
    (``'bias'``, ``(0,)``, ``[0, 1]``), but never much longer than ``limit`` characters, however
    long the value: a long text is cut, a long or deeply nested list ends in "...". Anything
    else is written as :func:`shown` writes it.

    Parameters
    ----------
    value : object
        What was sent.
    limit : int, optional
        About how many characters of it to quote.

    Returns
    -------
    str

    Examples
    --------
    >>> quoted("bias"), quoted((0,)), quoted([0, True, None])
    ("'bias'", '(0,)', '[0, true, null]')
    >>> quoted("x" * 1000, 5), quoted(list(range(10 ** 6)), 12)
    ("'xxxxx...'", '[0, 1, 2, 3, ... 1,000,000 items]')
    """
    if isinstance(value, str):
        return repr(value if len(value) <= limit else value[:limit] + "...")
    if not isinstance(value, (list, tuple)):
        return shown(value)
    brackets = "[]" if isinstance(value, list) else "()"
    if limit <= 0:  # deep inside a nested list: no room left
        return brackets[0] + "..." + brackets[1]
    parts, size = [], 0
    for item in value:
        if size >= limit:
            parts.append("... {:,} items".format(len(value)))
            break
        text = quoted(item, limit - size - 1)
        parts.append(text)
        size += len(text) + 2
    body = ", ".join(parts)
    if isinstance(value, tuple) and len(value) == 1:
        body += ","
    return brackets[0] + body + brackets[1]


# ---- the checks, one per concept --------------------------------------------------------------

def whole_number(value, name, low=None, high=None, key=None, floats=False):
    """The one check for a whole number: an int (never a bool), in [low, high] when given.

    Parameters
    ----------
    value : object
    name : str
        How the message names it, e.g. ``"options.seed"``.
    low, high : int, optional
        Inclusive bounds.
    key : str, optional
        The StateError's key (default: ``name``).
    floats : bool, optional
        Also accept a float equal to a whole number (what a page's number field sends).

    Returns
    -------
    int

    Raises
    ------
    StateError
        ``"<name> must be a whole number[ from low to high]; got <value>"``.

    Examples
    --------
    >>> whole_number(3, "seed", 0, 9), whole_number(2.0, "B", floats=True)
    (3, 2)
    >>> whole_number(True, "seed")
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: seed must be a whole number; got true
    """
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok and floats and isinstance(value, float) and value == value and \
            abs(value) < 2 ** 53 and value == int(value):
        ok, value = True, int(value)
    if ok:
        value = int(value)
        if (low is None or value >= low) and (high is None or value <= high):
            return value
    bounds = "" if low is None or high is None else " from {} to {}".format(low, high)
    raise StateError("{} must be a whole number{}; got {}".format(name, bounds, shown(value)),
                     key=name if key is None else key)


def check_seed(value, name="seed", key=None):
    """A seed for np.random.RandomState: a whole number from 0 to 2**32 - 1."""
    return whole_number(value, name, 0, SEED_LIMIT - 1, key=key)


def check_limits(**sizes):
    """Check dimension sizes against :data:`LIMITS`.

    Parameters
    ----------
    **sizes : int
        Any of ``B``, ``N1``, ``D``, ``C``; None values are skipped.

    Raises
    ------
    StateError
        With ``key`` set to the dimension, naming its value and the limit, when a size is not a
        whole number, is below 1, or is above its limit.

    Examples
    --------
    >>> check_limits(B=2, D=768, C=1000)
    >>> check_limits(B=65)
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: B = 65 is over the limit of 64 samples (rows of cls)
    """
    for name in ("B", "N1", "D", "C"):
        value = sizes.pop(name, None)
        if value is None:
            continue
        value = whole_number(value, name)
        if value < 1:
            raise StateError("{} = {} is too small: at least 1 {}".format(
                name, value, _MEANING[name]), key=name)
        if value > LIMITS[name]:
            raise StateError("{} = {} is over the limit of {} {}".format(
                name, value, LIMITS[name], _MEANING[name]), key=name)
    if sizes:
        raise TypeError("unknown dimension(s): {}".format(", ".join(sorted(sizes))))


def check_size(key, shape):
    """Check a matrix's shape against :data:`LIMITS` (each dimension) and
    :data:`ELEMENT_LIMITS` (the numbers it holds), before anything of that size is made.

    Parameters
    ----------
    key : {"W_head", "cls", "encoder_output"}
    shape : sequence of int
        One size per dimension of ``key`` (:data:`PATTERN`).

    Raises
    ------
    StateError
        With ``key`` set, naming the limit and what was asked: a dimension as
        :func:`check_limits` says it, or the product of the sizes.

    Examples
    --------
    >>> check_size("encoder_output", (2, 197, 768))
    >>> check_size("encoder_output", (64, 257, 1024))
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: encoder_output would hold 64 × 257 × 1024 = 16,842,752 ...
    """
    dims = _DIMS[key]
    if len(shape) != len(dims):
        raise TypeError("{} has {} dimensions; got {}".format(key, len(dims), shape))
    check_limits(**dict(zip(dims, shape)))
    count = 1
    for size in shape:
        count *= int(size)
    if count > ELEMENT_LIMITS[key]:
        names = [d.replace("N1", "N+1") for d in dims]
        raise StateError("{} would hold {} = {:,} numbers, over the limit of {:,} ({}): make {} "
                         "or {} smaller".format(key, dims_text(shape), count, ELEMENT_LIMITS[key],
                                                PATTERN[key], ", ".join(names[:-1]), names[-1]),
                         key=key)


FORMER_MISTAKES = ("affine", "bias")
"""Comparisons that links once named as mistakes (``options.pitfall``): real ViTs' LayerNorm
gamma/beta and bias are other heads now (``options.variant``); such a link shows them there."""

FORMER_OPTIONS = {"pitfall": "mistake"}
"""Options renamed since links were first shared (docs/glossary.md), old name: new name. A
link or a saved state's JSON with the old name reads it as the new one, unless it has both."""


def comparison_keys(kind):
    """The keys of the comparisons of one kind ("mistake" or "variant")."""
    from ..comparisons.registry import COMPARISONS  # the registry is data about the math: no cycle
    return [c.key for c in COMPARISONS if c.kind == kind]


def check_option(name, value, B, C):
    """The one check of a view option, from a link or from the page.

    Parameters
    ----------
    name : str
        One of :data:`DEFAULT_OPTIONS`.
    value : object
    B, C : int
        The state's sizes (a sample and a class must exist).

    Returns
    -------
    object
        The value to store.

    Raises
    ------
    StateError
        ``key="options"``, naming the option, what it may be, and what it got.

    Examples
    --------
    >>> check_option("sample", 1, B=2, C=3), check_option("mistake", None, B=2, C=3)
    (1, None)
    """
    where = "options." + str(name)
    if name == "sample":
        return whole_number(value, where, 0, B - 1, key="options")
    if name == "logit_class":
        return whole_number(value, where, 0, C - 1, key="options")
    if name == "seed":
        return check_seed(value, where, key="options")
    if name == "walk":
        if value is None:  # the walk-through is off
            return None
        return whole_number(value, where, 0, len(WALK_STEPS) - 1, key="options")
    if name == "walk_class":
        return None if value is None else whole_number(value, where, 0, C - 1, key="options")
    if name == "activation":
        if value not in ACTIVATIONS:
            raise StateError("{} must be \"tanh\" or \"gelu\"; got {}".format(
                where, shown(value)), key="options")
        return value
    if name == "head":
        if value not in (None, "page"):
            raise StateError("{} must be null (the model's own head) or \"page\" (the head the "
                             "page teaches); got {}".format(where, shown(value)), key="options")
        return value
    if name in ("mistake", "variant"):
        allowed = comparison_keys(name)
        if value is not None and value not in allowed:
            raise StateError("{} must be null or one of {}; got {}".format(
                where, ", ".join(allowed), shown(value)), key="options")
        return value
    raise StateError("there is no option {}".format(shown(name)), key="options")


def owned_matrix(value, key, copy=True):
    """``value`` as a finite float64 C-contiguous array of the right rank for ``key``
    (a copy the state owns, unless ``copy`` is False), within :data:`LIMITS` and
    :data:`ELEMENT_LIMITS`."""
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
    check_size(key, arr.shape)
    bad, message = describe_nonfinite(arr, key)
    if bad is not None:
        raise StateError(message, key=key, index=bad)
    return arr


def check_fit(W_head, inputs, input_key):
    """StateError unless W_head is (D, C) for the inputs' D (saying so when it is transposed)."""
    try:
        w_head_for(W_head, inputs.shape[-1], input_key, inputs.shape)
    except ValueError as exc:
        raise StateError(str(exc), key="W_head") from None


class ExplorerState(object):
    """What a person can edit: ``W_head`` (D, C), exactly one of ``cls`` (B, D) or
    ``encoder_output`` (B, N+1, D), view ``options``, and for fine-tuning one class label per
    sample (``labels``) and the training settings (``train``).

    The arrays are float64, C-contiguous, finite and owned by the state (the
    constructor copies its inputs unless ``copy=False``). ``generated`` maps the keys of
    matrices that came from a preset to their :class:`~pycore.explorer.state.recipes.Recipe`, kept
    up to date by the editing helpers, so that big states have a compact JSON form.

    Parameters
    ----------
    W_head : array_like
    cls : array_like, optional
    encoder_output : array_like, optional
    options : dict, optional
        Merged over :data:`DEFAULT_OPTIONS` (``sample``, ``logit_class``, ``mistake``,
        ``variant``, ``activation``, ``seed``). A plain dict the page may update.
    generated : dict, optional
    copy : bool, optional
    labels : sequence of int, optional
        One class index in [0, C) per sample; None labels every sample 0
        (:func:`~pycore.explorer.state.finetuning.check_labels`). Held as a tuple.
    train : dict, optional
        Training settings, merged over
        :data:`~pycore.explorer.state.finetuning.TRAIN_DEFAULTS` and checked.
    model : dict, optional
        What a model file brought besides W_head (pycore/explorer/model/file.py): its name,
        the real head's LayerNorm ``ln_gamma``, ``ln_beta``, ``eps``, its bias ``b_head``,
        its ``class_names``. Shared, never changed: a copy of the state keeps the same one.

    Raises
    ------
    StateError
        For anything that is not a valid state (shapes, limits, NaN/inf, labels, settings).

    Examples
    --------
    >>> s = ExplorerState([[1.0], [2.0]], cls=[[0.5, 0.25]])
    >>> s.mode, s.B, s.D, s.C, s.N, s.labels
    ('cls', 1, 2, 1, None, (0,))
    """

    __slots__ = ("W_head", "cls", "encoder_output", "options", "generated", "labels", "train",
                 "model")

    def __init__(self, W_head, cls=None, encoder_output=None, options=None, generated=None,
                 copy=True, labels=None, train=None, model=None):
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
        self.labels = check_labels(labels, self.B, self.C)
        self.train = train_settings(train)
        self.model = model

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
        generated = dict((k, r.copy()) for k, r in self.generated.items())
        return ExplorerState(self.W_head, self.cls, self.encoder_output,
                             dict(self.options), generated, labels=self.labels,
                             train=dict(self.train), model=self.model)

    def __eq__(self, other):
        if not isinstance(other, ExplorerState):
            return NotImplemented
        return (self.mode == other.mode and self.options == other.options
                and self.labels == other.labels and self.train == other.train
                and np.array_equal(self.W_head, other.W_head)
                and np.array_equal(self.inputs, other.inputs))

    __hash__ = None

    def __repr__(self):
        return "ExplorerState(mode={!r}, W_head {}, {} {}, options={!r})".format(
            self.mode, dims_text(self.W_head.shape), self.input_key,
            dims_text(self.inputs.shape), self.options)


def has_real_head(model):
    """Whether a model file brought any of a real ViT's head's parts (LayerNorm gamma/beta,
    a bias)."""
    return bool(model) and any(model.get(k) is not None for k in ("ln_gamma", "ln_beta", "b_head"))


def real_head(state):
    """The real ViT's head the pipeline shows (:class:`pycore.vit.trace.RealHead`), or None
    when it shows the page's: a model file brought gamma/beta or a bias that fit the state's
    D and C, and ``options.head`` is not ``"page"``."""
    if state.options.get("head") == "page":
        return None
    return real_head_of(state.model, state.D, state.C)


def hidden_cls_of(state):
    """A model file's CLS rows at every depth (``hidden_cls``, (L+1, B, D)) when they fit the
    state's B and D (a resize leaves them out), else None."""
    depths = (state.model or {}).get("hidden_cls")
    if depths is None or depths.shape[1:] != (state.B, state.D):
        return None
    return depths
