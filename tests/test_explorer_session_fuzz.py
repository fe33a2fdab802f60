"""Random sequences of the page's requests, good and bad: after every one, the answer keeps to
the protocol and is JSON the bridge can send, a refusal changed nothing (state, link, exports),
and the state held is one the explorer can compute (issue 14, "atomic actions")."""
import importlib.util
import json
import os

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from pycore.explorer import decode_fragment, encode_fragment, state_to_json
from pycore.explorer.protocol import check_answer, matrix_names
from pycore.explorer.session import Session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Numbers people type, and the ones that break things: huge, tiny, overflowing, not numbers.
TEXTS = st.sampled_from(["1", "-2.5", "0", "1e308", "-1.7e308", "1e154", "1e-320", "3/4", "1,5",
                         "", "-", "1e", "nan", "inf", "abc", "  7 ", "\u22123", "1" * 500,
                         "0x10", "1e999"]) | st.floats(-1e6, 1e6).map(repr)
BLOCKS = st.sampled_from(["1\t2\n3\t4", "1e308\t1e308\n1e308\t1e308", "[[1, 2], [3, 4]]",
                          "1 2\n3", "", "x", "1e308 " * 40, "-1e308\n1e308\n-1e308\n1e308"])
INDEX = st.lists(st.integers(-1, 5), min_size=1, max_size=3)
KEYS = st.sampled_from(["cls", "W_head", "encoder_output", "bias"])

REQUESTS = st.one_of(
    st.fixed_dictionaries({"op": st.just("edit"), "key": KEYS, "index": INDEX, "text": TEXTS},
                          optional={"commit": st.booleans(), "steps": st.just("later")}),
    st.fixed_dictionaries({"op": st.just("paste"), "key": KEYS, "index": INDEX, "text": BLOCKS}),
    st.fixed_dictionaries({"op": st.just("resize")}, optional={
        "B": st.integers(0, 5), "D": st.integers(0, 7) | st.just(2.5), "C": st.integers(0, 5),
        "N1": st.integers(0, 4)}),
    st.fixed_dictionaries({"op": st.just("mode"), "mode": st.sampled_from(["cls", "encoder", "x"])}),
    st.fixed_dictionaries({"op": st.just("preset"),
                           "name": st.sampled_from(["worked", "encoder", "random", "nope"]),
                           "seed": st.integers(-1, 5)}),
    st.fixed_dictionaries({"op": st.just("option"),
                           "name": st.sampled_from(["sample", "logit_class", "pitfall", "variant",
                                                    "walk", "walk_class"]),
                           "value": st.none() | st.integers(-1, 6) | st.sampled_from(
                               ["no_layernorm", "softmax_inside", "bias", "gap", "mlp_gelu",
                                "transposed", "last_position", "x"])}),
    st.fixed_dictionaries({"op": st.just("load"), "fragment": st.sampled_from([
        "", "#state=%7Bbroken", "#" + encode_fragment(Session().state),
        # issue 14's reproduction: finite inputs whose mistaken head (no LayerNorm) overflows
        "#state=" + json.dumps({"W_head": [[1e200, 1], [0, 1]], "cls": [[1e200, 0], [1, 2]],
                                "options": {"pitfall": "no_layernorm"}}),
        "#state=" + json.dumps({"W_head": [[1.7e308, 1], [1.7e308, 1]], "cls": [[5, -5], [1, 2]]})])}),
    # the real-ViT mode: drawn digits, good and bad (a pixel of 17, a row too short, 17 images)
    st.fixed_dictionaries({"op": st.just("digit"), "images": st.sampled_from([
        [[[0] * 8] * 8], [[[16] * 8] * 8], [[[(r * c) % 17 for c in range(8)] for r in range(8)]],
        [[[0] * 8] * 7 + [[0] * 7 + [17]]], [[[0] * 7] * 8], [[[0] * 8] * 8] * 17, [], "x"])},
        optional={"head": st.sampled_from(["keep", "trained", "new"])}),
    st.fixed_dictionaries({"op": st.sampled_from(["export", "steps", "link", "fly"])},
                          optional={"format": st.sampled_from(["json", "numpy", "csv", "pdf"])}),
)


def snapshot(session):
    s = session.state
    return (json.dumps(state_to_json(s)), s.W_head.copy(), s.inputs.copy(), dict(s.options))


def same(a, b):
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2]) \
        and a[3] == b[3]


def check_computable(session):
    s = session.state
    assert np.isfinite(s.W_head).all() and np.isfinite(s.inputs).all()
    assert np.isfinite(session.trace.logits).all()
    assert decode_fragment(encode_fragment(s)) == s


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(REQUESTS, min_size=1, max_size=12))
def test_every_request_applies_fully_or_changes_nothing(requests):
    session = Session()
    for request in requests:
        before = snapshot(session)
        answer = session.handle(request)
        check_answer(answer)
        json.dumps(answer, allow_nan=False)  # what the bridge sends: no NaN or infinity in JSON
        for name in matrix_names(answer):
            assert session.matrix(name).dtype == np.float64
        if answer["ok"] is False:
            assert same(before, snapshot(session)), request
            assert answer["error"]["message"]
        check_computable(session)


def load_bridge():
    spec = importlib.util.spec_from_file_location("bridge", os.path.join(ROOT, "web", "py", "bridge.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bridge_answers_the_overflowing_comparison_of_issue_14():
    """The state that made bridge.dispatch raise (json.dumps outside its try): its mistaken
    head's output is infinite. The answer is JSON, the output travels as a matrix with inf in
    it, and a note says so; the next edits are answered and shown."""
    bridge = load_bridge()
    state = {"W_head": [[1e200, 1], [0, 1]], "cls": [[1e200, 0], [1, 2]],
             "options": {"pitfall": "no_layernorm"}}
    text, arrays = bridge.answer(json.dumps({"op": "load", "fragment": "#state=" + json.dumps(state)}))
    answer = json.loads(text)
    assert answer["ok"] and answer["error"] is None
    assert "not finite" in answer["pitfall"]["note"]
    assert np.isinf(arrays["pitfall"]).any()
    text, _ = bridge.answer(json.dumps({"op": "edit", "key": "cls", "index": [1, 0], "text": "3"}))
    assert json.loads(text)["ok"] and json.loads(text)["value"] == 3.0


def test_the_bridge_never_raises_even_on_a_bug():
    bridge = load_bridge()
    for request in ("not json", "[]", json.dumps({"op": "edit"}), json.dumps({"op": 1})):
        answer = json.loads(bridge.dispatch(request))
        assert answer["ok"] is False and answer["error"]["message"]
    broken = bridge._session.handle
    bridge._session.handle = lambda request: {"ok": True, "x": float("nan")}
    try:
        answer = json.loads(bridge.dispatch(json.dumps({"op": "steps"})))
    finally:
        bridge._session.handle = broken
    assert answer["ok"] is False and "Internal error" in answer["error"]["message"]


def test_warm_up_practises_in_a_session_of_its_own():
    """Practice edits (the page's warm-up) are real edits of both grids, answered and encoded as
    the page's are, and leave the page's session as it was: its state, link and next answers."""
    bridge = load_bridge()
    first = json.loads(bridge.dispatch(json.dumps({"op": "load", "fragment": ""})))
    edit = json.loads(bridge.dispatch(json.dumps({"op": "edit", "key": "cls", "index": [0, 1], "text": "7"})))
    before = state_to_json(bridge._session.state)
    practised = set()
    for k in range(40):
        request = bridge.practice_request()
        if k % 3:  # the PyScript host's way: the answer with its matrices
            text, arrays = bridge.answer(request, True)
        else:  # the fallback host's: the matrices of the last answer, read one by one
            text = bridge.dispatch(request, True)
            arrays = {name: bridge.matrix(name) for name in json.loads(bridge.last_matrix_names())}
            assert all(arrays[name] is bridge._practice["session"].matrix(name) for name in arrays)
        answer, request = json.loads(text), json.loads(request)
        assert answer["ok"] and answer["error"] is None, answer
        assert answer["value"] == float(request["text"])
        assert arrays and all(np.isfinite(m).all() for m in arrays.values())
        practised.add((request["key"], tuple(request["index"])))
    assert {key for key, _ in practised} == {"cls", "W_head"} and len(practised) >= 16
    assert state_to_json(bridge._session.state) == before
    link = json.loads(bridge.dispatch(json.dumps({"op": "link"})))["link"]
    assert link["fragment"] == edit["link"]["fragment"] != first["link"]["fragment"]
    again = json.loads(bridge.dispatch(json.dumps({"op": "edit", "key": "cls", "index": [0, 1], "text": "8"})))
    assert again["value"] == 8.0 and bridge._session.state.cls[0, 1] == 8.0
    names = json.loads(bridge.last_matrix_names())
    assert names and all(bridge.matrix(name) is bridge._session.matrix(name) for name in names)
