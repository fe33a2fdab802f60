#!/usr/bin/env python3
"""Train the tiny ViT on the 8x8 digits and write pycore/vit/tiny/weights.npz.

    python3 training/train_tiny_vit.py               # from the repository root
    python3 training/train_tiny_vit.py --epochs 5 --out /tmp/w.npz    # a quick try

NumPy only, with the backward pass written out by hand (checked by gradient_check(), which
the tests run). The data comes from the scikit-learn wheel pinned in artifacts.json
(buildtools/data/digits.py); a fixed stratified 80/20 split (np.random.RandomState(0)) holds out
the test images, whose indices go into the weights file. Training: Adam with decoupled weight
decay, a warm-up then cosine learning rate, random 1-pixel shifts of the training images,
cross-entropy on the logits of the page's head (softmax only in the loss). Every epoch also
draws fresh pen digits (training/pen_digits.py) through the pad's own ink code, so that what a
person draws on the page is read as well as the data set's digits. BLAS is held to one thread:
the matrices are small, and the machine may be shared.

This folder is never shipped to the browser.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from buildtools.data.digits import load_digits  # noqa: E402
from pycore import classification_head  # noqa: E402
from pycore.vit.tiny.model import TinyViT  # noqa: E402
from pycore.vit.tiny.layers import LN_EPS, PIXEL_MAX, erf, patchify  # noqa: E402
from pycore.vit.tiny.params import WEIGHTS_PATH, parameter_shapes  # noqa: E402
from training.pen_digits import pen_digits  # noqa: E402

CONFIG = {
    "seed": 0,            # weights' initialization, batch order, augmentation
    "split_seed": 0,      # np.random.RandomState(split_seed) draws the stratified split
    "test_fraction": 0.2,
    "patch_size": 2,
    "D": 32,
    "depth": 3,
    "heads": 4,
    "mlp_dim": 64,
    "epochs": 150,
    "batch_size": 32,
    "lr": 2e-3,
    "warmup_epochs": 3,
    "weight_decay": 0.02,  # AdamW-style, on the weight matrices only
    "beta1": 0.9,
    "beta2": 0.999,
    "shift": 1,           # random shifts of up to this many pixels (zeros come in)
    "pen_per_digit": 150,  # fresh pen drawings of each digit every epoch (training/pen_digits.py)
}
DECAYED = ("E", "W_qkv", "W_o", "W_1", "W_2", "W_head")


# ---- the split and the augmentation ---------------------------------------------------------

def stratified_split(labels, test_fraction, seed):
    """(train, test) index arrays, sorted; each class contributes round(fraction * count)."""
    rs = np.random.RandomState(seed)
    test = []
    for c in range(int(labels.max()) + 1):
        idx = np.flatnonzero(labels == c)
        rs.shuffle(idx)
        test.extend(idx[:int(round(test_fraction * len(idx)))].tolist())
    test = np.array(sorted(test), dtype=np.int64)
    train = np.setdiff1d(np.arange(len(labels)), test)
    return train, test


def random_shift(images, max_shift, rs):
    """Each image moved by (dy, dx) in [-max_shift, max_shift]^2, zeros filling in."""
    B, H, W = images.shape
    m = max_shift
    padded = np.zeros((B, H + 2 * m, W + 2 * m), dtype=images.dtype)
    padded[:, m:m + H, m:m + W] = images
    dy = rs.randint(0, 2 * m + 1, size=B)
    dx = rs.randint(0, 2 * m + 1, size=B)
    rows = dy[:, None] + np.arange(H)[None, :]          # (B, H)
    cols = dx[:, None] + np.arange(W)[None, :]          # (B, W)
    return padded[np.arange(B)[:, None, None], rows[:, :, None], cols[:, None, :]]


# ---- forward with caches, and backward ------------------------------------------------------

def init_params(cfg, rs):
    """Random initial weights: fan-in scaled matrices, small CLS/position, zero W_head."""
    params = {}
    for name, shape in parameter_shapes(cfg["patch_size"], cfg["D"], cfg["depth"],
                                        cfg["mlp_dim"]):
        short = name.split(".")[-1]
        if short.endswith("gamma"):
            params[name] = np.ones(shape)
        elif short in ("x_class", "E_pos"):
            params[name] = 0.02 * rs.randn(*shape)
        elif short == "W_head":
            params[name] = np.zeros(shape)
        elif short in DECAYED:
            scale = 1.0 / math.sqrt(shape[0])
            if short in ("W_o", "W_2"):  # residual branches start small
                scale /= math.sqrt(2.0 * cfg["depth"])
            params[name] = scale * rs.randn(*shape)
        else:  # biases, betas
            params[name] = np.zeros(shape)
    return params


def _ln(x, gamma=None, beta=None):
    mean = x.mean(axis=-1, keepdims=True)
    xc = x - mean
    rstd = 1.0 / np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + LN_EPS)
    x_hat = xc * rstd
    y = x_hat if gamma is None else x_hat * gamma + beta
    return y, (x_hat, rstd)


def _ln_back(dy, cache, gamma=None):
    x_hat, rstd = cache
    dx_hat = dy if gamma is None else dy * gamma
    dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True)
                 - x_hat * np.mean(dx_hat * x_hat, axis=-1, keepdims=True))
    if gamma is None:
        return dx, None, None
    flat = dy.reshape(-1, dy.shape[-1])
    return dx, (flat * x_hat.reshape(flat.shape)).sum(axis=0), flat.sum(axis=0)


def _linear_grads(x, dout):
    """dW and db of ``x @ W + b`` over all leading axes."""
    x2 = x.reshape(-1, x.shape[-1])
    d2 = dout.reshape(-1, dout.shape[-1])
    return x2.T @ d2, d2.sum(axis=0)


def forward(params, images, cfg):
    """z_L (B, N+1, D) for images on the 0..16 scale, and what backward() needs."""
    P, H = cfg["patch_size"], cfg["heads"]
    patches = patchify(np.asarray(images, dtype=np.float64) / PIXEL_MAX, P)
    B = patches.shape[0]
    D = params["E"].shape[1]
    d_head = D // H
    tokens = patches @ params["E"] + params["b_E"]
    z = np.concatenate([np.broadcast_to(params["x_class"], (B, 1, D)), tokens], axis=1)
    z = z + params["E_pos"]
    T = z.shape[1]
    caches = {"patches": patches, "blocks": []}
    for l in range(cfg["depth"]):
        p = lambda n: params["block%d.%s" % (l, n)]  # noqa: E731
        y1, ln1 = _ln(z, p("ln1_gamma"), p("ln1_beta"))
        qkv = (y1 @ p("W_qkv") + p("b_qkv")).reshape(B, T, 3, H, d_head)
        q, k, v = qkv.transpose(2, 0, 3, 1, 4)
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d_head)
        a = np.exp(s - s.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
        o = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
        z_mid = z + o @ p("W_o") + p("b_o")
        y2, ln2 = _ln(z_mid, p("ln2_gamma"), p("ln2_beta"))
        u = y2 @ p("W_1") + p("b_1")
        Phi = 0.5 * (1.0 + erf(u / math.sqrt(2.0)))
        g = u * Phi
        z = z_mid + g @ p("W_2") + p("b_2")
        caches["blocks"].append((y1, ln1, q, k, v, a, o, y2, ln2, u, Phi, g))
    return z, caches


def head(params, z_L):
    """The page's head, as training sees it: logits and the LayerNorm cache."""
    h_hat, cache = _ln(z_L[:, 0, :])
    return h_hat @ params["W_head"], (h_hat, cache)


def cross_entropy(logits, labels):
    """Mean cross-entropy and its gradient with respect to the logits."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    B = len(labels)
    loss = -log_p[np.arange(B), labels].mean()
    dlogits = np.exp(log_p)
    dlogits[np.arange(B), labels] -= 1.0
    return loss, dlogits / B


def backward(params, caches, head_cache, dlogits, cfg):
    """Gradients of the loss for every weight, given d loss / d logits."""
    grads = {}
    h_hat, ln_cache = head_cache
    grads["W_head"] = h_hat.T @ dlogits
    dh_cls = _ln_back(dlogits @ params["W_head"].T, ln_cache)[0]
    B, D = dh_cls.shape
    T = caches["blocks"][0][0].shape[1] if caches["blocks"] else None
    H = cfg["heads"]
    d_head = D // H
    dz = np.zeros((B, T, D))
    dz[:, 0, :] = dh_cls
    for l in reversed(range(cfg["depth"])):
        pre = "block%d." % l
        p = lambda n: params[pre + n]  # noqa: E731
        y1, ln1, q, k, v, a, o, y2, ln2, u, Phi, g = caches["blocks"][l]
        # MLP branch: z = z_mid + GELU(y2 W_1 + b_1) W_2 + b_2
        grads[pre + "W_2"], grads[pre + "b_2"] = _linear_grads(g, dz)
        dg = dz @ p("W_2").T
        du = dg * (Phi + u * np.exp(-0.5 * u * u) / math.sqrt(2.0 * math.pi))
        grads[pre + "W_1"], grads[pre + "b_1"] = _linear_grads(y2, du)
        dx, grads[pre + "ln2_gamma"], grads[pre + "ln2_beta"] = _ln_back(
            du @ p("W_1").T, ln2, p("ln2_gamma"))
        dz_mid = dz + dx
        # attention branch: z_mid = z + MSA(LN(z)) W_o + b_o
        grads[pre + "W_o"], grads[pre + "b_o"] = _linear_grads(o, dz_mid)
        do = (dz_mid @ p("W_o").T).reshape(B, T, H, d_head).transpose(0, 2, 1, 3)
        da = do @ v.transpose(0, 1, 3, 2)
        dv = a.transpose(0, 1, 3, 2) @ do
        ds = a * (da - (da * a).sum(axis=-1, keepdims=True)) / math.sqrt(d_head)
        dq = ds @ k
        dk = ds.transpose(0, 1, 3, 2) @ q
        dqkv = np.stack([dq, dk, dv]).transpose(1, 3, 0, 2, 4).reshape(B, T, 3 * D)
        grads[pre + "W_qkv"], grads[pre + "b_qkv"] = _linear_grads(y1, dqkv)
        dx, grads[pre + "ln1_gamma"], grads[pre + "ln1_beta"] = _ln_back(
            dqkv @ p("W_qkv").T, ln1, p("ln1_gamma"))
        dz = dz_mid + dx
    grads["E_pos"] = dz.sum(axis=0)
    grads["x_class"] = dz[:, 0, :].sum(axis=0)
    grads["E"], grads["b_E"] = _linear_grads(caches["patches"], dz[:, 1:, :])
    return grads


def loss_and_grads(params, images, labels, cfg):
    z_L, caches = forward(params, images, cfg)
    logits, head_cache = head(params, z_L)
    loss, dlogits = cross_entropy(logits, labels)
    return loss, backward(params, caches, head_cache, dlogits, cfg), logits


def gradient_check(seed=0, batch=3, h=1e-5, per_tensor=40):
    """Compare backward() with central finite differences on a tiny random model (float64).

    Every entry of the small weight tensors, and ``per_tensor`` random entries of the larger
    ones, is moved by +-h and the loss recomputed. Also checks that
    forward() and head() here agree with pycore's TinyViT.encode and classification_head.

    Returns
    -------
    float
        The worst, over the weight tensors, of ``max |analytic - numeric|`` divided by the
        tensor's largest gradient entry. A correct backward pass gives about 1e-10 (the
        finite differences' own rounding); a wrong one, 1e-3 to 1.
    """
    cfg = dict(CONFIG, patch_size=2, D=8, depth=2, heads=2, mlp_dim=12)
    rs = np.random.RandomState(seed)
    params = {name: rs.randn(*shape) * (0.5 if len(shape) == 2 else 0.3)
              for name, shape in parameter_shapes(cfg["patch_size"], cfg["D"], cfg["depth"],
                                                  cfg["mlp_dim"])}
    images = rs.uniform(0, 16, size=(batch, 8, 8))
    labels = rs.randint(0, 10, size=batch)
    model = TinyViT(params, heads=cfg["heads"], patch_size=cfg["patch_size"])
    z_L = forward(params, images, cfg)[0]
    if not np.allclose(z_L, model.encode(images), rtol=0, atol=1e-12):
        raise AssertionError("training forward() differs from pycore's TinyViT.encode")
    if not np.allclose(head(params, z_L)[0], classification_head(z_L, params["W_head"]),
                       rtol=0, atol=1e-12):
        raise AssertionError("training head() differs from pycore.classification_head")
    grads = loss_and_grads(params, images, labels, cfg)[1]
    if set(grads) != set(params):
        raise AssertionError("backward() misses %s" % sorted(set(params) - set(grads)))

    def loss():
        return cross_entropy(head(params, forward(params, images, cfg)[0])[0], labels)[0]

    worst = 0.0
    for name, value in params.items():
        entries = list(np.ndindex(value.shape))
        if len(entries) > per_tensor:
            entries = [entries[j] for j in rs.choice(len(entries), per_tensor, replace=False)]
        analytic = np.array([grads[name][i] for i in entries])
        numeric = np.zeros(len(entries))
        for n, i in enumerate(entries):
            keep = value[i]
            value[i] = keep + h
            up = loss()
            value[i] = keep - h
            numeric[n] = (up - loss()) / (2 * h)
            value[i] = keep
        scale = max(np.abs(numeric).max(), np.abs(analytic).max(), 1e-12)
        worst = max(worst, np.abs(analytic - numeric).max() / scale)
    return float(worst)


# ---- training ---------------------------------------------------------------------------------

def predict(params, images, cfg, batch=256):
    out = []
    for i in range(0, len(images), batch):
        out.append(head(params, forward(params, images[i:i + batch], cfg)[0])[0].argmax(axis=1))
    return np.concatenate(out)


def as_stored(params):
    """The weights as the file stores them (float32), back in float64."""
    return {k: v.astype(np.float32).astype(np.float64) for k, v in params.items()}


def train(images, labels, train_idx, cfg, log=print):
    rs = np.random.RandomState(cfg["seed"])
    params = init_params(cfg, rs)
    m = {k: np.zeros_like(v) for k, v in params.items()}
    s = {k: np.zeros_like(v) for k, v in params.items()}
    x_data, y_data = images[train_idx].astype(np.float64), labels[train_idx]
    n_epoch = len(train_idx) + 10 * cfg["pen_per_digit"]
    steps_per_epoch = int(math.ceil(n_epoch / float(cfg["batch_size"])))
    total = cfg["epochs"] * steps_per_epoch
    warmup = cfg["warmup_epochs"] * steps_per_epoch
    step = 0
    history = []
    for epoch in range(cfg["epochs"]):
        start = time.time()
        x_train, y_train = x_data, y_data
        if cfg["pen_per_digit"]:
            x_pen, y_pen = pen_digits(cfg["pen_per_digit"], [cfg["seed"], epoch])
            x_train, y_train = np.concatenate([x_data, x_pen]), np.concatenate([y_data, y_pen])
        order = rs.permutation(len(x_train))
        losses = []
        for b in range(steps_per_epoch):
            batch = order[b * cfg["batch_size"]:(b + 1) * cfg["batch_size"]]
            x = x_train[batch]
            if cfg["shift"]:
                x = random_shift(x, cfg["shift"], rs)
            loss, grads, _ = loss_and_grads(params, x, y_train[batch], cfg)
            losses.append(loss)
            step += 1
            lr = cfg["lr"] * (step / float(warmup) if step <= warmup else
                              0.5 * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))))
            b1, b2 = cfg["beta1"], cfg["beta2"]
            for name, grad in grads.items():
                m[name] = b1 * m[name] + (1 - b1) * grad
                s[name] = b2 * s[name] + (1 - b2) * grad * grad
                m_hat = m[name] / (1 - b1 ** step)
                s_hat = s[name] / (1 - b2 ** step)
                if name.split(".")[-1] in DECAYED:
                    params[name] -= lr * cfg["weight_decay"] * params[name]
                params[name] -= lr * m_hat / (np.sqrt(s_hat) + 1e-8)
        # The held-out images are not looked at until training has ended.
        history.append(float(np.mean(losses)))
        log("epoch %3d  loss %.4f  lr %.2e  %.1f s" % (epoch + 1, history[-1], lr,
                                                       time.time() - start))
    return params, history


def write_weights(path, params, test_idx, meta):
    arrays = {k: v.astype(np.float32) for k, v in params.items()}
    arrays["test_indices"] = np.asarray(test_idx, dtype=np.int16)
    arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
    tmp = path + ".tmp.npz"
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=CONFIG["epochs"])
    ap.add_argument("--out", default=WEIGHTS_PATH,
                    help="the weights file to write (default: %(default)s)")
    for key in ("D", "depth", "heads", "mlp_dim", "patch_size", "batch_size", "seed",
                "pen_per_digit"):
        ap.add_argument("--" + key.replace("_", "-"), type=int, default=CONFIG[key])
    for key in ("lr", "weight_decay"):
        ap.add_argument("--" + key.replace("_", "-"), type=float, default=CONFIG[key])
    ap.add_argument("--shift", type=int, default=CONFIG["shift"])
    args = ap.parse_args(argv)
    cfg = dict(CONFIG, **{k: getattr(args, k) for k in CONFIG if hasattr(args, k)})

    worst = gradient_check()
    print("gradient check: worst error %.1e of the largest gradient entry" % worst)
    if worst > 1e-6:
        print("the backward pass is wrong; not training")
        return 1

    images, labels = load_digits()
    train_idx, test_idx = stratified_split(labels, cfg["test_fraction"], cfg["split_seed"])
    print("digits: %d train, %d test; %s" % (len(train_idx), len(test_idx), json.dumps(
        {k: cfg[k] for k in ("patch_size", "D", "depth", "heads", "mlp_dim", "epochs")})))
    start = time.time()
    params, history = train(images, labels, train_idx, cfg)
    seconds = time.time() - start

    stored = as_stored(params)  # the accuracies are those of the weights as written
    train_pred = predict(stored, images[train_idx], cfg)
    test_pred = predict(stored, images[test_idx], cfg)
    train_correct = int((train_pred == labels[train_idx]).sum())
    test_correct = int((test_pred == labels[test_idx]).sum())
    # pen drawings no epoch drew (another seed), read as the page prepares them
    x_pen, y_pen = pen_digits(100, [cfg["seed"], 1 << 20])
    pen_correct = int((predict(stored, x_pen, cfg) == y_pen).sum())
    n_params = int(sum(v.size for v in params.values()))
    meta = dict(
        cfg, n_params=n_params, n_train=len(train_idx), n_test=len(test_idx),
        train_correct=train_correct, test_correct=test_correct,
        train_accuracy=train_correct / float(len(train_idx)),
        test_accuracy=test_correct / float(len(test_idx)),
        pen_test_correct=pen_correct, pen_test_accuracy=pen_correct / float(len(y_pen)),
        loss_per_epoch=[round(v, 4) for v in history], train_seconds=round(seconds, 1),
        trained_with="Python %s, NumPy %s" % (platform.python_version(), np.__version__),
        data="UCI ML Optical Recognition of Handwritten Digits (E. Alpaydin, C. Kaynak), "
             "CC BY 4.0, from the scikit-learn wheel pinned in artifacts.json",
        split="stratified %d/%d by np.random.RandomState(%d)" % (
            round(100 * (1 - cfg["test_fraction"])), round(100 * cfg["test_fraction"]),
            cfg["split_seed"]))
    write_weights(args.out, stored, test_idx, meta)

    # The file, read back by pycore, must predict what training measured.
    from pycore.vit.tiny.model import load_tiny_vit
    model = load_tiny_vit(args.out)
    again = classification_head(model.encode(images[test_idx]), model.W_head).argmax(axis=1)
    if not np.array_equal(again, test_pred):
        print("pycore's predictions from the written file differ from training's")
        return 1
    print("%d parameters; trained in %.0f s" % (n_params, seconds))
    print("train accuracy %.4f (%d/%d)" % (meta["train_accuracy"], train_correct,
                                            len(train_idx)))
    print("test accuracy  %.4f (%d/%d)" % (meta["test_accuracy"], test_correct, len(test_idx)))
    print("pen drawings   %.4f (%d/%d)" % (meta["pen_test_accuracy"], pen_correct, len(y_pen)))
    print("wrote %s (%d bytes)" % (args.out, os.path.getsize(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
