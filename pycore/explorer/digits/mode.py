"""The "real ViT" mode: drawn 8x8 digits, encoded by the tiny trained ViT, feed the head.

A state in this mode holds the encoder output z_L of the images (B, 17, 32) and the model's
trained W_head (32, 10), both as :class:`~pycore.explorer.state.recipes.Recipe` s of preset
``"tiny-vit"``: the link carries the pixels, not 544 numbers per image, and the encoder output
is computed again from them (pycore/explorer/digits/images.py: the pixels' link form, their
checks, the model). Edits of either matrix are kept as the recipe's edits, like any other;
drawing again encodes the new images and keeps the head (and its edits).
"""
import numpy as np

from ...vit.head import classification_head
from ...vit.readout import top_k
from ...vit.softmax import softmax
from ..errors import StateError, shown
from ..state.explorer_state import ExplorerState, hidden_cls_of
from ..state.recipes import Recipe
from .images import PIXEL_CHARS, PRESET, check_images, encoded, model

DIGIT_TOP = 3
"""The panel lists this many of the most likely classes of the drawing."""
CLASS_NAMES = [str(d) for d in range(10)]


def digit_state(state, texts, head=None):
    """The state after drawing: z_L of ``texts`` and W_head, in encoder mode.

    Parameters
    ----------
    state : ExplorerState
        The state before: its options are kept; its W_head too (with its edits) when it is
        already the model's and ``head`` is not ``"trained"``.
    texts : tuple of str
        From :func:`check_images`.
    head : {None, "keep", "trained"}, optional
        ``"trained"`` puts the model's W_head back, undoing edits of it.

    Returns
    -------
    ExplorerState
        A new state (the session replaces its own only once its head is computed).

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> s = digit_state(default_state(), check_images([[[0] * 8] * 8]))
    >>> s.mode, s.encoder_output.shape, s.W_head.shape
    ('encoder', (1, 17, 32), (32, 10))
    """
    if head not in (None, "keep", "trained"):
        raise StateError("head must be \"keep\" or \"trained\"; got %s" % shown(head))
    m = model()
    z_recipe = Recipe(PRESET, (len(texts), m.N + 1, m.D), digits=texts)
    w_recipe = state.generated.get("W_head")
    if head == "trained" or not is_model_head(state):
        w_recipe = Recipe(PRESET, m.W_head.shape)
    w_recipe = w_recipe.copy()
    options = dict(state.options)
    options["sample"] = min(options.get("sample") or 0, len(texts) - 1)
    options["logit_class"] = min(options.get("logit_class") or 0, m.W_head.shape[1] - 1)
    return ExplorerState(w_recipe.materialize(), encoder_output=z_recipe.materialize(),
                         options=options, generated={"W_head": w_recipe,
                                                     "encoder_output": z_recipe}, copy=False)


def is_model_head(state):
    """Whether the state's W_head is the model's (edited or not), at its own size."""
    recipe = state.generated.get("W_head")
    return (recipe is not None and recipe.preset == PRESET and recipe.size == recipe.shape)


def drawn(state):
    """The link form of the images the state's encoder output was computed from, or None."""
    recipe = state.generated.get("encoder_output") if state.mode == "encoder" else None
    if recipe is None or recipe.preset != PRESET or recipe.size != recipe.shape:
        return None
    return recipe.digits


def class_names(state):
    """The names of the classes: the digits "0".."9" while W_head is the model's, else None
    (the page then numbers them)."""
    return list(CLASS_NAMES) if is_model_head(state) else None


def section(state, trace):
    """The answer's ``digit`` section: what the drawing panel shows.

    Returns
    -------
    dict
        ``images`` (B lists of 64 pixels, row-major) and ``attention`` (B lists of 16
        values: the CLS token's attention to each 2x2 patch in the last block, row-major
        over the 4x4 patch grid) of the drawn images, ``prediction`` (one line per image),
        ``edits`` (how many cells of z_L and W_head differ from the model's), ``encode_ms``
        (milliseconds the encoder took per image, where this Python runs); or ``images``
        None when the state is not the model's encoder output; ``lens``: whether the panel
        shows the head at every depth (the drawn images', or a model file's ``hidden_cls``).
    """
    texts = drawn(state)
    if texts is None:
        return {"images": None, "attention": None, "prediction": None, "top": None,
                "edits": None, "encode_ms": None, "lens": hidden_cls_of(state) is not None}
    _, attention, ms = encoded(texts)
    names = class_names(state) or ["class %d" % c for c in range(state.C)]
    lines = []
    for b, c in enumerate(trace.predicted):
        lines.append("%s%s (softmax %.3f)" % ("image %d: " % b if len(texts) > 1 else "",
                                               names[int(c)], trace.display_softmax[b, c]))
    top = top_classes(trace.display_softmax[0], names)
    edits = len(state.generated["encoder_output"].edits)
    w_recipe = state.generated.get("W_head")
    edits_w = len(w_recipe.edits) if is_model_head(state) else None
    return {"images": [[PIXEL_CHARS.index(ch) for ch in t] for t in texts],
            "attention": [[float(a) for a in row] for row in attention],
            "prediction": "; ".join(lines),
            "top": top,
            "edits": {"encoder_output": edits, "W_head": edits_w},
            "encode_ms": round(ms, 2), "lens": True}


def top_classes(probs, names):
    """The :data:`DIGIT_TOP` most likely classes: ``[[name, probability], ...]``, most likely first
    (the first of equal ones first, as the head's prediction).

    Examples
    --------
    >>> top_classes(np.array([0.1, 0.6, 0.1, 0.2]), ["a", "b", "c", "d"])
    [['b', 0.6], ['d', 0.2], ['a', 0.1]]
    """
    order = top_k(np.asarray(probs)[None, :], DIGIT_TOP)[0]  # ranked by the probabilities shown
    return [[names[int(c)], float(probs[c])] for c in order]


def preview(state, texts):
    """What the panel shows while the pen is down: the tiny ViT's reading of one drawing,
    without changing the state (the pipeline is redrawn once the pen lifts).

    The head is the one drawing would give (:func:`digit_state`): the state's W_head while it
    is the model's, with its edits, else the trained one.

    Returns
    -------
    dict
        ``prediction`` (the line :func:`section` writes), ``top`` (:func:`top_classes`),
        ``attention`` (16 values, as in :func:`section`) and ``encode_ms``.

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> p = preview(default_state(), check_images([[[0] * 4 + [16] + [0] * 3] * 8]))
    >>> p["prediction"].startswith("1 (softmax "), [name for name, _ in p["top"]][0]
    (True, '1')
    """
    z_L, attention, ms = encoded(texts[:1])
    W_head = state.W_head if is_model_head(state) else model().W_head
    probs = softmax(classification_head(z_L, W_head), axis=-1)[0]
    top = top_classes(probs, CLASS_NAMES)
    return {"prediction": "%s (softmax %.3f)" % tuple(top[0]), "top": top,
            "attention": [float(a) for a in attention[0]], "encode_ms": round(ms, 2)}

