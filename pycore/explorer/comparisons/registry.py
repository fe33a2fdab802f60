"""The heads the page shows beside the real one: the classic mistakes and the variants worth
knowing, in one registry with one convention.

Each :class:`Comparison` has a ``key``, a ``kind`` ("mistake": a wrong head; "variant": another
head that is right in its own setting), a short ``title``, an ``explanation`` for a student, the
``source`` it rests on (in words a student has: the ViT paper, BERT), whether it ``needs`` the
full encoder output, and ``compute(state)``, which returns its (B, C) output on the state's own
inputs or raises ``ValueError`` with the message to show. The math is in pycore.vit.mistakes
and pycore.vit.variants; this module only says what each one is and feeds it the state.
"""
import collections

import numpy as np

from ...vit import mistakes, variants
from ...vit.head import layer_norm
from ...vit.trace import real_head_of, trace_head

PAPER = "Dosovitskiy et al. (2020), “An Image is Worth 16x16 Words”"
BERT = "Devlin et al. (2019), “BERT”"


class Comparison(collections.namedtuple(
        "Comparison", "key kind title explanation source needs compute")):
    """One head to compare with the real one; see the module docstring."""


def _seed(state):
    return int(state.options.get("seed", 0) or 0)


def _mistake(function):
    def compute(state):
        inputs = ({"encoder_output": state.encoder_output} if state.mode == "encoder"
                  else {"cls": state.cls})
        return function(state.W_head, seed=_seed(state), **inputs)
    return compute


def _params(state, *names):
    """The seeded parameters ``names`` of the variants (the others are not made)."""
    return variants.variant_params(state.D, state.C, seed=_seed(state), names=names)


def _mlp(activation):
    def compute(state):
        p = _params(state, "W1", "b1", "W2", "b2")
        return variants.mlp_pretraining_head(layer_norm(state.h_cls), p["W1"], p["b1"], p["W2"],
                                             p["b2"], activation=activation)
    return compute


def _gap(state):
    if state.mode != "encoder":
        raise ValueError("Global average pooling averages the patch tokens z_L[:, 1:, :], and this "
                         "state has only the CLS vectors. Switch the mode to 'Edit full encoder "
                         "output' (or load the 'Full encoder output' example) to compare.")
    if state.encoder_output.shape[1] < 2:
        raise ValueError("Global average pooling needs at least one patch token (N+1 >= 2).")
    return variants.gap_head(state.encoder_output, state.W_head)


def _bert(state):
    p = _params(state, "W_pool", "b_pool")
    with np.errstate(all="ignore"):
        return np.dot(variants.bert_pooler(state.h_cls, p["W_pool"], p["b_pool"]), state.W_head)


def _model_head(state):
    """The model file's own head: LayerNorm with its gamma/beta (and its epsilon), W_head, its
    bias; what it lacks is left out (gamma 1, beta 0, no bias)."""
    m = state.model
    if not m or all(m.get(k) is None for k in ("ln_gamma", "ln_beta", "b_head")):
        raise ValueError("No model file with the real head's LayerNorm gamma/beta or bias is "
                         "loaded: load one (docs/own-model.md) to compare its own head.")
    real = real_head_of(m, state.D, state.C)  # the pipeline's own head: one computation
    if real is None:  # they no longer fit W_head's D and C
        norm = m.get("ln_gamma") if m.get("ln_gamma") is not None else m.get("ln_beta")
        raise ValueError("The model file's gamma/beta are for D = %d and its bias for C = %d, but "
                         "W_head is now %d \u00d7 %d: load the file again to compare."
                         % (np.shape(norm)[0] if norm is not None else state.D,
                            np.shape(m["b_head"])[0] if m.get("b_head") is not None else state.C,
                            state.D, state.C))
    with np.errstate(all="ignore"):
        return trace_head(state.W_head, cls=state.h_cls, real=real).logits


def page_trace(state):
    """The trace of the head the page teaches (no gamma/beta, no bias) on the state's inputs,
    whichever head the pipeline shows: the mistakes, the fine-tuning panel and "Other heads"
    read this one beside a model file's own head."""
    inputs = ({"encoder_output": state.encoder_output} if state.mode == "encoder"
              else {"cls": state.cls})
    return trace_head(state.W_head, **inputs)


def _page_head(state):
    """The head the page teaches, beside a model file's own head."""
    return page_trace(state).logits


COMPARISONS = (
    Comparison(
        "last_position", "mistake", "Position -1 instead of 0", (
            "The head must read the CLS token, which ViT puts at position 0 of the sequence: "
            "h_cls = z_L[:, 0, :]. Taking position -1 reads the last patch token instead. After "
            "L attention blocks that token has mixed in the whole image as the CLS token has, "
            "so it is not a view of one patch; but it is another vector: training made only the "
            "CLS token's output the one the head reads, and fitted W_head to it, so W_head's "
            "logits of the last token mean nothing. With the CLS rows alone there is a single "
            "position, where -1 and 0 coincide, so choosing this mistake switches the input to "
            "the full encoder output."),
        PAPER + ", Eq. 1 and 4: the class token is prepended at position 0, and the head "
                "reads its output.", "encoder", _mistake(mistakes.last_position)),
    Comparison(
        "softmax_inside", "mistake", "Softmax inside the head", (
            "The head returns raw logits: it ends at h_hat @ W_head, with no softmax. The "
            "softmax belongs to the cross-entropy loss, which applies it itself; applying it "
            "inside the head as well squashes the outputs into probabilities, and the loss then "
            "applies a softmax a second time."),
        PAPER + ", Sec. 3.1: at fine-tuning the head is a single linear layer.", None,
        _mistake(mistakes.softmax_inside)),
    Comparison(
        "no_layernorm", "mistake", "LayerNorm skipped", (
            "The head normalizes the CLS vector before the linear map: (h - mean) / "
            "sqrt(var + 1e-6), per sample. Skipping it feeds W_head vectors with arbitrary "
            "offset and scale, so the logits change when a sample's features are all shifted "
            "or scaled, which the real head ignores."),
        PAPER + ", Eq. 4: y = LN(z_L⁰), the class token's output after LayerNorm.", None,
        _mistake(mistakes.no_layernorm)),
    Comparison(
        "transposed", "mistake", "W_head transposed to (C, D)", (
            "W_head must be (D, C): one row per feature, one column per class, so that h_hat "
            "(B, D) @ W_head gives (B, C). Using it as (C, D) cannot multiply unless C equals "
            "D; and when it does, the mistake is silent and every logit uses the wrong weights."),
        PAPER + ", Sec. 3.1: the head is a D × K layer (D features in, K classes out); "
                "matrix shapes: (B, D) @ (D, K) = (B, K).", None, _mistake(mistakes.transposed)),
    Comparison(
        "affine", "variant", "Real ViTs: LayerNorm with \u03b3 and \u03b2", (
            "The problem this page teaches specifies the head without them: LayerNorm is just "
            "(h - mean) / sqrt(var + 1e-6). Real ViT implementations (the authors' vit_jax, "
            "timm, Hugging Face) end the encoder with a LayerNorm that has a learned scale gamma "
            "and shift beta: gamma * (h - mean) / sqrt(var + eps) + beta, and a trained model's "
            "values are not 1 and 0. Both heads are right in their own setting; weights trained "
            "with gamma and beta give other logits without them. Here gamma and beta are "
            "seeded random values; a model file's own are used by its own head."),
        "Ba et al. (2016), \u201cLayer Normalization\u201d: gamma and beta are the gain and "
        "bias; " + PAPER + ", Eq. 4.", None, _mistake(mistakes.affine)),
    Comparison(
        "bias", "variant", "Real ViTs: a bias in the head", (
            "The problem this page teaches specifies the head without a bias, so that every "
            "logit is h_hat @ W_head alone. Real ViT heads have one (vit_jax, timm and Hugging "
            "Face alike): logits = h_hat @ W_head + b. A bias shifts every sample's logit for a "
            "class by the same amount, which can change predictions; a model trained with one "
            "needs it. Here b is a seeded random vector; a model file's own is used by its own "
            "head."),
        PAPER + ", Sec. 3.1: at fine-tuning the head is one D \u00d7 K layer (K classes); the "
                "problem this page teaches writes it without its bias.", None,
        _mistake(mistakes.bias)),
    Comparison(
        "mlp_tanh", "variant", "Pre-training head: MLP, tanh", (
            "During pre-training ViT classifies with an MLP of one hidden layer; the authors' "
            "released code uses tanh as its activation. Here: tanh(h_hat W1 + b1) W2 + b2 with "
            "seeded random W1, b1, W2, b2 (hidden size D). At fine-tuning time this MLP is "
            "replaced by the single zero-initialized linear layer W_head."),
        PAPER + ", Sec. 3.1.", None, _mlp("tanh")),
    Comparison(
        "mlp_gelu", "variant", "Pre-training head: MLP, GELU", (
            "The same pre-training MLP with GELU, the activation of the encoder's own MLP "
            "blocks, instead of tanh; re-implementations use either, so both are shown. Same "
            "seeded weights as the tanh version."),
        PAPER + ", Sec. 3.1 and Eq. 3 (GELU in the encoder's MLP).", None, _mlp("gelu")),
    Comparison(
        "gap", "variant", "Global average pooling instead of CLS", (
            "Instead of the CLS token, average the patch tokens z_L[:, 1:, :] and apply the same "
            "LayerNorm and W_head. The paper reports that this works about as well as the CLS "
            "token (with a different learning rate)."),
        PAPER + ", Appendix D.3 (head type and class token).", "encoder", _gap),
    Comparison(
        "bert_pooler", "variant", "BERT's pooler", (
            "BERT passes its CLS vector through a learned pooler, tanh(h W_pool + b_pool), "
            "before its classifier. ViT's fine-tuning head has no pooler: LayerNorm and one "
            "matrix. Here the pooler (seeded random W_pool, b_pool) feeds the same W_head."),
        BERT + ", Sec. 3 and its released code (the pooler).", None, _bert),
    Comparison(
        "model_head", "variant", "Model's own head (LayerNorm \u03b3/\u03b2, bias)", (
            "The head of the model file you loaded, as the model computes it: gamma * (h - mean) "
            "/ sqrt(var + eps) + beta, then h_hat @ W_head + b, with the file's own gamma, beta, "
            "eps and bias. This page's head drops gamma, beta and b; the line below says which "
            "predictions that changes on your inputs."),
        "Your model file; Ba et al. (2016), \u201cLayer Normalization\u201d, and " + PAPER +
        ", Eq. 4.", None, _model_head),
    Comparison(
        "page_head", "variant", "The problem's head (no \u03b3/\u03b2, no bias)", (
            "The head the page teaches, on your model's inputs and W_head: (h - mean) / "
            "sqrt(var + 1e-6), then h_hat @ W_head, without the model's gamma, beta and bias. "
            "The pipeline shows the model's own head; the line below says which predictions "
            "dropping those parts changes."),
        PAPER + ", Eq. 4 and Sec. 3.1, as the problem the page teaches writes it.", None,
        _page_head),
)
MODEL_ONLY = ("model_head",)  # offered while a model file's real head is loaded, not shown
PAGE_ONLY = ("page_head",)  # offered while the pipeline shows a model file's own head


def of_kind(kind):
    """The comparisons of one kind, in the page's order."""
    return [c for c in COMPARISONS if c.kind == kind]


def find(key):
    """The comparison named ``key``, or None."""
    for c in COMPARISONS:
        if c.key == key:
            return c
    return None


def choices(kind, state=None):
    """``[[key, title], ...]`` for the page's select of one kind (the model file's own head only
    while ``state`` holds one)."""
    real = state is not None and real_head_of(state.model, state.D, state.C) is not None
    shown = real and state.options.get("head") != "page"
    return [[c.key, c.title] for c in of_kind(kind)
            if (c.key not in MODEL_ONLY or (real and not shown))
            and (c.key not in PAGE_ONLY or shown)]


def run(state, key):
    """(output, error message): the comparison's (B, C) output on the state, or why it cannot
    run (shown in place of the output)."""
    try:
        return find(key).compute(state), None
    except ValueError as err:
        return None, str(err)


def offer(kind):
    """What a comparison panel offers, said before anything is chosen.

    Examples
    --------
    >>> offer("mistake").split(":")[0]
    'Choose one of 4 classic mistakes'
    """
    titles = [c.title for c in of_kind(kind) if c.key not in MODEL_ONLY + PAGE_ONLY]
    if kind == "mistake":
        return ("Choose one of %d classic mistakes: %s. Its output appears beside the correct "
                "logits, on the same colour scale, with a line saying which predictions it "
                "changes." % (len(titles), "; ".join(titles)))
    return ("Choose one of %d other heads: %s; and, once a model file with the real head's "
            "gamma/beta or bias is loaded, %s (while the pipeline shows the problem's head) or "
            "%s (while it shows the model's). Its output appears beside the pipeline's logits, "
            "on the same colour scale, computed on the same inputs."
            % (len(titles), "; ".join(titles), find("model_head").title,
               find("page_head").title))


def predicted(output):
    """Each row's predicted class: the argmax over its finite values (None for a row with none).

    Parameters
    ----------
    output : array_like
        (B, C), any real numbers (a mistaken head may overflow).

    Returns
    -------
    list of int or None

    Examples
    --------
    >>> predicted([[0.1, 0.7, 0.7], [float("nan"), -1.0, float("inf")], [float("nan")] * 3])
    [1, 2, None]
    """
    out = []
    for row in np.asarray(output, dtype=float):
        numbers = ~np.isnan(row)  # an overflow to inf still ranks; NaN does not
        out.append(int(np.argmax(np.where(numbers, row, -np.inf))) if numbers.any() else None)
    return out


def prediction_changes(logits, output, classes=None, shown_max=6):
    """One line: which samples' predictions the other head changes, and how.

    Parameters
    ----------
    logits : numpy.ndarray
        The correct head's (B, C) logits.
    output : numpy.ndarray
        The other head's (B, C) output.
    classes : list of str, optional
        The classes' names (else "class c").
    shown_max : int, optional
        How many changed samples are named before "and N more".

    Returns
    -------
    str
        "Predictions changed: sample 0: class 2 -> class 1." or "No prediction changed: ...".

    Examples
    --------
    >>> prediction_changes(np.array([[0.0, 1.0], [2.0, 0.0]]), np.array([[1.0, 0.0], [3.0, 0.0]]))
    'Prediction changed for 1 of 2 samples: sample 0: class 1 \u2192 class 0.'
    >>> prediction_changes(np.array([[0.0, 1.0]]), np.array([[0.2, 0.8]]))
    'No prediction changed: every sample keeps its class (sample 0: class 1).'
    """
    name = (lambda c: "no class (no number out)" if c is None else
            (classes[c] if classes else "class %d" % c))
    right, wrong = predicted(logits), predicted(output)
    changed = [(b, r, w) for b, (r, w) in enumerate(zip(right, wrong)) if r != w]
    B = len(right)
    if not changed:
        kept = ", ".join("sample %d: %s" % (b, name(r)) for b, r in enumerate(right[:shown_max]))
        return "No prediction changed: every sample keeps its class (%s%s)." % (
            kept, ", …" if B > shown_max else "")
    text = ", ".join("sample %d: %s \u2192 %s" % (b, name(r), name(w))
                     for b, r, w in changed[:shown_max])
    more = " and %d more" % (len(changed) - shown_max) if len(changed) > shown_max else ""
    return "Prediction changed for %d of %d sample%s: %s%s." % (
        len(changed), B, "" if B == 1 else "s", text, more)
