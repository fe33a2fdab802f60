"""What a comparison panel (a classic mistake, or another head) shows: the correct logits beside
the compared head's output on one colour scale, the difference for a mistake, which predictions
it changes, and from 21 classes on each sample's k largest outputs.
"""
import numpy as np

from ..model.class_names import class_names
from ..panels.colour_range import colour_limit
from ..panels.heatmap import AHEAD_LIMIT, VALUE, heatmap, shape_only
from ..panels.readouts import TOP_K_DEFAULT, top_k_table
from . import registry as comparisons

def comparison_ids(kind):
    """The heatmaps of one comparison panel ("mistake" or "variant")."""
    ids = ["heatmap-%s-correct" % kind, "heatmap-%s" % kind]
    return ids + ["heatmap-mistake-diff"] if kind == "mistake" else ids


class _Outputs(object):
    """An output matrix where top_k_table expects a trace (it reads ``.logits`` only)."""

    def __init__(self, logits):
        self.logits = logits


def comparison(state, trace, kind, key, k=TOP_K_DEFAULT, page=None):
    """What a comparison panel shows: the correct logits beside the output of the comparison
    ``key`` (and, for a mistake, the difference), or why that head cannot run.

    Returns
    -------
    (dict, (dict, dict) or None)
        The panel's section of the answer ({selected, explanation, source, error, note,
        changes, notice, top_k}; with nothing chosen, the explanation says what the panel
        offers; ``top_k``: from 21 classes on, each sample's k largest outputs), and
        the arrays it shows by name with their heatmap specs (None when nothing is drawn).
        An output that overflows float64 is drawn as it is, and the note says so.

    ``page()``, when given, is the trace of the problem's head (the session's, kept edit by
    edit), which a mistake is shown beside while the pipeline shows a model file's own head.
    """
    section = {"selected": key, "explanation": comparisons.offer(kind), "source": "",
               "error": None, "note": None, "changes": None, "notice": None, "top_k": None}
    if key is None:
        return section, None
    item = comparisons.find(key)
    section["explanation"], section["source"] = item.explanation, item.source
    output, section["error"] = comparisons.run(state, key)
    if output is None:
        return section, None
    output = np.ascontiguousarray(output, dtype=np.float64)
    if not np.isfinite(output).all():
        section["note"] = ("Some of its outputs are not finite numbers: on these inputs this head "
                           "overflows float64 (shown as the scale's ends).")
    arrays = {kind: output}
    correct, correct_title = "logits", "Correct head: logits"
    if trace.real is not None:  # the pipeline shows a model file's own head
        if kind == "mistake":  # the mistakes are the problem's head's: beside that head
            trace = page() if page is not None else comparisons.page_trace(state)
            correct, correct_title = "mistake_correct", "The problem's head: logits"
            arrays[correct] = np.ascontiguousarray(trace.logits)
            section["note"] = ((section["note"] + " ") if section["note"] else "") + (
                "Mistakes are made with the problem's head (no \u03b3/\u03b2, no bias), so "
                "they are shown beside it, not beside the model's own head in the pipeline.")
        else:
            correct_title = "The model's own head: logits"
    # One colour scale for both, so that equal colours mean equal values side by side.
    limit = colour_limit(np.concatenate([trace.logits.ravel(), output.ravel()]))
    names = class_names(state)
    changes = output.shape == trace.logits.shape
    if changes:
        section["changes"] = comparisons.prediction_changes(trace.logits, output, classes=names)
    marks = [(b, c) for b, c in enumerate(comparisons.predicted(output)) if c is not None]
    if output.ndim == 2:  # a heatmap of 1000 classes is a barcode: the top k read better
        section["top_k"] = top_k_table(_Outputs(output), k, classes=names)
        if section["top_k"] is not None:
            section["top_k"]["caption"] = ("The %d largest outputs of each sample under %s "
                                           "(rank 1 is its prediction; ties to the lower class)"
                                           % (section["top_k"]["k"], item.title))
    if kind == "mistake" and output.shape == trace.logits.shape:
        with np.errstate(all="ignore"):
            arrays["mistake_diff"] = np.ascontiguousarray(output - trace.logits)
    specs = comparison_heatmaps(kind, item.title, trace.logits, output, arrays.get("mistake_diff"),
                                limit, correct_marks=list(enumerate(trace.predicted)),
                                marks=marks if changes else None)
    first = comparison_ids(kind)[0]
    specs[first].update(matrix=correct, title=correct_title + specs[first]["title"][
        len("Correct head: logits"):])
    return section, (arrays, specs)


def comparison_heatmaps(kind, title, logits, output, diff, limit, diff_limit=None,
                        correct_marks=None, marks=None):
    """The heatmap specs of one comparison panel: the correct ``logits`` and the compared head's
    ``output`` on one colour scale (``limit``, as for :func:`heatmap`), and a mistake's ``diff``
    (output - logits, on its own scale or ``diff_limit``; None: not drawn); ``title``: the
    compared head's."""
    ids = comparison_ids(kind)
    specs = {
        ids[0]: heatmap("logits", logits, "Correct head: logits", "class c", "sample b",
                        "sample %{y}, class %{x}<br>logit = " + VALUE, limit=limit,
                        marks=correct_marks),
        ids[1]: heatmap(kind, output, title, "class c", "sample b",
                        "sample %{y}, class %{x}<br>output = " + VALUE, limit=limit, marks=marks),
    }
    if diff is not None:
        specs[ids[2]] = heatmap("mistake_diff", diff, "Difference: mistaken − correct", "class c",
                                "sample b", "sample %{y}, class %{x}<br>difference = " + VALUE,
                                limit=diff_limit)
    return specs


def comparisons_ahead(state):
    """The figures of each comparison panel with nothing chosen, as a choice would show them at
    this state's shape (B, C), for the page to make ahead (web/js/heatmap/draw.js, prepareFigure):
    {id: {spec, rows, cols}}. The compared head's title is its menu's first (a later choice's
    title is changed in place); the colour ranges are placeholders.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> ahead = comparisons_ahead(default_state())
    >>> sorted(ahead)[:2], ahead["heatmap-mistake"]["spec"]["title"]
    (['heatmap-mistake', 'heatmap-mistake-correct'], 'Position -1 instead of 0')
    """
    B, C = state.B, state.C
    zeros = shape_only(B, C)
    out = {}
    for kind in ("mistake", "variant"):
        if state.options.get(kind) is not None:
            continue
        first = comparisons.choices(kind, state)[0][1]
        specs = comparison_heatmaps(kind, first, zeros, zeros, zeros if kind == "mistake" else None,
                                    AHEAD_LIMIT, diff_limit=AHEAD_LIMIT)
        out.update({i: {"spec": spec, "rows": B, "cols": C} for i, spec in specs.items()})
    return out
