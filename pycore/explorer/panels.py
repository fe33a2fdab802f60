"""What each panel of the explorer shows, decided without a browser.

Every function here turns a state and its trace into plain dicts of strings and numbers that
the page places as they are: heatmap specs (title, axes, colour range, marks), tables of
formatted numbers, and the step-by-step equations as TeX. Keeping this out of the page means
it is tested in CPython, and the page's JavaScript stays a thin binding.
"""
import math

import numpy as np

from . import comparisons
from .cells import format_number
from .readouts import TABLE_CLASSES_MAX, TABLE_TOP_K, TOP_K_DEFAULT, class_label, top_k_table
from .class_names import class_names
from .shared import HEATMAP_IDS

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


def input_heatmaps(state, trace):
    """The CLS vectors (B, D) and, in encoder mode, the whole encoder output stacked by sample."""
    out = {
        HEATMAP_IDS["cls"]: heatmap(
            "h_cls", trace.h_cls, "h_cls = z_L[:, 0, :]  (B × D)", "feature d", "sample b",
            "sample %{y}, d = %{x}<br>h_cls = " + EXACT),
    }
    if state.mode == "encoder":
        B, N1, D = state.encoder_output.shape
        out[HEATMAP_IDS["encoder"]] = heatmap(
            "input", state.encoder_output.reshape(B * N1, D),
            "Encoder output z_L, samples stacked (rows b·(N+1) + t; t = 0 is CLS)",
            "feature d", "row b·(N+1) + t", "row %{y}, d = %{x}<br>z = " + EXACT)
    return out


def normalized_heatmap(trace):
    return {HEATMAP_IDS["normalized"]: heatmap(
        "h_hat", trace.h_hat, "h_hat = LayerNorm(h_cls)  (B × D)", "feature d", "sample b",
        "sample %{y}, d = %{x}<br>h_hat = " + EXACT)}


def w_heatmap(state):
    return {HEATMAP_IDS["w"]: heatmap(
        "W_head", state.W_head, "W_head  (D × C)", "class c", "feature d",
        "d = %{y}, class %{x}<br>W = " + EXACT)}


def logits_heatmaps(trace, x_title="class c", named=False):
    """The logits and their display-only softmax; ``x_title`` names the classes' axis
    ("class c = digit" in the real-ViT mode, where class c is the digit c); ``named``: the
    hover names each class (the answer's labels, e.g. ImageNet-1k's) rather than its index."""
    marks = [(b, c) for b, c in enumerate(trace.predicted)]
    cls = "%{customdata}" if named else "class %{x}"
    x_labels = "classes" if named else None
    return {
        HEATMAP_IDS["logits"]: heatmap(
            "logits", trace.logits, "logits = h_hat @ W_head  (B × C)",
            x_title, "sample b", "sample %{y}, " + cls + "<br>logit = " + EXACT, marks=marks,
            x_labels=x_labels),
        HEATMAP_IDS["probs"]: heatmap(
            "probs", trace.display_softmax, "softmax(logits), for display only", "class c",
            "sample b", "sample %{y}, " + cls + "<br>p = %{z:.6f}", diverging=False, marks=marks,
            x_labels=x_labels),
    }


def stats_table(trace, decimals=4):
    """Per-sample mean, variance and standard deviation used by LayerNorm."""
    rows = []
    for b in range(trace.h_cls.shape[0]):
        rows.append({
            "label": "sample %d" % b,
            "cells": [format_number(trace.mean[b], decimals), format_number(trace.var[b], decimals),
                      format_number(trace.std[b], decimals)],
            "mark": None,
        })
    return {"caption": "Per-sample statistics (population variance, ε = 1e-6)",
            "header": ["", "mean μ", "variance σ²", "√(σ² + ε)"], "rows": rows}


def logits_table(trace, decimals=4, classes=None):
    """The logits as numbers, with each sample's predicted class marked.

    With more than TABLE_CLASSES_MAX classes the table lists each sample's TABLE_TOP_K largest
    logits instead (the CSV export has them all). ``classes``: the classes' names, when the
    state has them (:func:`labels`); else they are numbered.
    """
    B, C = trace.logits.shape
    rows = []
    if C <= TABLE_CLASSES_MAX:
        for b in range(B):
            rows.append({"label": "sample %d" % b,
                         "cells": [format_number(v, decimals) for v in trace.logits[b]],
                         "mark": int(trace.predicted[b])})
        return {"caption": "Logits (rows: samples; columns: classes; predicted class marked)",
                "header": [""] + (list(classes) if classes else
                                  ["class %d" % c for c in range(C)]), "rows": rows}
    for b in range(B):
        order = np.argsort(-trace.logits[b], kind="stable")[:TABLE_TOP_K]
        rows.append({"label": "sample %d" % b,
                     "cells": ["class %d: %s" % (c, format_number(trace.logits[b, c], decimals))
                               for c in order],
                     "mark": 0})
    return {"caption": "The %d largest logits of each sample, of C = %d (the CSV export has "
                       "them all); the first is the predicted class" % (TABLE_TOP_K, C),
            "header": [""] + ["#%d" % (k + 1) for k in range(min(TABLE_TOP_K, C))], "rows": rows}


def prediction(trace, decimals=4, classes=None):
    """What the head predicts, in words: for the page (next to the logits) and for screen
    readers (a live region, read after each edit). Ties, and the rows LayerNorm flattens, are
    said as such.

    Returns
    -------
    dict
        ``{"text": one sentence, "notes": [sentences on ties and special rows]}``; classes are
        named ``classes[c]`` when the state names them (e.g. "digit 7").

    Examples
    --------
    >>> from pycore.explorer.presets import default_state
    >>> from pycore.vit.trace import trace_head
    >>> s = default_state()
    >>> prediction(trace_head(s.W_head, cls=s.cls))["text"]
    'Sample 0 predicts class 2 (logit 1.5811); sample 1 predicts class 0 (logit 0.2000).'
    """
    logits, B, C = trace.logits, trace.logits.shape[0], trace.logits.shape[1]
    D = trace.h_cls.shape[1]
    if C == 0:
        return {"text": "", "notes": []}
    predicted = [int(c) for c in trace.predicted]
    name = (lambda c: classes[c]) if classes else (lambda c: "class %d" % c)
    if B <= 6:
        text = "; ".join("%s %d predicts %s (logit %s)" % (
            "Sample" if b == 0 else "sample", b, name(predicted[b]), format_number(logits[b, predicted[b]], decimals))
            for b in range(B)) + "."
    else:
        counts = {}
        for c in predicted:
            counts[c] = counts.get(c, 0) + 1
        common = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:3]
        text = "The %d samples' predictions: %s%s." % (B, ", ".join(
            "%s (%d sample%s)" % (name(c), n, "" if n == 1 else "s") for c, n in common),
            ", and others" if len(counts) > 3 else "")
    notes = []
    if D == 1:
        notes.append("With D = 1 every row is constant: LayerNorm makes its one feature 0, so every "
                     "logit is 0 and all classes tie.")
    elif D == 2:
        notes.append("With D = 2, LayerNorm maps every row to (-1, 1) or (1, -1), up to ε: only which "
                     "of the two features is larger survives.")
    for b in range(B):
        if D > 1 and trace.var[b] == 0.0:
            notes.append("Sample %d's features are all equal: LayerNorm makes them all 0, so every "
                         "logit is 0." % b)
        tied = np.flatnonzero(logits[b] == logits[b, predicted[b]]).tolist()  # ascending
        if len(tied) > 1:
            shown_tied = ", ".join(str(c) for c in tied[:5]) + (" and %d more" % (len(tied) - 5)
                                                             if len(tied) > 5 else "")
            notes.append("Sample %d: classes %s tie at %s; argmax takes the first of equal "
                         "maxima, class %d (NumPy's rule: the lowest index wins)." % (
                             b, shown_tied, format_number(logits[b, predicted[b]], decimals),
                             tied[0]))
        if len(notes) >= 6:
            notes.append("(and more)")
            break
    return {"text": text, "notes": notes}


def top_classes(trace, k=3, decimals=3, classes=None):
    """One line per sample: the k most probable classes under the display-only softmax
    (named ``classes[c]`` when the state names them, e.g. "digit 7")."""
    lines = []
    for b, p in enumerate(trace.display_softmax):
        order = np.argsort(-p, kind="stable")[:k]
        lines.append("sample %d: " % b + ", ".join(
            "%s (%s)" % (class_label(int(c), classes), format_number(p[c], decimals))
            for c in order))
    return "; ".join(lines)


def _shown(n, head, tail):
    """Indices shown of a length-n sequence abbreviated to head ... tail (None marks the gap)."""
    if n <= head + tail + 1:
        return list(range(n))
    return list(range(head)) + [None] + list(range(n - tail, n))


def _vector_tex(v, decimals=4, head=3, tail=2):
    """A vector as TeX, abbreviated with an ellipsis when it is long (only shown items formatted)."""
    items = [r"\ldots" if d is None else format_number(v[d], decimals) for d in _shown(len(v), head, tail)]
    return r"\left[" + r",\ ".join(items) + r"\right]"


def _product(a, b, decimals):
    return "(%s)(%s)" % (format_number(a, decimals), format_number(b, decimals))


def steps(state, trace, sample, cls, decimals=4):
    """The three steps of the head for one sample, with its live numbers, as TeX.

    The last step writes one logit out as a sum of products, like the worked example; with
    many features the middle of the sum is abbreviated.
    """
    B, C = trace.logits.shape
    D = trace.h_cls.shape[1]
    b = min(max(int(sample), 0), B - 1)
    c = min(max(int(cls), 0), C - 1)
    fmt = lambda x: format_number(x, decimals)  # noqa: E731
    source = "z_L[%d, 0, :]" % b if state.mode == "encoder" else r"\text{cls}[%d]" % b
    h, h_hat, w = trace.h_cls[b], trace.h_hat[b], state.W_head[:, c]
    terms = [r"\cdots" if d is None else _product(h_hat[d], w[d], decimals)
             for d in _shown(D, 3, 2)]
    items = [
        {"title": "1. Take the CLS token (position 0)",
         "tex": r"h_{\mathrm{cls}} = %s = %s" % (source, _vector_tex(h, decimals)),
         "note": "Position 0, never the last token and never a mean over tokens."},
        {"title": "2. LayerNorm over the D = %d features" % D,
         "tex": (r"\mu = %s,\quad \sigma^2 = %s,\quad \hat h = \frac{h - \mu}{\sqrt{\sigma^2 + 10^{-6}}} = %s"
                 % (fmt(trace.mean[b]), fmt(trace.var[b]), _vector_tex(h_hat, decimals))),
         "note": "Population variance (divide by D), no learnable γ or β."},
        {"title": "3. One logit: class %d" % c,
         "tex": (r"\mathrm{logit}_{%d,%d} = \sum_{d} \hat h_d\, W_{d,%d} = %s = %s"
                 % (b, c, c, " + ".join(terms), fmt(trace.logits[b, c]))),
         "note": "No bias, no softmax, no activation."},
        {"title": "4. Prediction",
         "tex": r"\arg\max_c\ \mathrm{logit}_{%d,c} = %d" % (b, int(trace.predicted[b])),
         "note": None},
    ]
    return {"sample": b, "class": c, "items": items}


def labels(state):
    """The names of the samples and the classes (sent to the page when they change).

    A state may name its classes: the tiny ViT's W_head (the real-ViT mode) has the digits
    "0".."9" (pycore/explorer/digits.py); any other is numbered.

    Examples
    --------
    >>> from pycore.explorer.presets import default_state
    >>> labels(default_state())["classes"]
    ['class 0', 'class 1', 'class 2']
    """
    return {"samples": ["sample %d" % i for i in range(state.B)],
            "classes": class_names(state) or ["class %d" % i for i in range(state.C)]}


def comparison_ids(kind):
    """The heatmaps of one comparison panel ("pitfall" or "variant")."""
    ids = ["heatmap-%s-correct" % kind, "heatmap-%s" % kind]
    return ids + ["heatmap-pitfall-diff"] if kind == "pitfall" else ids


class _Outputs(object):
    """An output matrix where top_k_table expects a trace (it reads ``.logits`` only)."""

    def __init__(self, logits):
        self.logits = logits


def comparison(state, trace, kind, key, k=TOP_K_DEFAULT):
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
    ids = comparison_ids(kind)
    arrays = {kind: output}
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
    specs = {
        ids[0]: heatmap("logits", trace.logits, "Correct head: logits", "class c", "sample b",
                        "sample %{y}, class %{x}<br>logit = " + EXACT, limit=limit,
                        marks=list(enumerate(trace.predicted))),
        ids[1]: heatmap(kind, output, item.title, "class c", "sample b",
                        "sample %{y}, class %{x}<br>output = " + EXACT, limit=limit,
                        marks=marks if changes else None),
    }
    if kind == "pitfall" and output.shape == trace.logits.shape:
        with np.errstate(all="ignore"):
            arrays["pitfall_diff"] = np.ascontiguousarray(output - trace.logits)
        specs[ids[2]] = heatmap("pitfall_diff", arrays["pitfall_diff"],
                                "Difference: mistaken − correct", "class c", "sample b",
                                "sample %{y}, class %{x}<br>difference = " + EXACT)
    return section, (arrays, specs)
