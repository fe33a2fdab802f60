"""TeX: the helpers the equations and the walk-through write their numbers with, and the
equations panel (the head's steps for one sample, with its live numbers).

Long vectors and sums are written out as head ... tail (:data:`HEAD`, :data:`TAIL`), and a
number is written as the cells show it (:func:`~pycore.explorer.state.cells.format_number`).
"""
from ..state.cells import format_number

# How many items of a long vector or sum the equations write out (head ... tail).
HEAD, TAIL = 3, 2

# The page typesets a walk-through equation so that its lines wrap where the box is narrow (a
# phone): after an "=", a "+" or a vector's comma, a wrapped part hanging this far in
# (web/css/explorer.css, .walk-math). Each of the equation's own lines begins by taking the
# hang back, so that its "=" stands under the first line's.
HANG = "1.5em"


def shown(n):
    """Indices written out of a length-n sequence; None marks the ellipsis.

    Examples
    --------
    >>> shown(4), shown(9)
    ([0, 1, 2, 3], [0, 1, 2, None, 7, 8])
    """
    if n <= HEAD + TAIL + 1:
        return list(range(n))
    return list(range(HEAD)) + [None] + list(range(n - TAIL, n))


def number(x, decimals=4):
    return format_number(x, decimals)


def term(x, decimals=4):
    """A number as a term of a sum: negative ones in parentheses, so signs never run together."""
    text = number(x, decimals)
    return "(%s)" % text if text.startswith("-") else text


def product(a, b, decimals=4):
    """Two factors side by side, each in parentheses."""
    return "(%s)(%s)" % (number(a, decimals), number(b, decimals))


def vector(values, decimals=4, wrap=True):
    r"""TeX of a vector, abbreviated with an ellipsis when it is long (only the items shown are
    formatted). ``wrap``: plain brackets, breakable after any comma (a \left[ ... \right] pair
    makes it one box, which cannot wrap).

    Examples
    --------
    >>> print(vector([1.0, -2.0], wrap=False))
    \left[1.0000,\ -2.0000\right]
    """
    items = [r"\ldots" if d is None else number(values[d], decimals) for d in shown(len(values))]
    if wrap:
        return "[" + r",\ \allowbreak ".join(items) + "]"
    return r"\left[" + r",\ ".join(items) + r"\right]"


def sum_of(terms, n):
    """TeX of a sum of n terms, abbreviated in the middle: terms(d) gives the d-th term's TeX.
    Each term is a group, so that a line wraps between terms (after a "+"), never inside one."""
    return " + ".join(r"\cdots" if d is None else "{%s}" % terms(d) for d in shown(n))


def lines(left, *right):
    r"""TeX of ``left = right[0] = right[1] ...``, one "=" per line, each under the first (an
    invisible copy of ``left`` before it, less the hang a wrapped part gets: :data:`HANG`).
    Unlike an aligned environment, a line too long for the box (a sum on a phone) can then
    wrap after a "+" instead of running off the side.

    Examples
    --------
    >>> print(lines("x", "1 + 1", "2"))
    x = 1 + 1 \\ \kern-1.5em\phantom{x} = 2
    """
    again = r" \\ \kern-%s\phantom{%s} = " % (HANG, left)
    return again.join(["%s = %s" % (left, right[0])] + list(right[1:]))


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
    terms = [r"\cdots" if d is None else product(h_hat[d], w[d], decimals) for d in shown(D)]
    items = [
        {"title": "1. Take the CLS token (position 0)",
         "tex": r"h_{\mathrm{cls}} = %s = %s" % (source, vector(h, decimals, wrap=False)),
         "note": "Position 0 only: W_head was fitted to the CLS token's output, not to the "
                 "last token's or to a mean over tokens."},
        {"title": "2. LayerNorm over the D = %d features" % D,
         "tex": (r"\mu = %s,\quad \sigma^2 = %s,\quad "
                 r"\hat h = \frac{h - \mu}{\sqrt{\sigma^2 + 10^{-6}}} = %s"
                 % (fmt(trace.mean[b]), fmt(trace.var[b]), vector(h_hat, decimals, wrap=False))),
         "note": "Population variance (divide by D); no learnable γ or β in the head taught here "
                 "(real ViT checkpoints add them)."},
        {"title": "3. One logit: class %d" % c,
         "tex": (r"\operatorname{logit}_{%d,%d} = \sum_{d} \hat h_d\, W_{d,%d} = %s = %s"
                 % (b, c, c, " + ".join(terms), fmt(trace.logits[b, c]))),
         "note": "No softmax, no activation; no bias in the head taught here (real ViTs add one)."},
        {"title": "4. Prediction",
         "tex": r"\arg\max_c\ \operatorname{logit}_{%d,c} = %d" % (b, int(trace.predicted[b])),
         "note": None},
    ]
    real = trace.real
    if real is not None:  # the model file's own head: its gamma/beta after LayerNorm, its bias
        y = trace.y[b]
        bias = 0.0 if real.b_head is None else float(real.b_head[c])
        terms = [r"\cdots" if d is None else product(y[d], w[d], decimals) for d in shown(D)]
        items[1]["tex"] = (r"\mu = %s,\quad \sigma^2 = %s,\quad \hat h = \frac{h - \mu}"
                           r"{\sqrt{\sigma^2 + %s}},\quad y = \gamma \odot \hat h + \beta = %s"
                           % (fmt(trace.mean[b]), fmt(trace.var[b]), "%g" % trace.eps,
                              vector(y, decimals, wrap=False)))
        items[1]["note"] = ("The model's own LayerNorm: population variance, its ε, then its "
                            "learned scale γ and shift β.")
        items[2]["tex"] = (r"\operatorname{logit}_{%d,%d} = \sum_{d} y_d\, W_{d,%d} + b_{%d} "
                           r"= %s + %s = %s"
                           % (b, c, c, c, " + ".join(terms), fmt(bias), fmt(trace.logits[b, c])))
        items[2]["note"] = "The model's own head: its bias added, no softmax, no activation."
    return {"sample": b, "class": c, "items": items}
