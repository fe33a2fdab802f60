"""The head's gradients (pycore.vit.backward): every gradient against central finite differences
of an independent forward pass (tests/training_reference.py), and the properties the math implies
(docs/training.md): rows of dh_cls summing to zero, orthogonality up to eps, invariances, the
mistaken heads' gradients, and the errors."""
import math

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from pycore import cross_entropy, head_backward
from pycore.vit.backward import HEADS
from pycore.vit.training import class_means_dataset

from training_reference import (EPS, ref_h_hat, ref_softmax, ref_loss, onehot, pow2,
                                finite_differences, relative_error, random_case)


# ---------------------------------------------------------------- gradients, numerically

@pytest.mark.parametrize("head", HEADS)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1))
@example(seed=2686)  # the bias head's loss 1.2e-12 apart (relative): within the bound below
def test_gradients_match_finite_differences(head, seed):
    h, W, y, b = random_case(seed, head)
    g = head_backward(h, W, y, head=head, b=b)
    # row 1 is eps-dominated: its h_hat (|h - mu| / sqrt(var + eps), up to ~1e4 times the
    # rounding of h) differs in the last bits between two LayerNorms written differently, and
    # so does the loss, by up to about 1e-12 relative
    assert g.loss == pytest.approx(ref_loss(h, W, y, head, b), rel=1e-10, abs=1e-13)
    # a step per row of about 1e-3 of the scale the loss varies on: sqrt(var + eps) with
    # LayerNorm (1e-3 for a constant row), the inputs' magnitude without (W ~ 1 / max|h|)
    scale = (np.full(h.shape[0], np.abs(h).max()) if head == "no_layernorm"
             else np.sqrt(h.var(axis=1) + EPS))
    steps = pow2(np.repeat(scale[:, None] * 1e-3, h.shape[1], axis=1))
    dh = finite_differences(lambda x: ref_loss(x, W, y, head, b), h, steps)
    for r in range(h.shape[0]):          # per row: the constant and eps rows are ~1e3 larger
        assert relative_error(dh[r], g.dh_cls[r]) < 1e-6, (r, dh[r], g.dh_cls[r])
    dW = finite_differences(lambda x: ref_loss(h, x, y, head, b), W,
                            np.full(W.shape, pow2(np.abs(W).max() * 1e-3)))
    assert relative_error(dW, g.dW_head) < 1e-6
    if head == "bias":
        db = finite_differences(lambda x: ref_loss(h, W, y, head, x), b,
                                np.full(b.shape, 2.0 ** -10))
        assert relative_error(db, g.db) < 1e-6
    else:
        assert g.db is None


@pytest.mark.parametrize("head", HEADS)
def test_result_shapes_and_fields(head):
    h, W, y, b = random_case(1, head)
    g = head_backward(h, W, y, head=head, b=b)
    B, D = h.shape
    C = W.shape[1]
    assert g.head == head and isinstance(g.loss, float)
    assert g.logits.shape == g.probs.shape == (B, C) and g.dW_head.shape == (D, C)
    assert g.dh_cls.shape == (B, D)
    np.testing.assert_allclose(g.probs, ref_softmax(g.logits), rtol=1e-14, atol=1e-16)
    assert cross_entropy(g.logits, y) == pytest.approx(g.loss, rel=1e-14)
    assert "HeadGradients(head={!r}".format(head) in repr(g)


# ------------------------------------------------------------------ gradients, properties

ROWS = st.integers(0, 2 ** 32 - 1).map(lambda s: random_case(s, "correct"))


@settings(max_examples=100, deadline=None)
@given(case=ROWS)
def test_dW_is_h_hat_transposed_times_softmax_minus_onehot(case):
    h, W, y, _ = case
    g = head_backward(h, W, y)
    h_hat = ref_h_hat(h)
    dz = (ref_softmax(h_hat @ W) - onehot(y, W.shape[1])) / len(y)
    expected = h_hat.T @ dz
    # h_hat is only as exact as h - mean: a few ulps of the row's largest value, over sigma
    # (1e-12 for the eps row, whose deviations are 1e-5 around an offset up to 5)
    sigma = np.sqrt(h.var(axis=1) + EPS)
    err_h_hat = 10 * np.spacing(np.abs(h).max(axis=1)) / sigma                # (B,)
    bound = (err_h_hat[:, None] + 1e-13 * np.abs(h_hat)).T @ np.abs(dz)      # (D, C)
    assert (np.abs(g.dW_head - expected) <= bound).all()


def _ln_scales(h, W, y):
    """Per row: dh_hat (independent), sigma, and the size rounding is relative to."""
    h_hat = ref_h_hat(h)
    dh_hat = (ref_softmax(h_hat @ W) - onehot(y, W.shape[1])) / len(y) @ W.T
    sigma = np.sqrt(h.var(axis=1) + EPS)
    return h_hat, dh_hat, sigma, np.abs(dh_hat).max(axis=1) / sigma


@settings(max_examples=100, deadline=None)
@given(case=ROWS, head=st.sampled_from(["correct", "softmax_inside", "bias"]))
def test_each_row_of_dh_cls_sums_to_zero(case, head):
    """LayerNorm ignores a shift of its row, so moving every feature alike changes nothing."""
    h, W, y, _ = case
    g = head_backward(h, W, y, head=head)
    _, _, _, size = _ln_scales(h, W, y)
    D = h.shape[1]
    assert (np.abs(g.dh_cls.sum(axis=1)) <= 1e-13 * D * size).all()


@settings(max_examples=100, deadline=None)
@given(case=ROWS)
def test_dh_cls_is_orthogonal_to_h_hat_only_up_to_eps(case):
    """h_hat . dh_cls = eps / (var + eps) * (h_hat . dh_hat) / sigma, exactly: 0 for a constant
    row, about 1e-6 of the scale for an ordinary row, NOT small for an eps-dominated row."""
    h, W, y, _ = case
    g = head_backward(h, W, y)
    h_hat, dh_hat, sigma, size = _ln_scales(h, W, y)
    var = h.var(axis=1)
    expected = EPS / (var + EPS) * np.einsum("ij,ij->i", h_hat, dh_hat) / sigma
    along = np.einsum("ij,ij->i", h_hat, g.dh_cls)
    D = h.shape[1]
    assert (np.abs(along - expected) <= 1e-12 * D * size * (1 + np.abs(h_hat).max())).all()


def test_eps_dominated_row_is_far_from_orthogonal():
    # variance = eps: the identity above gives half of h_hat . dh_hat / sigma
    h = np.array([[1.0, 1.0 - 1e-3, 1.0 + 1e-3, 1.0], [0.0, 1.0, 2.0, -3.0]])
    h[0] = 5.0 + (h[0] - h[0].mean()) * math.sqrt(EPS / h[0].var())
    W = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 0.5], [0.3, 0.0]])
    g = head_backward(h, W, [1, 0])
    h_hat, dh_hat, sigma, _ = _ln_scales(h, W, np.array([1, 0]))
    ratio = np.dot(h_hat[0], g.dh_cls[0]) / (np.dot(h_hat[0], dh_hat[0]) / sigma[0])
    assert ratio == pytest.approx(0.5, rel=1e-6)


def test_constant_rows_gradient_is_the_centred_dh_hat_over_sqrt_eps():
    """A constant row has h_hat = 0, logits 0, softmax 1/C; the LayerNorm Jacobian there is
    the centring projection over sqrt(eps): dh_cls is large, not zero, and sums to 0."""
    rs = np.random.RandomState(5)
    h = rs.randn(4, 6)
    h[1] = 3.25
    h[3] = -7.0
    W = rs.randn(6, 5)
    y = np.array([2, 4, 0, 1])
    g = head_backward(h, W, y)
    for r in (1, 3):
        assert (g.logits[r] == 0.0).all()
        d_hat = (np.full(5, 0.2) - onehot(y, 5)[r]) / 4 @ W.T
        np.testing.assert_allclose(g.dh_cls[r], (d_hat - d_hat.mean()) / math.sqrt(EPS),
                                   rtol=1e-12, atol=1e-12)
        assert np.abs(g.dh_cls[r]).max() > 10.0
    # and constant rows add nothing to dW_head: the other rows alone give it
    keep = [0, 2]
    h_hat = ref_h_hat(h[keep])
    dz = (ref_softmax(h_hat @ W) - onehot(y[keep], 5)) / 4
    np.testing.assert_allclose(g.dW_head, h_hat.T @ dz, rtol=1e-12, atol=1e-15)


def test_where_dh_cls_is_zero():
    """Zero rows of dh_cls: one feature (every row constant, centring leaves nothing), or
    W_head whose rows are all equal (the head then sees sum(h_hat) = 0: loss log C whatever
    h_cls is)."""
    rs = np.random.RandomState(2)
    g = head_backward(rs.randn(5, 1) * 100, rs.randn(1, 4), [0, 1, 2, 3, 0])
    assert (g.dh_cls == 0.0).all() and (g.logits == 0.0).all() and (g.dW_head == 0.0).all()
    W = np.tile(rs.randn(1, 4), (6, 1))                 # every row the same
    h = rs.randn(5, 6) * 3
    g = head_backward(h, W, [0, 1, 2, 3, 0])
    assert np.abs(g.logits).max() < 1e-13 and g.loss == pytest.approx(math.log(4), abs=1e-13)
    assert np.abs(g.dh_cls).max() < 1e-13


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), log_var=st.floats(-2, 3))
def test_two_features_give_an_eps_sized_gradient(seed, log_var):
    """D = 2: h_hat = +-(1, -1) / sqrt(1 + eps/var), so dh_cls = (d, -d) * eps / (var + eps)**1.5
    with (d, -d) the centred dh_hat. The backward removes dh_hat's component along h_hat and
    keeps eps / (var + eps) of it: rounding at the scale of dh_hat / sigma stays, hence atol."""
    rs = np.random.RandomState(seed)
    h = rs.randn(3, 2)
    h *= 10 ** (log_var / 2) / np.abs(h[:, :1] - h[:, 1:]) * 2      # var = 10**log_var
    W = rs.randn(2, 3)
    y = rs.randint(0, 3, 3)
    g = head_backward(h, W, y)
    _, dh_hat, _, _ = _ln_scales(h, W, y)
    var = h.var(axis=1)
    centred = dh_hat - dh_hat.mean(axis=1, keepdims=True)
    expected = centred * (EPS / (var + EPS) ** 1.5)[:, None]
    rounding = 1e-13 * np.abs(dh_hat).max(axis=1) / np.sqrt(var + EPS)
    assert (np.abs(g.dh_cls - expected).max(axis=1) <= 1e-9 * np.abs(expected).max(axis=1)
            + rounding).all()
    assert (np.abs(expected).max(axis=1) > 1e2 * rounding).any()    # the check has teeth


def _invariance_bound(h, a, W):
    """How far the loss may move when row b of h becomes a_b * h_b + c_b: only through eps,
    h_hat_b changes by the factor sqrt((var + eps) / (var + eps / a**2)); the loss is
    2 max|W| sqrt(D)-Lipschitz in each h_hat row (per row, averaged over the batch)."""
    var = h.var(axis=1)
    r = np.abs(np.sqrt((var + EPS) / (var + EPS / a ** 2)) - 1.0)
    D = h.shape[1]
    return float(np.max(2 * np.abs(W).max() * D * r)) + 1e-11


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), log_a=st.lists(st.floats(-3, 3), min_size=4,
                                                         max_size=4),
       c=st.lists(st.floats(-100, 100), min_size=4, max_size=4))
def test_correct_head_loss_ignores_per_row_scale_and_shift_up_to_eps(seed, log_a, c):
    rs = np.random.RandomState(seed)
    h = rs.randn(4, 7)
    W = rs.randn(7, 3)
    y = rs.randint(0, 3, 4)
    a = 10.0 ** np.array(log_a)
    moved = h * a[:, None] + np.array(c)[:, None]
    base = head_backward(h, W, y).loss
    assert abs(head_backward(moved, W, y).loss - base) <= _invariance_bound(h, a, W)
    # the eps is not ignored: at a tiny scale it shrinks h_hat ten-fold and more, and the loss is
    # that of the shrunk h_hat (written out here from LN's equation and the log-softmax)
    tiny = h * 1e-5
    centred = tiny - tiny.mean(axis=1, keepdims=True)
    var = (centred ** 2).mean(axis=1, keepdims=True)
    assert (np.sqrt(var / (var + 1e-6)) < 0.1).all()
    z = (centred / np.sqrt(var + 1e-6)) @ W
    z_max = z.max(axis=1, keepdims=True)
    log_p = z - z_max - np.log(np.exp(z - z_max).sum(axis=1, keepdims=True))
    expected = -log_p[np.arange(len(y)), y].mean()
    assert head_backward(tiny, W, y).loss == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_huge_rows_use_the_rescaled_layer_norm():
    """Rows whose variance overflows float64: same loss, gradient scaled by 1/s."""
    rs = np.random.RandomState(3)
    h = rs.randn(3, 5)
    W = rs.randn(5, 4)
    y = [0, 3, 1]
    g = head_backward(h, W, y, eps=1e-300)     # at scale 1e200 the eps is 1e-6 / 1e400 ~ 0
    big = head_backward(h * 1e200, W, y)
    assert big.loss == pytest.approx(g.loss, rel=1e-12)
    np.testing.assert_allclose(big.dW_head, g.dW_head, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(big.dh_cls * 1e200, g.dh_cls, rtol=1e-9)
    assert np.isfinite(big.dh_cls).all() and (big.dh_cls != 0).any()


def test_softmax_inside_first_gradient_is_the_correct_one_over_c():
    """From W = 0 the head outputs q = 1/C; the second softmax is uniform again, and the
    softmax Jacobian at uniform q is (I - 1/C) / C: the gradient is divided by C."""
    h, y = class_means_dataset(7, 12, 3, seed=4)
    W0 = np.zeros((12, 7))
    correct = head_backward(h, W0, y)
    inside = head_backward(h, W0, y, head="softmax_inside")
    np.testing.assert_allclose(inside.dW_head, correct.dW_head / 7, rtol=1e-12, atol=1e-17)
    np.testing.assert_allclose(inside.dh_cls, correct.dh_cls / 7, rtol=1e-10, atol=1e-15)
    assert inside.loss == correct.loss == math.log(7)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), C=st.integers(2, 12), log_w=st.floats(-2, 3))
def test_softmax_inside_loss_never_goes_below_its_floor(seed, C, log_w):
    """The head's outputs lie in [0, 1] and sum to 1: the best it can do is a one-hot output,
    whose cross-entropy is log(e + C - 1) - 1 (1.46 for C = 10), never 0."""
    rs = np.random.RandomState(seed)
    h = rs.randn(5, 6)
    W = rs.randn(6, C) * 10 ** log_w
    loss = head_backward(h, W, rs.randint(0, C, 5), head="softmax_inside").loss
    assert loss >= math.log(math.e + C - 1) - 1 - 1e-12


def test_bias_gradient_is_the_mean_of_softmax_minus_onehot():
    """db = mean over the batch of (softmax - onehot); from W = 0, b = 0 that is
    1/C - (class frequency): zero for balanced labels, the label imbalance otherwise."""
    h, y = class_means_dataset(4, 6, 3, seed=1)             # balanced: 3 of each class
    g = head_backward(h, np.zeros((6, 4)), y, head="bias")
    np.testing.assert_allclose(g.db, 0.0, atol=1e-15)
    y = np.array([0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 1, 0])     # frequencies 6, 2, 1, 3 of 12
    g = head_backward(h, np.zeros((6, 4)), y, head="bias")
    np.testing.assert_allclose(g.db, 0.25 - np.array([6, 2, 1, 3]) / 12, atol=1e-15)
    rs = np.random.RandomState(0)
    W, b = rs.randn(6, 4), rs.randn(4)
    g = head_backward(h, W, y, head="bias", b=b)
    h_hat = ref_h_hat(h)
    np.testing.assert_allclose(g.db, (ref_softmax(h_hat @ W + b) - onehot(y, 4)).mean(axis=0),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(head_backward(h, W, y, head="bias", b=np.zeros(4)).dW_head,
                               head_backward(h, W, y).dW_head, rtol=0, atol=0)


def test_no_layernorm_gradient_scales_with_the_input():
    """Without LayerNorm, dW_head at input s * h is s times dW_head at input h with W / s:
    the same logits, s times the gradient."""
    rs = np.random.RandomState(7)
    h, W, y = rs.randn(4, 5), rs.randn(5, 3), [0, 1, 2, 1]
    g1 = head_backward(h, W, y, head="no_layernorm")
    g10 = head_backward(h * 10, W / 10, y, head="no_layernorm")
    np.testing.assert_allclose(g10.logits, g1.logits, rtol=1e-13)
    np.testing.assert_allclose(g10.dW_head, 10 * g1.dW_head, rtol=1e-12)


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(head="softmax"), ValueError, r"unknown head 'softmax'.*correct, softmax_inside"),
    (dict(b=np.zeros(3)), ValueError, r"b is only used by head='bias'"),
    (dict(head="bias", b=np.zeros(4)), ValueError, r"b has shape \(4,\).*C = 3"),
    (dict(head="bias", b=[0.0, np.inf, 0.0]), ValueError, r"b\[1\] is inf"),
    (dict(eps=0.0), ValueError, r"eps must be a finite number in \(0\.0, inf\)"),
    (dict(W_head=np.zeros((3, 4))), ValueError, r"W_head looks transposed"),
    (dict(W_head=np.zeros((4, 0))), ValueError, r"C >= 1"),
    (dict(h_cls=np.zeros((0, 4))), ValueError, r"B >= 1"),
    (dict(h_cls=[[0.0, np.nan, 1.0, 2.0]] * 2), ValueError, r"cls\[0,1\] is NaN"),
    (dict(W_head=np.full((4, 3), np.nan)), ValueError, r"W_head\[0,0\] is NaN"),
])
def test_head_backward_errors(kwargs, error, words):
    args = dict(h_cls=np.arange(8.0).reshape(2, 4), W_head=np.zeros((4, 3)), labels=[0, 2])
    args.update(kwargs)
    with pytest.raises(error, match=words):
        head_backward(**args)


def test_head_backward_does_not_modify_its_inputs():
    rs = np.random.RandomState(0)
    h, W, b = rs.randn(3, 4), rs.randn(4, 2), rs.randn(2)
    saved = h.copy(), W.copy(), b.copy()
    for head in HEADS:
        head_backward(h, W, [0, 1, 1], head=head, b=b if head == "bias" else None)
    for before, after in zip(saved, (h, W, b)):
        assert (before == after).all()
