"""The suite's one independent reference for the head: the worked example typed out from
docs/math.md, and the head in plain Python (lists, ``math.fsum``, variance by its definition),
written without NumPy or pycore so that a test comparing pycore (or the page) against it compares
two independent computations.

Test modules import it as ``reference`` (pytest puts ``tests/`` on ``sys.path``).
"""
import math

# The worked example (docs/math.md): B = 2 samples, D = 4 features, C = 3 classes.
WORKED_CLS = [[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]]
WORKED_W_HEAD = [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]]
# Its logits to 4 decimals, as docs/math.md derives them by hand (compare with atol=5e-5).
WORKED_LOGITS = [[0.8854, -1.3914, 1.5811], [0.2000, -0.1000, -1.4000]]


def layer_norm_rows(rows, eps=1e-6):
    """Each row minus its mean, over sqrt(population variance + eps); no gamma, no beta."""
    out = []
    for row in rows:
        h = [float(v) for v in row]
        mu = math.fsum(h) / len(h)
        var = math.fsum((v - mu) ** 2 for v in h) / len(h)
        out.append([(v - mu) / math.sqrt(var + eps) for v in h])
    return out


def reference_head(cls_rows, W_head, eps=1e-6):
    """logits[b][c] = sum_d h_hat[b][d] * W_head[d][c], each sum exact (``math.fsum``)."""
    C = len(W_head[0])
    return [[math.fsum(h[d] * float(W_head[d][c]) for d in range(len(h))) for c in range(C)]
            for h in layer_norm_rows(cls_rows, eps)]


if __name__ == "__main__":  # a self-check: the hand-derived figures agree with the exact head
    for got, want in zip(reference_head(WORKED_CLS, WORKED_W_HEAD), WORKED_LOGITS):
        assert all(abs(g - w) <= 5e-5 for g, w in zip(got, want)), (got, want)
