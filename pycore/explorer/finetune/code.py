"""The training run as NumPy code: a runnable snippet that reproduces the loss curve of the
"Fine-tune the head" panel in CPython (export format "training")."""
import numpy as np

from ..export import files as export
from ..state.cells import format_number
from .run import OPTIMIZER_NAMES

_TRAINING_CODE = '''

def layer_norm(x, eps=1e-6):
    """(x - mean) / sqrt(var + eps) over the last axis; population variance, no gamma/beta."""
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def loss_and_gradient(h_hat, W_head, labels):
    """Mean cross-entropy of the logits h_hat @ W_head (the loss applies the softmax), and
    its gradient with respect to W_head: h_hat.T @ (softmax(logits) - onehot(labels)) / B."""
    B = h_hat.shape[0]
    logits = h_hat @ W_head
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -log_probs[np.arange(B), labels].mean()
    delta = np.exp(log_probs)
    delta[np.arange(B), labels] -= 1.0
    return loss, h_hat.T @ (delta / B)


h_hat = layer_norm(h_cls)   # the CLS rows are frozen: LayerNorm runs once
'''

_UPDATES = {
    "sgd": ("", "    W_head = W_head - lr * dW_head\n"),
    "momentum": ("velocity = np.zeros_like(W_head)\n",
                 "    velocity = 0.9 * velocity + dW_head\n"
                 "    W_head = W_head - lr * velocity\n"),
    "adam": ("m = np.zeros_like(W_head)\nv = np.zeros_like(W_head)\n",
             "    m = 0.9 * m + (1 - 0.9) * dW_head\n"
             "    v = 0.999 * v + (1 - 0.999) * dW_head ** 2\n"
             "    W_head = W_head - lr * (m / (1 - 0.9 ** t))"
             " / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)\n"),
}


def training_code(run):
    """A runnable Python snippet that trains the correct head as ``run`` did and assigns (and
    prints) ``losses``: the loss before each update, step 0 first, then the final one.

    Examples
    --------
    >>> from pycore.explorer.state.presets import preset
    >>> from pycore.explorer.finetune.run import Run
    >>> run = Run(1, preset("finetune")); run.advance(5)
    >>> ns = {}
    >>> exec(training_code(run).replace("print(losses)", ""), ns)
    >>> bool(np.allclose(ns["losses"], run.main.losses, rtol=1e-12))
    True
    """
    t = run.train
    B, D = run.h_cls.shape
    start = ("W_head = 0, the paper's start" if t["start"] == "zero"
             else "the W_head it started from")
    parts = ["# Fine-tuning the ViT head, exported from the explorer: %d full-batch %s steps at "
             "lr %s from %s.\n" % (run.steps, OPTIMIZER_NAMES[t["optimizer"]],
                                   format_number(t["lr"], 8, trim=True), start),
             "# losses: the loss before each update (step 0 first), then the final W_head's,\n"
             "# as the page's loss curve shows them.\n",
             "import numpy as np\n\n",
             "h_cls = np.array(%s)   # (B, D) = (%d, %d): the CLS rows\n" % (
                 export._literal(run.h_cls, " " * 14), B, D),
             "labels = np.array(%s)   # one class index per sample\n" % list(run.labels)]
    W0 = run.W0
    if not W0.any():
        parts.append("W_head = np.zeros(%s)   # (D, C)\n" % (W0.shape,))
    else:
        parts.append(export._matrix_code("W_head", W0, run.W0_recipe))
    parts.append("lr = %r\nsteps = %d\n" % (t["lr"], run.steps))
    parts.append(_TRAINING_CODE)
    init, update = _UPDATES[t["optimizer"]]
    parts.append(init)
    parts.append("losses = []\nfor t in range(1, steps + 1):\n"
                 "    loss, dW_head = loss_and_gradient(h_hat, W_head, labels)\n"
                 "    losses.append(loss)\n")
    parts.append(update)
    parts.append("losses.append(loss_and_gradient(h_hat, W_head, labels)[0])\n"
                 "losses = np.array(losses)\nprint(losses)\n")
    return "".join(parts)
