"""Garbage in, StateError out: whatever reaches the state layer, it raises nothing else."""

import json
from urllib.parse import quote

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st


from pycore.explorer.errors import StateError  # noqa: E402
from pycore.explorer import (ExplorerState, decode_fragment, default_state, encode_fragment,  # noqa: E402
                             paste_block, preset, resize, set_cell, set_mode, state_from_json,
                             state_to_json)

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

scalars = (st.none() | st.booleans() | st.integers(-10 ** 20, 10 ** 20)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8)
           | st.sampled_from([10 ** 400, -0.0, 1e308, 5e-324, "1", "nan", "random", "zeros"]))
json_like = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(st.text(max_size=6) | st.sampled_from(
        ["W_head", "cls", "encoder_output", "options", "preset", "seed", "shape", "scale",
         "edits", "keep", "size", "decimals", "sample", "mistake"]), inner, max_size=5),
    max_leaves=30)


def matrix(ndim):
    """Nearly valid matrices: rows of numbers with the odd wrong element or length."""
    cell = st.floats(-1e3, 1e3) | st.integers(-5, 5)
    bad = cell | scalars
    if ndim == 2:
        row = st.lists(cell, min_size=1, max_size=4) | st.lists(bad, min_size=0, max_size=4)
        return st.lists(row, min_size=0, max_size=4)
    return st.lists(matrix(2), min_size=0, max_size=3)


compact = st.fixed_dictionaries(
    {"preset": st.sampled_from(["random", "zeros", "x"]),
     "shape": st.lists(st.integers(-1, 40), min_size=1, max_size=4)},
    optional={"seed": st.integers(-2, 2 ** 33) | scalars, "scale": st.floats() | scalars,
              "decimals": st.integers(-1, 20) | scalars,
              "edits": st.lists(st.lists(st.integers(-2, 40) | scalars, max_size=5), max_size=4)
              | scalars,
              "keep": st.lists(st.integers(-1, 40), max_size=3),
              "size": st.lists(st.integers(-1, 1100), max_size=3)})

near_states = st.fixed_dictionaries(
    {"W_head": matrix(2) | compact | json_like},
    optional={"cls": matrix(2) | compact | json_like,
              "encoder_output": matrix(3) | compact | json_like,
              "options": st.dictionaries(
                  st.sampled_from(["sample", "logit_class", "mistake", "variant", "activation",
                                   "seed", "other"]), scalars, max_size=4) | json_like})


def only_state_errors(call, *args):
    try:
        result = call(*args)
    except StateError as exc:
        assert str(exc) and isinstance(exc, ValueError)
        assert exc.index is None or all(isinstance(i, int) for i in exc.index)
        return None
    return result


def check_valid(state):
    assert isinstance(state, ExplorerState)
    for arr in (state.W_head, state.inputs):
        assert arr.dtype == np.float64 and np.isfinite(arr).all()
    assert state.W_head.shape[0] == state.inputs.shape[-1]
    back = decode_fragment(encode_fragment(state))     # whatever was accepted round-trips
    assert back == state


@SETTINGS
@given(json_like)
def test_state_from_json_garbage(obj):
    state = only_state_errors(state_from_json, obj)
    if state is not None:
        check_valid(state)


@SETTINGS
@given(near_states)
def test_state_from_json_near_valid(obj):
    state = only_state_errors(state_from_json, obj)
    if state is not None:
        check_valid(state)


@SETTINGS
@given(st.text(max_size=80) | json_like.map(lambda o: "#state=" + quote(json.dumps(o)))
       | near_states.map(lambda o: "state=" + quote(json.dumps(o)))
       | st.binary(max_size=40).map(lambda b: "#state=" + "".join("%%%02X" % c for c in b)))
def test_decode_fragment_garbage(fragment):
    state = only_state_errors(decode_fragment, fragment)
    if state is not None:
        check_valid(state)


@SETTINGS
@given(key=st.sampled_from(["W_head", "cls", "encoder_output", "bias"]) | scalars,
       index=st.lists(st.integers(-3, 6) | scalars, max_size=4) | scalars,
       text=st.text(max_size=20) | scalars,
       start=st.sampled_from(["worked", "encoder", "random"]))
def test_editing_helpers_garbage(key, index, text, start):
    state = preset(start)
    before = state.copy()
    if only_state_errors(set_cell, state, key, index, text) is None:
        assert state == before                       # refused: nothing changed
    before = state.copy()
    if only_state_errors(paste_block, state, key, index, text) is None:
        assert state == before
    check_valid(state)


@SETTINGS
@given(sizes=st.fixed_dictionaries({}, optional={
    name: st.integers(-2, 70) | scalars for name in ("B", "N", "D", "C")}),
    mode=st.sampled_from(["cls", "encoder", "other"]) | scalars)
def test_resize_and_mode_garbage(sizes, mode):
    state = default_state()
    if only_state_errors(set_mode, state, mode) is None:
        assert state == default_state()
    only_state_errors(resize, state, *[sizes.get(n) for n in ("B", "N", "D", "C")])
    check_valid(state)


def test_huge_sizes_are_refused_before_allocating():
    for obj in ({"W_head": {"preset": "zeros", "shape": [10 ** 9, 10 ** 9]}, "cls": [[1]]},
                {"W_head": {"preset": "random", "seed": 0, "shape": [768, 1000], "scale": 1,
                            "size": [10 ** 12, 3]}, "cls": [[1]]},
                {"W_head": [[0.0]] * 5000, "cls": [[0.0]]}):
        try:
            state_from_json(obj)
        except StateError as exc:
            assert "over the limit" in str(exc)
        else:
            raise AssertionError("accepted {}".format(str(obj)[:60]))


def test_accepted_states_keep_their_json():
    s = preset("random", 9)
    assert state_to_json(state_from_json(state_to_json(s))) == state_to_json(s)
