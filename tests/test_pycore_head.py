"""The head (pycore.vit.head) against the worked example (docs/math.md), against an independent
plain-Python reference, and its properties and error messages."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st


from pycore import classification_head, extract_cls, head_from_cls, layer_norm  # noqa: E402
from reference import reference_head as plain_head  # noqa: E402

CLS = [[2, -1, 0, 3], [1, 1, -1, -1]]
W = [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]]
EXPECTED = [[0.8854, -1.3914, 1.5811], [0.2000, -0.1000, -1.4000]]


def reference_head(encoder_output, W_head, eps=1e-6):
    """Independent reference (tests/reference.py) on each sample's token 0."""
    return plain_head([sample[0] for sample in encoder_output], W_head, eps)


def encoder_from_cls(cls, n_patches=3, seed=0):
    cls = np.asarray(cls, dtype=float)
    rs = np.random.RandomState(seed)
    z = rs.randn(cls.shape[0], n_patches + 1, cls.shape[1])
    z[:, 0, :] = cls
    return z


def test_worked_example_matches_design_md():
    logits = classification_head(encoder_from_cls(CLS), W)
    assert logits.shape == (2, 3) and logits.dtype == np.float64
    assert np.round(logits, 4).tolist() == EXPECTED
    assert np.argmax(logits, axis=1).tolist() == [2, 0]


def test_worked_example_matches_reference_exactly_enough():
    z = encoder_from_cls(CLS)
    np.testing.assert_allclose(classification_head(z, W), reference_head(z.tolist(), W),
                               rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(B=st.integers(1, 5), N=st.integers(0, 4), D=st.integers(1, 12), C=st.integers(1, 6),
       log_scale=st.floats(-6, 6), offset=st.floats(-1e3, 1e3), seed=st.integers(0, 2**31))
def test_matches_plain_python_reference(B, N, D, C, log_scale, offset, seed):
    rs = np.random.RandomState(seed)
    z = rs.randn(B, N + 1, D) * 10.0 ** log_scale + offset
    W_head = rs.randn(D, C)
    got = classification_head(z, W_head)
    want = np.array(reference_head(z.tolist(), W_head.tolist()))
    # |h_hat| <= sqrt(D), so an absolute tolerance relative to sum |W| is meaningful; the
    # centring loses about log10(|offset| / spread) digits in any float64 method.
    spread = 10.0 ** log_scale
    lost = max(1.0, abs(offset) / spread)
    tol = 1e-12 * lost * (np.abs(W_head).sum(axis=0) + 1)
    assert np.all(np.abs(got - want) <= tol)


def test_layer_norm_basics():
    out = layer_norm([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0], [0.1, 0.1, 0.1]])
    assert out[0].tolist() == [0.0, 0.0, 0.0]
    assert out[2].tolist() == [0.0, 0.0, 0.0]          # constant row: exact zeros, no NaN
    np.testing.assert_allclose(out[1], [-1 / math.sqrt(2 / 3 + 1e-6), 0,
                                        1 / math.sqrt(2 / 3 + 1e-6)])
    assert layer_norm([5.0]).tolist() == [0.0]            # D = 1
    assert layer_norm(np.zeros((2, 3, 4))).shape == (2, 3, 4)


def test_layer_norm_extreme_magnitudes_stay_finite():
    out = layer_norm([[1e308, -1e308, 1e308], [1e300, 1e300, 1e300], [1e200, 0.0, 0.0]])
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out[0], [2 ** -0.5, -(2 ** 0.5), 2 ** -0.5])
    assert out[1].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(out[2], [2 ** 0.5, -(2 ** -0.5), -(2 ** -0.5)])


def test_layer_norm_eps_zero_and_bad_eps():
    assert layer_norm([[3.0, 3.0]], eps=0).tolist() == [[0.0, 0.0]]
    with pytest.raises(ValueError, match="eps must be a finite number >= 0"):
        layer_norm([[1.0, 2.0]], eps=-1)


@settings(max_examples=40, deadline=None)
@given(D=st.integers(2, 16), scale=st.floats(0.1, 100), shift=st.floats(-100, 100),
       seed=st.integers(0, 2**31))
def test_layer_norm_scale_and_shift_invariant_up_to_eps(D, scale, shift, seed):
    x = np.random.RandomState(seed).randn(3, D) + 0.5
    base = layer_norm(x)
    moved = layer_norm(x * scale + shift)
    # Exactly invariant with eps = 0; with eps = 1e-6 the difference is the eps effect:
    # |h_hat(a x + b) - h_hat(x)| <= |h_hat_0| * eps / (2 var) roughly, tiny here.
    var = x.var(axis=1, keepdims=True)
    bound = np.sqrt(D) * 1e-6 / np.minimum(var, var * scale ** 2) + 1e-9
    assert np.all(np.abs(moved - base) <= bound)
    np.testing.assert_allclose(layer_norm(x * scale + shift, eps=0), layer_norm(x, eps=0),
                               atol=1e-9)


def test_extract_cls_is_a_view_of_position_0():
    z = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    h = extract_cls(z)
    assert np.shares_memory(h, z) and h.tolist() == z[:, 0, :].tolist()
    assert extract_cls(z.astype(np.float32)).dtype == np.float64


def test_patch_tokens_never_matter_even_nan():
    z = encoder_from_cls(CLS, n_patches=5)
    base = classification_head(z, W)
    z2 = z.copy()
    z2[:, 1:, :] = np.nan
    np.testing.assert_array_equal(classification_head(z2, W), base)
    z3 = z.copy()
    z3[:, 1:, :] *= -1000
    np.testing.assert_array_equal(classification_head(z3, W), base)


@settings(max_examples=30, deadline=None)
@given(B=st.integers(1, 8), seed=st.integers(0, 2**31))
def test_batch_permutation_permutes_rows(B, seed):
    rs = np.random.RandomState(seed)
    z, W_head = rs.randn(B, 3, 5), rs.randn(5, 4)
    perm = rs.permutation(B)
    np.testing.assert_allclose(classification_head(z[perm], W_head),
                               classification_head(z, W_head)[perm], rtol=0, atol=1e-14)


@settings(max_examples=30, deadline=None)
@given(a=st.floats(-10, 10), b=st.floats(-10, 10), seed=st.integers(0, 2**31))
def test_logits_linear_in_w_head(a, b, seed):
    rs = np.random.RandomState(seed)
    z, W1, W2 = rs.randn(3, 2, 6), rs.randn(6, 4), rs.randn(6, 4)
    lhs = classification_head(z, a * W1 + b * W2)
    rhs = a * classification_head(z, W1) + b * classification_head(z, W2)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)


def test_inputs_never_modified_and_not_copied_whole():
    z = encoder_from_cls(CLS)
    W_head = np.array(W)
    z_before, W_before = z.copy(), W_head.copy()
    classification_head(z, W_head)
    head_from_cls(z[:, 0, :], W_head)
    np.testing.assert_array_equal(z, z_before)
    np.testing.assert_array_equal(W_head, W_before)


def test_peak_memory_is_far_below_the_encoder_output():
    import tracemalloc
    rs = np.random.RandomState(0)
    z, W_head = rs.randn(8, 197, 64), rs.randn(64, 10)
    tracemalloc.start()
    classification_head(z, W_head)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < z.nbytes / 10


@pytest.mark.parametrize("convert", [
    lambda a: a.astype(np.float32), lambda a: a.tolist(), lambda a: np.round(a).astype(int),
    lambda a: np.round(a).astype(np.int8), lambda a: a.astype(np.float16),
    lambda a: np.asfortranarray(a), lambda a: a.astype(object)])
def test_accepts_array_likes_and_computes_in_float64(convert):
    z = encoder_from_cls(CLS)
    z_in, W_in = convert(z), convert(np.array(W))
    got = classification_head(z_in, W_in)
    assert got.dtype == np.float64 and got.shape == (2, 3)
    want = reference_head(np.asarray(z_in, dtype=float).tolist(),
                          np.asarray(W_in, dtype=float).tolist())
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_empty_batch_and_zero_classes():
    assert classification_head(np.zeros((0, 2, 4)), W).shape == (0, 3)
    assert classification_head(encoder_from_cls(CLS), np.zeros((4, 0))).shape == (2, 0)


Z = encoder_from_cls(CLS)


@pytest.mark.parametrize("z, W_head, error, message", [
    (Z, np.array(W).T, ValueError,
     r"W_head looks transposed: it has shape \(3, 4\) = \(C, D\) but the head needs "
     r"\(D, C\) = \(4, 3\) to match encoder_output of shape \(2, 4, 4\): transpose it"),
    (Z, np.zeros((5, 3)), ValueError,
     r"W_head has shape \(5, 3\) but encoder_output has shape \(2, 4, 4\): W_head must be "
     r"\(D, C\) with D = 4 rows"),
    (Z[:, 0, :], W, ValueError,
     r"encoder_output must be a 3-D array of shape \(B, N\+1, D\); got a 2-D array of "
     r"shape \(2, 4\) \(a 2-D array looks like the CLS rows alone"),
    (Z, np.zeros(4), ValueError,
     r"W_head must be a 2-D array of shape \(D, C\); got a 1-D array of shape \(4,\)"),
    (Z, 3.0, ValueError, r"W_head must be a 2-D array of shape \(D, C\); got a 0-D array"),
    (np.where(np.arange(4) == 2, np.nan, Z), W, ValueError,
     r"encoder_output\[0,0,2\] is NaN: every number must be finite"),
    (Z, np.where(np.arange(3) == 1, -np.inf, W), ValueError,
     r"W_head\[0,1\] is -inf: every number must be finite"),
    (encoder_from_cls([[0, 0, 0, 1]]), np.array([[-1.7e308] * 3] * 3 + [[1.7e308] * 3]), ValueError,
     "the logits overflowed float64 although every input is finite"),
    (Z.astype(complex), W, TypeError, r"encoder_output is complex \(dtype complex128\)"),
    (Z, np.array(W) > 0, TypeError, r"W_head is boolean"),
    ([[["1", "2"]]], W, TypeError, r"encoder_output holds text"),
    ([[[1.0, None]]], W, TypeError, r"encoder_output at index \(0, 0, 1\) holds None, "
                                    r"which is not a number"),
    ([[[1.0, 2.0], [3.0]]], W, ValueError, "encoder_output is ragged"),
    (np.zeros((2, 0, 4)), W, ValueError, "encoder_output has no tokens"),
    (np.zeros((2, 1, 0)), np.zeros((0, 3)), ValueError, "encoder_output has D = 0"),
])
def test_errors_say_what_is_wrong(z, W_head, error, message):
    with pytest.raises(error, match=message):
        classification_head(z, W_head)


def test_head_from_cls_errors_name_cls():
    with pytest.raises(ValueError, match=r"cls must be a 2-D array of shape \(B, D\)"):
        head_from_cls([1.0, 2.0], W)
    with pytest.raises(ValueError, match=r"cls\[1,3\] is inf: every number must be finite"):
        head_from_cls([[0, 0, 0, 0], [0, 0, 0, np.inf]], W)
    with pytest.raises(ValueError, match=r"to match cls of shape \(2, 4\)"):
        head_from_cls(CLS, np.array(W).T)


# ---- the trace -----------------------------------------------------------------------

def test_trace_has_every_intermediate_of_the_worked_example():
    from pycore import trace_head
    t = trace_head(W, cls=CLS)
    assert t.h_cls.tolist() == [[2, -1, 0, 3], [1, 1, -1, -1]]
    assert t.mean.tolist() == [1.0, 0.0] and t.var.tolist() == [2.5, 1.0]
    np.testing.assert_allclose(t.std, [math.sqrt(2.5 + 1e-6), math.sqrt(1 + 1e-6)], rtol=1e-15)
    np.testing.assert_allclose(t.h_hat, (t.h_cls - t.mean[:, None]) / t.std[:, None],
                               rtol=1e-14, atol=1e-15)
    assert np.round(t.logits, 4).tolist() == EXPECTED
    assert t.predicted.tolist() == [2, 0] and t.predicted.dtype.kind == "i"
    e = np.exp(t.logits)
    np.testing.assert_allclose(t.display_softmax, e / e.sum(axis=1, keepdims=True), rtol=1e-14)
    assert t.eps == 1e-6
    assert "display only" in type(t).__doc__.lower()
    assert "cross-entropy" in type(t).__doc__.lower()
    shapes = [a.shape for a in (t.h_cls, t.mean, t.var, t.std, t.h_hat, t.logits, t.predicted,
                                t.display_softmax)]
    assert shapes == [(2, 4), (2,), (2,), (2,), (2, 4), (2, 3), (2,), (2, 3)]


def test_trace_from_encoder_output_equals_trace_from_cls_and_the_head():
    from pycore import trace_head
    z = encoder_from_cls(CLS, n_patches=6)
    a, b = trace_head(W, encoder_output=z), trace_head(W, cls=CLS)
    for name in ("h_cls", "mean", "var", "std", "h_hat", "logits", "predicted",
                 "display_softmax"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(a.logits, classification_head(z, W))
    assert np.shares_memory(a.h_cls, z)                 # position 0 is read, not copied


def test_trace_ties_pick_the_first_class_and_errors():
    from pycore import trace_head
    t = trace_head(np.zeros((4, 3)), cls=CLS)
    assert t.predicted.tolist() == [0, 0]
    np.testing.assert_allclose(t.display_softmax, 1 / 3)
    with pytest.raises(TypeError, match="exactly one of cls"):
        trace_head(W)
    with pytest.raises(TypeError, match="exactly one of cls"):
        trace_head(W, cls=CLS, encoder_output=encoder_from_cls(CLS))
    with pytest.raises(ValueError, match=r"cls\[0,1\] is NaN"):
        trace_head(W, cls=[[0, np.nan, 0, 0]])


def test_reused_workspace_never_leaks_into_results():
    rs = np.random.RandomState(3)
    z1, z2, W_head = rs.randn(4, 3, 8), rs.randn(4, 3, 8), rs.randn(8, 5)
    first = classification_head(z1, W_head)
    kept = first.copy()
    second = classification_head(z2, W_head)
    np.testing.assert_array_equal(first, kept)          # the second call did not touch it
    assert not np.shares_memory(first, second)
    np.testing.assert_allclose(second, reference_head(z2.tolist(), W_head.tolist()),
                               rtol=1e-12, atol=1e-12)
    big, W_big = rs.randn(1100, 1, 1000), rs.randn(1000, 2)   # 8.8 MB of h_hat: not kept
    h = big[:, 0, :]
    want = (h - h.mean(1, keepdims=True)) / np.sqrt(h.var(1, keepdims=True) + 1e-6) @ W_big
    np.testing.assert_allclose(classification_head(big, W_big), want, rtol=1e-9, atol=1e-9)


def test_threads_get_their_own_workspace():
    import threading
    rs = np.random.RandomState(4)
    W_head = rs.randn(16, 3)
    inputs = [rs.randn(6, 2, 16) for _ in range(4)]
    wanted = [np.array(reference_head(z.tolist(), W_head.tolist())) for z in inputs]
    errors = []

    def work(k):
        for _ in range(200):
            got = classification_head(inputs[k], W_head)
            if not np.allclose(got, wanted[k], rtol=1e-12, atol=1e-12):
                errors.append(k)
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_finite_logit_whose_terms_overflow_on_the_way_is_computed():
    """One term of h_hat @ W_head is 2.6e308, beyond float64, and the others bring the sum back
    to 0.87e308: the logit is finite, so the head gives it (and does not refuse the state),
    whatever order this machine's BLAS adds the terms in."""
    x = [0.0, 0.0, 0.0, 1.0]
    mean = sum(x) / 4
    var = sum((v - mean) ** 2 for v in x) / 4
    h_hat = [(v - mean) / math.sqrt(var + 1e-6) for v in x]
    column = [1e308, 1e308, 1e308, 1.5e308]
    expected = math.fsum(h * (w / 2 ** 10) for h, w in zip(h_hat, column)) * 2 ** 10
    W = np.array([column, [1.0] * 4]).T                   # a second, ordinary class
    logits = classification_head(encoder_from_cls([x]), W)
    assert logits[0, 0] == pytest.approx(expected, rel=1e-14) and 8e307 < expected < 9e307
    assert logits[0, 1] == pytest.approx(math.fsum(h_hat), abs=1e-12)
