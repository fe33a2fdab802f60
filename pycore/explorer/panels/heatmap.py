"""The spec of one heatmap, as the page draws it: its matrix's name, title, axes, colour range
and key, hover text and marks (docs/protocol.md: heatmaps). The colour range itself is
pycore/explorer/panels/colour_range.py's.
"""
import numpy as np

from ..state.cells import format_number
from .colour_range import colour_limit

# Cells get their value printed inside them only while that stays readable.
TEXT_IN_CELLS_MAX = 12


def heatmap(matrix, values, title, x_title, y_title, hover, diverging=True, marks=None,
            limit=None, x_labels=None):
    """Spec of one heatmap; `matrix` names the array the page fetches from the bridge.
    ``x_labels`` "classes": the hover's ``%{customdata}`` is the column's class name (the
    answer's ``labels``); a list of class indices: column j shows class ``x_labels[j]`` (its
    tick, hover and name).

    A diverging scale is symmetric about zero, so zero is always the neutral colour and the
    same colour means the same magnitude on both sides. ``limit``: the (half-width, saturates)
    of :func:`colour_limit` to use instead of this matrix's own (heatmaps read side by side
    share one scale).

    Examples
    --------
    >>> spec = heatmap("logits", np.array([[1.0, -3.0]]), "Logits", "class", "sample", "%{z}")
    >>> spec["zmin"], spec["zmax"], spec["text"], spec["key"]
    (-3.0, 3.0, True, ['-3.000', '0', '3.000'])
    """
    values = np.asarray(values)
    rows, cols = values.shape
    title_note = ""
    if diverging:
        top, saturates = limit if limit is not None else colour_limit(values)
        zmin, zmax = -top, top
        beyond = "≤ " if saturates else "", "≥ " if saturates else ""
        key = [beyond[0] + format_number(-top, 3), "0", beyond[1] + format_number(top, 3)]
        if saturates:
            title_note = "  (colours saturate beyond ±%s)" % format_number(top, 3)
    else:
        zmin, zmax = 0.0, 1.0
        key = ["0", "0.5", "1"]
    return {
        "matrix": matrix,
        "title": title + title_note,
        "x_title": x_title,
        "y_title": y_title,
        "zmin": zmin,
        "zmax": zmax,
        "scale": "diverging" if diverging else "sequential",
        # the colour key's labels: the colours at zmin, at the middle and at zmax
        "key": key,
        "text": rows <= TEXT_IN_CELLS_MAX and cols <= TEXT_IN_CELLS_MAX,
        "text_format": "%{z:.2f}" if diverging else "%{z:.3f}",
        "hover": hover,
        "marks": [[int(r), int(c)] for r, c in (marks or [])],
        "x_labels": x_labels,
    }


# Where a hover shows the cell's value: the page writes it in its short form
# (web/js/heatmap/hover.js, web/js/page/numbers.js); the exact value is in the focused cell and
# the exports.
VALUE = "%{z}"


# A heatmap said ahead (the answer's "ahead": a figure the page makes before a choice shows it)
# is described by its shape alone: zeros that no array holds, and a placeholder colour range
# (the page recolours the figure when it is shown).
AHEAD_LIMIT = (1.0, False)


def shape_only(rows, cols):
    """Zeros of shape (rows, cols), one number broadcast (read-only, no memory per cell): the
    values of a heatmap said ahead, made with ``limit=AHEAD_LIMIT``.

    >>> shape_only(768, 1000).strides
    (0, 0)
    """
    return np.broadcast_to(0.0, (rows, cols))
