"""The colour range of a heatmap: symmetric about zero, to max |x|, or for a large matrix to a
high percentile of |x|, so that one edited outlier does not wash the rest out (its colours
saturate, and the heatmap's title says so). :class:`RunningColourLimit` keeps the range of a
matrix that changes one cell at a time (a scrubbed W_head), as the trace is kept
(pycore/explorer/computed.py).
"""
import math

import numpy as np


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


class RunningColourLimit(object):
    """:func:`colour_limit` of an array that changes one cell at a time, in place.

    A ViT-B/16 W_head has 768,000 values: finding max |x| and the sample's percentile again
    after every scrubbed cell is most of Python's answer. This keeps the peak, where it is and
    the sample's percentile, and after a cell changes redoes only what that cell can move: the
    peak when the cell held it (or passes it), the percentile when the cell is in the sample
    (one cell in ``step``). :attr:`limit` is always ``colour_limit(values)``, bit for bit.

    Parameters
    ----------
    values : numpy.ndarray
        2-D float64 (a state's W_head); kept, not copied. Cells of an array that is not
        C-contiguous are not followed one by one: each change redoes the whole.

    Examples
    --------
    >>> W = np.array([[0.5, -2.0], [1.0, 0.25]])
    >>> running = RunningColourLimit(W)
    >>> W[0, 1] = 0.75; running.after_cell(1); running.limit
    (1.0, False)
    >>> running.limit == colour_limit(W)
    True
    """

    def __init__(self, values):
        self.values = values
        self._flat = values.reshape(-1) if values.flags.c_contiguous else None  # a view
        self._step = max(1, values.size // ROBUST_SAMPLE)
        self._redo()

    def _redo(self):
        values, flat = self.values, self._flat
        self.limit = colour_limit(values)
        self._peak = None  # max |x| and its flat index, when finite and the array not empty
        if values.size and flat is not None:
            hi, lo = int(flat.argmax()), int(flat.argmin())
            peak, at = (float(flat[hi]), hi) if flat[hi] >= -flat[lo] else (-float(flat[lo]), lo)
            if math.isfinite(peak):
                self._peak = (peak, at)

    def after_cell(self, k):
        """Cell ``k`` (its index in the flattened array) has a new value: update :attr:`limit`."""
        if self._peak is None:
            self._redo()
            return
        x = abs(float(self._flat[k]))
        peak, at = self._peak
        if not math.isfinite(x) or (k == at and x < peak):
            self._redo()  # the peak went down, or a value that colour_limit treats apart
            return
        if x >= peak:
            peak, at = x, k if x > peak else at
            self._peak = (peak, at)
        top = peak
        if self.values.size > ROBUST_RANGE_FROM:
            top = self.limit[0] if k % self._step else _percentile(
                np.abs(self._flat[::self._step]), ROBUST_PERCENTILE)
        top = top if top > 0 else 1.0
        self.limit = (top, peak > top)


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
