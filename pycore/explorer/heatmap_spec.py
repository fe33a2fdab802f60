"""The spec of one heatmap, as the page draws it: its matrix's name, title, axes, colour range
and key, hover text and marks (docs/protocol.md: heatmaps). The colour range of a large matrix
comes from a high percentile, so one edited outlier does not wash the rest out.
"""
import math

import numpy as np

from .cells import format_number

# Cells get their value printed inside them only while that stays readable.
TEXT_IN_CELLS_MAX = 12


def heatmap(matrix, values, title, x_title, y_title, hover, diverging=True, marks=None,
            limit=None, x_labels=None):
    """Spec of one heatmap; `matrix` names the array the page fetches from the bridge.
    ``x_labels`` "classes": the hover's ``%{customdata}`` is the column's class name (the
    answer's ``labels``).

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


# Large matrices (a ViT-B/16 W_head) take their colour range from a high percentile, so one
# edited outlier does not wash every other cell out to white; hover still shows exact values.
ROBUST_RANGE_FROM = 4096
ROBUST_PERCENTILE = 99.9
ROBUST_SAMPLE = 50000


def colour_limit(values):
    """Half-width of the symmetric colour range, and whether some values lie beyond it.

    The range is max |x|, or for large matrices a high percentile of |x|, taken on an evenly
    strided sample of at most ~50,000 values, which keeps a 768 x 1000 matrix cheap to redraw
    after every edit. |x| is taken of the sample only: max |x| is max(max x, -min x).

    Parameters
    ----------
    values : numpy.ndarray
        Real numbers, any shape.

    Returns
    -------
    (float, bool)
        The limit (1.0 for an all-zero matrix) and whether max |x| exceeds it.

    Examples
    --------
    >>> colour_limit(np.array([[0.5, -2.0]]))
    (2.0, False)
    >>> colour_limit(np.zeros((2, 2)))
    (1.0, False)
    >>> colour_limit(np.array([1.0, np.inf]))      # non-finite values saturate the scale
    (1.0, True)
    """
    values = np.asarray(values)
    # float() first: negating an integer minimum could overflow, a float cannot. A NaN
    # anywhere makes both ends NaN, so peak is NaN exactly when max(|x|) was.
    peak = max(float(values.max()), -float(values.min())) if values.size else 0.0
    if not np.isfinite(peak):  # a mistaken head that overflows: scale by the finite values
        finite = values[np.isfinite(values)]
        top, _ = colour_limit(finite) if finite.size else (1.0, False)
        return top, True
    top = peak
    if values.size > ROBUST_RANGE_FROM:
        step = max(1, values.size // ROBUST_SAMPLE)
        top = _percentile(np.abs(values.ravel()[::step]), ROBUST_PERCENTILE)
    top = top if top > 0 else 1.0
    return top, peak > top


# np.percentile's default "linear" method, to the last bit; NumPy 1.20 (gh-16273) changed how
# it interpolates, and the page runs on NumPy 1.17 (Pyodide 0.17) and 2.x (Pyodide 314).
_LERP_BOTH_ENDS = tuple(int(p) for p in np.__version__.split(".")[:2]) >= (1, 20)


def _percentile(sample, percent):
    """``float(np.percentile(sample, percent))``, bit for bit, without its generic machinery.

    At ViT-B/16 size np.percentile's bookkeeping costs about three times the partition itself
    (2 ms vs 0.7 ms in Pyodide 0.17); this helper does only the partition and two products.

    Parameters
    ----------
    sample : numpy.ndarray
        1-D, non-empty, float; partitioned in place (pass a temporary).
    percent : float
        In [0, 100].

    Returns
    -------
    float
        The same number as ``np.percentile(sample, percent)`` (NaN if the sample holds one).

    Examples
    --------
    >>> _percentile(np.array([4.0, 1.0, 3.0, 2.0]), 50.0)
    2.5
    """
    n = sample.size
    index = (percent / 100) * (n - 1)  # what NumPy computes: true_divide(q, 100) * (n - 1)
    below = int(math.floor(index))
    above = min(below + 1, n - 1)
    # n - 1 too: NaN sorts last, and NumPy answers NaN when the largest value is one.
    sample.partition(sorted({below, above, n - 1}))
    if math.isnan(sample[n - 1]):
        return float("nan")
    lo, hi = float(sample[below]), float(sample[above])
    if not _LERP_BOTH_ENDS:  # NumPy < 1.20: x_below * (1 - w) + x_above * w
        weight = index - below
        return lo * (1 - weight) + hi * weight
    if index >= n - 1:  # NumPy >= 1.20 takes the last value twice, "previous index" -1
        lo, gamma = hi, index + 1
    else:
        gamma = index - below
    diff = hi - lo  # and interpolates from the nearer end
    return hi - diff * (1 - gamma) if gamma >= 0.5 else lo + diff * gamma


# Hover shows the exact float64 value (12 significant digits, trailing zeros trimmed).
EXACT = "%{z:.12~g}"
