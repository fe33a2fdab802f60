"""pycore.vit: the math of the Vision Transformer the page teaches.

A tiny ViT (Dosovitskiy et al. 2020) for the 8x8 handwritten digits, in NumPy: patches,
a linear patch embedding, a CLS token, position embeddings and pre-LayerNorm encoder
blocks produce z_L, whose CLS row feeds exactly the page's classification head.

>>> from pycore.vit import load_tiny_vit
"""

from .tiny_vit import TinyViT, load_tiny_vit

__all__ = ["TinyViT", "load_tiny_vit"]
