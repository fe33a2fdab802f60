"""The tiny ViT's encoder written out loop by loop, one sample, token and head at a time, from
the ViT paper's equations (reference_encode), and the same equations for a batch with einsum
(forward, ShippedViT): references for pycore/vit/tiny/model.py, written without its code. The
browser tests expect what ShippedViT computes; tests/test_reference_vit.py checks the two
references and pycore agree. Test modules import it as ``reference_vit``.
"""
import json
import math
import os

import numpy as np

from reference import reference_head


def _ln_token(x, gamma=None, beta=None, eps=1e-6):
    D = len(x)
    mean = sum(x) / D
    var = sum((v - mean) ** 2 for v in x) / D
    out = np.array([(v - mean) / math.sqrt(var + eps) for v in x])
    return out if gamma is None else out * gamma + beta


def reference_encode(params, images, patch_size, heads):
    """z_L, the last block's attention and the CLS token at every depth (L+1, B, D), one
    sample, token and head at a time (the tiny ViT's encoder, pycore/vit/tiny/model.py, written
    out from the ViT paper's equations)."""
    P = patch_size
    grid = 8 // P
    D = params["E"].shape[1]
    L = sum(1 for name in params if name.endswith(".W_qkv"))
    d_head = D // heads
    z_all, attn_all, cls_all = [], [], []
    for image in images:
        x = np.asarray(image, dtype=float) / 16.0
        tokens = [params["x_class"].copy()]
        for r in range(grid):
            for c in range(grid):
                patch = np.array([x[r * P + i, c * P + j] for i in range(P) for j in range(P)])
                tokens.append(patch @ params["E"] + params["b_E"])
        z = [tokens[t] + params["E_pos"][t] for t in range(len(tokens))]
        T = len(z)
        cls_rows = [z[0]]
        for l in range(L):
            w = lambda n: params["block%d.%s" % (l, n)]  # noqa: E731
            y = [_ln_token(z[t], w("ln1_gamma"), w("ln1_beta")) for t in range(T)]
            qkv = [y[t] @ w("W_qkv") + w("b_qkv") for t in range(T)]
            attn = np.zeros((heads, T, T))
            merged = [np.zeros(D) for _ in range(T)]
            for h in range(heads):
                cols = slice(h * d_head, (h + 1) * d_head)
                q = [qkv[t][:D][cols] for t in range(T)]
                k = [qkv[t][D:2 * D][cols] for t in range(T)]
                v = [qkv[t][2 * D:][cols] for t in range(T)]
                for i in range(T):
                    scores = [float(q[i] @ k[j]) / math.sqrt(d_head) for j in range(T)]
                    top = max(scores)
                    e = [math.exp(s - top) for s in scores]
                    for j in range(T):
                        attn[h, i, j] = e[j] / sum(e)
                    merged[i][cols] = sum(attn[h, i, j] * v[j] for j in range(T))
            z = [z[t] + merged[t] @ w("W_o") + w("b_o") for t in range(T)]
            out = []
            for t in range(T):
                u = _ln_token(z[t], w("ln2_gamma"), w("ln2_beta")) @ w("W_1") + w("b_1")
                g = np.array([a * 0.5 * (1.0 + math.erf(a / math.sqrt(2.0))) for a in u])
                out.append(z[t] + g @ w("W_2") + w("b_2"))
            z = out
            cls_rows.append(z[0])
        z_all.append(np.array(z))
        attn_all.append(attn)
        cls_all.append(np.array(cls_rows))
    return np.array(z_all), np.array(attn_all), np.array(cls_all).transpose(1, 0, 2)


# ---- the same equations for a batch, with einsum: fast enough for every held-out digit -------

WEIGHTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "pycore", "vit", "tiny", "weights.npz")


def _ln_rows(x, gamma, beta, eps=1e-6):
    """LayerNorm over the last axis: (x - mean) / sqrt(population variance + eps) * gamma + beta."""
    mean = x.sum(axis=-1, keepdims=True) / x.shape[-1]
    var = ((x - mean) ** 2).sum(axis=-1, keepdims=True) / x.shape[-1]
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


_erf = np.vectorize(math.erf, otypes=[float])


def forward(params, images, patch_size, heads):
    """z_L (B, N+1, D), the last block's attention (B, heads, T, T) and the CLS row at every depth
    (L+1, B, D) of images (B, 8, 8) on the 0..16 scale: eq. 1-4 of the ViT paper, batched.

    z_0 = [x_class; x_p^1 E + b_E; ...; x_p^N E + b_E] + E_pos, the patches in row-major order
    and each patch's pixels row by row; then per block z' = z + MSA(LN(z)), z = z' + MLP(LN(z'))
    with MLP(u) = GELU(u W_1 + b_1) W_2 + b_2 and GELU(a) = a (1 + erf(a / sqrt 2)) / 2.
    """
    x = np.asarray(images, dtype=float) / 16.0
    B, P = x.shape[0], patch_size
    grid = 8 // P
    D = params["E"].shape[1]
    L = sum(1 for name in params if name.endswith(".W_qkv"))
    d = D // heads
    patches = np.stack([x[:, r * P:(r + 1) * P, c * P:(c + 1) * P].reshape(B, P * P)
                        for r in range(grid) for c in range(grid)], axis=1)
    embedded = np.einsum("bnp,pd->bnd", patches, params["E"]) + params["b_E"]
    cls = np.tile(params["x_class"], (B, 1, 1))
    z = np.concatenate([cls, embedded], axis=1) + params["E_pos"]
    T = z.shape[1]
    hidden, attn = [z[:, 0, :]], None
    for l in range(L):
        p = {name.split(".", 1)[1]: value for name, value in params.items()
             if name.startswith("block%d." % l)}
        qkv = np.einsum("btd,de->bte", _ln_rows(z, p["ln1_gamma"], p["ln1_beta"]),
                        p["W_qkv"]) + p["b_qkv"]
        q, k, v = (qkv[:, :, i * D:(i + 1) * D].reshape(B, T, heads, d) for i in range(3))
        scores = np.einsum("bihc,bjhc->bhij", q, k) / math.sqrt(d)
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attn = e / e.sum(axis=-1, keepdims=True)
        merged = np.einsum("bhij,bjhc->bihc", attn, v).reshape(B, T, D)
        z = z + np.einsum("btd,de->bte", merged, p["W_o"]) + p["b_o"]
        u = np.einsum("btd,dm->btm", _ln_rows(z, p["ln2_gamma"], p["ln2_beta"]), p["W_1"]) + p["b_1"]
        z = z + np.einsum("btm,md->btd", u * 0.5 * (1.0 + _erf(u / math.sqrt(2.0))),
                          p["W_2"]) + p["b_2"]
        hidden.append(z[:, 0, :])
    return z, attn, np.stack(hidden)


def head(cls_rows, W_head, eps=1e-6):
    """logits = LN(h_cls) W_head, no gamma, beta or bias (the page's head), as a NumPy array;
    the sums in plain Python (tests/reference.py)."""
    return np.array(reference_head(np.asarray(cls_rows, dtype=float).tolist(),
                                   np.asarray(W_head, dtype=float).tolist(), eps))


class ShippedViT(object):
    """The tiny ViT the page ships, read from its weights file by NumPy alone and run by
    :func:`forward`: what a browser test expects the page to show for a digit."""

    def __init__(self, path=WEIGHTS):
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            self.test_indices = np.array(data["test_indices"])
            self.params = {name: np.array(data[name], dtype=float) for name in data.files
                           if name not in ("meta", "test_indices")}
        self.patch_size, self.heads = int(meta["patch_size"]), int(meta["heads"])
        self.L = sum(1 for name in self.params if name.endswith(".W_qkv"))
        self.W_head = self.params["W_head"]

    def run(self, images):
        """z_L, the CLS token's attention to each patch in the last block averaged over the
        heads (B, N), and the CLS row at every depth (L+1, B, D)."""
        z, attn, hidden = forward(self.params, images, self.patch_size, self.heads)
        return z, attn[:, :, 0, 1:].mean(axis=1), hidden

    def encode(self, images):
        return self.run(images)[0]

    def cls_attention(self, images):
        return self.run(images)[1]

    def features(self, images):
        """The CLS rows of z_L, (B, D)."""
        return self.encode(images)[:, 0, :]

    def logits(self, images, W_head=None):
        return head(self.features(images), self.W_head if W_head is None else W_head)

    def predict(self, images):
        return self.logits(images).argmax(axis=1)
