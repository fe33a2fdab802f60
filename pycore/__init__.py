"""pycore: the Vision Transformer's classification head in NumPy, for the explorer page.

The head (DESIGN.md): take position 0 of the encoder output, LayerNorm it (population
variance, eps 1e-6, no gamma/beta), multiply by W_head (D, C). No bias, no softmax.
pycore.vit holds a tiny trained ViT whose encoder output feeds this head (load_tiny_vit).
Runs on Python >= 3.8 with NumPy >= 1.17 (Pyodide 0.17 and 314 alike).

>>> from pycore import classification_head
"""

from .errors import StateError
from .head import classification_head, extract_cls, head_from_cls, layer_norm
from .trace import HeadTrace, trace_head
from .vit import load_tiny_vit  # after .head: the tiny ViT's head is classification_head

__all__ = ["classification_head", "layer_norm", "extract_cls", "head_from_cls",
           "trace_head", "HeadTrace", "StateError", "load_tiny_vit"]
