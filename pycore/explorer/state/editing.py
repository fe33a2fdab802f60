"""Editing the explorer state: one cell, a pasted block, a resize, a mode switch.

Each helper **changes the given state in place and returns it** (so both
``set_cell(state, ...)`` and ``state = set_cell(state, ...)`` work). Nothing is copied
but what changes shape: a keystroke writes one number into the existing array. When a
helper raises :class:`~pycore.explorer.errors.StateError`, the state is left exactly as it
was, so the page can keep showing the last valid state.

Matrices made by a preset record each edit in their recipe (``state.generated``) so
their compact JSON form stays exact.
"""

from collections import namedtuple

import numpy as np

from ..errors import StateError
from ..shared import encoder_row
from .cells import BlockTooLarge, parse_block, parse_cell
from .explorer_state import PATTERN, check_limits, check_size, dims_text, quoted, whole_number
from .finetuning import resized_labels

MATRIX_KEYS = ("W_head", "cls", "encoder_output")
DEFAULT_N = 4
"""Patch tokens created when switching from cls to encoder mode (N+1 = 5 tokens)."""


def _target(state, key):
    if not isinstance(key, str) or key not in MATRIX_KEYS:
        raise StateError("there is no matrix {} to edit: W_head, cls or encoder_output".format(
            quoted(key)), key=None)
    arr = state.matrix(key)
    if arr is None:
        other = state.input_key
        raise StateError("this state holds {} ({}), not {}: switch mode first".format(
            other, PATTERN[other], key), key=key)
    return arr


def _where(key, index):
    return "{}[{}]".format(key, ",".join(str(i) for i in index))


def _index(key, index, arr):
    if not isinstance(index, (list, tuple)) or len(index) != arr.ndim or not all(
            isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in index):
        raise StateError("{} needs an index of {} whole numbers ({}); got {}".format(
            key, arr.ndim, PATTERN[key], quoted(index)), key=key)
    index = tuple(int(i) for i in index)
    if not all(0 <= i < n for i, n in zip(index, arr.shape)):
        raise StateError("{} is outside {}, which is {} ({})".format(
            _where(key, index), key, dims_text(arr.shape), PATTERN[key]), key=key, index=index)
    return index


def cell_index(state, key, index):
    """The matrix ``key`` of ``state`` and ``index`` checked against it, as a tuple of ints.

    Raises
    ------
    StateError
        Unknown key, a matrix this state does not hold, or an index out of range (naming the
        shape).

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> cell_index(default_state(), "W_head", [3, 1])[1]
    (3, 1)
    """
    arr = _target(state, key)
    return arr, _index(key, index, arr)


class Typing(namedtuple("Typing", "key index value had_edit edit")):
    """The cell a person is typing in, as it was when they entered it.

    Attributes
    ----------
    key : {"W_head", "cls", "encoder_output"}
    index : tuple of int
    value : float
        The number the cell held: a text that is not a number puts it back.
    had_edit : bool
        Whether the matrix's recipe (``state.generated[key]``) recorded an edit of the cell.
    edit : float or None
        That edit (None when ``had_edit`` is false).
    """
    __slots__ = ()

    def names(self, key, index):
        """Whether this record is of the cell ``key[index]``."""
        return self.key == key and self.index == index


def typing(state, key, index):
    """The :class:`Typing` record of the cell ``key[index]`` (a checked index) as it is now.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> typing(default_state(), "W_head", (3, 1))
    Typing(key='W_head', index=(3, 1), value=-0.3, had_edit=False, edit=None)
    """
    recipe = state.generated.get(key)
    had = recipe is not None and index in recipe.edits
    return Typing(key, index, float(state.matrix(key)[index]), had,
                  recipe.edits.get(index) if had else None)


def cell_value(key, index, text):
    """The number ``text`` spells for the cell ``key[index]``.

    Raises
    ------
    StateError
        Bad text; the message starts with where the cell is, and the error names the cell.
    """
    try:
        return parse_cell(text, where=_where(key, index))
    except StateError as exc:
        raise StateError(str(exc), key=key, index=index) from None


def write_cell(state, key, index, value, before=None):
    """Set the cell ``key[index]`` (a checked index) to the float ``value``, keeping the
    matrix's recipe, if any, in step. ``before``: the :class:`Typing` record of the cell, when
    it is being typed in: writing back the value it held restores its recipe entry exactly (a
    cell that had no edit has none again).

    Examples
    --------
    >>> from pycore.explorer.state.presets import preset
    >>> s = preset("random", seed=1)
    >>> before = typing(s, "W_head", (0, 0))
    >>> _ = write_cell(s, "W_head", (0, 0), 5.0, before)
    >>> s.generated["W_head"].edits
    {(0, 0): 5.0}
    >>> _ = write_cell(s, "W_head", (0, 0), before.value, before)
    >>> s.generated["W_head"].edits
    {}
    """
    state.matrix(key)[index] = value
    recipe = state.generated.get(key)
    if recipe is None:
        return state
    if before is not None and before.names(key, index) and value == before.value:
        if before.had_edit:
            recipe.edits[index] = before.edit
        else:
            recipe.edits.pop(index, None)
    else:
        recipe.edits[index] = value
    return state


def set_cell(state, key, index, text, before=None):
    """Set one cell from the text a person typed.

    Parameters
    ----------
    state : ExplorerState
    key : {"W_head", "cls", "encoder_output"}
        Must be a matrix this state holds (``cls`` in cls mode, ``encoder_output`` in
        encoder mode).
    index : sequence of int
        0-based, one per dimension, e.g. ``(3, 1)``.
    text : str
        Parsed with :func:`~pycore.explorer.state.cells.parse_cell`.
    before : Typing, optional
        The cell as it was when the person entered it (see :func:`write_cell`).

    Returns
    -------
    ExplorerState
        The same object, changed.

    Raises
    ------
    StateError
        Unknown key, index out of range (naming the shape), or bad text; the message
        starts with where the cell is, e.g. ``W_head[3,1]: 'abc' is not a number``.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> s = set_cell(default_state(), "W_head", (3, 1), "\u22120.5")
    >>> float(s.W_head[3, 1])
    -0.5
    """
    arr, idx = cell_index(state, key, index)
    return write_cell(state, key, idx, cell_value(key, idx, text), before)


def paste_block(state, key, start_index, text, undo=None):
    """Paste a block of numbers with its top-left corner at ``start_index``.

    For ``encoder_output`` the block's rows go along the tokens and its columns along
    the features of one sample: ``start_index = (b, t, d)``.

    A block that runs past the edge of the matrix is **refused** (nothing is pasted) with
    a message giving both sizes, rather than silently clipped.

    Parameters
    ----------
    state : ExplorerState
    key : {"W_head", "cls", "encoder_output"}
    start_index : sequence of int
    text : str
        Parsed with :func:`~pycore.explorer.state.cells.parse_block`.
    undo : list, optional
        If given, a function that puts back what the paste overwrote (the block's old values
        and the matrix's recipe) is appended to it, for a caller that may have to refuse the
        result (pycore/explorer/session.py).

    Returns
    -------
    ExplorerState
        The same object, changed.

    Raises
    ------
    StateError
        Bad key or index, a bad block (naming the matrix cell and the block's row and
        column), or a block that does not fit.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> s = paste_block(default_state(), "W_head", (2, 1), "1\\t2\\n3\\t4")
    >>> s.W_head[2:, 1:].tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    arr = _target(state, key)
    start = _index(key, start_index, arr)
    fit_h, fit_w = arr.shape[-2] - start[-2], arr.shape[-1] - start[-1]
    try:
        rows = parse_block(text, fit=(fit_h, fit_w))
        h, w = len(rows), len(rows[0])
    except BlockTooLarge as exc:
        h, w = exc.shape
    except StateError as exc:
        index = None
        if exc.index is not None and len(exc.index) == 2:
            index = start[:-2] + (start[-2] + exc.index[0], start[-1] + exc.index[1])
        raise StateError("{} (pasting at {}): {}".format(key, _where(key, start), exc),
                         key=key, index=index) from None
    if h > fit_h or w > fit_w:
        raise StateError(
            "the pasted block is {:,} × {:,} but from {} only {} × {} cells fit ({} is {}): "
            "nothing was pasted; paste a smaller block or resize first".format(
                h, w, _where(key, start), fit_h, fit_w, key, dims_text(arr.shape)),
            key=key, index=start)
    block = np.array(rows, dtype=np.float64)
    region = start[:-2] + (slice(start[-2], start[-2] + h), slice(start[-1], start[-1] + w))
    recipe = state.generated.get(key)
    if undo is not None:
        old, old_edits = arr[region].copy(), dict(recipe.edits) if recipe is not None else None

        def put_back():
            arr[region] = old
            if recipe is not None:
                recipe.edits = old_edits
        undo.append(put_back)
    arr[region] = block
    if recipe is not None:
        for r in range(h):
            for c in range(w):
                recipe.edits[start[:-2] + (start[-2] + r, start[-1] + c)] = float(block[r, c])
    return state


def _option_int(state, name):
    """A non-negative int option (checked when it was set; anything else counts as 0)."""
    value = state.options.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        return 0
    return int(value)


def _resized(arr, shape):
    if arr.shape == tuple(shape):
        return arr
    out = np.zeros(shape)
    overlap = tuple(slice(0, min(a, b)) for a, b in zip(arr.shape, shape))
    out[overlap] = arr[overlap]
    return out


def resized_shapes(state, B=None, N=None, D=None, C=None):
    """The shapes :func:`resize` would give the state's matrices, checked, without changing or
    copying anything: a caller that keeps the old state until the new one is ready
    (pycore/explorer/session.py) copies it only once the sizes are known to be allowed.

    Parameters
    ----------
    state : ExplorerState
    B, N, D, C : int, optional
        As for :func:`resize`.

    Returns
    -------
    dict
        ``{"W_head": (D, C), "cls" or "encoder_output": its shape}``.

    Raises
    ------
    StateError
        A size that is not a whole number, below 1 (N below 0), over its limit
        (:data:`~pycore.explorer.state.explorer_state.LIMITS`), a matrix over its number of elements
        (:data:`~pycore.explorer.state.explorer_state.ELEMENT_LIMITS`), or N in cls mode.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> resized_shapes(default_state(), C=4)
    {'W_head': (4, 4), 'cls': (2, 4)}
    """
    B, N, D, C = (None if v is None else whole_number(v, n)
                  for n, v in (("B", B), ("N", N), ("D", D), ("C", C)))
    if N is not None and state.mode == "cls":
        raise StateError("N (the number of patch tokens) exists in encoder mode only; this "
                         "state holds cls", key="N1")
    B = state.B if B is None else B
    D = state.D if D is None else D
    C = state.C if C is None else C
    tokens = None if state.mode == "cls" else (state.N if N is None else N) + 1
    check_limits(B=B, N1=tokens, D=D, C=C)
    shapes = {"W_head": (D, C)}
    if state.mode == "cls":
        shapes["cls"] = (B, D)
    else:
        shapes["encoder_output"] = (B, tokens, D)
    for key, shape in shapes.items():
        check_size(key, shape)
    return shapes


def resize(state, B=None, N=None, D=None, C=None):
    """Change the sizes, keeping the overlapping values and filling new cells with zeros.

    Zeros are a neutral choice: a new feature row of W_head contributes nothing to the
    logits, and a new class column gives logit 0. Sizes left as None are unchanged.
    ``N`` (patch tokens) applies to encoder mode only. ``options["sample"]`` and
    ``options["logit_class"]`` are clamped into the new ranges. The labels keep in step
    (:func:`~pycore.explorer.state.finetuning.resized_labels`: new samples get label 0, as does a
    sample whose class was removed). Arrays whose shape does not change are not copied.

    Parameters
    ----------
    state : ExplorerState
    B, N, D, C : int, optional
        Checked by :func:`resized_shapes`: against
        :data:`~pycore.explorer.state.explorer_state.LIMITS` (N+1 against ``N1``) and
        :data:`~pycore.explorer.state.explorer_state.ELEMENT_LIMITS`.

    Returns
    -------
    ExplorerState
        The same object, changed.

    Raises
    ------
    StateError
        As :func:`resized_shapes`; the state is then unchanged.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> s = resize(default_state(), C=4)
    >>> s.W_head[:, 3].tolist()
    [0.0, 0.0, 0.0, 0.0]
    """
    new_shapes = resized_shapes(state, B, N, D, C)
    D, C = new_shapes["W_head"]
    B = new_shapes[state.input_key][0]
    for key, shape in new_shapes.items():
        arr = state.matrix(key)
        if arr.shape == shape:
            continue
        recipe = state.generated.get(key)
        if recipe is not None:
            state.generated[key] = recipe.resized(shape)
        setattr(state, key, _resized(arr, shape))
    state.options["sample"] = min(_option_int(state, "sample"), B - 1)
    state.options["logit_class"] = min(_option_int(state, "logit_class"), C - 1)
    state.labels = resized_labels(state.labels, B, C)
    return state


def check_mode(mode):
    """The mode a person chose, checked: ``"cls"`` or ``"encoder"``.

    Raises
    ------
    StateError
        Anything else, quoted.
    """
    if mode not in ("cls", "encoder"):
        raise StateError("mode must be \"cls\" or \"encoder\"; got {}".format(quoted(mode)))
    return mode


def set_mode(state, mode, N=None):
    """Switch between editing the CLS rows and the whole encoder output.

    cls -> encoder: the new ``encoder_output`` has the cls rows at position 0 and ``N``
    patch tokens (default 4) drawn from ``RandomState(options["seed"])``, standard
    normal rounded to one decimal. encoder -> cls: ``cls`` becomes position 0 and the
    patch tokens are dropped (switching back regenerates them from the seed).

    Parameters
    ----------
    state : ExplorerState
    mode : {"cls", "encoder"}
    N : int, optional
        Patch tokens for cls -> encoder.

    Returns
    -------
    ExplorerState
        The same object, changed (unchanged if already in ``mode``).

    Raises
    ------
    StateError
        Unknown mode, or N not allowed by the limits.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> s = set_mode(default_state(), "encoder")
    >>> s.encoder_output.shape, s.encoder_output[:, 0, :].tolist()
    ((2, 5, 4), [[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]])
    """
    check_mode(mode)
    if mode == state.mode:
        return state
    if mode == "cls":
        state.cls = np.ascontiguousarray(state.encoder_output[:, 0, :])
        state.encoder_output = None
        state.generated.pop("encoder_output", None)
        return state
    N = DEFAULT_N if N is None else whole_number(N, "N")
    B, D = state.cls.shape
    check_size("encoder_output", (B, N + 1, D))
    rs = np.random.RandomState(_option_int(state, "seed"))
    z = np.round(rs.standard_normal((B, N + 1, D)), 1) + 0.0
    z[:, 0, :] = state.cls
    state.encoder_output = z
    state.cls = None
    state.generated.pop("cls", None)
    return state


def patches(state, key, index, value):
    """The cells of the matrices the page holds that one edit of ``key`` at ``index`` changed
    (the answer's ``patched``).

    Examples
    --------
    >>> from pycore.explorer.state.presets import preset
    >>> patches(preset("encoder"), "encoder_output", (1, 0, 2), 0.5)["h_cls"]
    [[1, 2, 0.5]]
    """
    if key == "W_head":
        return {"W_head": [[index[0], index[1], value]]}
    if key == "cls":
        return {"input": [[index[0], index[1], value]], "h_cls": [[index[0], index[1], value]]}
    b, t, d = index
    out = {"input": [[encoder_row(b, t, state.N + 1), d, value]]}
    if t == 0:
        out["h_cls"] = [[b, d, value]]
    return out
