"""Fine-tuning the head: full-batch training, one step at a time or a whole run, and the
seeded data the page trains on.

One step of the correct head, on CLS rows that stay frozen (so their LayerNorm is computed
once)::

    h_hat   = LayerNorm(h_cls)                                    (B, D)   once
    logits  = h_hat @ W_head                                      (B, C)
    loss    = cross_entropy(logits, y)                            pycore.vit.loss
    dW_head = h_hat.T @ (softmax(logits) - onehot(y)) / B         (D, C)   pycore.vit.backward
    W_head  <- optimizer.step(W_head, dW_head)                     pycore.vit.optimizers

:class:`HeadTrainer` takes one step at a time (what the page animates) and :func:`train_head`
runs a whole curve, for the correct head or one of the mistaken ones (``head=``).
:func:`class_means_dataset` makes seeded CLS rows around class means. docs/training.md
derives all of it.
"""

import numpy as np

from .backward import checked_inputs, forward_backward, head_features
from .checks import check_finite
from .head import EPS
from .optimizers import make_optimizer
from .scalars import check_int, check_number


class HeadTrainer(object):
    """Full-batch training of a head, one step at a time (what the page animates).

    The CLS rows are frozen, so their LayerNorm is computed once, here; each
    :meth:`step` is then one product for the logits, the softmax, one product for
    ``dW_head`` and the optimizer's update. W_head and b are copies the trainer owns
    and updates in place (``params``).

    Parameters
    ----------
    h_cls : array_like
        (B, D) CLS rows, finite, B >= 1.
    W0 : array_like
        (D, C) the starting W_head (not modified). Zeros are the paper's protocol.
    labels : array_like
        (B,) integer class indices in [0, C).
    optimizer : SGD, Momentum or Adam
        Any object with ``step(params, grads)``; it sees ``"W_head"`` (and ``"b"``).
    head : str, optional
        One of :data:`pycore.vit.backward.HEADS`.
    b0 : array_like, optional
        (C,) the starting bias of ``head="bias"`` (zeros by default).
    input_scale : float, optional
        > 0; multiplies h_cls before the head. The correct head is invariant to it (up to
        eps: scaling by s is the same as eps / s**2); without LayerNorm it scales the
        logits by s and the gradient by s, so an SGD step moves the logits s**2 as far.
    eps : float, optional
        LayerNorm epsilon, > 0.

    Attributes
    ----------
    params : dict
        ``{"W_head": (D, C)}``, plus ``"b": (C,)`` for the bias head.
    steps_taken : int

    Examples
    --------
    >>> import math
    >>> from pycore.vit.optimizers import SGD
    >>> t = HeadTrainer([[1.0, -1.0], [-1.0, 1.0]], np.zeros((2, 2)), [0, 1], SGD(1.0))
    >>> loss, accuracy = t.step()          # before the update: W = 0
    >>> round(loss, 6) == round(math.log(2), 6), accuracy
    (True, 0.5)
    >>> [round(v, 4) for v in t.evaluate()]    # W = [[0.5, -0.5], [-0.5, 0.5]]: logits +-1
    [0.1269, 1.0]
    """

    __slots__ = ("head", "optimizer", "params", "labels", "features", "steps_taken")

    def __init__(self, h_cls, W0, labels, optimizer, head="correct", b0=None, input_scale=1.0,
                 eps=EPS):
        eps = check_number(eps, "eps", low=0.0, low_open=True)
        scale = check_number(input_scale, "input_scale", low=0.0, low_open=True)
        h, W, y, b = checked_inputs(h_cls, W0, labels, head, b0)
        if not callable(getattr(optimizer, "step", None)):
            raise TypeError("optimizer must have a step(params, grads) method, e.g. SGD(lr); "
                            "got {!r}".format(optimizer))
        if scale != 1.0 or head == "no_layernorm":                   # the trainer's own rows
            with np.errstate(over="ignore"):
                h = h * scale                                        # (B, D), new
            if not np.isfinite(h).all():
                raise ValueError("input_scale * h_cls overflows float64 (input_scale = "
                                 "{!r})".format(scale))
        check_finite(W, "W_head")
        self.head = head
        self.optimizer = optimizer
        self.features = head_features(h, head, eps)[0]                   # h_hat, or h
        self.labels = np.array(y)                                     # (B,) its own copy
        self.params = {"W_head": np.array(W, dtype=np.float64)}      # the trainer's own copy
        if b is not None:
            self.params["b"] = np.array(b, dtype=np.float64)
        self.steps_taken = 0

    def _forward_backward(self):
        return forward_backward(self.features, self.params["W_head"], self.params.get("b"),
                                 self.labels, self.head)

    def _accuracy(self, out):
        return float(np.count_nonzero(np.argmax(out, axis=1) == self.labels)) / len(self.labels)

    def evaluate(self):
        """(loss, accuracy) of the current parameters; accuracy counts the samples whose
        arg-max output (the first class on ties) is their label."""
        loss, out, _, _ = self._forward_backward()
        return loss, self._accuracy(out)

    def step(self):
        """One optimizer step on the whole batch; returns (loss, accuracy) BEFORE it."""
        loss, out, _, dz = self._forward_backward()
        grads = {"W_head": self.features.T @ dz}                     # (D, C)
        if "b" in self.params:
            grads["b"] = dz.sum(axis=0)                              # (C,)
        self.optimizer.step(self.params, grads)
        self.steps_taken += 1
        return loss, self._accuracy(out)


class TrainingRun(object):
    """What :func:`train_head` returns.

    Attributes
    ----------
    losses, accuracies : numpy.ndarray
        (steps + 1,): entry t is measured after t updates, i.e. BEFORE update t; the last
        entry is the final parameters'. ``losses[0]`` is the starting loss (``log(C)``
        from W_head = 0).
    W_head : numpy.ndarray
        (D, C) the final W_head.
    b : numpy.ndarray or None
        (C,) the final bias for ``head="bias"``.
    head, optimizer : str
    """

    __slots__ = ("losses", "accuracies", "W_head", "b", "head", "optimizer")

    def __init__(self, losses, accuracies, W_head, b, head, optimizer):
        self.losses = losses
        self.accuracies = accuracies
        self.W_head = W_head
        self.b = b
        self.head = head
        self.optimizer = optimizer

    def __repr__(self):
        return "TrainingRun(head={!r}, optimizer={!r}, steps={}, loss {:.4g} -> {:.4g})".format(
            self.head, self.optimizer, len(self.losses) - 1, self.losses[0], self.losses[-1])


def train_head(h_cls, W0, labels, steps, lr, optimizer="sgd", head="correct", b0=None,
               input_scale=1.0, eps=EPS):
    """Train a head for ``steps`` full-batch steps; deterministic.

    Parameters
    ----------
    h_cls, W0, labels, head, b0, input_scale, eps
        As :class:`HeadTrainer`.
    steps : int
        >= 0 updates.
    lr : float
        >= 0, the learning rate.
    optimizer : str, optional
        ``"sgd"``, ``"momentum"`` (0.9) or ``"adam"`` (0.9, 0.999, 1e-8).

    Returns
    -------
    TrainingRun
        Per-step losses and accuracies (the loss BEFORE each update, step 0 first, and the
        final one), and the final parameters.

    Raises
    ------
    TypeError, ValueError
        As :func:`pycore.vit.backward.head_backward`, and for a bad steps, lr, optimizer or
        input_scale.

    Examples
    --------
    >>> import math
    >>> h, y = class_means_dataset(3, 8, 2)
    >>> run = train_head(h, np.zeros((8, 3)), y, steps=20, lr=0.1)
    >>> bool(run.losses[0] == math.log(3)), round(float(run.losses[-1]), 4)
    (True, 0.2767)
    >>> run.accuracies[[0, 1, 20]].tolist()      # from W = 0 every sample predicts class 0
    [0.3333333333333333, 1.0, 1.0]
    """
    steps = check_int(steps, "steps", 0)
    trainer = HeadTrainer(h_cls, W0, labels, make_optimizer(optimizer, lr), head=head, b0=b0,
                          input_scale=input_scale, eps=eps)
    losses = np.empty(steps + 1)
    accuracies = np.empty(steps + 1)
    for t in range(steps):
        losses[t], accuracies[t] = trainer.step()
    losses[steps], accuracies[steps] = trainer.evaluate()
    return TrainingRun(losses, accuracies, trainer.params["W_head"], trainer.params.get("b"),
                       head, optimizer)


# -------------------------------------------------------------------------- data set

def class_means_dataset(K, D, per_class, seed=0, spread=1.0):
    """Seeded CLS rows around K class means: labelled data a linear head can learn.

    The K means are drawn first, ``means ~ N(0, 1)`` of shape (K, D), then the noise,
    ``h_cls = means[labels] + spread * N(0, 1)``, both from one
    ``np.random.RandomState(seed)`` (the same numbers in every NumPy version). The labels
    cycle through the classes, ``0, 1, ..., K-1, 0, 1, ...``, so every prefix of the batch is
    as balanced as it can be. Two means are about ``sqrt(2 D)`` apart and the noise has
    norm about ``spread * sqrt(D)``, but along the line between two means it is only
    ``spread`` in size: for moderate spreads a linear head can separate the classes.

    Parameters
    ----------
    K : int
        Classes, >= 1 (C = K).
    D : int
        Features, >= 1.
    per_class : int
        Samples per class, >= 1 (B = K * per_class).
    seed : int, optional
        0 <= seed < 2**32.
    spread : float, optional
        >= 0, the noise's standard deviation.

    Returns
    -------
    h_cls : numpy.ndarray
        (K * per_class, D) float64.
    labels : numpy.ndarray
        (K * per_class,) int64.

    Raises
    ------
    TypeError, ValueError
        For non-integer or non-positive sizes, a seed outside [0, 2**32), a bad spread.

    Examples
    --------
    >>> h, y = class_means_dataset(K=3, D=4, per_class=2, seed=0)
    >>> h.shape, y.tolist()
    ((6, 4), [0, 1, 2, 0, 1, 2])
    """
    K = check_int(K, "K", 1)
    D = check_int(D, "D", 1)
    per_class = check_int(per_class, "per_class", 1)
    seed = check_int(seed, "seed", 0, 2 ** 32 - 1)
    spread = check_number(spread, "spread", low=0.0)
    rs = np.random.RandomState(seed)
    means = rs.standard_normal((K, D))                                # (K, D)
    labels = np.tile(np.arange(K, dtype=np.int64), per_class)         # (B,)
    h_cls = rs.standard_normal((K * per_class, D))                    # (B, D) noise
    h_cls *= spread
    h_cls += means[labels]
    return h_cls, labels
