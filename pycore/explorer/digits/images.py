"""Drawn 8x8 digits as the tiny trained ViT sees them: their link form, their checks, and
what the model makes of them (z_L, and its trained W_head), loaded and encoded once.

Pixels are whole numbers from 0 (paper) to 16 (ink), the data set's scale. In a link an image
is 64 characters, one per pixel in row-major order, from :data:`PIXEL_CHARS` (``"g"`` is 16).
A :class:`~pycore.explorer.state.recipes.Recipe` of preset ``"tiny-vit"`` generates its matrix here
(:func:`generate`); pycore/explorer/digits/mode.py builds the real-ViT mode's states from it.

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

from ...vit.tiny.model import IMAGE_SIDE, PIXEL_MAX, load_tiny_vit
from ..errors import StateError, shown

PIXEL_CHARS = "0123456789abcdefg"
DIGITS_MAX = 16
"""At most this many images at once (B): their encoding, redone for each change of a pen stroke,
stays short enough for the reading to follow the pen."""
PRESET = "tiny-vit"

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
                             "mode needs pycore/vit/tiny/weights.npz." % exc) from None
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
    """(z_L, CLS attention, milliseconds per image) of the images ``texts`` (link form), from
    one forward pass.

    The last answer is kept: drawing asks for the state (z_L), the overlay (attention) and the
    logit lens (:func:`hidden_cls`) of the same images.
    """
    return _forward(texts)[:3]


def hidden_cls(texts):
    """The CLS row at every depth of the images ``texts``, (L+1, B, D), from the same forward
    pass as :func:`encoded`."""
    return _forward(texts)[3]


def _forward(texts):
    texts = tuple(texts)
    if texts not in _encoded:
        images = np.stack([image_from_text(t) for t in texts])
        m = model()
        start = time.perf_counter()
        z_L, attention, hidden = m.encode_all(images)
        ms = (time.perf_counter() - start) * 1000.0 / len(texts)
        _encoded.clear()
        _encoded[texts] = (z_L, attention, ms, hidden)
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
