"""The training loss (pycore.vit.loss): cross-entropy against a plain-Python reference
(math.fsum), its stability, and the labels and logits it refuses (tests/training_reference.py)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pycore import cross_entropy, head_backward
from pycore.vit.loss import check_labels

from training_reference import fsum_cross_entropy


# ------------------------------------------------------------------------ cross-entropy

@settings(max_examples=150, deadline=None)
@given(B=st.integers(1, 6), C=st.integers(1, 8), log_scale=st.floats(-3, 3),
       offset=st.floats(-1e4, 1e4), seed=st.integers(0, 2 ** 32 - 1))
def test_cross_entropy_matches_fsum_reference(B, C, log_scale, offset, seed):
    rs = np.random.RandomState(seed)
    logits = rs.randn(B, C) * 10 ** log_scale + offset
    labels = rs.randint(0, C, B)
    expected = fsum_cross_entropy(logits.tolist(), labels.tolist())
    assert cross_entropy(logits, labels) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_cross_entropy_is_stable_for_large_logits():
    # naive exp(1000) overflows; the exact losses are log(1 + e^-1000) ~ 0 and 1000
    assert cross_entropy([[1000.0, 0.0]], [0]) == 0.0
    assert cross_entropy([[1000.0, 0.0]], [1]) == 1000.0
    assert cross_entropy([[-1e300, 1e300]], [1]) == 0.0


@pytest.mark.parametrize("B,C", [(1, 1), (3, 7), (5, 10), (7, 3), (60, 10), (64, 1000)])
def test_zero_logits_give_exactly_log_c(B, C):
    labels = np.arange(B) % C
    assert cross_entropy(np.zeros((B, C)), labels) == math.log(C)


def test_cross_entropy_accepts_integer_labels_of_any_integer_type():
    logits = [[0.0, 1.0, 2.0]]
    expected = fsum_cross_entropy(logits, [2])
    for labels in ([2], (2,), np.array([2], dtype=np.uint8), np.array([2], dtype=np.int32),
                   [np.int64(2)], np.array([2], dtype=object)):
        assert cross_entropy(logits, labels) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize("labels,error,words", [
    ([[0, 1]], ValueError, r"labels has shape \(1, 2\) but must have shape \(2,\)"),
    ([0, 1, 2], ValueError, r"labels has 3 entries but there are B = 2 samples"),
    ([0], ValueError, r"labels has 1 entries but there are B = 2 samples"),
    (1, ValueError, r"labels must be a list of B = 2 class indices; got 1$"),
    ("01", ValueError, r"labels must be a list of B = 2 class indices; got '01'$"),
    ([0, 1.0], TypeError, r"labels\[1\] is 1\.0"),
    (np.array([0.0, 1.0]), TypeError, r"labels has dtype float64"),
    ([True, 1], TypeError, r"labels\[0\] is True"),
    ([0, np.bool_(True)], TypeError, r"labels\[1\] is "),
    (np.array([True, False]), TypeError, r"labels is boolean"),
    (["0", 1], TypeError, r"labels\[0\] is '0'"),
    ([0, 3], ValueError, r"labels\[1\] = 3 is out of range: a class index from 0 to 2 \(C = 3"),
    ([-1, 0], ValueError, r"labels\[0\] = -1 is out of range"),
    (np.array([0, 7], dtype=np.uint64), ValueError, r"labels\[1\] = 7 is out of range"),
])
def test_bad_labels_are_named(labels, error, words):
    with pytest.raises(error, match=words):
        cross_entropy(np.zeros((2, 3)), labels)
    with pytest.raises(error, match=words):
        head_backward(np.arange(8.0).reshape(2, 4), np.zeros((4, 3)), labels)


@pytest.mark.parametrize("labels,index", [
    ([0, 1.0], (1,)), ([True, 1], (0,)), ([0, 3], (1,)), (np.array([0, -1]), (1,)),
    ([0], None), (np.array([0.0, 1.0]), None), ("x" * 10 ** 6, None),
], ids=["a-float", "a-bool", "out-of-range", "negative", "too-few", "float-array", "a-million-x"])
def test_a_refusal_names_the_entry_at_fault_and_stays_short(labels, index):
    """The explorer turns these errors into the page's messages, the cell named by index."""
    with pytest.raises((TypeError, ValueError)) as err:
        check_labels(labels, 2, 3)
    assert err.value.index == index and len(str(err.value)) < 120


def test_check_labels_returns_int64_without_copying_int64():
    y = np.array([1, 0], dtype=np.int64)
    assert check_labels(y, 2, 2) is y
    assert check_labels([1, 0], 2, 2).dtype == np.int64


@pytest.mark.parametrize("logits,error,words", [
    ([1.0, 2.0], ValueError, r"logits must be a 2-D array of shape \(B, C\)"),
    (np.zeros((0, 3)), ValueError, r"logits has shape \(0, 3\)"),
    (np.zeros((2, 0)), ValueError, r"logits has shape \(2, 0\)"),
    ([[0.0, np.nan]], ValueError, r"logits\[0,1\] is NaN"),
    ([[True, False]], TypeError, r"boolean"),
])
def test_bad_logits_are_named(logits, error, words):
    with pytest.raises(error, match=words):
        cross_entropy(logits, [0] * len(logits))
