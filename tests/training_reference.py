"""Independent references for training the head (tests/test_vit_loss.py, test_vit_backward.py,
test_vit_training.py): LayerNorm, softmax and the loss of each head written out in NumPy and
plain Python, finite differences, and random cases. Test modules import it as
``training_reference``."""
import math

import numpy as np

from pathlib import Path


EPS = 1e-6
ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------- independent references

def ref_h_hat(h, eps=EPS):
    """LayerNorm by the textbook formula (np.var is the population variance)."""
    return (h - h.mean(axis=1, keepdims=True)) / np.sqrt(h.var(axis=1, keepdims=True) + eps)


def ref_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def ref_loss(h, W, y, head="correct", b=None, eps=EPS):
    """The loss of each head, written out directly (no code shared with pycore)."""
    f = h if head == "no_layernorm" else ref_h_hat(h, eps)
    z = f @ W
    if b is not None:
        z = z + b
    if head == "softmax_inside":
        z = ref_softmax(z)
    m = z.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
    return float(np.mean(lse - z[np.arange(len(y)), y]))


def fsum_cross_entropy(logits, labels):
    """Cross-entropy over Python floats with math.fsum: log-sum-exp by definition."""
    losses = []
    for row, label in zip(logits, labels):
        row = [float(v) for v in row]
        m = max(row)
        losses.append(m + math.log(math.fsum(math.exp(v - m) for v in row)) - row[int(label)])
    return math.fsum(losses) / len(losses)


def onehot(y, C):
    out = np.zeros((len(y), C))
    out[np.arange(len(y)), y] = 1.0
    return out


def pow2(v):
    return 2.0 ** np.floor(np.log2(v))


def finite_differences(f, x, steps):
    """Fourth-order central differences, one entry at a time, with a step per entry."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        vals = []
        for k in (-2, -1, 1, 2):
            xp = x.copy()
            xp[idx] = x[idx] + k * steps[idx]
            vals.append(f(xp))
        g[idx] = (vals[0] - 8 * vals[1] + 8 * vals[2] - vals[3]) / (12 * steps[idx])
    return g


def relative_error(numeric, analytic):
    return float(np.abs(numeric - analytic).max() / np.abs(analytic).max())


def random_case(seed, head):
    """B rows: a constant row, an eps-dominated row (variance 1e-10..1e-6), ordinary rows of
    random scale and offset; W scaled so that no softmax saturates (a saturated row's gradient
    is below what finite differences resolve). D >= 3: with D = 2 the gradient is O(eps), see
    test_two_features_give_an_eps_sized_gradient."""
    rs = np.random.RandomState(seed)
    B, D, C = rs.randint(2, 7), rs.randint(3, 9), rs.randint(2, 6)
    h = rs.randn(B, D) * 10 ** rs.uniform(-1, 1, (B, 1)) + rs.uniform(-5, 5, (B, 1))
    h[0] = rs.uniform(-5, 5)
    h[1] = rs.uniform(-5, 5) + rs.randn(D) * 10 ** rs.uniform(-5, -3)
    y = rs.randint(0, C, B)
    W = rs.randn(D, C) / np.sqrt(D)
    if head == "no_layernorm":
        W /= np.abs(h).max()
    b = rs.randn(C) if head == "bias" else None
    return h, W, y, b
