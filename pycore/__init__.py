"""pycore: the Vision Transformer's classification head in NumPy, and the explorer page built on it.

The head (Dosovitskiy et al. 2020): take position 0 of the encoder output, LayerNorm it
(population variance, eps 1e-6, no gamma/beta), multiply by W_head (D, C). No bias, no softmax.

    pycore.vit        the math the page teaches (imports nothing from pycore.explorer), with a
                      tiny trained ViT whose encoder output feeds this head (load_tiny_vit)
    pycore.explorer   the page's state, edits, links, exports and answers (uses pycore.vit)

docs/ explains both. Runs on Python >= 3.8 with NumPy >= 1.17 (Pyodide 0.17 and 314 alike).

Training the head (the loss and its exact gradients) is pycore.vit.training.

>>> from pycore import classification_head, cross_entropy, head_backward
"""

from .explorer.errors import StateError
from .vit.head import classification_head, extract_cls, head_from_cls, layer_norm
from .vit.tiny_vit import load_tiny_vit
from .vit.trace import HeadTrace, trace_head
from .vit.training import cross_entropy, head_backward

__all__ = ["classification_head", "layer_norm", "extract_cls", "head_from_cls",
           "trace_head", "HeadTrace", "cross_entropy", "head_backward", "StateError",
           "load_tiny_vit"]
