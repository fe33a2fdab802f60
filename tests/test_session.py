"""The explorer session in CPython: what the page receives for each action a person takes.

Expected logits come from the worked example (docs/math.md) or from an independent plain-Python
reference (math.fsum), never from the code under test.
"""
import contextlib
import csv
import io
import json
import math

import numpy as np
import pytest

from pycore.explorer.session import Session
from pycore.explorer import decode_fragment

WORKED_LOGITS = [[0.8854, -1.3914, 1.5811], [0.2000, -0.1000, -1.4000]]


def reference_logits(cls_rows, W):
    """The head in plain Python, written independently of pycore."""
    out = []
    for h in cls_rows:
        mu = math.fsum(h) / len(h)
        var = math.fsum((x - mu) ** 2 for x in h) / len(h)
        h_hat = [(x - mu) / math.sqrt(var + 1e-6) for x in h]
        out.append([math.fsum(h_hat[d] * W[d][c] for d in range(len(h))) for c in range(len(W[0]))])
    return out


def test_load_without_fragment_shows_the_worked_example():
    s = Session()
    answer = s.handle({"op": "load", "fragment": ""})
    assert answer["ok"] and answer["error"] is None
    assert answer["shape"] == {"mode": "cls", "B": 2, "D": 4, "C": 3, "N1": None}
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    table = answer["logits_table"]
    assert [row["cells"] for row in table["rows"]] == [
        ["0.8854", "-1.3914", "1.5811"], ["0.2000", "-0.1000", "-1.4000"]]
    assert [row["mark"] for row in table["rows"]] == [2, 0]
    assert set(answer["heatmaps"]) >= {"heatmap-cls", "heatmap-normalized", "heatmap-w", "heatmap-logits"}
    assert answer["heatmaps"]["heatmap-logits"]["marks"] == [[0, 2], [1, 0]]
    assert answer["fragment"].startswith("state=")


def test_edit_recomputes_only_what_depends_on_the_cell():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "edit", "key": "cls", "index": [1, 3], "text": "2.5"})
    assert answer["ok"] and answer["value"] == 2.5
    assert "heatmap-w" not in answer["heatmaps"]
    assert {"heatmap-cls", "heatmap-normalized", "heatmap-logits"} <= set(answer["heatmaps"])
    cls_rows = [[2, -1, 0, 3], [1, 1, -1, 2.5]]
    W = s.matrix("W_head").tolist()
    np.testing.assert_allclose(s.matrix("logits"), reference_logits(cls_rows, W), rtol=1e-12, atol=1e-12)
    # The URL fragment carries the edit.
    assert decode_fragment(answer["fragment"]).cls[1, 3] == 2.5

    answer = s.handle({"op": "edit", "key": "W_head", "index": [0, 1], "text": "\u22121"})
    assert answer["ok"] and answer["value"] == -1.0
    assert {"heatmap-w", "heatmap-logits"} <= set(answer["heatmaps"])
    assert "heatmap-cls" not in answer["heatmaps"] and "heatmap-normalized" not in answer["heatmaps"]


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "", "1,5", "--3", "1e400"])
def test_invalid_cell_is_refused_and_nothing_changes(text):
    s = Session()
    before = s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 2], "text": text})
    assert answer["ok"] is False
    assert "cls[0,2]" in answer["error"]["message"]
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    again = s.handle({"op": "option", "name": "sample", "value": 0})
    assert again["fragment"] == before["fragment"]


def test_out_of_range_cell_names_the_shape():
    s = Session()
    answer = s.handle({"op": "edit", "key": "W_head", "index": [4, 0], "text": "1"})
    assert answer["ok"] is False
    assert "W_head" in answer["error"]["message"]


@pytest.mark.parametrize("fragment, words", [
    ("#state=%7Bnot json", "JSON"),
    ("#state=" + "%7B%22cls%22%3A%5B%5B1%2C2%5D%5D%2C%22W_head%22%3A%5B%5B1%2C2%2C3%5D%5D%7D", "shape"),
])
def test_bad_link_falls_back_to_the_worked_example_with_a_reason(fragment, words):
    s = Session()
    answer = s.handle({"op": "load", "fragment": fragment})
    assert answer["ok"] is True
    assert answer["error"] and "worked example" in answer["error"]["message"]
    assert words.lower() in answer["error"]["message"].lower()
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)


def test_link_round_trip_reproduces_the_state():
    s = Session()
    s.handle({"op": "preset", "name": "random", "seed": 7})
    fragment = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "1.25"})["fragment"]
    other = Session()
    other.handle({"op": "load", "fragment": "#" + fragment})
    np.testing.assert_array_equal(other.matrix("logits"), s.matrix("logits"))
    np.testing.assert_array_equal(other.matrix("W_head"), s.matrix("W_head"))


def test_vit_b16_preset_sizes_and_a_compact_link():
    s = Session()
    answer = s.handle({"op": "preset", "name": "vit-b16", "seed": 0})
    assert answer["shape"]["D"] == 768 and answer["shape"]["C"] == 1000
    assert s.matrix("W_head").shape == (768, 1000)
    assert len(answer["fragment"]) < 4000  # a link, not 768,000 numbers
    answer = s.handle({"op": "edit", "key": "W_head", "index": [767, 999], "text": "0.5"})
    assert answer["ok"] and "heatmap-cls" not in answer["heatmaps"]
    assert decode_fragment(answer["fragment"]).W_head[767, 999] == 0.5


def test_resize_keeps_values_and_refuses_beyond_limits():
    s = Session()
    answer = s.handle({"op": "resize", "B": 3, "D": 4, "C": 2})
    assert answer["ok"] and answer["shape"]["B"] == 3 and answer["shape"]["C"] == 2
    np.testing.assert_array_equal(s.matrix("input")[:2], [[2, -1, 0, 3], [1, 1, -1, -1]])
    refused = s.handle({"op": "resize", "B": 65, "D": 4, "C": 2})
    assert refused["ok"] is False and "64" in refused["error"]["message"]
    assert s.matrix("input").shape == (3, 4)
    assert s.handle({"op": "resize", "B": 2.5, "D": 4, "C": 2})["ok"] is False


def test_encoder_mode_extracts_position_zero():
    s = Session()
    answer = s.handle({"op": "mode", "mode": "encoder"})
    assert answer["ok"] and answer["shape"]["mode"] == "encoder"
    N1 = answer["shape"]["N1"]
    stacked = s.matrix("input")
    assert stacked.shape == (2 * N1, 4)
    np.testing.assert_array_equal(stacked[0], [2, -1, 0, 3])
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    # Editing a patch token changes nothing downstream; editing position 0 does.
    answer = s.handle({"op": "edit", "key": "encoder_output", "index": [0, 1, 0], "text": "100"})
    assert answer["ok"]
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    s.handle({"op": "edit", "key": "encoder_output", "index": [0, 0, 0], "text": "100"})
    assert abs(s.matrix("logits")[0, 0] - WORKED_LOGITS[0][0]) > 0.01


def test_paste_block_fills_from_the_focused_cell():
    s = Session()
    answer = s.handle({"op": "paste", "key": "W_head", "index": [1, 1], "text": "1\t2\n3\t4\n"})
    assert answer["ok"]
    np.testing.assert_array_equal(s.matrix("W_head")[1:3, 1:3], [[1, 2], [3, 4]])
    refused = s.handle({"op": "paste", "key": "W_head", "index": [1, 1], "text": "1 2\n3"})
    assert refused["ok"] is False


def test_every_pitfall_shows_beside_the_correct_head():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    choices = s.handle({"op": "option", "name": "pitfall", "value": None})["pitfall"]["choices"]
    assert len(choices) == 6
    for key, _title in choices:
        answer = s.handle({"op": "option", "name": "pitfall", "value": key})
        section = answer["pitfall"]
        assert section["selected"] == key and section["explanation"]
        if key == "transposed":
            # W_head (4, 3) transposed is (3, 4): h_hat (2, 4) @ (3, 4) cannot multiply.
            assert section["error"] and "(3, 4)" in section["error"]
            assert "heatmap-pitfall" in answer["hide"]
        else:
            assert section["error"] is None
            diff = s.matrix("pitfall_diff")
            np.testing.assert_allclose(diff, s.matrix("pitfall") - s.matrix("logits"))
    s.handle({"op": "option", "name": "pitfall", "value": "softmax_inside"})
    np.testing.assert_allclose(s.matrix("pitfall").sum(axis=1), [1.0, 1.0])
    assert s.handle({"op": "option", "name": "pitfall", "value": "nope"})["ok"] is False


def test_variants_compare_on_the_same_inputs():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "option", "name": "variant", "value": "gap"})
    assert "encoder output" in answer["variant"]["error"]
    s.handle({"op": "preset", "name": "encoder", "seed": 0})
    answer = s.handle({"op": "option", "name": "variant", "value": "gap"})
    assert answer["variant"]["error"] is None and "heatmap-variant" in answer["heatmaps"]
    for key in ("mlp_tanh", "mlp_gelu", "bert_pooler"):
        answer = s.handle({"op": "option", "name": "variant", "value": key})
        assert answer["variant"]["error"] is None
        assert s.matrix("variant").shape == s.matrix("logits").shape


def test_steps_write_one_logit_as_a_sum_of_products():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    steps = s.handle({"op": "option", "name": "logit_class", "value": 0})["steps"]
    tex = steps["items"][2]["tex"]
    assert tex.count("(") >= 4 and tex.endswith("0.8854")
    steps = s.handle({"op": "option", "name": "sample", "value": 1})["steps"]
    assert steps["sample"] == 1 and steps["items"][2]["tex"].endswith("0.2000")
    assert s.handle({"op": "option", "name": "sample", "value": 2})["ok"] is False


def test_exports_reproduce_the_logits():
    s = Session()
    s.handle({"op": "preset", "name": "random", "seed": 3})
    code = s.handle({"op": "export", "format": "numpy"})["text"]
    out = io.StringIO()
    namespace = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<export>", "exec"), namespace)  # noqa: S102 - our own generated code
    logits = s.matrix("logits")
    np.testing.assert_allclose(namespace["logits"], logits, rtol=1e-12, atol=1e-12)

    text = s.handle({"op": "export", "format": "csv"})["text"]
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "sample" and len(rows) == logits.shape[0] + 1
    np.testing.assert_array_equal([[float(x) for x in r[1:]] for r in rows[1:]], logits)

    state = json.loads(s.handle({"op": "export", "format": "json"})["text"])
    assert "W_head" in state and ("cls" in state or "encoder_output" in state)


def test_unknown_requests_are_refused_not_raised():
    s = Session()
    for request in (None, {}, {"op": 3}, {"op": "fly"}, {"op": "export", "format": "pdf"},
                    {"op": "option", "name": "colour", "value": 1}, {"op": "preset", "name": "x"},
                    {"op": "edit", "key": "bias", "index": [0], "text": "1"}):
        assert s.handle(request)["ok"] is False


def test_a_big_typed_in_state_gets_its_link_when_asked():
    s = Session()
    answer = s.handle({"op": "resize", "B": 2, "D": 100, "C": 100})
    assert answer["ok"] and answer["fragment"] is None and answer["fragment_deferred"] is True
    link = s.handle({"op": "fragment"})
    assert link["ok"] and link["link_note"] is None
    state = decode_fragment(link["fragment"])
    assert state.W_head.shape == (100, 100)
    np.testing.assert_array_equal(state.W_head[:4, :3], s.matrix("W_head")[:4, :3])
    # Small states carry their link in every answer.
    small = Session().handle({"op": "load", "fragment": ""})
    assert small["fragment"] and small["fragment_deferred"] is False


def test_an_edit_can_leave_its_link_to_a_request_of_its_own():
    """The page asks for the link while it draws ("link": "separate"); the answer says it follows."""
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "1.5", "link": "separate"})
    assert answer["ok"] and answer["fragment"] is None
    assert answer["fragment_follows"] is True and answer["fragment_deferred"] is False
    # the edited grid is not resent: the page patches the one value it already shows
    assert answer["grids"] == {} and answer["value"] == 1.5
    assert decode_fragment(s.handle({"op": "fragment"})["fragment"]).cls[0, 0] == 1.5
    # without the flag the link is in the answer
    answer = s.handle({"op": "edit", "key": "W_head", "index": [3, 2], "text": "-2"})
    assert answer["fragment_follows"] is False
    assert decode_fragment(answer["fragment"]).W_head[3, 2] == -2.0


def test_the_build_time_first_view_is_the_load_answer_without_link_and_runtime():
    from buildtools.first_view import first_view, matrix_keys
    view = json.loads(json.dumps(first_view()))  # what default-view.json holds
    s = Session()
    answer = s.handle({"op": "load", "fragment": ""})
    assert set(answer) - set(view) == {"fragment", "host"}
    assert {k: view[k] for k in answer if k in view} == json.loads(json.dumps(
        {k: v for k, v in answer.items() if k not in ("fragment", "host")}))
    assert sorted(view["matrices"]) == matrix_keys(answer) == ["W_head", "h_cls", "h_hat", "input",
                                                                "logits", "probs"]
    logits = view["matrices"]["logits"]
    assert (logits["rows"], logits["cols"]) == (2, 3)
    np.testing.assert_allclose(np.reshape(logits["data"], (2, 3)), WORKED_LOGITS, atol=5e-5)


def test_an_edit_can_leave_its_equations_for_later():
    """Off-screen equations: the answer says they changed, a "steps" request fetches them."""
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "4", "steps": "later"})
    assert "steps" not in answer and answer["steps_follow"] is True
    later = s.handle({"op": "steps"})
    now = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "4"})
    assert later["ok"] and later["steps"] == now["steps"] and "steps_follow" not in now
    # choosing a pitfall changes no equation, and says nothing about them
    assert "steps_follow" not in s.handle({"op": "option", "name": "pitfall", "value": "no_layernorm"})
