"""The math the page teaches: the Vision Transformer's classification head, the classic
mistakes and the other heads worth comparing with it, and a tiny trained ViT, in NumPy.

    checks     input validation with messages that name shapes and indices
    scalars    the checks of scalar settings (a learning rate, a count)
    head       the head itself: CLS extraction, LayerNorm, the linear map
    trace      every intermediate of one head computation (what the page draws)
    softmax    a stable softmax and log-softmax (display, the "softmax inside" mistake, the loss)
    readout    a logit's terms, the top-k classes
    mistakes   what the mistaken heads compute
    variants   the pre-training MLP head, global average pooling, BERT's pooler
    loss       the cross-entropy of raw logits, and the one check of class labels
    backward   the exact gradients of the head (and of the mistaken heads) through the loss
    optimizers SGD, momentum, Adam
    training   full-batch training of a head, step by step or a whole run, and seeded data
               (docs/training.md)
    tiny/      the tiny ViT: a small ViT for 8x8 digits whose z_L feeds exactly this head (its
               layers, its params and their checks, the model; docs/tiny-vit.md)

Rule: this package imports NumPy and the standard library only, never pycore.explorer (the
page's state and answers), so the math can be read, tested and reused alone. A test enforces it.
Everything here runs on Python 3.8 / NumPy 1.17 (Pyodide 0.17) and Python 3.14 / NumPy 2.x.
"""
from .backward import HEADS, HeadGradients, head_backward
from .head import EPS, classification_head, extract_cls, head_from_cls, layer_norm
from .loss import check_labels, cross_entropy
from .optimizers import OPTIMIZERS, SGD, Adam, Momentum
from .tiny.model import TinyViT, load_tiny_vit
from .trace import HeadTrace, trace_head
from .training import HeadTrainer, TrainingRun, class_means_dataset, train_head

__all__ = ["EPS", "classification_head", "extract_cls", "head_from_cls", "layer_norm",
           "HeadTrace", "trace_head", "cross_entropy", "check_labels", "head_backward",
           "HEADS", "HeadGradients", "SGD", "Momentum", "Adam", "OPTIMIZERS", "HeadTrainer",
           "TrainingRun", "train_head", "class_means_dataset", "TinyViT", "load_tiny_vit"]
