"""pycore: the Vision Transformer's classification head in NumPy, and the explorer page built on it.

The head (Dosovitskiy et al. 2020): take position 0 of the encoder output, LayerNorm it
(population variance, eps 1e-6, no gamma/beta), multiply by W_head (D, C). No bias, no softmax.

    pycore.vit        the math the page teaches (imports nothing from pycore.explorer), with a
                      tiny trained ViT whose encoder output feeds this head (load_tiny_vit)
    pycore.explorer   the page's state, edits, links, exports and answers (uses pycore.vit)

docs/ explains both. Runs on Python >= 3.8 with NumPy >= 1.17 (Pyodide 0.17 and 314 alike).

Training the head (the loss, its exact gradients, the optimizers) is pycore.vit.loss,
pycore.vit.backward, pycore.vit.optimizers and pycore.vit.training. Importing pycore, or
pycore.vit, loads nothing of pycore.explorer.

>>> from pycore import classification_head, cross_entropy, head_backward
"""

from .vit.backward import head_backward
from .vit.head import classification_head, extract_cls, head_from_cls, layer_norm
from .vit.loss import cross_entropy
from .vit.tiny.model import load_tiny_vit
from .vit.trace import HeadTrace, trace_head

__all__ = ["classification_head", "layer_norm", "extract_cls", "head_from_cls",
           "trace_head", "HeadTrace", "cross_entropy", "head_backward", "load_tiny_vit"]
