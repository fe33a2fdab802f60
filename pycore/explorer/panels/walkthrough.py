"""The lecture walk-through: the head, one small step at a time, for one sample.

A lecturer steps through seven stages of one sample's trip through the head: extract the CLS
token, its mean, its variance, the normalized row, one dot product (one class: the predicted one
unless a class is chosen), all the logits, and the prediction. Each step is one equation with
this sample's numbers (TeX, like :func:`pycore.explorer.panels.tex.steps`) and the cells of the
heatmaps it uses, which the page outlines. The position (step, sample, class) lives in the
state's options (``walk``, ``sample``, ``walk_class``), so a link reopens the same step.
"""
from ..shared import HEATMAP_IDS, encoder_row
from ..state.explorer_state import WALK_STEPS as STEPS
from .readouts import class_label
from .tex import lines, number, sum_of, term, vector


def _row(r, cols):
    return [r, 0, r, cols - 1]


def _col(c, rows):
    return [0, c, rows - 1, c]


def walk_class(state, trace, sample):
    """The class the dot-product step shows: ``options["walk_class"]``, or the sample's
    predicted class when it is None.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> from pycore.vit.trace import trace_head
    >>> s = default_state()
    >>> walk_class(s, trace_head(s.W_head, cls=s.cls), 0)
    2
    """
    chosen = state.options.get("walk_class")
    return int(trace.predicted[sample]) if chosen is None else int(chosen)


def section(state, trace, prediction_notes=(), classes=None):
    """What the walk-through shows at its current position, or None while it is off.

    Parameters
    ----------
    state : ExplorerState
        ``options["walk"]`` is the step (0 to 6) or None; ``options["sample"]`` the sample;
        ``options["walk_class"]`` the class of the dot product (None: the predicted one).
    trace : pycore.vit.trace.HeadTrace
        The state's head.
    prediction_notes : sequence of str
        The notes of :func:`pycore.explorer.panels.head.prediction` (ties, rows LayerNorm
        flattens); those about this sample, and the ones about every sample, go with the
        prediction step.
    classes : list of str, optional
        The classes' names, when the state has them.

    Returns
    -------
    dict or None
        ``{step, count, names, key, sample, class, predicted_class, class_chosen, title, tex,
        note, notes, highlights}`` (``class_chosen``: whether the class was chosen, rather than
        the predicted one taken); ``highlights`` maps a heatmap's element id to the rectangles of
        cells it uses, ``[row0, col0, row1, col1]`` (inclusive).

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> from pycore.vit.trace import trace_head
    >>> s = default_state()
    >>> s.options["walk"] = 1
    >>> w = section(s, trace_head(s.W_head, cls=s.cls))
    >>> w["title"], w["highlights"]["heatmap-cls"]
    ('Step 2 of 7: the mean of sample 0', [[0, 0, 0, 3]])
    """
    step = state.options.get("walk")
    if step is None:
        return None
    B, C = trace.logits.shape
    D = trace.h_cls.shape[1]
    b = min(max(int(state.options.get("sample", 0) or 0), 0), B - 1)
    c = min(max(walk_class(state, trace, b), 0), C - 1)
    predicted = int(trace.predicted[b])
    name = lambda k: class_label(k, classes)  # noqa: E731  ("digit 3", not a bare "3")
    h, h_hat, w = trace.h_cls[b], trace.h_hat[b], state.W_head[:, c]
    mu, var, std = trace.mean[b], trace.var[b], trace.std[b]
    cls_rect = {HEATMAP_IDS["cls"]: [_row(b, D)]}
    key = STEPS[step][0]
    notes = []
    if key == "extract":
        if state.mode == "encoder":
            tokens = state.encoder_output.shape[1]
            source = "z_L[%d, 0, :]" % b
            row = encoder_row(b, 0, tokens)
            highlights = {HEATMAP_IDS["encoder"]: [_row(row, D)], HEATMAP_IDS["cls"]: [_row(b, D)]}
            note = ("Sample %d has N+1 = %d tokens; the head reads only position 0, the CLS "
                    "token (row %d of the stacked encoder output)." % (b, tokens, row))
        else:
            source = r"\text{cls}[%d]" % b
            highlights = cls_rect
            note = ("The head reads only the CLS token's output, position 0 of the sequence: "
                    "W_head was fitted to it, not to the last token (which has mixed in the "
                    "whole image too) nor to a mean over tokens.")
        tex = r"h = %s = %s" % (source, vector(h))
        title = "the CLS token of sample %d" % b
    elif key == "mean":
        tex = lines(r"\mu", r"\frac{1}{%d}\Bigl(%s\Bigr)" % (D, sum_of(lambda d: term(h[d]), D)),
                    number(mu))
        title, highlights = "the mean of sample %d" % b, cls_rect
        note = "LayerNorm first averages the D = %d features of this one sample." % D
    elif key == "variance":
        tex = lines(r"\sigma^2", r"\frac{1}{%d}\Bigl(%s\Bigr)" % (
            D, sum_of(lambda d: r"(%s - %s)^2" % (number(h[d]), term(mu)), D)), number(var))
        title, highlights = "the variance of sample %d" % b, cls_rect
        note = ("Population variance: divide by D = %d, not D - 1. With all features equal it "
                "is 0, and only ε keeps the division finite." % D)
    elif key == "normalize" and trace.real is not None:  # the model file's own head
        tex = lines(r"y", r"\gamma \odot \frac{h - %s}{%s} + \beta" % (term(mu), number(std)),
                    vector(trace.y[b]))
        title = "normalize sample %d, then the model's \u03b3 and \u03b2" % b
        highlights = {HEATMAP_IDS["cls"]: [_row(b, D)], HEATMAP_IDS["normalized"]: [_row(b, D)],
                      HEATMAP_IDS["y"]: [_row(b, D)]}
        note = ("Shift by the mean, divide by the standard deviation (with the model's ε), then "
                "scale and shift each feature by the model's learned γ and β: y.")
    elif key == "normalize":
        tex = lines(r"\hat h", r"\frac{h - \mu}{\sqrt{\sigma^2 + 10^{-6}}} = \frac{h - %s}{%s}"
                    % (term(mu), number(std)), vector(h_hat))
        title = "normalize sample %d" % b
        highlights = {HEATMAP_IDS["cls"]: [_row(b, D)], HEATMAP_IDS["normalized"]: [_row(b, D)]}
        note = ("Shift by the mean, divide by the standard deviation: the row now has mean 0 "
                "and variance (almost) 1. The head taught here has no learnable γ or β; real ViT "
                "checkpoints scale and shift h_hat by them (Other heads).")
    elif key == "dot" and trace.real is not None:  # the model file's own head
        y = trace.y[b]
        bias = 0.0 if trace.real.b_head is None else float(trace.real.b_head[c])
        tex = lines(r"\operatorname{logit}_{%d,%d}" % (b, c),
                    r"\sum_d y_d\, W_{d,%d} + b_{%d}" % (c, c),
                    sum_of(lambda d: r"%s \cdot %s" % (term(y[d]), term(w[d])), D)
                    + " + " + term(bias), number(trace.logits[b, c]))
        title = "one dot product: sample %d, %s" % (b, name(c))
        highlights = {HEATMAP_IDS["y"]: [_row(b, D)], HEATMAP_IDS["W_head"]: [_col(c, D)],
                      HEATMAP_IDS["bias"]: [[0, c, 0, c]], HEATMAP_IDS["logits"]: [[b, c, b, c]]}
        note = ("Row %d of y times column %d of W_head, term by term, summed, plus the model's "
                "bias: one logit." % (b, c)) + (" This is the predicted class." if c == predicted
                                                else "")
    elif key == "dot":
        tex = lines(r"\operatorname{logit}_{%d,%d}" % (b, c), r"\sum_d \hat h_d\, W_{d,%d}" % c,
                    sum_of(lambda d: r"%s \cdot %s" % (term(h_hat[d]), term(w[d])), D),
                    number(trace.logits[b, c]))
        title = "one dot product: sample %d, %s" % (b, name(c))
        highlights = {HEATMAP_IDS["normalized"]: [_row(b, D)], HEATMAP_IDS["W_head"]: [_col(c, D)],
                      HEATMAP_IDS["logits"]: [[b, c, b, c]]}
        note = ("Row %d of h_hat times column %d of W_head, term by term, summed: one logit. "
                "No bias, no activation." % (b, c)) + (
                    " This is the predicted class." if c == predicted else "")
    elif key == "logits":
        tex = (r"\operatorname{logits}_{%d,:} = %s = %s" % (
            b, r"\hat h\, W_{\mathrm{head}}" if trace.real is None
            else r"y\, W_{\mathrm{head}} + b_{\mathrm{head}}", vector(trace.logits[b])))
        title = "all %d logits of sample %d" % (C, b)
        highlights = {HEATMAP_IDS["normalized"]: [_row(b, D)],
                      HEATMAP_IDS["W_head"]: [[0, 0, D - 1, C - 1]],
                      HEATMAP_IDS["logits"]: [_row(b, C)]}
        note = ("The same dot product for every column of W_head: one logit per class. These "
                "raw logits are what the head returns: no softmax.")
    else:
        tex = (r"\arg\max_c\ \operatorname{logit}_{%d,c} = %d,\quad \allowbreak "
               r"\operatorname{logit}_{%d,%d} = %s" % (b, predicted, b, predicted,
                                                 number(trace.logits[b, predicted])))
        title = "the prediction for sample %d: %s" % (b, name(predicted))
        highlights = {HEATMAP_IDS["logits"]: [_row(b, C), [b, predicted, b, predicted]]}
        note = ("The predicted class is the largest logit. Softmax would not change which one: "
                "it keeps the order.")
        notes = _notes_about(prediction_notes, b)
    return {"step": int(step), "count": len(STEPS), "names": [n for _, n in STEPS], "key": key,
            "sample": b, "class": c, "predicted_class": predicted,
            "class_chosen": state.options.get("walk_class") is not None,
            "title": "Step %d of %d: %s" % (step + 1, len(STEPS), title), "tex": tex,
            "note": note, "notes": notes,
            "highlights": dict((k, [[int(x) for x in r] for r in v])
                               for k, v in highlights.items())}


def _notes_about(notes, b):
    """The prediction notes that concern sample b: its own, and those about every row."""
    own = "Sample %d" % b
    return [n for n in notes if n.startswith(own + ":") or n.startswith(own + "'s")
            or not n.startswith("Sample ")]
