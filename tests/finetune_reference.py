"""An independent reference for the "Fine-tune the head" panel's numbers, shared by the CPython
and the browser tests: full-batch training of the head and of the mistaken heads, written from
the formulas of docs/training.md in plain NumPy, sharing no code with pycore.
"""
import math

import numpy as np

EPS = 1e-6


def layer_norm(h):
    h = np.asarray(h, dtype=float)
    out = np.empty_like(h)
    for b, row in enumerate(h):
        mean = math.fsum(row) / len(row)
        var = math.fsum((x - mean) ** 2 for x in row) / len(row)
        out[b] = (row - mean) / math.sqrt(var + EPS)
    return out


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cross_entropy(z, labels):
    """Mean over the batch of logsumexp(z_b) - z_b[y_b], each term summed with math.fsum."""
    terms = []
    for row, y in zip(np.asarray(z, dtype=float), labels):
        top = max(row)
        terms.append(top + math.log(math.fsum(math.exp(x - top) for x in row)) - row[y])
    return math.fsum(terms) / len(terms)


def accuracy(z, labels):
    return float(np.mean(np.argmax(z, axis=1) == np.asarray(labels)))


class Optimizer(object):
    def __init__(self, name, lr):
        self.name, self.lr, self.t, self.slots = name, lr, 0, {}

    def update(self, key, p, g):
        self.t += (key == "W")  # one step counts once, whatever the parameters
        if self.name == "sgd":
            return p - self.lr * g
        if self.name == "momentum":
            v = 0.9 * self.slots.get(key, 0.0) + g
            self.slots[key] = v
            return p - self.lr * v
        m, v = self.slots.get(key, (0.0, 0.0))
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        self.slots[key] = (m, v)
        return p - self.lr * (m / (1 - 0.9 ** self.t)) / (np.sqrt(v / (1 - 0.999 ** self.t)) + 1e-8)


def train(h_cls, labels, W0, lr, optimizer, steps, head="correct", input_scale=1.0):
    """Losses (steps + 1: the loss before each update, then the final one), accuracies, the
    softmax-inside head's own loss (else None), and the final W_head.

    Every loss is the cross-entropy of the head's logits with the softmax applied once; for
    "softmax_inside" its own training loss (softmax applied twice) is the third result.
    """
    h = np.asarray(h_cls, dtype=float) * input_scale
    x = h if head == "no_layernorm" else layer_norm(h)
    y = np.asarray(labels)
    B = len(y)
    onehot = np.zeros((B, np.shape(W0)[1]))
    onehot[np.arange(B), y] = 1.0
    W, b = np.array(W0, dtype=float), np.zeros(np.shape(W0)[1])
    opt = Optimizer(optimizer, lr)
    losses, accuracies, own = [], [], []
    for t in range(steps + 1):
        z = x @ W + (b if head == "bias" else 0.0)
        losses.append(cross_entropy(z, y))
        accuracies.append(accuracy(z, y))
        if head == "softmax_inside":
            q = softmax(z)
            own.append(cross_entropy(q, y))
            r = (softmax(q) - onehot) / B
            dz = q * (r - np.sum(r * q, axis=1, keepdims=True))
        else:
            dz = (softmax(z) - onehot) / B
        if t == steps:
            break
        W = opt.update("W", W, x.T @ dz)
        if head == "bias":
            b = opt.update("b", b, dz.sum(axis=0))
    return losses, accuracies, (own if head == "softmax_inside" else None), W


def gradient(h_cls, labels, W):
    """dW_head of the correct head: h_hat.T @ (softmax(h_hat @ W) - onehot) / B."""
    x = layer_norm(h_cls)
    y = np.asarray(labels)
    p = softmax(x @ W)
    p[np.arange(len(y)), y] -= 1.0
    return x.T @ p / len(y)
