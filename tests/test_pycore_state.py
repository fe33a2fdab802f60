"""The explorer state (pycore.explorer): JSON and #state= round trips, the exact bytes of
the fragment, and validation messages. Editing, limits, presets and exports:
test_pycore_state_edits.py."""
import json
from urllib.parse import quote, unquote

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pycore.explorer.errors import StateError
from pycore.explorer.export.files import state_json_text
from pycore.explorer.state.link import (decode_uri_component, encode_uri_component, js_json,
                                       js_number)
from pycore.explorer import (COMPACT_MIN, DEFAULT_OPTIONS, ExplorerState, decode_fragment,
                             default_state, encode_fragment, paste_block, preset, resize, set_cell,
                             state_from_json, state_to_json)
from reference import WORKED_LOGITS

from state_kit import same, logits


# ---- the object ----------------------------------------------------------------------

def test_default_state_is_the_worked_example():
    s = default_state()
    assert (s.mode, s.B, s.D, s.C, s.N) == ("cls", 2, 4, 3, None)
    assert s.options == DEFAULT_OPTIONS and s.options is not DEFAULT_OPTIONS
    assert np.round(logits(s), 4).tolist() == WORKED_LOGITS
    assert s.W_head.dtype == np.float64 and s.W_head.flags["C_CONTIGUOUS"]


def test_encoder_preset_has_worked_cls_rows_at_position_0():
    s = preset("encoder")
    assert (s.mode, s.B, s.N, s.D, s.C) == ("encoder", 2, 4, 4, 3)
    assert s.encoder_output.shape == (2, 5, 4)
    np.testing.assert_array_equal(s.h_cls, default_state().cls)
    assert np.shares_memory(s.h_cls, s.encoder_output)
    assert np.round(logits(s), 4).tolist() == WORKED_LOGITS


def test_constructor_copies_and_validates():
    W = np.ones((2, 3))
    s = ExplorerState(W, cls=[[1, 2]])
    s.W_head[0, 0] = 5
    assert W[0, 0] == 1
    with pytest.raises(StateError, match="exactly one of cls"):
        ExplorerState(W)
    with pytest.raises(StateError, match=r"cls\[0,1\] is NaN"):
        ExplorerState(W, cls=[[1, np.nan]])
    with pytest.raises(StateError, match="W_head looks transposed"):
        ExplorerState(W.T, cls=[[1, 2]])
    with pytest.raises(StateError, match="cls must be a 2-D array of real numbers"):
        ExplorerState(W, cls=[["a", "b"]])


# ---- JSON and fragments ----------------------------------------------------------------

def test_state_to_json_small_states_are_nested_lists():
    obj = state_to_json(default_state())
    assert obj == {"W_head": [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2],
                              [0.7, -0.3, 0.8]],
                   "cls": [[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]]}
    s = default_state()
    s.options["mistake"] = "no_layernorm"
    s.options["seed"] = 7
    s.options["unknown"] = 1                          # not written: the page owns no such key
    assert state_to_json(s)["options"] == {"mistake": "no_layernorm", "seed": 7}


@pytest.mark.parametrize("key", ["affine", "bias"])
def test_a_link_naming_real_vits_gamma_beta_or_bias_as_a_mistake_shows_it_as_another_head(key):
    """Links written while real ViTs' gamma/beta and bias were listed among the mistakes."""
    s = decode_fragment("#state=" + quote(json.dumps({"W_head": [[1.0, 2.0]], "cls": [[1.0]],
                                                      "options": {"pitfall": key}})))
    assert s.options["mistake"] is None and s.options["variant"] == key


def test_a_link_with_the_old_option_name_pitfall_shows_that_mistake():
    """Links written while the option was named "pitfall" (docs/glossary.md, "Old names still
    read"): the link as the page wrote it, by hand: {"W_head":[[1,2]],"cls":[[1]],"options":
    {"pitfall":"no_layernorm"}} through encodeURIComponent. The new name wins over the old."""
    s = decode_fragment("#state=%7B%22W_head%22%3A%5B%5B1%2C2%5D%5D%2C%22cls%22%3A%5B%5B1%5D%5D"
                        "%2C%22options%22%3A%7B%22pitfall%22%3A%22no_layernorm%22%7D%7D")
    assert s.options["mistake"] == "no_layernorm" and s.options["variant"] is None
    assert "pitfall" not in s.options and "pitfall" not in encode_fragment(s)
    both = state_from_json({"W_head": [[1.0, 2.0]], "cls": [[1.0]],
                            "options": {"pitfall": "no_layernorm", "mistake": "softmax_inside"}})
    assert both.options["mistake"] == "softmax_inside"


def test_fragment_bytes_match_encodeURIComponent_of_JSON_stringify():
    # JSON.stringify({"W_head":[[0.5],[-1]],"cls":[[2,0]]}) is
    # '{"W_head":[[0.5],[-1]],"cls":[[2,0]]}'; encodeURIComponent escapes { " : [ , ] }
    # as %7B %22 %3A %5B %2C %5D %7D and leaves letters, digits, '_', '-', '.' alone.
    s = ExplorerState([[0.5], [-1.0]], cls=[[2.0, 0.0]])
    assert encode_fragment(s) == ("state=%7B%22W_head%22%3A%5B%5B0.5%5D%2C%5B-1%5D%5D%2C"
                                  "%22cls%22%3A%5B%5B2%2C0%5D%5D%7D")
    s.options["mistake"] = "softmax_inside"
    assert encode_fragment(s).endswith(
        "%2C%22options%22%3A%7B%22mistake%22%3A%22softmax_inside%22%7D%7D")


@pytest.mark.parametrize("text, encoded", [
    # Unreserved per ECMA-262 encodeURIComponent: A-Z a-z 0-9 - _ . ! ~ * ' ( )
    ("AZaz09-_.!~*'()", "AZaz09-_.!~*'()"),
    # Reserved URI characters are escaped too (unlike encodeURI): ; / ? : @ & = + $ , #
    (";/?:@&=+$,#", "%3B%2F%3F%3A%40%26%3D%2B%24%2C%23"),
    (" \"%<>\\^`{|}[]", "%20%22%25%3C%3E%5C%5E%60%7B%7C%7D%5B%5D"),
    ("é", "%C3%A9"),                       # U+00E9 is C3 A9 in UTF-8
    ("\u2212", "%E2%88%92"),               # the minus sign: E2 88 92
    ("\U0001F600", "%F0%9F%98%80"),        # a surrogate pair in JS, 4 UTF-8 bytes
    ("\n\t", "%0A%09"),
])
def test_encode_uri_component_known_strings(text, encoded):
    assert encode_uri_component(text) == encoded
    assert decode_uri_component(encoded) == text


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_uri_component_agrees_with_urllib(text):
    # urllib.parse is the independent reference (the page's Python no longer imports it)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: neither can encode it
        with pytest.raises(UnicodeError):
            encode_uri_component(text)
        return
    encoded = encode_uri_component(text)
    assert encoded == quote(text, safe="-_.!~*'()")
    assert decode_uri_component(encoded) == unquote(encoded, errors="strict") == text


@pytest.mark.parametrize("encoded", ["%C3", "%FF", "%C3%28", "a%E2%82"])
def test_decode_uri_component_refuses_bytes_that_are_not_utf8(encoded):
    with pytest.raises(UnicodeError):
        decode_uri_component(encoded)


@pytest.mark.parametrize("x, text", [
    (2.0, "2"), (-0.0, "0"), (0.1, "0.1"), (-2.5, "-2.5"), (1e21, "1e+21"),
    (1e20, "100000000000000000000"), (123456789.125, "123456789.125"), (1e-6, "0.000001"),
    (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (5e-324, "5e-324"), (0.000123, "0.000123"),
    (1.7976931348623157e308, "1.7976931348623157e+308"), (2 ** 53, "9007199254740992"),
    (1 / 3, "0.3333333333333333"), (100.0, "100"), (-1e-10, "-1e-10"), (12.0e30, "1.2e+31")])
def test_js_number_matches_ecmascript_number_to_string(x, text):
    assert js_number(x) == text


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_reads_back_exactly(x):
    assert float(json.loads(js_number(x))) == x


def test_js_json_structure():
    assert js_json({"a": [1, 2.5, None, True, "x\"y"], "b": {}}) == \
        '{"a":[1,2.5,null,true,"x\\"y"],"b":{}}'


@settings(max_examples=60, deadline=None)
@given(B=st.integers(1, 4), D=st.integers(1, 5), C=st.integers(1, 4), N=st.integers(0, 3),
       mode=st.sampled_from(["cls", "encoder"]), data=st.data())
def test_fragment_round_trip_is_exact(B, D, C, N, mode, data):
    finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
    W = np.array(data.draw(st.lists(finite, min_size=D * C, max_size=D * C))).reshape(D, C)
    shape = (B, D) if mode == "cls" else (B, N + 1, D)
    X = np.array(data.draw(st.lists(finite, min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape))))).reshape(shape)
    options = {"sample": data.draw(st.integers(0, B - 1)),
               "logit_class": data.draw(st.integers(0, C - 1)),
               "mistake": data.draw(st.sampled_from([None, "no_layernorm", "transposed"])),
               "activation": data.draw(st.sampled_from(["tanh", "gelu"])),
               "seed": data.draw(st.integers(0, 2 ** 32 - 1))}
    s = ExplorerState(W, **{"cls" if mode == "cls" else "encoder_output": X}, options=options)
    back = decode_fragment("#" + encode_fragment(s))
    same(back, s)
    assert encode_fragment(back) == encode_fragment(s)
    same(state_from_json(json.loads(json.dumps(state_to_json(s)))), s)
    same(state_from_json(json.loads(state_json_text(s))), s)


def test_decode_fragment_accepts_its_variants():
    s = default_state()
    frag = encode_fragment(s)
    for text in (frag, "#" + frag, "#x=1&" + frag + "&y=2", frag[len("state="):],
                 "#state=" + js_json(state_to_json(s))):           # unencoded JSON, typed by hand
        same(decode_fragment(text), s)


def test_vit_b16_link_is_compact_and_exact():
    s = preset("vit-b16", seed=5)
    frag = encode_fragment(s)
    assert len(frag) < 1000
    obj = state_to_json(s)
    assert obj["W_head"] == {"preset": "random", "seed": 6, "shape": [768, 1000],
                             "scale": 0.02, "edits": []}
    set_cell(s, "W_head", (767, 999), "0.5")
    set_cell(s, "cls", (1, 3), "-2")
    paste_block(s, "W_head", (0, 0), "1 2\n3 4")
    obj = state_to_json(s)
    assert obj["W_head"]["edits"] == [[767, 999, 0.5], [0, 0, 1.0], [0, 1, 2.0], [1, 0, 3.0],
                                      [1, 1, 4.0]]
    back = decode_fragment(encode_fragment(s))
    same(back, s)
    assert encode_fragment(back) == encode_fragment(s)
    assert back.W_head[767, 999] == 0.5 and back.cls[1, 3] == -2.0


def test_compact_form_survives_resizes():
    s = preset("vit-b16")
    original = s.W_head.copy()
    resize(s, C=10)                        # ViT-B/16 fine-tuned on 10 classes
    resize(s, C=20)                        # grow again: the new columns are zeros
    np.testing.assert_array_equal(s.W_head[:, :10], original[:, :10])
    assert not s.W_head[:, 10:].any()
    obj = state_to_json(s)["W_head"]
    assert obj["size"] == [768, 20] and obj["keep"] == [768, 10]
    back = decode_fragment(encode_fragment(s))
    same(back, s)


def test_mostly_zero_big_matrices_are_written_sparse():
    s = resize(default_state(), D=64, C=100)
    obj = state_to_json(s)
    assert obj["W_head"]["preset"] == "zeros" and len(obj["W_head"]["edits"]) == 12
    assert isinstance(obj["cls"], list)               # 2 x 64 = 128 elements: plain
    assert len(encode_fragment(s)) < 1500
    same(decode_fragment(encode_fragment(s)), s)


def test_random_preset_states_stay_plain_lists():
    s = preset("random", seed=3)
    obj = state_to_json(s)
    assert isinstance(obj["W_head"], list) and isinstance(obj["cls"], list)
    assert s.W_head.size <= COMPACT_MIN


# ---- validation messages -------------------------------------------------------------

GOOD_W = [[0.5, -0.2], [0.3, 0.4]]


@pytest.mark.parametrize("obj, key, index, message", [
    ([1, 2], None, None, "the state must be a JSON object with W_head and cls or "
                         "encoder_output; got a list"),
    ("x", None, None, "got text 'x'"),
    ({"cls": [[1, 2]]}, "W_head", None, "the state has no W_head"),
    ({"W_head": GOOD_W}, "cls", None, "the state needs cls (B × D) or encoder_output"),
    ({"W_head": GOOD_W, "cls": [[1, 2]], "encoder_output": [[[1, 2]]]}, "encoder_output", None,
     "the state has both cls and encoder_output"),
    ({"W_head": GOOD_W, "cls": [[1, 2], [3]]}, "cls", (1,),
     "cls[1] has 1 entries but cls[0] has 2: cls must be rectangular (B × D)"),
    ({"W_head": GOOD_W, "cls": [[1, "2"]]}, "cls", (0, 1), "cls[0,1] is text '2', not a number"),
    ({"W_head": GOOD_W, "cls": [[1, True]]}, "cls", (0, 1), "cls[0,1] is true, not a number"),
    ({"W_head": GOOD_W, "cls": [[1, None]]}, "cls", (0, 1), "cls[0,1] is null, not a number"),
    ({"W_head": GOOD_W, "cls": [[1, [2]]]}, "cls", (0, 1),
     "cls[0,1] is a list, but cls is 2-D (B × D)"),
    ({"W_head": GOOD_W, "cls": [1, 2]}, "cls", (0,),
     "cls[0] is a number where a list was expected: cls is 2-D (B × D)"),
    ({"W_head": GOOD_W, "cls": "1,2"}, "cls", None,
     "cls must be a list of rows (B × D) or a compact form"),
    ({"W_head": GOOD_W, "cls": []}, "cls", None, "cls is empty: B must be at least 1"),
    ({"W_head": GOOD_W, "cls": [[]]}, "cls", (0,), "cls[0] is empty: D must be at least 1"),
    ({"W_head": GOOD_W, "cls": [[1, float("nan")]]}, "cls", (0, 1),
     "cls[0,1] is NaN: every number must be finite"),
    ({"W_head": GOOD_W, "cls": [[1, 10 ** 400]]}, "cls", (0, 1),
     "cls[0,1] is too large for float64"),
    ({"W_head": [[1, 2, 3], [4, 5, 6]], "cls": [[1, 2, 3]]}, "W_head", None,
     "W_head looks transposed: it has shape (2, 3) = (C, D) but the head needs (D, C) = "
     "(3, 2) to match cls of shape (1, 3): transpose it"),
    ({"W_head": [[1], [2], [3]], "cls": [[1, 2]]}, "W_head", None,
     "W_head has shape (3, 1) but cls has shape (1, 2): W_head must be (D, C) with D = 2 rows"),
    ({"W_head": GOOD_W, "cls": [[0.0] * 2] * 65}, "B", None,
     "B = 65 is over the limit of 64 samples"),
    ({"W_head": [[0.0]] * 1025, "cls": [[0.0] * 1025]}, "D", None,
     "D = 1025 is over the limit of 1024 features"),
    ({"W_head": GOOD_W, "encoder_output": [[[0.0] * 2] * 258]}, "N1", None,
     "N1 = 258 is over the limit of 257 tokens"),
    ({"W_head": {"preset": "random", "seed": 0, "shape": [2, 1001], "scale": 1},
      "cls": [[1, 2]]}, "C", None, "C = 1001 is over the limit of 1000 classes"),
    ({"W_head": {"preset": "random", "seed": -1, "shape": [2, 2], "scale": 1},
      "cls": [[1, 2]]}, "W_head", None, "W_head: the compact form's seed must be a whole number"),
    ({"W_head": {"preset": "gauss", "shape": [2, 2]}, "cls": [[1, 2]]}, "W_head", None,
     "the compact form's preset must be \"random\", \"zeros\" or \"tiny-vit\""),
    ({"W_head": {"preset": "zeros", "shape": [2, 2], "edits": [[2, 0, 1]]}, "cls": [[1, 2]]},
     "W_head", None, "W_head: edit 0 is at W_head[2,0], outside the 2 × 2 matrix"),
    ({"W_head": {"preset": "zeros", "shape": [2, 2], "colour": 1}, "cls": [[1, 2]]},
     "W_head", None, "unknown key 'colour' in the compact form"),
    ({"W_head": {"preset": "random", "seed": 0, "shape": [2, 2], "scale": 1e308},
      "cls": [[1, 2]]}, "W_head", (1, 1), "W_head[1,1] is inf: every number must be finite"),
    ({"W_head": GOOD_W, "cls": [[1, 2]], "options": {"sample": 1}}, "options", None,
     "options.sample must be a whole number from 0 to 0; got 1"),
    ({"W_head": GOOD_W, "cls": [[1, 2]], "options": {"mistake": "typo"}}, "options", None,
     "options.mistake must be null or one of last_position, softmax_inside"),
    ({"W_head": GOOD_W, "cls": [[1, 2]], "options": {"activation": "relu"}}, "options", None,
     "options.activation must be \"tanh\" or \"gelu\""),
    ({"W_head": GOOD_W, "cls": [[1, 2]], "options": []}, "options", None,
     "options must be an object; got a list"),
])
def test_state_from_json_errors(obj, key, index, message):
    with pytest.raises(StateError) as info:
        state_from_json(obj)
    assert message in str(info.value)
    assert info.value.key == key
    assert info.value.index == index


@pytest.mark.parametrize("fragment, message", [
    ("#state=%7Bnot json", "the link's state is not valid JSON"),
    ("#state=%7B%zz", "bad percent-encoding at character 3"),
    ("#state=%7B%2", "bad percent-encoding"),
    ("#state=%FF%FE", "not UTF-8 text"),
    ("#view=1", "the link has no state= in its fragment"),
    pytest.param("#state=" + "%5B" * 10000, "nests arrays or objects 10,000 deep; the page "
                 "reads JSON at most 32 deep", id="deeply-nested"),
    pytest.param("#state=" + "%5B" * 1900 + "%5D" * 1900, "nests arrays or objects 1,900 deep", id="deep-but-closed"),
    pytest.param("#state=" + "%7B%22a%22%3A" * 33 + "1" + "%7D" * 33, "nests arrays or objects 33 deep", id="objects-33-deep"),
    ("#state=NaN", "got NaN"),
    (None, "the link's fragment must be text"),
])
def test_decode_fragment_errors(fragment, message):
    with pytest.raises(StateError) as info:
        decode_fragment(fragment)
    assert message in str(info.value)


def test_unknown_top_level_keys_and_options_are_ignored():
    s = state_from_json({"W_head": GOOD_W, "cls": [[1, 2]], "version": 2,
                         "options": {"zoom": 3, "seed": 4}})
    assert s.options["seed"] == 4 and "zoom" not in s.options
