"""Single-cell edits recompute only the row (a CLS cell) or column (a W_head cell) they change:
every matrix and answer must still be what a full recompute gives, up to rounding.

Sessions here take that path at every size (Session itself only for large heads). Two
oracles: a session that recomputes everything after each edit (the behaviour before the
incremental path, kept here as a subclass), and a fresh Session loaded with the state's link.
A row or column product may differ from the batched product in the last bits (BLAS sums in
another order), so numbers are compared with rtol = atol = 1e-12.
"""
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pycore.explorer.session import Session
from pycore.explorer import encode_fragment

TOL = dict(rtol=1e-12, atol=1e-12)
SECTIONS = ("shape", "stats", "logits_table", "top_classes", "equations", "mistake", "variant")


class FullSession(Session):
    """A session that runs the whole head after every edit, as Session did before: each
    request finds its Computed recomputing everything after a cell."""

    def handle(self, request):
        computed = self.computed
        computed.after_cell = lambda key, index: computed.recompute()
        return super().handle(request)


class Incremental(Session):
    """A session that takes the incremental path at every size, not just for large heads
    (a new state's Computed answers its first request whole, as any session's does)."""

    def handle(self, request):
        self.computed.INCREMENTAL_FROM = 0
        return super().handle(request)


def outcome(session, request):
    """The answer to `request`, or the exception it raised, as something comparable."""
    try:
        return session.handle(request), None
    except ValueError as err:
        return None, (type(err), str(err))


NUMBER = re.compile(r"-?\d+(?:\.(\d+))?(?:e([-+]\d+))?")


def same_text(a, b):
    """Equal text; or, where a printed number sits within rounding of a boundary of its last
    digit (the values may differ in their last bits), the same text around numbers at most one
    unit of the last printed digit apart. In practice the texts are equal."""
    if a == b:
        return True
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    for x, y in zip(NUMBER.finditer(a), NUMBER.finditer(b)):
        decimals, exponent = x.group(1) or "", x.group(2) or "0"
        unit = 10.0 ** (int(exponent) - len(decimals))
        if abs(float(x.group(0)) - float(y.group(0))) > 1.01 * unit:
            return False
    return True


def assert_same(a, b, where="answer"):
    """Answers alike: same structure, same ints and text, floats equal up to rounding."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), where
        for key in a:
            assert_same(a[key], b[key], "%s.%s" % (where, key))
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, "%s[%d]" % (where, i))
    elif isinstance(a, float):
        assert isinstance(b, float) and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), where
    elif isinstance(a, str):
        assert isinstance(b, str) and same_text(a, b), (where, a, b)
    else:
        assert a == b and type(a) is type(b), (where, a, b)


def assert_same_ranks(s, other):
    """Both sessions rank every sample's classes alike: where two logits tie within rounding,
    the session recomputes everything, as a fresh load does (see Computed.after_cell)."""
    rank = lambda m: np.argsort(-m, axis=1, kind="stable")[:, :11]  # noqa: E731
    np.testing.assert_array_equal(rank(s.matrix("logits")), rank(other.matrix("logits")))


def assert_same_matrices(s, other):
    assert sorted(s.matrices) == sorted(other.matrices)
    for key, m in s.matrices.items():
        assert m.dtype == np.float64 and m.flags.c_contiguous, key
        np.testing.assert_allclose(m, other.matrix(key), err_msg=key, **TOL)


def assert_same_answer(answer, reference):
    """`answer` (to an edit) against `reference` (to the same edit, or a full load). Static data
    (a comparison's choices) comes once per session, so a fresh load has it and an edit not."""
    if answer.get("unchanged"):  # an edit that changed nothing: nothing to compare
        return
    for key in SECTIONS:
        if key in answer:
            expected = reference[key]
            if isinstance(expected, dict) and "choices" not in answer[key]:
                expected = {k: v for k, v in expected.items() if k != "choices"}
            assert_same(answer[key], expected, key)
    for key, spec in answer["heatmaps"].items():
        assert_same(spec, reference["heatmaps"][key], key)
    if answer["link"]["fragment"] is not None and reference["link"]["fragment"] is not None:
        assert answer["link"] == reference["link"]


def check_against_fresh_load(s, answer):
    fresh = Session()
    loaded = fresh.handle({"op": "load", "fragment": "#" + encode_fragment(s.state)})
    assert loaded["ok"] and loaded["error"] is None and fresh.state == s.state
    assert_same_matrices(s, fresh)
    assert_same_ranks(s, fresh)
    assert_same_answer(answer, loaded)


def edit(s, full, request):
    """The same edit in the incremental and the full session: the same answer or error."""
    answer, error = outcome(s, request)
    reference, reference_error = outcome(full, request)
    assert error == reference_error
    if error is None:
        assert answer["ok"] == reference["ok"]
        if answer["ok"]:
            assert_same_matrices(s, full)
            assert_same_ranks(s, full)
            assert_same_answer(answer, reference)
    return answer


START = st.fixed_dictionaries({
    "preset": st.sampled_from(["worked", "random", "encoder"]),
    "seed": st.integers(0, 1000),
    # a resize pads with zeros: all-zero columns give exactly tied logits
    "resize": st.none() | st.tuples(st.integers(1, 4), st.integers(1, 7), st.integers(1, 6)),
    # with a mistake shown every edit recomputes everything (see Computed.after_cell)
    "mistake": st.sampled_from([None, None, None, "last_position", "no_layernorm", "bias"]),
    "variant": st.sampled_from([None, "gap", "mlp_tanh", "bert_pooler"]),
})
# Inputs of any size: LayerNorm scales them away (1e150 and up take its rescaled path). W_head
# stays moderate: huge cancelling weights (W_head[0, 0] = W_head[2, 0] = 1e300 in the worked
# example) make a product so ill-conditioned that any other summation order, such as the one-row
# product's, changes it by up to eps * sum |terms|, far beyond any relative tolerance.
SMALL = st.floats(-10, 10, allow_nan=False) | st.sampled_from([0.0, 1.0, -1.0, 0.5])
WHERE = st.tuples(st.integers(0, 63), st.integers(0, 63), st.integers(0, 63))
HUGE = st.sampled_from([1e150, -3e200, 1e300])
EDITS = st.lists(st.tuples(st.just("input"), WHERE, SMALL | HUGE, st.booleans())
                 | st.tuples(st.just("W_head"), WHERE, SMALL, st.booleans()),
                 min_size=1, max_size=12)


def start(spec):
    sessions = Incremental(), FullSession()
    for session in sessions:
        session.handle({"op": "preset", "name": spec["preset"], "seed": spec["seed"]})
        if spec["resize"]:
            B, D, C = spec["resize"]
            session.handle({"op": "resize", "B": B, "D": D, "C": C})
        for name in ("mistake", "variant"):
            session.handle({"op": "option", "name": name, "value": spec[name]})
    return sessions


def request_for(state, key, where, value, later):
    key = state.input_key if key == "input" else key
    shape = state.matrix(key).shape
    index = [w % n for w, n in zip(where, shape)]
    return {"op": "edit", "key": key, "index": index, "text": repr(value),
            "equations": "later" if later else None, "commit": later}


@settings(max_examples=120, deadline=None)
@given(START, EDITS)
def test_single_cell_edits_answer_as_a_full_recompute_does(spec, edits):
    s, full = start(spec)
    for key, where, value, later in edits:
        answer = edit(s, full, request_for(s.state, key, where, value, later))
        assert answer["ok"]
        check_against_fresh_load(s, answer)


def test_vit_b16_edits_answer_as_a_full_recompute_does():
    s, full = Incremental(), FullSession()
    for session in (s, full):
        session.handle({"op": "preset", "name": "vit-b16", "seed": 0})
    rng = np.random.RandomState(5)
    predicted = set()
    for i in range(24):
        if i % 2:
            key, index = "W_head", [int(rng.randint(768)), int(rng.randint(1000))]
        else:
            key, index = "cls", [int(rng.randint(2)), int(rng.randint(768))]
        value = rng.uniform(-3, 3) if i % 2 else rng.uniform(-40, 40)
        request = {"op": "edit", "key": key, "index": index, "text": repr(value),
                   "equations": "later" if i % 3 else None}
        answer = edit(s, full, request)
        predicted.add(tuple(s.trace.predicted))
    assert len(predicted) > 1 and not s.computed.exact  # predictions changed, on the incremental path
    check_against_fresh_load(s, answer)


def test_an_edit_that_changes_the_prediction():
    s, full = Incremental(), FullSession()
    assert s.trace.predicted.tolist() == [2, 0]
    # W_head[0, 1] = 9: h_hat[:, 0] = (0.63, 1.0) lifts class 1 to the top for both samples
    answer = edit(s, full, {"op": "edit", "key": "W_head", "index": [0, 1], "text": "9"})
    assert s.trace.predicted.tolist() == [1, 1]
    assert [row["mark"] for row in answer["logits_table"]["rows"]] == [1, 1]
    # cls[1, 0] = -5 makes sample 1's h_hat[0] negative: class 1 drops
    answer = edit(s, full, {"op": "edit", "key": "cls", "index": [1, 0], "text": "-5"})
    assert s.trace.predicted[1] != 1
    assert answer["heatmaps"]["heatmap-logits"]["marks"][1] == [1, int(s.trace.predicted[1])]
    check_against_fresh_load(s, answer)


def test_a_tie_goes_to_the_first_class_as_in_a_fresh_load():
    """Copy the weights of sample 0's predicted class 2 into class 0, cell by cell: the two
    logits are equal, and argmax takes the first. A column product alone comes out an ulp
    away from the batched one here (CPython with OpenBLAS), which would pick class 2."""
    s, full = Incremental(), FullSession()
    W = s.matrix("W_head").copy()
    for d in range(4):
        answer = edit(s, full, {"op": "edit", "key": "W_head", "index": [d, 0],
                                "text": repr(float(W[d, 2]))})
    assert s.trace.predicted[0] == 0 and s.matrix("logits")[0, 0] == s.matrix("logits")[0, 2]
    assert answer["logits_table"]["rows"][0]["mark"] == 0
    check_against_fresh_load(s, answer)


def test_patch_token_edits_change_the_input_matrix_only():
    s, full = Incremental(), FullSession()
    for session in (s, full):
        session.handle({"op": "preset", "name": "encoder", "seed": 1})
    trace = s.trace
    edit(s, full, {"op": "edit", "key": "encoder_output", "index": [1, 3, 2], "text": "7.5"})
    assert s.trace is trace and s.matrix("input")[1 * 5 + 3, 2] == 7.5 and s.computed.exact
    edit(s, full, {"op": "edit", "key": "encoder_output", "index": [1, 0, 2], "text": "7.5"})
    assert s.matrix("h_cls")[1, 2] == 7.5 and s.trace is not trace


def test_small_heads_recompute_everything_large_ones_a_row_or_column():
    s = Session()
    s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "2"})
    assert s.computed.exact  # the worked example: answers bit for bit as after a fresh load
    s.handle({"op": "preset", "name": "vit-b16", "seed": 0})
    s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "2"})
    assert not s.computed.exact


def test_arrays_handed_out_before_an_edit_keep_their_values():
    s = Incremental()
    s.handle({"op": "option", "name": "variant", "value": "mlp_tanh"})
    held = {key: s.matrix(key) for key in ("h_hat", "logits", "probs", "variant")}
    copies = {key: m.copy() for key, m in held.items()}
    old = s.trace
    s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "4"})
    s.handle({"op": "edit", "key": "W_head", "index": [2, 2], "text": "-3"})
    assert not s.computed.exact  # both edits took the incremental path
    for key in held:
        np.testing.assert_array_equal(held[key], copies[key])
        assert s.matrix(key) is not held[key]
    np.testing.assert_array_equal(old.logits, copies["logits"])
    W = s.matrix("W_head")
    assert W is s.state.W_head and W[2, 2] == -3.0  # never copied: (D, C) is the big one


def test_a_mistake_chosen_after_edits_differs_from_exact_logits():
    """Position -1 of a sequence of one token (N+1 = 1) is the correct head: the difference is
    exactly zero, not the last-bit noise of a row product, which its heatmap would stretch to
    full colour. (With CLS rows alone, choosing it switches to the encoder output instead.)"""
    s = Session()
    s.handle({"op": "preset", "name": "vit-b16", "seed": 0})
    s.handle({"op": "mode", "mode": "encoder"})
    s.handle({"op": "resize", "N1": 1})
    s.handle({"op": "edit", "key": "encoder_output", "index": [1, 0, 5], "text": "2.5"})
    s.handle({"op": "edit", "key": "W_head", "index": [5, 9], "text": "-0.75"})
    answer = s.handle({"op": "option", "name": "mistake", "value": "last_position"})
    assert not s.matrix("mistake_diff").any()
    assert answer["heatmaps"]["heatmap-mistake-diff"]["key"] == ["-1.000", "0", "1.000"]
    answer = s.handle({"op": "edit", "key": "W_head", "index": [5, 9], "text": "0.5"})
    assert not s.matrix("mistake_diff").any()


@pytest.mark.parametrize("key", ["W_head", "cls"])
def test_logits_that_overflow_are_refused_on_both_paths(key):
    """A W_head value near 1e308 with a large h_hat: the edit that makes the logits overflow is
    refused and the cell keeps its value from before, on the incremental path as on the full
    one; the session goes on, and all is as after a fresh load."""
    s, full = Incremental(), FullSession()
    # sample 0's h_hat is [0.63, -1.26, -0.63, 1.26]: logit[0, 0] becomes 1.5e308, still finite
    assert edit(s, full, {"op": "edit", "key": "W_head", "index": [3, 0], "text": "1.2e308",
                          "commit": True})["ok"]
    assert not s.computed.exact  # a column product: the next edit starts from an incremental trace
    # either W_head[0, 0] = 1e308 adds 0.63e308, or cls[0, 3] = 30 lifts h_hat[0, 3] to 1.72
    cell = [0, 0] if key == "W_head" else [0, 3]
    before = float(s.state.matrix(key)[tuple(cell)])
    answer = edit(s, full, {"op": "edit", "key": key, "index": cell,
                            "text": "1e308" if key == "W_head" else "30"})
    assert "overflow" in answer["error"]["message"] and answer["value"] == before
    assert float(s.state.matrix(key)[tuple(cell)]) == before
    check_against_fresh_load(s, answer)
    # an unrelated edit answers as a full recompute does
    answer = edit(s, full, {"op": "edit", "key": "W_head", "index": [1, 1], "text": "0.25"})
    assert answer["error"] is None
    check_against_fresh_load(s, answer)


def test_a_model_files_own_head_is_kept_row_by_row_and_column_by_column():
    """A model file's own head (gamma/beta, its eps, a bias) takes the incremental path too, and
    so does the problem's head kept beside it (the fine-tuning panel reads it at every edit):
    every answer as a full recompute gives it, and the logits as the head written out
    (tests/model_files.py) gives them."""
    from model_files import npz_bytes, open_file, page_head, real_head
    rng = np.random.RandomState(3)
    B, D, C, eps = 6, 24, 30, 1e-5
    parts = dict(W_head=rng.standard_normal((D, C)), cls=rng.standard_normal((B, D)) * 3,
                 ln_gamma=1 + 0.3 * rng.standard_normal(D), ln_beta=0.2 * rng.standard_normal(D),
                 b_head=0.5 * rng.standard_normal(C), ln_eps=np.array(eps))
    s, full = Incremental(), FullSession()
    for session in (s, full):
        answer, _ = open_file(session, "own.npz", npz_bytes(**parts))
        assert answer["ok"], answer["error"]
    assert s.trace.real is not None and s.computed.page_trace() is not s.trace
    page_before = s.computed.page_trace()
    for i in range(16):
        if i % 2:
            key, index, value = "W_head", [int(rng.randint(D)), int(rng.randint(C))], rng.uniform(-3, 3)
        else:
            key, index, value = "cls", [int(rng.randint(B)), int(rng.randint(D))], rng.uniform(-9, 9)
        request = {"op": "edit", "key": key, "index": index, "text": repr(value)}
        answer, reference = s.handle(request), full.handle(request)
        assert answer["ok"] and reference["ok"]
        assert not s.computed.exact  # the row or column alone
        assert_same_matrices(s, full)
        assert_same_answer(answer, reference)
        assert_same(answer["finetune"], reference["finetune"], "finetune")
    cls, W = s.matrix("input"), s.matrix("W_head")
    np.testing.assert_allclose(s.matrix("logits"), real_head(
        cls, W, parts["ln_gamma"], parts["ln_beta"], parts["b_head"], eps), **TOL)
    page = s.computed.page_trace()
    assert page is not page_before  # kept edit by edit, not traced once and left
    np.testing.assert_allclose(page.logits, page_head(cls, W), **TOL)
