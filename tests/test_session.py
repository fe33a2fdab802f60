"""The explorer session in CPython: what the page receives for each action a person takes.

Expected logits come from the worked example (docs/math.md) or from an independent plain-Python
reference (math.fsum), never from the code under test.
"""
import contextlib
import csv
import io
import json

import numpy as np
import pytest

from pycore.explorer.session import Session
from reference import WORKED_LOGITS, reference_head
from pycore.explorer import decode_fragment



reference_logits = reference_head  # plain Python, independent of pycore (tests/reference.py)


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
    assert answer["link"]["fragment"].startswith("state=")


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
    assert decode_fragment(answer["link"]["fragment"]).cls[1, 3] == 2.5

    answer = s.handle({"op": "edit", "key": "W_head", "index": [0, 1], "text": "\u22121"})
    assert answer["ok"] and answer["value"] == -1.0
    assert {"heatmap-w", "heatmap-logits"} <= set(answer["heatmaps"])
    assert "heatmap-cls" not in answer["heatmaps"] and "heatmap-normalized" not in answer["heatmaps"]


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "", "1,5", "--3", "1e400", "3/4", "0x10"])
def test_an_invalid_cell_is_marked_and_the_state_stays_as_it_was(text):
    s = Session()
    before = s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 2], "text": text, "commit": True})
    assert answer["ok"] is True and answer["error"]["index"] == [0, 2]
    assert "cls[0,2]" in answer["error"]["message"] and answer["error"]["incomplete"] is False
    assert answer["value"] == 0.0  # what cls[0,2] held: the page shows it again
    assert answer["unchanged"] is True  # nothing to redraw
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    assert s.handle({"op": "link"})["link"] == before["link"]


def test_a_rejected_entry_never_keeps_its_last_valid_prefix():
    """Typing 1e999 key by key into cls[0,1] (which holds -1) passes through 1e9 and 1e99, which
    are numbers; 1e999 is not (too large): the state goes back to -1, not to 1e99."""
    s = Session()
    before = s.handle({"op": "load", "fragment": ""})
    seen = []
    for text in ("1", "1e", "1e9", "1e99", "1e999"):
        seen.append(s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": text}))
    assert [a["value"] for a in seen] == [1.0, -1.0, 1e9, 1e99, -1.0]
    assert seen[1]["error"]["incomplete"] is True  # "1e" may still become a number
    assert seen[4]["error"]["incomplete"] is False and "too large" in seen[4]["error"]["message"]
    assert float(s.state.cls[0, 1]) == -1.0 and seen[4]["link"] == before["link"]
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    # leaving the cell with the refused text keeps the value from before typing
    done = s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "1e999", "commit": True})
    assert done["value"] == -1.0 and done["error"]
    # the next entry of the same cell starts from its committed value
    s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "7", "commit": True})
    assert s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "x"})["value"] == 7.0


@pytest.mark.parametrize("text", ["-", ".", "1e", "-2.5e-", ""])
def test_text_that_could_become_a_number_is_not_an_error_until_the_cell_is_left(text):
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    typing = s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": text})
    assert typing["error"]["incomplete"] is True and typing["value"] == 0.5
    left = s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": text, "commit": True})
    assert left["error"]["incomplete"] is False and left["value"] == 0.5


def test_an_edit_that_makes_the_logits_overflow_is_refused_and_changes_nothing():
    s = Session()
    before = s.handle({"op": "load", "fragment": ""})
    # h_hat[0, 3] is 1.2649: 1.7e308 * 1.2649 is beyond float64 (about 1.8e308)
    s.handle({"op": "edit", "key": "W_head", "index": [3, 0], "text": "2"})
    answer = s.handle({"op": "edit", "key": "W_head", "index": [3, 0], "text": "1.7e308"})
    assert "overflow" in answer["error"]["message"] and answer["value"] == 0.7
    assert "W_head[3,0]" in answer["error"]["message"] and answer["error"]["index"] == [3, 0]
    assert answer["link"] == before["link"]
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    # and the session goes on: a later edit works
    after = s.handle({"op": "edit", "key": "W_head", "index": [3, 0], "text": "0.25", "commit": True})
    assert after["error"] is None and after["value"] == 0.25


def test_a_paste_that_makes_the_logits_overflow_changes_nothing():
    """Six 1e308 pasted at W_head[0,0] make a logit overflow: the paste is refused and Python's
    state keeps the rows it had."""
    s = Session()
    before = s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "paste", "key": "W_head", "index": [0, 0],
                       "text": "1e308\t1e308\t1e308\n1e308\t1e308\t1e308"})
    assert answer["ok"] is False and "overflow" in answer["error"]["message"]
    np.testing.assert_array_equal(s.state.W_head[:2], [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5]])
    # choosing a sample afterwards writes the link of the state as it was (not the pasted rows)
    linked = decode_fragment(s.handle({"op": "option", "name": "sample", "value": 1})["link"]["fragment"])
    np.testing.assert_array_equal(linked.W_head, decode_fragment(before["link"]["fragment"]).W_head)
    exported = json.loads(s.handle({"op": "export", "format": "json"})["export"]["text"])
    assert exported["W_head"][0] == [0.5, -0.2, 0.1]
    assert s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "1"})["error"] is None


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
    fragment = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "1.25"})["link"]["fragment"]
    other = Session()
    other.handle({"op": "load", "fragment": "#" + fragment})
    np.testing.assert_array_equal(other.matrix("logits"), s.matrix("logits"))
    np.testing.assert_array_equal(other.matrix("W_head"), s.matrix("W_head"))


def test_vit_b16_preset_sizes_and_a_compact_link():
    s = Session()
    answer = s.handle({"op": "preset", "name": "vit-b16", "seed": 0})
    assert answer["shape"]["D"] == 768 and answer["shape"]["C"] == 1000
    assert s.matrix("W_head").shape == (768, 1000)
    assert len(answer["link"]["fragment"]) < 4000  # a link, not 768,000 numbers
    answer = s.handle({"op": "edit", "key": "W_head", "index": [767, 999], "text": "0.5"})
    assert answer["ok"] and "heatmap-cls" not in answer["heatmaps"]
    assert decode_fragment(answer["link"]["fragment"]).W_head[767, 999] == 0.5


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
    tokens = answer["shape"]["N1"]
    stacked = s.matrix("input")
    assert stacked.shape == (2 * tokens, 4)
    np.testing.assert_array_equal(stacked[0], [2, -1, 0, 3])
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    # Editing a patch token changes nothing downstream; editing position 0 does.
    answer = s.handle({"op": "edit", "key": "encoder_output", "index": [0, 1, 0], "text": "100"})
    assert answer["ok"]
    np.testing.assert_allclose(s.matrix("logits"), WORKED_LOGITS, atol=5e-5)
    s.handle({"op": "edit", "key": "encoder_output", "index": [0, 0, 0], "text": "100"})
    assert abs(s.matrix("logits")[0, 0] - WORKED_LOGITS[0][0]) > 0.01


# What a figure looks like apart from its values (web/js/heatmap/draw.js, figureOf): the spec but its
# colour range, key, marks and title.
def looks(spec):
    return {k: v for k, v in spec.items() if k not in ("zmin", "zmax", "key", "marks", "title")}


@pytest.mark.parametrize("preset", ["", "vit-b16"])
def test_the_figures_said_ahead_are_the_ones_the_first_choices_show(preset):
    """A new state's answer says what the hidden figures a choice would show will look like (its
    "ahead"), so that the page makes them while idle: the first mistake of the menu (Position
    -1, which switches to the encoder output), the first other head and the first Step (dW_head)
    then show figures of that look, title and shape; an edit does not say it again."""
    s = Session()
    answer = s.handle({"op": "preset", "name": preset} if preset else {"op": "load", "fragment": ""})
    said = answer["ahead"]
    mistake = ["heatmap-mistake-correct", "heatmap-mistake", "heatmap-mistake-diff"]
    other = ["heatmap-variant-correct", "heatmap-variant"]
    assert sorted(said) == sorted(["heatmap-encoder", "heatmap-dw"] + mistake + other)
    assert set(said) <= set(answer["hide"])
    assert "ahead" not in s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "1.5"})
    for request, ids in [({"op": "option", "name": "mistake", "value": "last_position"},
                          ["heatmap-encoder"] + mistake),
                         ({"op": "option", "name": "variant", "value": "affine"}, other),
                         ({"op": "train", "n": 1}, ["heatmap-dw"])]:
        shown = s.handle(request)
        assert not set(ids) & set(shown.get("ahead", {}))  # shown now: not said again
        for id_ in ids:
            spec = shown["heatmaps"][id_]
            assert looks(said[id_]["spec"]) == looks(spec), id_
            assert said[id_]["spec"]["title"] in (spec["title"], spec["title"].split("  (")[0]), id_
            assert (said[id_]["rows"], said[id_]["cols"]) == s.matrix(spec["matrix"]).shape, id_
    assert shown["shape"]["mode"] == "encoder"


def test_paste_block_fills_from_the_focused_cell():
    s = Session()
    answer = s.handle({"op": "paste", "key": "W_head", "index": [1, 1], "text": "1\t2\n3\t4\n"})
    assert answer["ok"]
    np.testing.assert_array_equal(s.matrix("W_head")[1:3, 1:3], [[1, 2], [3, 4]])
    refused = s.handle({"op": "paste", "key": "W_head", "index": [1, 1], "text": "1 2\n3"})
    assert refused["ok"] is False


def test_every_mistake_shows_beside_the_correct_head():
    s = Session()
    choices = s.handle({"op": "load", "fragment": ""})["mistake"]["choices"]  # sent once
    assert len(choices) == 4  # real ViTs' gamma/beta and bias are other heads, not mistakes
    for key, _title in choices:
        answer = s.handle({"op": "option", "name": "mistake", "value": key})
        section = answer["mistake"]
        assert section["selected"] == key and section["explanation"]
        if key == "transposed":
            # W_head (4, 3) transposed is (3, 4): h_hat (2, 4) @ (3, 4) cannot multiply.
            assert section["error"] and "(3, 4)" in section["error"]
            assert "heatmap-mistake" in answer["hide"]
        else:
            assert section["error"] is None
            diff = s.matrix("mistake_diff")
            np.testing.assert_allclose(diff, s.matrix("mistake") - s.matrix("logits"))
    s.handle({"op": "option", "name": "mistake", "value": "softmax_inside"})
    np.testing.assert_allclose(s.matrix("mistake").sum(axis=1), [1.0, 1.0])
    assert s.handle({"op": "option", "name": "mistake", "value": "nope"})["ok"] is False


def test_variants_compare_on_the_same_inputs():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "option", "name": "variant", "value": "gap"})
    # with CLS rows alone, pooling the patch tokens switches to the encoder output first
    assert answer["shape"]["mode"] == "encoder" and answer["variant"]["error"] is None
    assert "encoder output" in answer["variant"]["notice"]
    s.handle({"op": "resize", "N1": 1})
    answer = s.handle({"op": "option", "name": "variant", "value": "gap"})
    assert "patch token" in answer["variant"]["error"]
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
    steps = s.handle({"op": "option", "name": "logit_class", "value": 0})["equations"]
    tex = steps["items"][2]["tex"]
    assert tex.count("(") >= 4 and tex.endswith("0.8854")
    steps = s.handle({"op": "option", "name": "sample", "value": 1})["equations"]
    assert steps["sample"] == 1 and steps["items"][2]["tex"].endswith("0.2000")
    assert s.handle({"op": "option", "name": "sample", "value": 2})["ok"] is False


def test_exports_reproduce_the_logits():
    s = Session()
    s.handle({"op": "preset", "name": "random", "seed": 3})
    code = s.handle({"op": "export", "format": "numpy"})["export"]["text"]
    out = io.StringIO()
    namespace = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<export>", "exec"), namespace)  # noqa: S102 - our own generated code
    logits = s.matrix("logits")
    np.testing.assert_allclose(namespace["logits"], logits, rtol=1e-12, atol=1e-12)

    text = s.handle({"op": "export", "format": "csv"})["export"]["text"]
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][0] == "sample" and len(rows) == logits.shape[0] + 1
    np.testing.assert_array_equal([[float(x) for x in r[1:]] for r in rows[1:]], logits)

    state = json.loads(s.handle({"op": "export", "format": "json"})["export"]["text"])
    assert "W_head" in state and ("cls" in state or "encoder_output" in state)


def test_each_export_names_its_file_and_says_what_it_holds():
    """Every export is saved as a file (issue 47, item 7): its name, and the words the page
    says when it is saved or copied, with this state's sizes; the run's too."""
    s = Session()
    s.handle({"op": "preset", "name": "encoder"})   # B = 2, N+1 = 5, D = 4, C = 3
    expected = {
        "json": ("vit-head-state.json", "application/json",
                 "W_head (4 \u00d7 3), the encoder output (2 \u00d7 5 \u00d7 4) and the page's "
                 "settings as JSON, every number in full"),
        "numpy": ("vit_head.py", "text/x-python",
                  "a Python script that rebuilds W_head (4 \u00d7 3) and the encoder output "
                  "(2 \u00d7 5 \u00d7 4), computes the head with NumPy alone and prints these "
                  "2 \u00d7 3 logits"),
        "csv": ("logits.csv", "text/csv", "the 2 \u00d7 3 logits, a header and then one row "
                "per sample, one column per class, every number in full"),
        "npz": ("vit-head-state.npz", "application/octet-stream",
                "W_head (4 \u00d7 3), the encoder output (2 \u00d7 5 \u00d7 4) and the labels "
                "as NumPy arrays, bit for bit; \u201cYour model\u2026\u201d opens it again")}
    for fmt, (filename, mime, about) in expected.items():
        out = s.handle({"op": "export", "format": fmt})["export"]
        assert (out["filename"], out["mime"], out["about"]) == (filename, mime, about), fmt
    s.handle({"op": "preset", "name": "finetune"})
    s.handle({"op": "train", "n": 3})
    out = s.handle({"op": "export", "format": "training"})["export"]
    assert out["filename"] == "vit_head_training.py" and out["about"] == (
        "a Python script that replays the run's 3 steps with NumPy alone and prints its losses")


def test_unknown_requests_are_refused_not_raised():
    s = Session()
    for request in (None, {}, {"op": 3}, {"op": "fly"}, {"op": "export", "format": "pdf"},
                    {"op": "option", "name": "colour", "value": 1}, {"op": "preset", "name": "x"},
                    {"op": "edit", "key": "bias", "index": [0], "text": "1"}):
        assert s.handle(request)["ok"] is False


def test_typing_in_a_preset_cell_keeps_its_recipe_exact():
    """A preset's matrix travels in the link as its recipe plus the cells edited: typing a
    number and then text that is not one puts back the cell as it was entered, edit record and
    all (a cell with no edit has none again), so the link is the one before typing."""
    s = Session()
    s.handle({"op": "preset", "name": "random", "seed": 3})
    link = s.handle({"op": "link"})["link"]["fragment"]
    before = float(s.state.W_head[1, 2])
    for text in ("7", "7x"):
        answer = s.handle({"op": "edit", "key": "W_head", "index": [1, 2], "text": text})
    assert answer["value"] == before and s.state.generated["W_head"].edits == {}
    answer = s.handle({"op": "edit", "key": "W_head", "index": [1, 2], "text": "7x", "commit": True})
    assert answer["error"]["message"] == "W_head[1,2]: '7x' is not a number"
    assert s.handle({"op": "link"})["link"]["fragment"] == link
    s.handle({"op": "edit", "key": "W_head", "index": [1, 2], "text": "2", "commit": True})
    s.handle({"op": "edit", "key": "W_head", "index": [1, 2], "text": "3"})
    s.handle({"op": "edit", "key": "W_head", "index": [1, 2], "text": "-", "commit": True})
    assert s.state.generated["W_head"].edits == {(1, 2): 2.0}  # the cell as entered: its edit 2


def _series():
    """Requests that reach every part a session keeps: the state, a selected logit, the top-k
    table's k, the comparisons' choices sent once, the fine-tuning panel and its runs, a cell
    being typed in."""
    img = [[16 if 2 <= r <= 5 and c == 3 else 0 for c in range(8)] for r in range(8)]
    return [
        {"op": "edit", "key": "cls", "index": [0, 1], "text": "2"},
        {"op": "edit", "key": "cls", "index": [0, 1], "text": "2x"},
        {"op": "contributions", "b": 1, "c": 2, "select": True},
        {"op": "option", "name": "mistake", "value": "bias"},
        {"op": "option", "name": "walk", "value": 3},
        {"op": "resize", "B": 3, "D": 4, "C": 25},
        {"op": "option", "name": "top_k", "value": 4},
        {"op": "edit", "key": "W_head", "index": [0, 3], "text": "5", "commit": True},
        {"op": "label", "index": [0], "text": "1", "commit": True},
        {"op": "train_set", "name": "optimizer", "value": "adam"},
        {"op": "train", "n": 1},
        {"op": "train", "n": 1},
        {"op": "digit", "images": [img]},
        {"op": "edit", "key": "W_head", "index": [0, 0], "text": "1"},
        {"op": "export", "format": "training"},
        {"op": "link"},
    ]


def _answers(s, requests):
    out = []
    for request in requests:
        answer = s.handle(request)
        if answer.get("digit"):
            answer["digit"]["encode_ms"] = None  # a measured time
        out.append(json.dumps(answer, sort_keys=True))
    return out


def test_a_session_after_reset_answers_exactly_as_a_new_one():
    used = Session()
    used.handle({"op": "load", "fragment": ""})
    _answers(used, _series())  # everything kept is now other than a new session's
    used.handle({"op": "edit", "key": "cls", "index": [1, 0], "text": "-"})  # typing, unfinished
    fresh = Session()
    assert used.handle({"op": "reset", "fragment": ""}) == fresh.handle({"op": "load",
                                                                         "fragment": ""})
    assert _answers(used, _series()) == _answers(fresh, _series())
    # reset loads a link as load does
    link = "#" + used.link()["fragment"]
    again = Session()
    assert used.handle({"op": "reset", "fragment": link}) == again.handle(
        {"op": "load", "fragment": link})
    assert _answers(used, _series()[:8]) == _answers(again, _series()[:8])


def test_a_new_state_says_no_logit_is_selected():
    """A load (and a reset) ends the selection, and its answer says so: the page drops a chart
    that an answer of the old state, drawn just before, brought back."""
    s = Session()
    edit = {"op": "edit", "key": "W_head", "index": [0, 0], "text": "2", "commit": True}
    assert "contributions" not in s.handle(edit)   # nothing selected, nothing said
    s.handle({"op": "contributions", "b": 1, "c": 2, "select": True})
    assert s.handle(dict(edit, text="3"))["contributions"]["b"] == 1
    for op in ("load", "reset"):
        assert s.handle({"op": op, "fragment": ""})["contributions"] is None
        assert s.selected_logit is None


def test_load_alone_keeps_what_reset_lets_go():
    """Why reset exists: load replaces the state but keeps the session's view settings (the
    top-k table's k), so a reused session would answer as the last case left it."""
    s = Session()
    s.handle({"op": "preset", "name": "random", "seed": 0})
    s.handle({"op": "resize", "B": 2, "D": 4, "C": 25})
    s.handle({"op": "option", "name": "top_k", "value": 2})
    link = "#" + s.link()["fragment"]
    assert s.handle({"op": "load", "fragment": link})["top_k"]["k"] == 2
    assert s.handle({"op": "reset", "fragment": link})["top_k"]["k"] == Session().handle(
        {"op": "load", "fragment": link})["top_k"]["k"] != 2
