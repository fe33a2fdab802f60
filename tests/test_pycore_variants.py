"""Variants (pycore.vit.variants) and mistakes (pycore.vit.mistakes), each against its formula
written out independently here."""

import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st


from pycore import classification_head  # noqa: E402
from reference import layer_norm_rows  # noqa: E402
from pycore.explorer.comparisons.registry import COMPARISONS, of_kind  # noqa: E402
from pycore.vit import mistakes, variants  # noqa: E402

MISTAKES = [getattr(mistakes, c.key) for c in of_kind("mistake")]
from pycore.vit.variants import (bert_pooler, gap_head, gelu, head_with_bias, layer_norm_affine,  # noqa: E402
                                 mlp_pretraining_head, variant_params)

CLS = np.array([[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]])
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]])


def ln(x, eps=1e-6):
    """LayerNorm row by row in plain Python (tests/reference.py), as a NumPy array."""
    return np.array(layer_norm_rows(np.atleast_2d(x).tolist(), eps))


def encoder(seed=0, N=3):
    rs = np.random.RandomState(seed)
    z = rs.randn(2, N + 1, 4)
    z[:, 0, :] = CLS
    return z


def test_gelu_is_exact_erf():
    xs = np.linspace(-5, 5, 41)
    want = [x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in xs]
    np.testing.assert_allclose(gelu(xs), want, rtol=1e-15, atol=1e-15)
    assert gelu([[1.0]]).shape == (1, 1)
    # Not the tanh approximation: they differ visibly at x = 1.5 in the 4th decimal.
    approx = 0.5 * 1.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1.5 + 0.044715 * 1.5 ** 3)))
    assert abs(float(gelu([1.5])[0]) - approx) > 1e-4


@pytest.mark.parametrize("activation", ["tanh", "gelu"])
def test_mlp_pretraining_head_formula(activation):
    p = variant_params(4, 3, seed=5)
    h_hat = ln(CLS)
    act = np.tanh if activation == "tanh" else (
        lambda a: np.vectorize(lambda v: v * 0.5 * (1 + math.erf(v / math.sqrt(2))))(a))
    want = act(h_hat @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
    got = mlp_pretraining_head(h_hat, p["W1"], p["b1"], p["W2"], p["b2"], activation)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert got.shape == (2, 3)


def test_mlp_errors():
    p = variant_params(4, 3)
    with pytest.raises(ValueError, match="activation must be 'tanh'.*or 'gelu'"):
        mlp_pretraining_head(CLS, p["W1"], p["b1"], p["W2"], p["b2"], activation="relu")
    with pytest.raises(ValueError, match=r"W1 has shape \(3, 4\) but must be \(D, H\) with 4 rows"):
        mlp_pretraining_head(CLS, p["W1"][:3], p["b1"], p["W2"], p["b2"])
    with pytest.raises(ValueError, match=r"b1 has shape \(3,\) but must have 4 entries"):
        mlp_pretraining_head(CLS, p["W1"], p["b1"][:3], p["W2"], p["b2"])


def test_gap_head_averages_patch_tokens_only():
    z = encoder(N=4)
    pooled = z[:, 1:, :].mean(axis=1)
    np.testing.assert_allclose(gap_head(z, W), ln(pooled) @ W, rtol=1e-12, atol=1e-12)
    z2 = z.copy()
    z2[:, 0, :] = 1e6                       # the CLS token is not part of the average
    np.testing.assert_array_equal(gap_head(z2, W), gap_head(z, W))
    with pytest.raises(ValueError, match="needs at least one patch token"):
        gap_head(z[:, :1, :], W)
    with pytest.raises(ValueError, match=r"encoder_output\[1,2,0\] is NaN"):
        z3 = z.copy()
        z3[1, 2, 0] = np.nan
        gap_head(z3, W)


def test_bert_pooler_and_affine_and_bias_formulas():
    p = variant_params(4, 3, seed=2)
    np.testing.assert_allclose(bert_pooler(CLS, p["W_pool"], p["b_pool"]),
                               np.tanh(CLS @ p["W_pool"] + p["b_pool"]), rtol=1e-14)
    np.testing.assert_allclose(layer_norm_affine(CLS, p["gamma"], p["beta"]),
                               ln(CLS) * p["gamma"] + p["beta"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(head_with_bias(encoder(), W, p["b_head"]),
                               ln(CLS) @ W + p["b_head"], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"gamma has shape \(3,\) but must have 4 entries"):
        layer_norm_affine(CLS, p["gamma"][:3], p["beta"])


def test_variant_params_shapes_scale_and_determinism():
    p = variant_params(8, 5, seed=3)
    shapes = {k: v.shape for k, v in p.items()}
    assert shapes == {"W1": (8, 8), "b1": (8,), "W2": (8, 5), "b2": (5,), "W_pool": (8, 8),
                      "b_pool": (8,), "gamma": (8,), "beta": (8,), "b_head": (5,)}
    assert np.abs(p["W1"]).max() <= 1 / math.sqrt(8)
    assert variant_params(6, 2, seed=1, H=3)["W1"].shape == (6, 3)
    q = variant_params(8, 5, seed=3)
    assert all(np.array_equal(p[k], q[k]) for k in p)
    assert not np.array_equal(p["W1"], variant_params(8, 5, seed=4)["W1"])
    # RandomState's stream is frozen across NumPy versions: a known first draw.
    assert round(float(variant_params(4, 3, seed=0)["W1"][0, 0]), 6) == round(
        (0.5488135039273248 * 2 - 1) * 0.5, 6)


# ---- mistakes ------------------------------------------------------------------------

def by_key(key):
    return getattr(mistakes, key)


def test_registry_order_and_texts():
    assert [c.key for c in of_kind("mistake")] == ["last_position", "softmax_inside",
                                                   "no_layernorm", "transposed"]
    # real ViTs' gamma/beta and bias: other heads, right in their setting, never mistakes
    assert [c.key for c in of_kind("variant")] == ["affine", "bias", "mlp_tanh", "mlp_gelu", "gap",
                                                   "bert_pooler", "model_head", "page_head"]
    for c in COMPARISONS:
        assert c.title and len(c.title) < 40
        sentences = [s for s in c.explanation.split(". ") if s]
        assert 2 <= len(sentences) <= 4, c.key
        assert callable(c.compute) and c.needs in (None, "encoder")
        # in words a student has: a source they can look up, no document they never saw
        assert c.source and not any(w in (c.explanation + c.source).lower()
                                    for w in ("the spec", "problem text", "design.md")), c.key


@pytest.mark.parametrize("seed", [0, 7])
def test_each_compared_head_against_its_formula(seed):
    z = encoder(seed=seed)
    p = variant_params(4, 3, seed=seed)
    h_hat = ln(CLS)
    logits = h_hat @ W
    expected = {
        "last_position": ln(z[:, -1, :]) @ W,
        "softmax_inside": np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True),
        "no_layernorm": CLS @ W,
        "affine": (h_hat * p["gamma"] + p["beta"]) @ W,
        "bias": logits + p["b_head"],
    }
    for key, want in expected.items():
        got = by_key(key)(W, encoder_output=z, seed=seed)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=key)
        if key != "last_position":
            got_cls = by_key(key)(W, cls=CLS, seed=seed)
            np.testing.assert_allclose(got_cls, want, rtol=1e-12, atol=1e-12, err_msg=key)


def test_last_position_with_cls_only_equals_the_correct_head():
    got = by_key("last_position")(W, cls=CLS)
    np.testing.assert_allclose(got, classification_head(CLS[:, None, :], W), rtol=1e-15)
    assert "full encoder output" in [c for c in COMPARISONS if c.key == "last_position"][0].explanation


def test_softmax_inside_rows_sum_to_one_and_differs():
    got = by_key("softmax_inside")(W, cls=CLS)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)
    assert np.all(got > 0)


def test_transposed_fails_unless_square_then_silently_wrong():
    with pytest.raises(ValueError, match=r"W_head.T has shape \(3, 4\) = \(C, D\).*D = 4, C = 3"):
        by_key("transposed")(W, cls=CLS)
    W_sq = np.arange(16.0).reshape(4, 4) / 10
    got = by_key("transposed")(W_sq, cls=CLS)
    np.testing.assert_allclose(got, ln(CLS) @ W_sq.T, rtol=1e-12, atol=1e-12)
    assert not np.allclose(got, ln(CLS) @ W_sq)
    doc = sys.modules["pycore.vit.mistakes"].transposed.__doc__
    assert "C == D" in doc and "silent" in doc


def test_mistakes_need_exactly_one_input_and_check_like_the_head():
    with pytest.raises(TypeError, match="exactly one"):
        by_key("bias")(W)
    with pytest.raises(ValueError, match="W_head looks transposed"):
        by_key("bias")(W.T, cls=CLS)


@settings(max_examples=25, deadline=None)
@given(B=st.integers(1, 4), N=st.integers(1, 3), D=st.integers(1, 6), C=st.integers(1, 5),
       seed=st.integers(0, 1000))
def test_mistakes_shapes_on_random_inputs(B, N, D, C, seed):
    rs = np.random.RandomState(seed)
    z, W_head = rs.randn(B, N + 1, D), rs.randn(D, C)
    for p in MISTAKES:
        try:
            out = p(W_head, encoder_output=z, seed=seed)
        except ValueError as exc:
            assert p.__name__ == "transposed" and C != D, str(exc)
            continue
        assert out.shape == (B, C) and out.dtype == np.float64 and np.isfinite(out).all()


def old_variant_params(D, C, seed, H):
    """The parameters drawn whole, in the documented order (the reference)."""
    rs = np.random.RandomState(seed)
    k_d, k_h = 1.0 / np.sqrt(D), 1.0 / np.sqrt(H)
    p = {"W1": rs.uniform(-k_d, k_d, size=(D, H)), "b1": rs.uniform(-k_d, k_d, size=H),
         "W2": rs.uniform(-k_h, k_h, size=(H, C)), "b2": rs.uniform(-k_h, k_h, size=C),
         "W_pool": rs.uniform(-k_d, k_d, size=(D, D)), "b_pool": rs.uniform(-k_d, k_d, size=D)}
    p["gamma"] = 1.0 + 0.25 * rs.standard_normal(D)
    p["beta"] = 0.25 * rs.standard_normal(D)
    p["b_head"] = rs.uniform(-k_d, k_d, size=C)
    return p


@pytest.mark.parametrize("D, C, H", [(4, 3, 4), (300, 257, 300), (256, 300, 7)])
@pytest.mark.parametrize("names", [None, ("b_head",), ("gamma", "beta"), ("W_pool", "b_pool"),
                                   ("W1", "b1", "W2", "b2")])
def test_variant_params_drawn_by_blocks_or_in_part_are_the_same_bits(monkeypatch, D, C, H,
                                                                     names):
    # blocks of 1000 numbers: W1, W2 and W_pool span several, with a part block at the end
    monkeypatch.setattr(variants, "DRAW_BLOCK", 1000)
    ref = old_variant_params(D, C, 7, H)
    got = variant_params(D, C, seed=7, H=H, names=names)
    assert sorted(got) == sorted(names or ref)
    for name, value in got.items():
        assert value.shape == ref[name].shape and value.tobytes() == ref[name].tobytes(), name


def test_the_bias_head_at_the_largest_size_makes_no_big_matrix():
    # it needs only b_head (C numbers): W1, W2 and W_pool (25 MB at D = 1024, C = 1000) are
    # drawn a block at a time and dropped
    import tracemalloc
    h = np.random.RandomState(0).standard_normal((64, 1024))
    W = np.zeros((1024, 1000))
    tracemalloc.start()
    try:
        mistakes.bias(W, cls=h)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4e6, "%.1f MB" % (peak / 1e6)   # drawn whole: 26 MB
