"""colour_range.colour_limit and its percentile helper: the same answers, to the last bit, as the
formula they replaced (np.abs over the whole matrix, then np.percentile)."""
import math

import numpy as np
from hypothesis import given, settings, strategies as st

from pycore.explorer.panels import colour_range as view


def old_colour_limit(values):
    """The formula colour_limit had before it stopped materializing |x| of the whole matrix."""
    magnitude = np.abs(values).ravel()
    peak = float(np.max(magnitude)) if magnitude.size else 0.0
    top = peak
    if magnitude.size > view.ROBUST_RANGE_FROM:
        step = max(1, magnitude.size // 50000)
        top = float(np.percentile(magnitude[::step], view.ROBUST_PERCENTILE))
    top = top if top > 0 else 1.0
    return top, peak > top


def same(a, b):
    """Equal as numbers (0.0 == -0.0: partition may order equal zeros either way), NaN == NaN."""
    return a == b or (math.isnan(a) and math.isnan(b))


# Few distinct values make ties; the small pool also brings zeros and negatives.
POOL = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, 1e-300, -7.25, 1e300])
FLOATS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
SAMPLES = st.lists(POOL | FLOATS, min_size=1, max_size=300)


@settings(max_examples=400, deadline=None)
@given(SAMPLES, st.sampled_from([view.ROBUST_PERCENTILE, 0.0, 50.0, 99.0, 100.0])
       | st.floats(min_value=0.0, max_value=100.0))
def test_percentile_helper_equals_numpy_percentile(values, percent):
    sample = np.array(values)
    expected = float(np.percentile(sample, percent))
    assert same(view._percentile(sample.copy(), percent), expected)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 120_000), st.integers(0, 2 ** 32 - 1), st.sampled_from(["normal", "ties", "zeros"]))
def test_percentile_helper_on_large_samples(n, seed, kind):
    rng = np.random.RandomState(seed)
    if kind == "normal":
        sample = rng.standard_normal(n) * 10.0 ** rng.randint(-5, 6)
    elif kind == "ties":
        sample = rng.randint(-3, 4, size=n).astype(np.float64)
    else:
        sample = np.where(rng.rand(n) < 0.999, 0.0, rng.standard_normal(n))
    sample = np.abs(sample)
    assert same(view._percentile(sample.copy(), view.ROBUST_PERCENTILE),
                float(np.percentile(sample, view.ROBUST_PERCENTILE)))


def test_percentile_helper_with_nan_and_inf_answers_as_numpy_does():
    for values in ([1.0, np.nan, 2.0], [np.inf, 1.0, np.inf], [np.inf], [3.0, np.inf] * 600):
        sample = np.array(values)
        for percent in (0.0, 50.0, view.ROBUST_PERCENTILE, 100.0):
            with np.errstate(invalid="ignore"):
                expected = float(np.percentile(sample, percent))
            assert same(view._percentile(sample.copy(), percent), expected), (values, percent)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 80), st.integers(0, 80), st.lists(POOL | FLOATS, min_size=1, max_size=40),
       st.integers(0, 2 ** 32 - 1))
def test_colour_limit_equals_the_old_formula(rows, cols, pool, seed):
    # Shapes on both sides of ROBUST_RANGE_FROM, values drawn with ties from a small pool.
    values = np.random.RandomState(seed).choice(np.array(pool), size=(rows, cols))
    assert view.colour_limit(values) == old_colour_limit(values)


def test_colour_limit_of_a_vit_b16_w_head_is_unchanged():
    rng = np.random.RandomState(0)
    W = rng.standard_normal((768, 1000)) * 0.02
    W[5, 7] = 40.0  # one edited outlier: the range stays robust, and the colours saturate
    assert view.colour_limit(W) == old_colour_limit(W)
    assert view.colour_limit(W)[1] is True
    for matrix in (-W, np.abs(W), np.zeros((768, 1000)), np.full((768, 1000), -0.0),
                   np.where(rng.rand(768, 1000) < 0.9995, 0.0, W), W[:, :6].copy(), W.T):
        assert view.colour_limit(matrix) == old_colour_limit(matrix)


def test_colour_limit_edge_cases():
    for values in (np.zeros((0, 3)), np.array([[-0.0]]), np.array([[3, -5]])):
        expected = old_colour_limit(values)
        got = view.colour_limit(values)
        assert same(got[0], expected[0]) and got[1] == expected[1], values


def test_colour_limit_of_non_finite_values_is_the_finite_values_and_saturates():
    """A mistaken head can overflow (no LayerNorm on huge inputs): its heatmap keeps a finite
    scale, from the finite values, and says that colours saturate (the JSON answer cannot carry
    an infinite colour range)."""
    assert view.colour_limit(np.array([[np.nan, 1.0]])) == (1.0, True)
    assert view.colour_limit(np.array([[-np.inf, 2.5, -0.5]])) == (2.5, True)
    assert view.colour_limit(np.full((70, 70), np.inf)) == (1.0, True)
    big = np.random.RandomState(1).standard_normal((80, 80))
    big[3, 4] = np.inf
    finite = big[np.isfinite(big)]
    assert view.colour_limit(big) == (view.colour_limit(finite)[0], True)


# ---- RunningColourLimit: colour_limit kept cell by cell -----------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.sampled_from([(3, 4), (64, 64), (65, 64), (300, 400), (400, 300)]),
       st.lists(POOL | FLOATS, min_size=1, max_size=12), st.integers(0, 2 ** 32 - 1),
       st.sampled_from(["any", "peak", "sample"]), st.booleans())
def test_a_running_colour_limit_is_colour_limit_after_every_cell(shape, pool, seed, where,
                                                                 continuous):
    """After each single-cell change, the running limit equals colour_limit of the whole array,
    bit for bit: small arrays (max |x|), and arrays past ROBUST_RANGE_FROM whose sample takes
    every cell (64 x 65) or one in two (300 x 400). The cells changed are random, the peak's
    own cell (so that the peak goes down, to a tie, or up), or cells of the sample; values come
    from a small pool (ties, zeros, signed zeros), anywhere, or a normal distribution (where
    each cell of the sample moves the percentile), and may be non-finite."""
    rng = np.random.RandomState(seed)
    pool = np.array(pool)
    draw = (lambda size=None: rng.standard_normal(size)) if continuous else \
        (lambda size=None: rng.choice(pool, size=size))
    values = draw(shape)
    running = view.RunningColourLimit(values)
    assert running.limit == view.colour_limit(values)
    step = max(1, values.size // view.ROBUST_SAMPLE)
    for _ in range(25):
        if where == "peak":
            k = int(np.argmax(np.abs(values).ravel())) if np.isfinite(values).all() else 0
        elif where == "sample":
            k = step * rng.randint(0, (values.size - 1) // step + 1)
        else:
            k = rng.randint(values.size)
        with np.errstate(invalid="ignore"):  # 0 * inf: NaN
            values.ravel()[k] = draw() * rng.choice([1.0, 0.5, 10.0, -10.0, np.inf])
        running.after_cell(k)
        expected = view.colour_limit(values)
        assert same(running.limit[0], expected[0]) and running.limit[1] == expected[1]


def test_a_running_colour_limit_at_vit_b16_size_follows_a_scrubbed_outlier():
    """A W_head of ViT-B/16's size with one cell dragged far past the others, then back: the
    colours saturate while it is out, and the range is the robust one throughout."""
    rng = np.random.RandomState(2)
    W = rng.standard_normal((768, 1000)) * 0.02
    running = view.RunningColourLimit(W)
    for value in (0.1, 1.0, 40.0, 3.0, 0.0, -40.0, 0.01):
        for k in (5 * 1000 + 7, 15 * 3):  # a cell outside the sample, and one in it
            W.ravel()[k] = value
            running.after_cell(k)
            assert running.limit == view.colour_limit(W) == old_colour_limit(W), (value, k)
    assert view.RunningColourLimit(W.T).limit == view.colour_limit(W.T)  # not C-contiguous
