"""The "real ViT" mode: drawn 8x8 digits, encoded by the tiny trained ViT, feed the head.

A state in this mode holds the encoder output z_L of the images (B, 17, 32) and the model's
trained W_head (32, 10), both as :class:`~pycore.explorer.recipes.Recipe` s of preset
``"tiny-vit"``: the link carries the pixels, not 544 numbers per image, and the encoder output
is computed again from them. Edits of either matrix are kept as the recipe's edits, like any
other; drawing again encodes the new images and keeps the head (and its edits).

Pixels are whole numbers from 0 (paper) to 16 (ink), the data set's scale. In a link an image
is 64 characters, one per pixel in row-major order, from :data:`PIXEL_CHARS` (``"g"`` is 16).

Examples
--------
>>> text = pixels_text([[16] * 8] + [[0] * 8] * 7)
>>> text[:10], len(text)
('gggggggg00', 64)
>>> image_from_text(text)[0, :3].tolist()
[16.0, 16.0, 16.0]
"""
import time

import numpy as np

from ..vit.tiny_vit import IMAGE_SIDE, PIXEL_MAX, load_tiny_vit
from .errors import StateError
from .state import ExplorerState, shown

PIXEL_CHARS = "0123456789abcdefg"
DIGITS_MAX = 16
"""At most this many images at once (B), which keeps an encoding under ~50 ms in a browser."""
PRESET = "tiny-vit"
TOP = 3
"""The panel lists this many of the most likely classes of the drawing."""
CLASS_NAMES = [str(d) for d in range(10)]

_model = []      # the loaded model, once it is needed (not at import: the page boots faster)
_encoded = {}    # the last images' (z_L, attention, ms per image): one stroke asks for both


def model():
    """The trained tiny ViT (loaded on first use, then kept).

    Raises
    ------
    StateError
        When its weights file cannot be read (a site built without it).
    """
    if not _model:
        try:
            _model.append(load_tiny_vit())
        except (OSError, ValueError, KeyError) as exc:
            raise StateError("The tiny ViT's weights could not be loaded (%s); the real-ViT "
                             "mode needs pycore/vit/tiny_vit_weights.npz." % exc) from None
    return _model[0]


def pixels_text(image):
    """One image (8 x 8 whole numbers 0..16) as its 64-character link form."""
    flat = np.asarray(image, dtype=np.int64).ravel()
    return "".join(PIXEL_CHARS[int(v)] for v in flat)


def image_from_text(text):
    """(8, 8) float64 pixels from the 64-character link form (checked by :func:`check_texts`)."""
    return np.array([PIXEL_CHARS.index(c) for c in text], dtype=np.float64).reshape(
        IMAGE_SIDE, IMAGE_SIDE)


def check_texts(value, where="digits"):
    """The link form of a batch of images: a list of 1..DIGITS_MAX strings of 64 pixel chars.

    Raises
    ------
    StateError
        Naming the image and the character that is wrong.

    Examples
    --------
    >>> check_texts(["0" * 64])
    ('0000000000000000000000000000000000000000000000000000000000000000',)
    """
    if not isinstance(value, list) or not 1 <= len(value) <= DIGITS_MAX:
        raise StateError("%s must be a list of 1 to %d images; got %s"
                         % (where, DIGITS_MAX, shown(value)), key="encoder_output")
    for b, text in enumerate(value):
        if not isinstance(text, str) or len(text) != IMAGE_SIDE * IMAGE_SIDE:
            raise StateError("%s[%d] must be 64 pixel characters; got %s"
                             % (where, b, shown(text)), key="encoder_output")
        bad = [c for c in text if c not in PIXEL_CHARS]
        if bad:
            raise StateError("%s[%d] holds %r: a pixel is one of %s (0 to 16)"
                             % (where, b, bad[0], PIXEL_CHARS), key="encoder_output")
    return tuple(value)


def check_images(value):
    """Images as the page sends them: a list of B images, each 8 rows of 8 whole numbers
    from 0 to 16. Returns their link form (a tuple of 64-character strings).

    Raises
    ------
    StateError
        Naming the first pixel that is not a whole number from 0 to 16, or the wrong shape.

    Examples
    --------
    >>> check_images([[[0] * 8] * 8])[0] == "0" * 64
    True
    >>> check_images([[[0] * 8] * 7 + [[0] * 7 + [17]]])
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: images[0][7][7] must be a whole number from 0 to 16; got 17
    """
    if not isinstance(value, list) or not 1 <= len(value) <= DIGITS_MAX:
        raise StateError("images must be a list of 1 to %d images (8 rows of 8 pixels); got %s"
                         % (DIGITS_MAX, shown(value)))
    texts = []
    for b, image in enumerate(value):
        if not isinstance(image, list) or len(image) != IMAGE_SIDE or not all(
                isinstance(row, list) and len(row) == IMAGE_SIDE for row in image):
            raise StateError("images[%d] must be 8 rows of 8 pixels" % b)
        for r, row in enumerate(image):
            for c, v in enumerate(row):
                ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v == v \
                    and 0 <= v <= PIXEL_MAX and v == int(v)
                if not ok:
                    raise StateError("images[%d][%d][%d] must be a whole number from 0 to 16; "
                                     "got %s" % (b, r, c, shown(v)))
        texts.append(pixels_text(image))
    return tuple(texts)


def encoded(texts):
    """(z_L, CLS attention) of the images ``texts`` (link form), from one forward pass.

    The last answer is kept: drawing asks for the state (z_L) and the overlay (attention) of
    the same images.
    """
    texts = tuple(texts)
    if texts not in _encoded:
        images = np.stack([image_from_text(t) for t in texts])
        m = model()
        start = time.perf_counter()
        z_L, attention = m.encode_with_attention(images)
        ms = (time.perf_counter() - start) * 1000.0 / len(texts)
        _encoded.clear()
        _encoded[texts] = (z_L, attention, ms)
    return _encoded[texts]


def generate(texts, shape):
    """What a ``"tiny-vit"`` recipe generates: z_L of ``texts`` (B, 17, 32) or, without
    images, the trained W_head (32, 10). A new array.

    Raises
    ------
    StateError
        When the shape is not the model's (a link made by hand).
    """
    m = model()
    out = m.W_head if texts is None else encoded(texts)[0]
    if tuple(out.shape) != tuple(shape):
        raise StateError("a %s matrix has shape %s; the link says %s"
                         % (PRESET, list(out.shape), list(shape)))
    return np.array(out, dtype=np.float64)


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
    >>> from pycore.explorer.presets import default_state
    >>> s = digit_state(default_state(), check_images([[[0] * 8] * 8]))
    >>> s.mode, s.encoder_output.shape, s.W_head.shape
    ('encoder', (1, 17, 32), (32, 10))
    """
    from .recipes import Recipe  # recipes generates "tiny-vit" matrices through this module
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
        None when the state is not the model's encoder output.
    """
    texts = drawn(state)
    if texts is None:
        return {"images": None, "attention": None, "prediction": None, "top": None,
                "edits": None, "encode_ms": None}
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
            "encode_ms": round(ms, 2)}


def top_classes(probs, names):
    """The :data:`TOP` most likely classes: ``[[name, probability], ...]``, most likely first
    (the first of equal ones first, as the head's prediction).

    Examples
    --------
    >>> top_classes(np.array([0.1, 0.6, 0.1, 0.2]), ["a", "b", "c", "d"])
    [['b', 0.6], ['d', 0.2], ['a', 0.1]]
    """
    order = np.argsort(-np.asarray(probs), kind="stable")[:TOP]
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
    >>> from pycore.explorer.presets import default_state
    >>> p = preview(default_state(), check_images([[[0] * 4 + [16] + [0] * 3] * 8]))
    >>> p["prediction"].startswith("1 (softmax "), [name for name, _ in p["top"]][0]
    (True, '1')
    """
    from ..vit.head import classification_head
    from ..vit.softmax import softmax
    z_L, attention, ms = encoded(texts[:1])
    W_head = state.W_head if is_model_head(state) else model().W_head
    probs = softmax(classification_head(z_L, W_head), axis=-1)[0]
    top = top_classes(probs, CLASS_NAMES)
    return {"prediction": "%s (softmax %.3f)" % tuple(top[0]), "top": top,
            "attention": [float(a) for a in attention[0]], "encode_ms": round(ms, 2)}
