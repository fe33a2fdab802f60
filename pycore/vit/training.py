"""Training the ViT fine-tuning head: the loss, its exact gradients, optimizers, a loop.

The head is ``logits = LayerNorm(h_cls) @ W_head`` (population variance, eps 1e-6, no
gamma/beta, no bias, no softmax); fine-tuning trains W_head with the cross-entropy loss,
which applies the softmax itself::

    loss    = mean_b( -log softmax(logits)[b, y_b] )
    dlogits = (softmax(logits) - onehot(y)) / B                  (B, C)
    dW_head = h_hat.T @ dlogits                                   (D, C)
    dh_hat  = dlogits @ W_head.T                                  (B, D)
    dh_cls  = (dh_hat - mean(dh_hat) - h_hat * mean(dh_hat * h_hat)) / sqrt(var + eps)

(the last two means per row, over the D features). The same gradients are given for
the mistaken heads worth training ("softmax_inside", "no_layernorm", "bias"), with
:func:`head_backward`'s ``head=`` argument. :class:`SGD`, :class:`Momentum` and
:class:`Adam` update parameters in place; :class:`HeadTrainer` takes one full-batch step
at a time (what the page animates) and :func:`train_head` runs a whole curve.
:func:`class_means_dataset` makes the page's seeded fine-tuning data. docs/training.md
derives all of it.
"""

import math
import numbers

import numpy as np

from .checks import (as_float64, check_finite, cls_rows, expect_ndim, real_array,
                     shape_text, w_head_for)
from .head import EPS, normalize_rows, project
from .softmax import log_softmax, softmax

HEADS = ("correct", "softmax_inside", "no_layernorm", "bias")
"""The heads :func:`head_backward` and :func:`train_head` know, the correct one first."""

OPTIMIZERS = ("sgd", "momentum", "adam")
"""The optimizer names :func:`train_head` accepts."""

LIMITS = {"B": 64, "D": 1024, "C": 1000}
"""The page's sizes: at most 64 samples, 1024 features, 1000 classes."""

FINE_TUNING_PRESET = {"K": 10, "D": 64, "per_class": 6, "seed": 0, "spread": 2.0,
                      "lr": 0.1, "steps": 50}
"""The page's fine-tuning preset: :func:`class_means_dataset` arguments (B = 60, C = 10)
and a learning rate and number of SGD steps from W_head = 0 that show the loss falling."""


# ---------------------------------------------------------------------------- checks

def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


def _wrong_label_shape(arr, B):
    raise ValueError("labels has shape {} but must have shape ({},), one class index per "
                     "sample of the batch (B = {})".format(shape_text(arr.shape), B, B))


def check_labels(labels, B, C):
    """Check class labels against a batch of B samples and C classes; return them as int64.

    Labels are class indices: integers only. Floats are refused even when they are
    whole numbers (``2.0``), so that a regression target or a one-hot row passed by
    mistake is never silently truncated; cast with ``.astype(int)`` when that is meant.

    Parameters
    ----------
    labels : array_like
        Shape (B,), integers in [0, C).
    B, C : int
        The batch size and the number of classes.

    Returns
    -------
    numpy.ndarray
        (B,) int64 (a new array unless ``labels`` already is one).

    Raises
    ------
    TypeError
        For booleans, floats, text or other non-integers, naming the first offending entry.
    ValueError
        For a shape other than (B,), or a label outside [0, C), naming the entry.

    Examples
    --------
    >>> check_labels([2, 0], 2, 3).tolist()
    [2, 0]
    >>> check_labels([0, 3], 2, 3)
    Traceback (most recent call last):
    ...
    ValueError: labels[1] = 3 is out of range: class indices must be in [0, 3) for C = 3 classes
    """
    if isinstance(labels, np.ndarray) and labels.dtype.kind != "O":
        arr = labels
    else:
        if np.isscalar(labels):
            raise ValueError("labels must have shape ({},), one class index per sample; got "
                             "a scalar ({!r})".format(B, labels))
        arr = np.array(labels, dtype=object)
        if arr.ndim != 1:
            _wrong_label_shape(arr, B)
        for i, value in enumerate(arr):
            if _is_bool(value) or not isinstance(value, numbers.Integral):
                raise TypeError("labels[{}] is {!r}: labels must be integer class indices "
                                "(not booleans, floats or text)".format(i, value))
        arr = np.array([int(v) for v in arr], dtype=object)
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError("labels is boolean (dtype bool): labels must be integer class indices")
    if kind not in "iuO":
        raise TypeError("labels has dtype {}: labels must be integer class indices (cast "
                        "whole-number floats with .astype(int))".format(arr.dtype))
    if arr.shape != (B,):
        _wrong_label_shape(arr, B)
    bad = np.nonzero((arr < 0) | (arr >= C))[0] if B else ()
    if len(bad):
        i = int(bad[0])
        raise ValueError("labels[{}] = {} is out of range: class indices must be in [0, {}) "
                         "for C = {} classes".format(i, int(arr[i]), C, C))
    if arr.dtype == np.int64:
        return arr
    return arr.astype(np.int64)


def _check_head(head):
    if head not in HEADS:
        raise ValueError("unknown head {!r}: choose one of {}".format(head, ", ".join(HEADS)))


def _check_number(value, name, low=None, high=None, low_open=False, high_open=True):
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError("{} must be a real number; got {!r}".format(name, value))
    value = float(value)
    ok = math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        span = "{}{}, {}{}".format("(" if low_open else "[", "-inf" if low is None else low,
                                   "inf" if high is None else high, ")" if high_open else "]")
        raise ValueError("{} must be a finite number in {}; got {!r}".format(name, span, value))
    return value


def _check_int(value, name, low, high=None):
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        raise TypeError("{} must be an integer; got {!r}".format(name, value))
    value = int(value)
    if value < low or (high is not None and value > high):
        raise ValueError("{} must be an integer in [{}, {}]; got {}".format(
            name, low, "inf" if high is None else high, value))
    return value


def _check_bias(b, C):
    v = as_float64(real_array(b, "b"))
    expect_ndim(v, "b", 1, "(C,)")
    if v.shape[0] != C:
        raise ValueError("b has shape {} but W_head has C = {} columns: b must be ({},)".format(
            shape_text(v.shape), C, C))
    check_finite(v, "b")
    return v


def _inputs(h_cls, W_head, labels, head, b):
    """h_cls (B, D) and W (D, C) as float64, labels int64, b (C,) or None, all checked."""
    _check_head(head)
    h = cls_rows(h_cls)
    if h.shape[0] < 1:
        raise ValueError("h_cls has shape {}: the loss is a mean over the batch, which needs "
                         "B >= 1 samples".format(shape_text(h.shape)))
    W = w_head_for(W_head, h.shape[1], "h_cls", h.shape)
    if W.shape[1] < 1:
        raise ValueError("W_head has shape {}: the loss needs C >= 1 classes".format(
            shape_text(W.shape)))
    y = check_labels(labels, h.shape[0], W.shape[1])
    if head == "bias":
        b = np.zeros(W.shape[1]) if b is None else _check_bias(b, W.shape[1])
    elif b is not None:
        raise ValueError("b is only used by head='bias'; got head={!r}".format(head))
    return h, W, y, b


# ------------------------------------------------------------------------------ loss

def _mean(values):
    """The mean of a 1-D array, shifted by its first entry: equal entries give that
    entry exactly (the mean of B copies of log C is log C, not one rounding off)."""
    first = values[0]
    return float(first + (values - first).sum() / values.shape[0])


def cross_entropy(logits, labels):
    """Mean cross-entropy of raw logits: ``mean_b( -log softmax(logits)[b, labels[b]] )``.

    Computed with a stable log-softmax (log-sum-exp with the row maximum subtracted), in
    float64, so logits of any finite size give a finite loss. Equal per-sample losses
    give exactly that value: all-zero logits give exactly ``log(C)``.

    Parameters
    ----------
    logits : array_like
        (B, C) real numbers, finite, B >= 1 and C >= 1: the head's output, before any softmax.
    labels : array_like
        (B,) integer class indices in [0, C); floats are refused, even whole ones (see
        :func:`check_labels`).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        Non-numeric or boolean logits; non-integer or boolean labels (naming the entry).
    ValueError
        Logits not 2-D, empty, or holding NaN/inf (naming the index); labels of the wrong
        shape (naming both shapes) or out of range (naming the entry).

    Examples
    --------
    >>> round(cross_entropy([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [0, 2]), 6)
    0.669079
    >>> cross_entropy(np.zeros((4, 10)), [0, 1, 2, 3]) == math.log(10)
    True
    """
    z = as_float64(real_array(logits, "logits"))
    expect_ndim(z, "logits", 2, "(B, C)")
    if z.shape[0] < 1 or z.shape[1] < 1:
        raise ValueError("logits has shape {}: the loss needs B >= 1 samples and C >= 1 "
                         "classes".format(shape_text(z.shape)))
    check_finite(z, "logits")
    y = check_labels(labels, z.shape[0], z.shape[1])
    picked = log_softmax(z)[np.arange(z.shape[0]), y]              # (B,)
    return _mean(-picked)


def _loss_and_probs(logits, y):
    """(loss, probs) of finite logits (B, C): one exp pass, probs a new array."""
    rows = np.arange(logits.shape[0])
    probs = logits - logits.max(axis=1, keepdims=True)             # (B, C) shifted, <= 0
    picked = probs[rows, y]                                          # (B,) z_y - max
    np.exp(probs, out=probs)
    total = probs.sum(axis=1, keepdims=True)                         # (B, 1) in [1, C]
    probs /= total
    return _mean(np.log(total[:, 0]) - picked), probs


# ------------------------------------------------------------------------- gradients

class HeadGradients(object):
    """One forward and backward pass of a head through the cross-entropy loss.

    Attributes
    ----------
    head : str
        Which head, one of :data:`HEADS`.
    loss : float
        The mean cross-entropy of ``logits``.
    logits : numpy.ndarray
        (B, C) what the head outputs, the input of the cross-entropy (for
        ``"softmax_inside"`` these are already probabilities).
    probs : numpy.ndarray
        (B, C) ``softmax(logits)``, as the loss applies it.
    dW_head : numpy.ndarray
        (D, C) d loss / d W_head.
    dh_cls : numpy.ndarray
        (B, D) d loss / d h_cls (through the LayerNorm, except for ``"no_layernorm"``).
    db : numpy.ndarray or None
        (C,) d loss / d b for ``"bias"``; None for the other heads.
    """

    __slots__ = ("head", "loss", "logits", "probs", "dW_head", "dh_cls", "db")

    def __init__(self, head, loss, logits, probs, dW_head, dh_cls, db=None):
        self.head = head
        self.loss = loss
        self.logits = logits
        self.probs = probs
        self.dW_head = dW_head
        self.dh_cls = dh_cls
        self.db = db

    def __repr__(self):
        B, C = self.logits.shape
        return "HeadGradients(head={!r}, B={}, D={}, C={}, loss={:.6g})".format(
            self.head, B, self.dh_cls.shape[1], C, self.loss)


def _features(h, head, eps):
    """What multiplies W_head: h_hat for the heads with LayerNorm, h itself without.
    Returns (features, sigma) with sigma = sqrt(var + eps) per row (None without LayerNorm)."""
    if head == "no_layernorm":
        return h, None
    mean, var, h_hat = normalize_rows(h, eps)
    return h_hat, _row_std(h, var, eps)


def _row_std(h, var, eps):
    """sqrt(var + eps) (B, 1); rows whose variance overflowed float64 are rescaled first."""
    std = np.sqrt(var + eps)
    bad = ~np.isfinite(std[:, 0])
    if bad.any():
        x = h[bad]
        scale = np.max(np.abs(x), axis=1, keepdims=True)
        xs = x / scale
        xs -= xs.mean(axis=1, keepdims=True)
        var_s = np.mean(xs * xs, axis=1, keepdims=True)
        std[bad] = scale * np.sqrt(var_s + (eps / scale) / scale)
    return std


def _forward_backward(features, W, b, y, head):
    """Loss, head output, probs and dz = d loss / d(features @ W + b), each (B, C)."""
    if head == "no_layernorm":
        with np.errstate(all="ignore"):
            z = features @ W                                         # (B, C)
        if not np.isfinite(z).all():
            check_finite(W, "W_head")
            raise ValueError("the logits overflowed float64: without LayerNorm, h_cls "
                             "(largest magnitude {:.3g}) reaches W_head unnormalized".format(
                                 float(np.max(np.abs(features)))))
    else:
        z = project(features, W)                                     # (B, C)
    if b is not None:
        z += b
    out = softmax(z) if head == "softmax_inside" else z              # what the head returns
    loss, probs = _loss_and_probs(out, y)
    B = out.shape[0]
    dout = probs.copy()                                              # (B, C)
    dout[np.arange(B), y] -= 1.0
    dout /= B                                                        # (softmax - onehot) / B
    if head == "softmax_inside":
        # back through the head's own softmax: dz = q * (dout - sum(dout * q))
        dz = dout - np.einsum("ij,ij->i", dout, out)[:, None]
        dz *= out
    else:
        dz = dout
    return loss, out, probs, dz


def _layer_norm_backward(d_hat, h_hat, std):
    """d loss / d h from d loss / d h_hat (overwritten: it becomes the result), for
    ``h_hat = (h - mean) / std`` with the population variance and no gamma/beta."""
    D = h_hat.shape[1]
    along = np.einsum("ij,ij->i", d_hat, h_hat)[:, None] / D         # (B, 1) mean(d_hat * h_hat)
    d_hat -= d_hat.mean(axis=1, keepdims=True)
    d_hat -= h_hat * along
    d_hat /= std
    return d_hat


def head_backward(h_cls, W_head, labels, eps=EPS, head="correct", b=None):
    """The loss of a head on labelled CLS rows, and its exact gradients.

    ``head="correct"`` (the default) is the ViT fine-tuning head, ``h_hat @ W_head``
    with ``h_hat = LayerNorm(h_cls)``; the loss is :func:`cross_entropy` of its logits.
    The mistaken heads, each trained with the same loss on what it outputs:

    * ``"softmax_inside"``: the head returns ``softmax(h_hat @ W_head)`` and the loss
      applies softmax again, so **the softmax is applied twice**;
    * ``"no_layernorm"``: ``h_cls @ W_head``, the raw rows;
    * ``"bias"``: ``h_hat @ W_head + b``, with ``db`` returned too (``b`` defaults to 0).

    The LayerNorm is :func:`pycore.vit.head.normalize_rows` (rows whose moments would
    overflow float64 are rescaled), and its backward is, per row,
    ``dh_cls = (dh_hat - mean(dh_hat) - h_hat * mean(dh_hat * h_hat)) / sqrt(var + eps)``.

    Parameters
    ----------
    h_cls : array_like
        (B, D) CLS rows, finite real numbers, B >= 1.
    W_head : array_like
        (D, C), C >= 1.
    labels : array_like
        (B,) integer class indices in [0, C) (see :func:`check_labels`).
    eps : float, optional
        LayerNorm epsilon, > 0 (1e-6): a constant row's gradient is 1/sqrt(eps) times
        the centred dh_hat, so eps = 0 would make it infinite.
    head : str, optional
        One of :data:`HEADS`.
    b : array_like, optional
        (C,) the bias of ``head="bias"``; refused for the other heads.

    Returns
    -------
    HeadGradients
        ``loss``, ``logits``, ``probs``, ``dW_head``, ``dh_cls`` and ``db``, all new arrays.

    Raises
    ------
    TypeError, ValueError
        As :func:`pycore.vit.head.head_from_cls` for h_cls and W_head (naming shapes and
        the first NaN/inf), as :func:`check_labels` for labels; ValueError for an unknown
        head, a bias with another head, a bias not (C,), eps <= 0, or logits that overflow.

    Examples
    --------
    >>> g = head_backward([[1.0, 0.0, -1.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], [0])
    >>> round(g.loss, 4), g.dW_head.round(4).tolist()
    (0.2576, [[-0.2781, 0.2781], [0.0, 0.0], [0.2781, -0.2781]])
    >>> g.dh_cls.round(4).tolist()          # each row sums to 0
    [[-0.1391, 0.2781, -0.1391]]
    """
    eps = _check_number(eps, "eps", low=0.0, low_open=True)
    h, W, y, b = _inputs(h_cls, W_head, labels, head, b)
    features, std = _features(h, head, eps)                          # (B, D), (B, 1)
    loss, out, probs, dz = _forward_backward(features, W, b, y, head)
    dW = features.T @ dz                                             # (D, C)
    d_features = dz @ W.T                                            # (B, D)
    dh = d_features if std is None else _layer_norm_backward(d_features, features, std)
    db = dz.sum(axis=0) if head == "bias" else None                  # (C,)
    return HeadGradients(head, loss, out, probs, dW, dh, db)


# ------------------------------------------------------------------------ optimizers

class _Optimizer(object):
    """Shared checks: the same names in params and grads, same shapes, float64 params."""

    __slots__ = ("lr", "state", "t")

    def __init__(self, lr):
        self.lr = _check_number(lr, "lr", low=0.0)
        self.state = {}
        self.t = 0

    def _pairs(self, params, grads):
        if not isinstance(params, dict) or not isinstance(grads, dict):
            raise TypeError("params and grads must be dicts of arrays keyed by name")
        if set(params) != set(grads):
            raise ValueError("params and grads must have the same names; got params {} and "
                             "grads {}".format(sorted(params), sorted(grads)))
        pairs = []
        for name in sorted(params):
            p, g = params[name], grads[name]
            if not (isinstance(p, np.ndarray) and p.dtype == np.float64 and p.flags.writeable):
                raise TypeError("params[{!r}] must be a writeable float64 ndarray (updated in "
                                "place)".format(name))
            g = as_float64(real_array(g, "grads[{!r}]".format(name)))
            if g.shape != p.shape:
                raise ValueError("grads[{!r}] has shape {} but params[{!r}] has shape {}".format(
                    name, shape_text(g.shape), name, shape_text(p.shape)))
            slot = self.state.get(name)
            if slot is not None and slot[0].shape != p.shape:
                raise ValueError("params[{!r}] changed shape from {} to {}: use a new "
                                 "optimizer".format(name, shape_text(slot[0].shape),
                                                    shape_text(p.shape)))
            pairs.append((name, p, g))
        self.t += 1
        return pairs

    def _slots(self, name, shape, count):
        """The per-parameter buffers (zeros at first), the last one a scratch buffer."""
        slot = self.state.get(name)
        if slot is None:
            slot = self.state[name] = tuple(np.zeros(shape) for _ in range(count))
        return slot


class SGD(_Optimizer):
    """Plain gradient descent: ``p <- p - lr * g``.

    Parameters
    ----------
    lr : float
        Learning rate, >= 0.

    Attributes
    ----------
    t : int
        Steps taken.
    state : dict
        A scratch buffer per parameter (no other state).

    Examples
    --------
    >>> p = {"W": np.array([1.0, 2.0])}
    >>> SGD(0.5).step(p, {"W": np.array([2.0, -2.0])})
    >>> p["W"].tolist()
    [0.0, 3.0]
    """

    __slots__ = ()

    def step(self, params, grads):
        """Update every ``params[name]`` in place from ``grads[name]`` (same shapes)."""
        for name, p, g in self._pairs(params, grads):
            (buf,) = self._slots(name, p.shape, 1)
            np.multiply(g, self.lr, out=buf)
            p -= buf


class Momentum(_Optimizer):
    """Heavy-ball momentum: ``v <- momentum * v + g``, then ``p <- p - lr * v``, v = 0 at first.

    (The form PyTorch's SGD uses; with a constant lr it equals ``v <- momentum * v - lr * g``,
    ``p <- p + v``.)

    Parameters
    ----------
    lr : float
        Learning rate, >= 0.
    momentum : float, optional
        In [0, 1), 0.9 by default; 0 is plain SGD.

    Examples
    --------
    >>> p, opt = {"W": np.array([0.0])}, Momentum(0.1)
    >>> opt.step(p, {"W": np.array([1.0])}); opt.step(p, {"W": np.array([1.0])})
    >>> p["W"].round(6).tolist()      # -0.1 * 1, then -0.1 * (0.9 + 1)
    [-0.29]
    """

    __slots__ = ("momentum",)

    def __init__(self, lr, momentum=0.9):
        _Optimizer.__init__(self, lr)
        self.momentum = _check_number(momentum, "momentum", low=0.0, high=1.0)

    def step(self, params, grads):
        """Update every ``params[name]`` in place; the velocities are kept by name."""
        for name, p, g in self._pairs(params, grads):
            v, buf = self._slots(name, p.shape, 2)
            v *= self.momentum
            v += g
            np.multiply(v, self.lr, out=buf)
            p -= buf


class Adam(_Optimizer):
    """Adam (Kingma and Ba 2015), with bias correction::

        m <- beta1 * m + (1 - beta1) * g          v <- beta2 * v + (1 - beta2) * g**2
        p <- p - lr * (m / (1 - beta1**t)) / (sqrt(v / (1 - beta2**t)) + eps)

    with m = v = 0 at first and t the step number, from 1. The first step moves each
    entry by lr * sign(g) (up to eps), whatever the gradient's size.

    Parameters
    ----------
    lr : float
        Learning rate, >= 0.
    beta1, beta2 : float, optional
        In [0, 1): 0.9 and 0.999.
    eps : float, optional
        > 0: 1e-8.

    Examples
    --------
    >>> p = {"W": np.array([1.0, 1.0])}
    >>> Adam(0.01).step(p, {"W": np.array([3.0, -1e-3])})
    >>> p["W"].round(6).tolist()
    [0.99, 1.01]
    """

    __slots__ = ("beta1", "beta2", "eps")

    def __init__(self, lr, beta1=0.9, beta2=0.999, eps=1e-8):
        _Optimizer.__init__(self, lr)
        self.beta1 = _check_number(beta1, "beta1", low=0.0, high=1.0)
        self.beta2 = _check_number(beta2, "beta2", low=0.0, high=1.0)
        self.eps = _check_number(eps, "eps", low=0.0, low_open=True)

    def step(self, params, grads):
        """Update every ``params[name]`` in place; the moments are kept by name."""
        pairs = self._pairs(params, grads)
        c1 = 1.0 - self.beta1 ** self.t                              # bias corrections
        c2 = 1.0 - self.beta2 ** self.t
        for name, p, g in pairs:
            m, v, buf = self._slots(name, p.shape, 3)
            m *= self.beta1
            np.multiply(g, 1.0 - self.beta1, out=buf)
            m += buf
            v *= self.beta2
            np.multiply(g, g, out=buf)
            buf *= 1.0 - self.beta2
            v += buf
            np.divide(v, c2, out=buf)                                # v_hat
            np.sqrt(buf, out=buf)
            buf += self.eps
            np.divide(m, buf, out=buf)
            buf *= self.lr / c1                                      # lr * m_hat / (...)
            p -= buf


def make_optimizer(name, lr):
    """An optimizer by name (:data:`OPTIMIZERS`) with its default settings.

    Examples
    --------
    >>> type(make_optimizer("adam", 0.01)).__name__
    'Adam'
    """
    classes = {"sgd": SGD, "momentum": Momentum, "adam": Adam}
    if name not in classes:
        raise ValueError("unknown optimizer {!r}: choose one of {}".format(
            name, ", ".join(OPTIMIZERS)))
    return classes[name](lr)


# -------------------------------------------------------------------------- training

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
        One of :data:`HEADS`.
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
        eps = _check_number(eps, "eps", low=0.0, low_open=True)
        scale = _check_number(input_scale, "input_scale", low=0.0, low_open=True)
        h, W, y, b = _inputs(h_cls, W0, labels, head, b0)
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
        self.features = _features(h, head, eps)[0]                   # h_hat, or h
        self.labels = np.array(y)                                     # (B,) its own copy
        self.params = {"W_head": np.array(W, dtype=np.float64)}      # the trainer's own copy
        if b is not None:
            self.params["b"] = np.array(b, dtype=np.float64)
        self.steps_taken = 0

    def _forward_backward(self):
        return _forward_backward(self.features, self.params["W_head"], self.params.get("b"),
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
        As :func:`head_backward`, and for a bad steps, lr, optimizer or input_scale.

    Examples
    --------
    >>> h, y = class_means_dataset(3, 8, 2)
    >>> run = train_head(h, np.zeros((8, 3)), y, steps=20, lr=0.1)
    >>> bool(run.losses[0] == math.log(3)), round(float(run.losses[-1]), 4)
    (True, 0.2767)
    >>> run.accuracies[[0, 1, 20]].tolist()      # from W = 0 every sample predicts class 0
    [0.3333333333333333, 1.0, 1.0]
    """
    steps = _check_int(steps, "steps", 0)
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
    """Seeded CLS rows around K class means, for the page's fine-tuning preset.

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
        Features, 1 <= D <= 1024.
    per_class : int
        Samples per class, >= 1, with B = K * per_class <= 64.
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
        For non-integer sizes or seed, sizes outside the page's limits, a bad spread.

    Examples
    --------
    >>> h, y = class_means_dataset(K=3, D=4, per_class=2, seed=0)
    >>> h.shape, y.tolist()
    ((6, 4), [0, 1, 2, 0, 1, 2])
    """
    K = _check_int(K, "K", 1, LIMITS["C"])
    D = _check_int(D, "D", 1, LIMITS["D"])
    per_class = _check_int(per_class, "per_class", 1)
    if K * per_class > LIMITS["B"]:
        raise ValueError("K * per_class = {} * {} = {} samples is over the limit of B = {}"
                         .format(K, per_class, K * per_class, LIMITS["B"]))
    seed = _check_int(seed, "seed", 0, 2 ** 32 - 1)
    spread = _check_number(spread, "spread", low=0.0)
    rs = np.random.RandomState(seed)
    means = rs.standard_normal((K, D))                                # (K, D)
    labels = np.tile(np.arange(K, dtype=np.int64), per_class)         # (B,)
    h_cls = rs.standard_normal((K * per_class, D))                    # (B, D) noise
    h_cls *= spread
    h_cls += means[labels]
    return h_cls, labels
