"""Two readings of the logits the page shows beside the heatmaps: where one logit comes from
(its D terms, largest magnitude first) and, for heads with many classes, each sample's top k
classes.

The numbers come from :mod:`pycore.vit.readout`; this module only decides what is shown and
formats it, so the page's JavaScript places it as it is.
"""
import numpy as np

from ...vit.readout import contributions, top_k
from ..state.cells import format_number
from ..state.explorer_state import whole_number

TERMS_NAMED = 10
"""The contribution chart names this many features; the rest are summed into one bar."""
# The top-k table (docs/glossary.md, "Top-k"): TOP_K_*.
TOP_K_FROM = 21
"""From this many classes on, the logits panel leads with the top-k table (the heatmap of a
1000-class head is a barcode)."""
TOP_K_DEFAULT = 5
TOP_K_MAX = 20
"""The top-k table's k when the page opens, and the largest k the reader may choose."""

# The logits table's top classes: LOGITS_TABLE_*. (The digit panel's top 3: digits.mode.DIGIT_TOP.)
LOGITS_TABLE_CLASSES_MAX = 24
"""Past this many classes a full row of logits is unreadable, on screen and read aloud alike:
the logits table lists each sample's LOGITS_TABLE_TOP_K largest instead
(pycore/explorer/panels/head.py), and the trace keeps that ranking exact
(pycore/explorer/computed.py)."""
LOGITS_TABLE_TOP_K = 10


def class_label(c, classes=None):
    """How class `c` is named in a sentence: its name when the state has names.

    Examples
    --------
    >>> class_label(3), class_label(3, ["0", "1", "2", "3"])
    ('class 3', 'digit 3')
    """
    if not classes:
        return "class %d" % c
    name = classes[c]
    return "digit " + name if name.isdigit() else name


def check_logit(b, c, B, C):
    """(b, c) as ints if they name a logit of a (B, C) output, else StateError.

    Examples
    --------
    >>> check_logit(1, 2.0, 2, 3)
    (1, 2)
    """
    return (whole_number(b, "b", 0, B - 1, floats=True),
            whole_number(c, "c", 0, C - 1, floats=True))


def contribution_chart(trace, W_head, b, c, classes=None, decimals=4):
    """The contribution chart of logit (b, c): its terms ``h_hat[b, d] * W_head[d, c]`` as bars.

    The TERMS_NAMED terms of largest magnitude are bars of their own, named "d = 17" (ties
    to the lower d); the rest are one bar, their sum. So the bars always add up to the logit.

    Parameters
    ----------
    trace : pycore.vit.trace.HeadTrace
    W_head : numpy.ndarray
        (D, C)
    b, c : int
        The logit, already checked (:func:`check_logit`).
    classes : list of str, optional
        The classes' names, when the state has them.

    Returns
    -------
    dict
        ``{b, c, title, logit, logit_text, total_text, bars: [{label, d, value, text, factors}],
        note}``; ``factors`` "h_hat[b, d] × W_head[d, c]" as printed (the rest: "their sum");
        ``d`` is None for the bar of the rest; ``value`` is None (``text`` "beyond float64")
        for a bar whose term or sum lies beyond float64 although the logit does not.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> from pycore.vit.trace import trace_head
    >>> s = default_state()
    >>> chart = contribution_chart(trace_head(s.W_head, cls=s.cls), s.W_head, 0, 2)
    >>> chart["logit_text"], [bar["label"] for bar in chart["bars"]]
    ('1.5811', ['d = 3', 'd = 1', 'd = 2', 'd = 0'])
    """
    x = trace.y  # what W_head multiplies: h_hat, or a real head's gamma * h_hat + beta
    name = "h_hat" if trace.real is None else "y"
    with np.errstate(over="ignore", invalid="ignore"):
        terms = contributions(x, W_head, b, c)
        D = terms.shape[0]
        order = np.argsort(-np.abs(terms), kind="stable")
        named = order[:TERMS_NAMED] if D > TERMS_NAMED + 1 else order
        rest = order[len(named):]
        unit = 1.0
        # A finite logit can have terms or partial sums beyond float64 (weights near +-1e308,
        # which the product's other terms cancel, or a fused multiply-add keeps finite). Then
        # the terms are taken scaled down by 2**-SCALE_BITS, where they and their sums are
        # finite, and each value is scaled back once: to a float, or to None (JSON has no
        # infinity) when it lies beyond float64.
        if not (np.isfinite(terms).all() and np.isfinite(np.sum(terms))
                and np.isfinite(np.sum(terms[rest]))):
            unit = 2.0 ** SCALE_BITS
            terms = contributions(x, np.asarray(W_head) / unit, b, c)
    bars = [_bar("d = %d" % d, int(d), terms[d], unit, decimals) for d in named]
    # each named term's two factors, the link to the dot product's equation
    for bar in bars:
        bar["factors"] = "%s \u00d7 %s" % (format_number(x[b, bar["d"]], decimals),
                                           format_number(W_head[bar["d"], c], decimals))
    if rest.size:
        bars.append(_bar("the other %d" % rest.size, None, np.sum(terms[rest]), unit, decimals))
        bars[-1]["factors"] = "their sum"
    bias = None if trace.real is None else trace.real.b_head
    if bias is not None:  # a real head's bias: a bar of its own, so that the bars sum to the logit
        bars.append(_bar("bias b[%d]" % c, None, float(bias[c]) / unit, unit, decimals))
        bars[-1]["factors"] = "the model's bias"
    logit = float(trace.logits[b, c])
    title = "logit[%d, %d] = %s (sample %d, %s): its %d terms %s[%d, d] \u00b7 W_head[d, %d]%s" % (
        b, c, format_number(logit, decimals), b, class_label(c, classes), D, name, b, c,
        "" if bias is None else " and the bias b[%d]" % c)
    note = ("Each bar: %s[%d, d] \u00d7 W_head[d, %d] = the term. The %d terms of largest "
            "magnitude, largest magnitude first, then the other %d summed. Their sum is the logit."
            % (name, b, c, len(named), rest.size) if rest.size else
            "Each bar: %s[%d, d] \u00d7 W_head[d, %d] = the term; every term, largest magnitude "
            "first. Their sum is the logit." % (name, b, c))
    if bias is not None:
        note = note.replace("Their sum is the logit.", "With the model's bias b[%d], their sum "
                            "is the logit." % c)
    if any(bar["value"] is None for bar in bars):
        note += (" A bar \u201cbeyond float64\u201d is larger than about 1.8e308 in size: "
                 "the other terms cancel it, so the logit is not.")
    total = _bar("", None, np.sum(terms) + (0.0 if bias is None else float(bias[c]) / unit), unit,
                 decimals)
    return {"b": int(b), "c": int(c), "title": title, "logit": logit,
            "logit_text": format_number(logit, decimals),
            "total_text": total["text"], "bars": bars, "note": note}


SCALE_BITS = 16
"""How far the chart scales terms down when they or their sums overflow: D <= 1024 = 2**10
(state.LIMITS) terms of at most sqrt(D) * 1.8e308 each (|h_hat| <= sqrt(D)) then sum to less
than float64's maximum."""


def _bar(label, d, x, unit, decimals):
    """One bar: ``x * unit`` as its value, or None past float64, its text then "beyond float64"
    with the sign ("-beyond float64" below -1.8e308), which the page draws as a full bar."""
    value = float(x) * unit
    if value - value != 0:  # an infinity
        return {"label": label, "d": d, "value": None,
                "text": ("-" if value < 0 else "") + "beyond float64"}
    return {"label": label, "d": d, "value": value, "text": format_number(value, decimals)}


def check_k(k):
    """The top-k table's k, a whole number 1..TOP_K_MAX, else StateError.

    Examples
    --------
    >>> check_k(5), check_k(7.0)
    (5, 7)
    """
    return whole_number(k, "k", 1, TOP_K_MAX, floats=True)


def top_k_table(trace, k, classes=None, decimals=4):
    """The k largest logits of each sample, as a table (None below TOP_K_FROM classes).

    Ranked by :func:`pycore.vit.readout.top_k`: ties to the lower class index, so rank 1 is
    argmax's prediction.

    Returns
    -------
    dict or None
        ``{k, caption, header, rows: [{label, cells, classes, mark}]}``: one row per sample,
        cells "name: logit", ``classes`` their indices, rank 1 marked.

    Examples
    --------
    >>> from pycore.vit.trace import trace_head
    >>> t = trace_head(np.eye(2, 30), cls=np.array([[1.0, -1.0]]))
    >>> table = top_k_table(t, 2)
    >>> table["rows"][0]["cells"], table["rows"][0]["classes"]
    (['class 0: 1.0000', 'class 2: 0.0000'], [0, 2])
    """
    B, C = trace.logits.shape
    if C < TOP_K_FROM:
        return None
    ranked = top_k(trace.logits, k)
    rows = []
    for b in range(B):
        rows.append({"label": "sample %d" % b,
                     "cells": ["%s: %s" % (class_label(int(c), classes),
                                           format_number(trace.logits[b, c], decimals))
                               for c in ranked[b]],
                     "classes": [int(c) for c in ranked[b]], "mark": 0})
    return {"k": int(ranked.shape[1]),
            "caption": "The %d largest logits of each sample, of C = %d classes (rank 1 is the "
                       "prediction; ties go to the lower class index, as in argmax)"
                       % (ranked.shape[1], C),
            "header": [""] + ["#%d" % (r + 1) for r in range(ranked.shape[1])], "rows": rows}

