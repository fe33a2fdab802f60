"""The optimizers that fine-tune the head: SGD, heavy-ball momentum and Adam.

Each updates named parameters in place from gradients of the same names and shapes::

    SGD        p <- p - lr * g
    Momentum   v <- momentum * v + g;   p <- p - lr * v
    Adam       m <- beta1 m + (1 - beta1) g;   v <- beta2 v + (1 - beta2) g**2
               p <- p - lr * (m / (1 - beta1**t)) / (sqrt(v / (1 - beta2**t)) + eps)

docs/training.md, "Optimizers".
"""

import numpy as np

from .checks import as_float64, real_array, shape_text
from .scalars import check_number

class _Optimizer(object):
    """Shared checks: the same names in params and grads, same shapes, float64 params."""

    __slots__ = ("lr", "state", "t")

    def __init__(self, lr):
        self.lr = check_number(lr, "lr", low=0.0)
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

    BUFFERS = 0
    """Arrays of a parameter's shape the method keeps between steps."""

    def make_buffers(self, params):
        """Make the buffers :meth:`step` keeps for ``params`` now (zeros, as the first step
        would make them) and write them once, so that the first step does not pay for memory
        used for the first time (the page's request that starts a training run has time for
        it; the steps give the same numbers).

        Parameters
        ----------
        params : dict
            The arrays :meth:`step` will update, by name.

        Examples
        --------
        >>> opt = Adam(0.1); opt.make_buffers({"W": np.ones((2, 3))})
        >>> [a.shape for a in opt.state["W"]], opt.t
        ([(2, 3), (2, 3)], 0)
        """
        if not self.BUFFERS:
            return
        for name in sorted(params):
            for a in self._slots(name, np.shape(params[name]), self.BUFFERS):
                a.fill(0.0)

    def _slots(self, name, shape, count):
        """The per-parameter buffers the method keeps between steps (zeros at first)."""
        slot = self.state.get(name)
        if slot is None:
            slot = self.state[name] = tuple(np.zeros(shape) for _ in range(count))
        return slot


BLOCK_NUMBERS = 2 ** 15
"""Numbers of a parameter one block of an update covers (256 KB of float64): the update runs
block by block, so its temporaries are one block's, not a whole W_head's per head. Every
operation is elementwise, so the numbers are those of one pass over the whole array."""


def _blocks(p):
    """Slices of p along its first axis covering about :data:`BLOCK_NUMBERS` numbers each, and
    a scratch buffer of one block's shape (the last block may use only its start)."""
    if p.ndim == 0:
        return [Ellipsis], np.empty(())
    row = max(1, int(np.prod(p.shape[1:])))   # numbers per index of the first axis
    rows = max(1, BLOCK_NUMBERS // row)
    return ([slice(r, r + rows) for r in range(0, p.shape[0], rows)],
            np.empty((min(rows, p.shape[0]),) + p.shape[1:]))


def _scratch(buf, block):
    """The part of the scratch buffer that matches ``block`` (a view of p)."""
    return buf if buf.ndim == 0 else buf[:block.shape[0]]


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
        Empty: plain gradient descent keeps nothing between steps.

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
            blocks, scratch = _blocks(p)
            for s in blocks:
                pb, buf = p[s], _scratch(scratch, p[s])
                np.multiply(g[s], self.lr, out=buf)
                pb -= buf


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
    BUFFERS = 1

    def __init__(self, lr, momentum=0.9):
        _Optimizer.__init__(self, lr)
        self.momentum = check_number(momentum, "momentum", low=0.0, high=1.0)

    def step(self, params, grads):
        """Update every ``params[name]`` in place; the velocities are kept by name."""
        for name, p, g in self._pairs(params, grads):
            (v,) = self._slots(name, p.shape, self.BUFFERS)
            blocks, scratch = _blocks(p)
            for s in blocks:
                pb, vb, buf = p[s], v[s], _scratch(scratch, p[s])
                vb *= self.momentum
                vb += g[s]
                np.multiply(vb, self.lr, out=buf)
                pb -= buf


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
    BUFFERS = 2

    def __init__(self, lr, beta1=0.9, beta2=0.999, eps=1e-8):
        _Optimizer.__init__(self, lr)
        self.beta1 = check_number(beta1, "beta1", low=0.0, high=1.0)
        self.beta2 = check_number(beta2, "beta2", low=0.0, high=1.0)
        self.eps = check_number(eps, "eps", low=0.0, low_open=True)

    def step(self, params, grads):
        """Update every ``params[name]`` in place; the moments are kept by name."""
        pairs = self._pairs(params, grads)
        c1 = 1.0 - self.beta1 ** self.t                              # bias corrections
        c2 = 1.0 - self.beta2 ** self.t
        for name, p, g in pairs:
            m, v = self._slots(name, p.shape, self.BUFFERS)
            blocks, scratch = _blocks(p)
            for s in blocks:
                pb, gb, mb, vb, buf = p[s], g[s], m[s], v[s], _scratch(scratch, p[s])
                mb *= self.beta1
                np.multiply(gb, 1.0 - self.beta1, out=buf)
                mb += buf
                vb *= self.beta2
                np.multiply(gb, gb, out=buf)
                buf *= 1.0 - self.beta2
                vb += buf
                np.divide(vb, c2, out=buf)                           # v_hat
                np.sqrt(buf, out=buf)
                buf += self.eps
                np.divide(mb, buf, out=buf)
                buf *= self.lr / c1                                  # lr * m_hat / (...)
                pb -= buf


def make_optimizer(name, lr):
    """An optimizer by name (:data:`OPTIMIZERS`) with its default settings.

    Examples
    --------
    >>> type(make_optimizer("adam", 0.01)).__name__
    'Adam'
    """
    if name not in OPTIMIZER_CLASSES:
        raise ValueError("unknown optimizer {!r}: choose one of {}".format(
            name, ", ".join(OPTIMIZERS)))
    return OPTIMIZER_CLASSES[name](lr)


OPTIMIZER_CLASSES = {"sgd": SGD, "momentum": Momentum, "adam": Adam}
"""Each optimizer, by name (its ``BUFFERS``: the arrays of a parameter's shape it keeps between
steps)."""

OPTIMIZERS = tuple(OPTIMIZER_CLASSES)
"""The optimizer names :func:`make_optimizer` (and :func:`pycore.vit.training.train_head`)
accept: ``("sgd", "momentum", "adam")``."""
