"""What an export needs in Python memory, counted in the budget a training run is held to
(training_memory.MEMORY_MB), and the refusal of one that would pass it (docs/interface.md,
"Limits").

An export's text is made beside everything the session holds (the state, and a training run's
heads and optimizer buffers, training_memory.held_mb). Spelled-out numbers cost the most::

    a float64 as text                      at most CHARS_PER_NUMBER characters (1 byte each)
    the text, held at once                 TEXT_COPIES times: its pieces and the joined text
                                           (built), then the text and the answer's JSON (sent)
    .npz                                   8 bytes a number, in base64 (4/3), TEXT_COPIES times

The bound is computed from the element count before anything is made, so a refused export
costs nothing and changes nothing.

Examples
--------
>>> from pycore.explorer.state.presets import default_state
>>> round(need_mb(default_state(), "json"))   # the slack: a small state costs nothing more
5
"""
import numpy as np

from ..errors import StateError
from ..finetune import memory as training_memory
from ..finetune.memory import held_mb
from ..state.as_json import COMPACT_MIN
from .files import code_recipe

CHARS_PER_NUMBER = 26
"""The most characters a number takes in an export's text: ``repr`` of a float64 is at most
24 characters ("-2.2250738585072014e-308"), then its separator (", ")."""

CHARS_PER_ROW = 40
"""A row's indent, brackets and line end (at most)."""

CHARS_PER_EDIT = 64
"""A recipe's edited cell: "encoder_output[63, 256, 1023] = -2.2250738585072014e-308" and its
line end, or its JSON ``[63,256,1023,-2.2250738585072014e-308]``."""

TEXT_COPIES = 3
"""How many times an export's text is held at its peak (measured): while it is built, its
pieces and the joined text; once sent, the text and the answer's JSON (session.answer_json)."""

SLACK_MB = 3.0
"""The rest of an export: the title and code around the numbers, one row's Python floats."""

NAMES = {"json": "\u201cState as JSON\u201d", "numpy": "\u201cNumPy code\u201d",
         "csv": "\u201cLogits as CSV\u201d", "npz": "\u201cState as .npz\u201d",
         "training": "\u201cDownload the run as NumPy code\u201d"}
"""Each export format as the page's button names it."""


def _matrix_chars(arr, recipe, spelled):
    """Characters of one matrix in an export: its numbers when ``spelled``, else its recipe's
    edits."""
    if spelled:
        rows = arr.size // arr.shape[-1] if arr.ndim and arr.shape[-1] else 1
        return arr.size * CHARS_PER_NUMBER + rows * CHARS_PER_ROW
    return len(recipe.edits) * CHARS_PER_EDIT if recipe is not None else 0


def _json_spelled(arr, recipe):
    """Whether "State as JSON" writes the matrix in numbers (state_json.matrix_to_json)."""
    if recipe is not None and recipe.preset == "tiny-vit":
        return False
    return arr.size <= COMPACT_MIN or (recipe is None and np.count_nonzero(arr) * 4 > arr.size)


def text_chars(state, fmt, run=None):
    """The most characters the export ``fmt`` of ``state`` can take (for "training", of
    ``run``), from the element counts: no number is formatted.

    Examples
    --------
    >>> from pycore.explorer.state.explorer_state import ExplorerState
    >>> s = ExplorerState(np.ones((3, 2)), cls=np.ones((1, 3)))
    >>> text_chars(s, "csv") == 1 * 2 * CHARS_PER_NUMBER + CHARS_PER_ROW
    True
    """
    if fmt == "csv":
        return state.B * state.C * CHARS_PER_NUMBER + state.B * CHARS_PER_ROW
    if fmt == "npz":
        numbers = state.W_head.size + state.inputs.size + state.B
        for role in ("ln_gamma", "ln_beta", "b_head"):
            if (state.model or {}).get(role) is not None:
                numbers += np.size(state.model[role])
        return int(8 * numbers * 4 / 3)   # base64 of the float64 bytes
    chars = 0
    if fmt == "training":
        if run is None:
            return 0
        chars += _matrix_chars(run.h_cls, None, True) + len(run.labels) * 6
        if run.W0.any():
            recipe = code_recipe(run.W0, run.W0_recipe)
            chars += _matrix_chars(run.W0, recipe, recipe is None)
        return chars
    for key in ("W_head", state.input_key):
        arr, recipe = state.matrix(key), state.generated.get(key)
        if fmt == "json":
            chars += _matrix_chars(arr, recipe, _json_spelled(arr, recipe))
        else:
            literal = code_recipe(arr, recipe)
            chars += _matrix_chars(arr, literal, literal is None)
    return chars


def _held(state, run):
    """What the session holds while it exports, in MB: the state, and the run's heads."""
    inputs, (B, D), C = state.inputs.size, state.h_cls.shape, state.C
    if run is None:   # and the last training answer's dW_head, which a reset run leaves
        return held_mb(inputs, B, D, C, "sgd", 0) + 8.0 * D * C / 1e6
    heads = sum(1 for c in run.curves() if c.trainer is not None)
    return held_mb(inputs, B, D, C, run.train["optimizer"], heads)


def need_mb(state, fmt, run=None, export_run=None):
    """The estimated peak of Python memory, in MB, of the export ``fmt``: what the session
    holds (``run``: the training run it keeps, if any) and :data:`TEXT_COPIES` times the
    text's :func:`text_chars` (``export_run``: the run the "training" format writes)."""
    return (_held(state, run) + TEXT_COPIES * text_chars(state, fmt, export_run) / 1e6
            + SLACK_MB)


def check(state, fmt, run=None, export_run=None):
    """Refuse the export ``fmt`` when :func:`need_mb` passes the budget, saying what to do
    instead: "State as .npz" (every value bit for bit) if it fits, and Reset in "Fine-tune
    the head" when the run's memory is in the way. Nothing is changed either way.

    Raises
    ------
    StateError
    """
    need = need_mb(state, fmt, run, export_run)
    budget = training_memory.MEMORY_MB   # read here: a test may set it
    if need <= budget:
        return
    fixes = []
    if fmt != "npz" and need_mb(state, "npz", run) <= budget:
        fixes.append("%s keeps every value bit for bit" % NAMES["npz"])
    if run is not None and need_mb(state, fmt, None, export_run) <= budget:
        fixes.append("Reset in \u201cFine-tune the head\u201d lets go of the training run's "
                     "%d MB, after which %s fits" % (round(_held(state, run) - _held(state, None)),
                                                     NAMES[fmt]))
    if not fixes:
        fixes.append("make the state smaller (fewer samples, tokens or classes)")
    what = "%s writes %s" % (NAMES[fmt], "the state's %s numbers in base64" % format(
        state.W_head.size + state.inputs.size, ",") if fmt == "npz" else "up to %.0f MB of text"
        % (text_chars(state, fmt, export_run) / 1e6))
    raise StateError("%s: beside %s it would need about %d MB of Python memory, over the %d MB "
                     "the page may use. Nothing was exported; %s." % (
                         what, "the training run" if run is not None else "the state",
                         round(need), budget, "; or ".join(fixes)))
