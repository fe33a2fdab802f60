"""The tiny ViT's encoder written out loop by loop, one sample, token and head at a time, from
the ViT paper's equations: a reference for pycore/vit/tiny_vit.py's batched NumPy (NumPy here
only for the vectors' arithmetic). Test modules import it as ``reference_vit``.
"""
import math

import numpy as np


def _ln_token(x, gamma=None, beta=None, eps=1e-6):
    D = len(x)
    mean = sum(x) / D
    var = sum((v - mean) ** 2 for v in x) / D
    out = np.array([(v - mean) / math.sqrt(var + eps) for v in x])
    return out if gamma is None else out * gamma + beta


def reference_encode(params, images, patch_size, heads):
    """z_L, the last block's attention and the CLS token at every depth (L+1, B, D), one
    sample, token and head at a time (the tiny ViT's encoder, pycore/vit/tiny_vit.py, written
    out from the ViT paper's equations)."""
    P = patch_size
    grid = 8 // P
    D = params["E"].shape[1]
    depth = sum(1 for name in params if name.endswith(".W_qkv"))
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
        for l in range(depth):
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
