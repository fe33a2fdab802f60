"""What the head's panels show, decided without a browser: its heatmaps (the inputs, h_hat,
W_head, the logits and their display-only softmax), the statistics and logits tables, the
prediction in words, each sample's most probable classes, and the names of rows and columns.

Every function here turns a state and its trace into plain dicts of strings and numbers that
the page places as they are. Keeping this out of the page means it is tested in CPython, and
the page's JavaScript stays a thin binding. The other panels: heatmap_spec (one heatmap's
spec), tex (the equations), comparison_panel, readouts (a logit's terms, the top-k table),
walkthrough, digits, finetune; sections.py puts them into answers.
"""
import numpy as np

from ...vit.readout import logit_lens, top_k
from ...vit.trace import trace_head
from ..digits import mode as digits
from ..digits.images import hidden_cls
from ..model.class_names import class_names, class_titles
from ..shared import HEATMAP_IDS
from ..state.cells import format_number
from ..state.editing import DEFAULT_N
from ..state.explorer_state import hidden_cls_of, real_head
from .heatmap import AHEAD_LIMIT, VALUE, heatmap, shape_only
from .readouts import LOGITS_TABLE_CLASSES_MAX, LOGITS_TABLE_TOP_K, class_label


def input_heatmaps(state, trace):
    """The CLS vectors (B, D) and, in encoder mode, the whole encoder output stacked by sample."""
    out = {
        HEATMAP_IDS["cls"]: heatmap(
            "h_cls", trace.h_cls, "h_cls = z_L[:, 0, :]  (B × D)", "feature d", "sample b",
            "sample %{y}, d = %{x}<br>h_cls = " + VALUE),
    }
    if state.mode == "encoder":
        B, tokens, D = state.encoder_output.shape
        out[HEATMAP_IDS["encoder"]] = encoder_heatmap(state.encoder_output.reshape(B * tokens, D))
    return out


def encoder_heatmap(z_rows, limit=None):
    """The encoder output's heatmap: ``z_rows`` is z_L (B, N+1, D) with its samples stacked,
    (B*(N+1), D); ``limit`` as for :func:`heatmap`."""
    return heatmap("input", z_rows,
                   "Encoder output z_L, samples stacked (rows b·(N+1) + t; t = 0 is CLS)",
                   "feature d", "row b·(N+1) + t", "row %{y}, d = %{x}<br>z = " + VALUE,
                   limit=limit)


def figures_shown_later(state):
    """The heatmaps hidden now that a choice would show at a shape known now, for the page to
    make ahead (web/js/heatmap/draw.js, prepareFigure): in the CLS mode, the encoder output that a
    comparison needing the patch tokens switches to (pycore.explorer.state.editing.set_mode, N
    patches by default). Each is {spec, rows, cols}; the spec's colour range is a placeholder
    (a figure made ahead is recoloured when shown).

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> later = figures_shown_later(default_state())
    >>> later["heatmap-encoder"]["rows"], later["heatmap-encoder"]["cols"]
    (10, 4)
    """
    if state.mode == "encoder":
        return {}
    B, D = state.cls.shape
    rows = B * (DEFAULT_N + 1)
    spec = encoder_heatmap(shape_only(rows, D), limit=AHEAD_LIMIT)
    return {HEATMAP_IDS["encoder"]: {"spec": spec, "rows": rows, "cols": D}}


def normalized_heatmap(trace):
    return {HEATMAP_IDS["normalized"]: heatmap(
        "h_hat", trace.h_hat, "h_hat = LayerNorm(h_cls)  (B × D)", "feature d", "sample b",
        "sample %{y}, d = %{x}<br>h_hat = " + VALUE)}


def real_heatmaps(trace):
    """A real ViT's head's own steps, when the pipeline shows one: its LayerNorm's scale and
    shift ``y = gamma * h_hat + beta`` (B, D) and its bias ``b_head`` (1, C); {} otherwise."""
    real = trace.real
    if real is None:
        return {}
    C = trace.logits.shape[1]
    bias = np.zeros((1, C)) if real.b_head is None else real.b_head[None, :]
    return {
        HEATMAP_IDS["y"]: heatmap(
            "y", trace.y, "y = \u03b3 \u2299 h_hat + \u03b2: the model's LayerNorm scale and "
            "shift  (B \u00d7 D)", "feature d", "sample b",
            "sample %{y}, d = %{x}<br>y = " + VALUE),
        HEATMAP_IDS["bias"]: heatmap(
            "b_head", bias, "b_head: the model's bias, added to every sample's logits  "
            "(1 \u00d7 C)" if real.b_head is not None else "b_head: this model has no bias "
            "(zeros)  (1 \u00d7 C)", "class c", "", "class %{x}<br>b = " + VALUE),
    }


def w_heatmap(state, limit=None):
    """``limit``: W_head's colour range when already known (the session keeps it edit by edit,
    pycore/explorer/computed.py), else found here."""
    return {HEATMAP_IDS["W_head"]: heatmap(
        "W_head", state.W_head, "W_head  (D × C)", "class c", "feature d",
        "d = %{y}, class %{x}<br>W = " + VALUE, limit=limit)}


def logits_heatmaps(trace, x_title="class c", named=False):
    """The logits and their display-only softmax; ``x_title`` names the classes' axis
    ("class c = digit" in the real-ViT mode, where class c is the digit c); ``named``: the
    hover names each class (the answer's labels, e.g. ImageNet-1k's) rather than its index."""
    marks = [(b, c) for b, c in enumerate(trace.predicted)]
    cls = "%{customdata}" if named else "class %{x}"
    x_labels = "classes" if named else None
    title = ("logits = h_hat @ W_head  (B × C)" if trace.real is None else
             "logits = y @ W_head + b_head: the model's own head  (B × C)")
    return {
        HEATMAP_IDS["logits"]: heatmap(
            "logits", trace.logits, title,
            x_title, "sample b", "sample %{y}, " + cls + "<br>logit = " + VALUE, marks=marks,
            x_labels=x_labels),
        HEATMAP_IDS["probs"]: heatmap(
            "probs", trace.display_softmax, "softmax(logits), for display only", "class c",
            "sample b", "sample %{y}, " + cls + "<br>p = " + VALUE, diverging=False, marks=marks,
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
    return {"caption": "Per-sample statistics (population variance, ε = %g)" % trace.eps,
            "header": ["", "mean μ", "variance σ²", "√(σ² + ε)"], "rows": rows}


def logits_table(trace, decimals=4, classes=None):
    """The logits as numbers, with each sample's predicted class marked.

    With more than LOGITS_TABLE_CLASSES_MAX classes the table lists each sample's
    LOGITS_TABLE_TOP_K largest logits instead (the CSV export has them all). ``classes``: the
    classes' names, when the state has them (:func:`labels`); else they are numbered.
    """
    B, C = trace.logits.shape
    rows = []
    if C <= LOGITS_TABLE_CLASSES_MAX:
        for b in range(B):
            rows.append({"label": "sample %d" % b,
                         "cells": [format_number(v, decimals) for v in trace.logits[b]],
                         "mark": int(trace.predicted[b])})
        return {"caption": "Logits (rows: samples; columns: classes; predicted class marked)",
                "header": [""] + (list(classes) if classes else
                                  ["class %d" % c for c in range(C)]), "rows": rows}
    for b, order in enumerate(top_k(trace.logits, LOGITS_TABLE_TOP_K)):
        rows.append({"label": "sample %d" % b,
                     "cells": ["class %d: %s" % (c, format_number(trace.logits[b, c], decimals))
                               for c in order],
                     "mark": 0})
    return {"caption": "The %d largest logits of each sample, of C = %d (the CSV export has "
                       "them all); the first is the predicted class" % (LOGITS_TABLE_TOP_K, C),
            "header": [""] + ["#%d" % (k + 1) for k in range(min(LOGITS_TABLE_TOP_K, C))],
            "rows": rows}


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
    >>> from pycore.explorer.state.presets import default_state
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
            "Sample" if b == 0 else "sample", b, name(predicted[b]),
            format_number(logits[b, predicted[b]], decimals))
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
        notes.append("With D = 1 every row is constant: LayerNorm makes its one feature 0, so "
                     "every logit is 0 and all classes tie.")
    elif D == 2:
        notes.append("With D = 2, LayerNorm maps every row to (-1, 1) or (1, -1), up to ε: only "
                     "which of the two features is larger survives.")
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
    for b, order in enumerate(top_k(trace.display_softmax, k)):
        p = trace.display_softmax[b]
        lines.append("sample %d: " % b + ", ".join(
            "%s (%s)" % (class_label(int(c), classes), format_number(p[c], decimals))
            for c in order))
    return "; ".join(lines)


SOFTMAX_BARS = 10
"""The most classes the softmax bars show one by one; the others are summed into one bar."""


def softmax_bars(trace, b, decimals=4, classes=None):
    """Sample ``b``'s class probabilities, softmax(logits[b]) (the display-only softmax), as
    bars: the :data:`SOFTMAX_BARS` most probable classes, most probable first (ties to the
    lower class, as argmax), the predicted class marked, and the rest summed into one bar, so
    the bars sum to 1.

    Returns
    -------
    dict
        ``{b, title, bars: [{label, value, text, mark, rest}], note}``.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> from pycore.vit.trace import trace_head
    >>> s = default_state()
    >>> chart = softmax_bars(trace_head(s.W_head, cls=s.cls), 0)
    >>> [(bar["label"], bar["text"], bar["mark"]) for bar in chart["bars"]]
    [('class 2', '0.6452', True), ('class 0', '0.3218', False), ('class 1', '0.0330', False)]
    """
    p = np.asarray(trace.display_softmax[b], dtype=np.float64)
    C = p.size
    predicted = int(trace.predicted[b])
    order = [int(c) for c in np.argsort(-p, kind="stable")]
    bars = [{"label": class_label(c, classes), "value": float(p[c]),
             "text": format_number(p[c], decimals), "mark": c == predicted, "rest": False}
            for c in order[:SOFTMAX_BARS]]
    if C > SOFTMAX_BARS:
        rest = float(p[order[SOFTMAX_BARS:]].sum())
        bars.append({"label": "the other %d" % (C - SOFTMAX_BARS), "value": rest,
                     "text": format_number(rest, decimals), "mark": False, "rest": True})
    return {"b": int(b),
            "title": "Sample %d's probabilities: softmax(logits[%d]), %s most probable" % (
                b, b, class_label(predicted, classes)),
            "bars": bars,
            "note": "For reading the logits only: the head returns the logits; the softmax "
                    "belongs to the loss. The bars sum to 1; the sample is the one the "
                    "equations show."}


def labels(state):
    """The names of the samples and the classes (sent to the page when they change).

    A state may name its classes: the tiny ViT's W_head (the real-ViT mode) has the digits
    "0".."9" (pycore/explorer/digits/mode.py); any other is numbered. ``class_titles``: the whole
    names where some are shown cut short (a model file's long names), else None.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> labels(default_state())["classes"]
    ['class 0', 'class 1', 'class 2']
    """
    return {"samples": ["sample %d" % i for i in range(state.B)],
            "classes": class_names(state) or ["class %d" % i for i in range(state.C)],
            "class_titles": class_titles(state)}


LENS_CLASSES_MAX = 20
"""The head at every depth shows all classes up to this many, else this many of them."""


def lens_columns(rows):
    """The classes the head at every depth shows, for its (L+1, C) logits: None (all of them)
    up to :data:`LENS_CLASSES_MAX` classes; else that many: each depth's first, then the last
    depth's highest, ordered as the last depth ranks them.

    Examples
    --------
    >>> rows = np.zeros((2, 30)); rows[0, 29] = 5.0; rows[1] = np.arange(30) % 25
    >>> lens_columns(rows)[:3], 29 in lens_columns(rows), len(lens_columns(rows))
    ([24, 23, 22], True, 20)
    """
    C = rows.shape[1]
    if C <= LENS_CLASSES_MAX:
        return None
    order = np.argsort(-rows[-1], kind="stable")
    keep = list(dict.fromkeys(int(c) for c in rows.argmax(axis=1)))[:LENS_CLASSES_MAX]
    for c in order:
        if len(keep) == LENS_CLASSES_MAX:
            break
        if int(c) not in keep:
            keep.append(int(c))
    rank = np.empty(C, dtype=np.int64)
    rank[order] = np.arange(C)
    return sorted(keep, key=lambda c: rank[c])


def lens_heatmap(state, trace):
    """The head at every depth for the sample chosen (``options.sample``): the logit lens's
    (L+1, C) array (or its columns of :func:`lens_columns`) and its heatmap spec, for the tiny
    ViT's drawn images and for a model file's ``hidden_cls``; None for any other state.

    Row l < L applies the state's W_head (with its edits) to the CLS row after l blocks (row 0:
    the embedded tokens) of the drawn image, as the head applies it to z_L: LayerNorm without
    gamma/beta, then W_head. Row L is the pipeline's own logits of that sample (an edit of z_L
    shows there and nowhere above: the rows above come from the image).

    Examples
    --------
    >>> from pycore.explorer.digits.images import check_images
    >>> from pycore.explorer.digits.mode import digit_state
    >>> from pycore.explorer.state.presets import default_state
    >>> from pycore.vit.trace import trace_head
    >>> s = digit_state(default_state(), check_images([[[0] * 4 + [16] + [0] * 3] * 8]))
    >>> array, spec = lens_heatmap(s, trace_head(s.W_head, encoder_output=s.encoder_output))
    >>> array.shape, spec["matrix"], int(array[-1].argmax())
    ((4, 10), 'lens', 1)
    """
    texts = digits.drawn(state)
    if texts is None:
        return _model_lens(state, trace)
    b = min(int(state.options.get("sample") or 0), len(texts) - 1)
    rows = logit_lens(hidden_cls(texts)[:-1, b:b + 1, :], state.W_head)[:, 0, :]  # (L, C)
    array = np.ascontiguousarray(np.vstack([rows, trace.logits[b:b + 1]]), dtype=np.float64)
    L = array.shape[0] - 1
    image = "image %d: " % b if len(texts) > 1 else ""
    spec = heatmap("lens", array, "%sthe head at every depth, \u2113 = 0 (embedded) \u2026 %d "
                   "(z_L)" % (image, L), "class c = digit", "depth \u2113",
                   "depth %{y}, digit %{x}<br>logit = " + VALUE,
                   marks=[(l, int(np.argmax(array[l]))) for l in range(L + 1)])
    return array, spec


def _model_lens(state, trace):
    """The head the pipeline shows (the model's own, or the page's) applied to each depth's CLS
    row of a model file's ``hidden_cls``, for the sample chosen; the last row is the pipeline's
    own logits of that sample (an edit of the CLS vectors shows there and nowhere above)."""
    depths = hidden_cls_of(state)
    if depths is None:
        return None
    b = min(int(state.options.get("sample") or 0), state.B - 1)
    own = real_head(state)
    rows = trace_head(state.W_head, cls=depths[:-1, b, :], real=own).logits      # (L, C)
    full = np.vstack([rows, trace.logits[b:b + 1]])                             # (L+1, C)
    columns = lens_columns(full)
    array = np.ascontiguousarray(full if columns is None else full[:, columns], dtype=np.float64)
    L = array.shape[0] - 1
    named = class_names(state) is not None
    spec = heatmap("lens", array, "sample %d: %s at every depth, \u2113 = 0 (embedded) \u2026 %d "
                   "(z_L)%s" % (b, "the model's own head" if own is not None else "the head",
                                L, "" if columns is None else ", the %d classes it ranks "
                                "highest" % len(columns)),
                   "class c", "depth \u2113",
                   "depth %{y}, class %{x}" + (": %{customdata}" if named else "")
                   + "<br>logit = " + VALUE,
                   marks=[(l, int(np.argmax(array[l]))) for l in range(L + 1)],
                   x_labels=columns if columns is not None else "classes" if named else None)
    return array, spec
