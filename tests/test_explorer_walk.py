"""The lecture walk-through and the mistake panels that say what changed, checked
against NumPy computations written here, not against the code under test."""
import json

import numpy as np
import pytest

from pycore.explorer.comparisons import registry as comparisons
from pycore.explorer.panels import walkthrough
from pycore.explorer.state.link import decode_fragment, encode_fragment
from pycore.explorer.state.presets import default_state
from pycore.explorer.session import Session
from pycore.explorer.state.as_json import state_from_json
from protocol_check import check_answer

CLS = np.array([[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]])
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]])


def head(cls, W):
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    h_hat = (cls - mu) / np.sqrt(var + 1e-6)
    return mu[:, 0], var[:, 0], h_hat, h_hat @ W


def tex_of(walk):
    """The step's TeX without its alignment wrapper, so that it ends with the result."""
    return walk["tex"].replace(r"\end{aligned}", "").strip()


def walk(s, step, **options):
    for name, value in options.items():
        assert s.handle({"op": "option", "name": name, "value": value})["ok"]
    answer = s.handle({"op": "option", "name": "walk", "value": step})
    assert answer["ok"]
    return answer["walk"]


def test_the_walk_is_off_until_a_step_is_chosen_and_off_again_with_null():
    s = Session()
    assert s.handle({"op": "load", "fragment": ""})["walk"] is None
    assert walk(s, 0)["title"].startswith("Step 1 of 7")
    assert s.handle({"op": "option", "name": "walk", "value": None})["walk"] is None


@pytest.mark.parametrize("b", [0, 1])
def test_each_step_shows_this_samples_numbers(b):
    mu, var, h_hat, logits = head(CLS, W)
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    w = walk(s, 1, sample=b)
    assert w["sample"] == b and tex_of(w).endswith("%.4f" % mu[b])
    assert w["highlights"] == {"heatmap-cls": [[b, 0, b, 3]]}
    assert tex_of(walk(s, 2)).endswith("%.4f" % var[b])
    normalize = walk(s, 3)
    for value in h_hat[b]:
        assert ("%.4f" % value) in tex_of(normalize)
    dot = walk(s, 4)
    c = int(np.argmax(logits[b]))
    assert dot["class"] == c == dot["predicted_class"]  # the predicted class by default
    for d in range(4):
        term = "%.4f" % h_hat[b, d]
        assert term in tex_of(dot) and ("%.4f" % W[d, c]).lstrip("-") in tex_of(dot)
    assert tex_of(dot).endswith("%.4f" % logits[b, c])
    assert dot["highlights"] == {"heatmap-normalized": [[b, 0, b, 3]], "heatmap-w": [[0, c, 3, c]],
                                 "heatmap-logits": [[b, c, b, c]]}
    every = walk(s, 5)
    assert all(("%.4f" % v) in tex_of(every) for v in logits[b])
    prediction = walk(s, 6)
    assert "= %d" % c in tex_of(prediction) and prediction["highlights"]["heatmap-logits"][1] == [b, c, b, c]


def test_the_dot_product_of_a_chosen_class_and_back_to_the_predicted_one():
    _, _, h_hat, logits = head(CLS, W)
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    dot = walk(s, 4, walk_class=1)
    assert dot["class"] == 1 and tex_of(dot).endswith("%.4f" % logits[0, 1])
    dot = walk(s, 4, walk_class=None)
    assert dot["class"] == 2


def test_the_position_is_in_the_link_and_old_links_still_open():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    walk(s, 3, sample=1, walk_class=2)
    fragment = s.handle({"op": "link"})["link"]["fragment"]
    fresh = Session()
    answer = fresh.handle({"op": "load", "fragment": "#" + fragment})
    assert answer["error"] is None
    assert (answer["walk"]["step"], answer["walk"]["sample"]) == (3, 1)
    assert fresh.state.options["walk_class"] == 2
    old = state_from_json({"W_head": W.tolist(), "cls": CLS.tolist(), "options": {"sample": 1}})
    assert old.options["walk"] is None and old.options["walk_class"] is None
    assert decode_fragment(encode_fragment(old)).options["walk"] is None


@pytest.mark.parametrize("value", [-1, 7, 2.5, "3", True])
def test_a_step_outside_the_walk_is_refused_and_changes_nothing(value):
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    walk(s, 2)
    answer = s.handle({"op": "option", "name": "walk", "value": value})
    assert answer["ok"] is False and "options.walk" in answer["error"]["message"]
    assert s.state.options["walk"] == 2


def test_a_class_that_a_resize_removes_falls_back_to_the_predicted_one():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    walk(s, 4, walk_class=2)
    answer = s.handle({"op": "resize", "C": 2})
    assert s.state.options["walk_class"] is None and answer["walk"]["class"] in (0, 1)


def test_edits_redo_the_step_with_the_new_numbers():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    walk(s, 1)
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "6"})
    cls = CLS.copy()
    cls[0, 0] = 6
    assert tex_of(answer["walk"]).endswith("%.4f" % cls[0].mean())


def test_the_prediction_step_explains_ties_and_flat_rows():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    s.handle({"op": "paste", "key": "cls", "index": [0, 0], "text": "1\t1\t1\t1"})
    notes = walk(s, 6)["notes"]
    assert any("all equal" in n for n in notes) and any("tie" in n for n in notes)
    other = walk(s, 6, sample=1)["notes"]
    assert not any(n.startswith("Sample 0") for n in other)
    s.handle({"op": "resize", "D": 1})
    assert any("D = 1" in n for n in walk(s, 6)["notes"])
    s.handle({"op": "resize", "D": 2})
    assert any("D = 2" in n for n in walk(s, 6)["notes"])


def test_both_outputs_share_one_colour_scale_and_mark_their_predictions():
    s = Session()
    s.handle({"op": "preset", "name": "encoder", "seed": 0})
    answer = s.handle({"op": "option", "name": "mistake", "value": "last_position"})
    correct = answer["heatmaps"]["heatmap-mistake-correct"]
    mistaken = answer["heatmaps"]["heatmap-mistake"]
    logits, output = s.matrix("logits"), s.matrix("mistake")
    top = max(np.abs(logits).max(), np.abs(output).max())
    assert correct["zmin"] == mistaken["zmin"] == -top and correct["zmax"] == mistaken["zmax"] == top
    assert correct["marks"] == [[b, int(c)] for b, c in enumerate(np.argmax(logits, axis=1))]
    assert mistaken["marks"] == [[b, int(c)] for b, c in enumerate(np.argmax(output, axis=1))]


def test_the_changes_line_names_each_changed_prediction():
    s = Session()
    s.handle({"op": "preset", "name": "encoder", "seed": 0})
    answer = s.handle({"op": "option", "name": "mistake", "value": "last_position"})
    z = s.state.encoder_output
    _, _, _, right = head(z[:, 0, :], s.state.W_head)
    _, _, _, wrong = head(z[:, -1, :], s.state.W_head)
    changed = [(b, r, w) for b, (r, w) in enumerate(zip(right.argmax(1), wrong.argmax(1))) if r != w]
    line = answer["mistake"]["changes"]
    assert changed, "the encoder example must show a change"
    for b, r, w in changed:
        assert "sample %d: class %d \u2192 class %d" % (b, r, w) in line
    answer = s.handle({"op": "option", "name": "mistake", "value": "softmax_inside"})
    assert answer["mistake"]["changes"].startswith("No prediction changed")


def test_a_mistake_that_needs_patch_tokens_switches_to_the_encoder_output():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "option", "name": "mistake", "value": "last_position"})
    assert answer["ok"] and answer["shape"]["mode"] == "encoder" and answer["shape"]["N1"] == 5
    np.testing.assert_array_equal(s.state.encoder_output[:, 0, :], CLS)  # the CLS rows kept
    assert "full encoder output" in answer["mistake"]["notice"]
    assert s.matrix("mistake_diff").any()  # not a difference of zeros
    answer = s.handle({"op": "option", "name": "mistake", "value": "no_layernorm"})
    assert answer["mistake"]["notice"] is None


def test_the_panels_say_what_they_offer_and_name_sources_a_student_has():
    s = Session()
    answer = s.handle({"op": "load", "fragment": ""})
    for kind in ("mistake", "variant"):
        offer = answer[kind]["explanation"]
        assert offer.startswith("Choose one of")
        assert all(c.title in offer for c in comparisons.of_kind(kind))
    for c in comparisons.COMPARISONS:
        text = c.explanation + c.source
        assert ".md" not in text and ".py" not in text and "explorer" not in text
        assert any(name in c.source for name in ("Dosovitskiy", "Devlin", "Ba et al."))


def test_what_the_page_says_of_the_last_token_is_true_after_l_blocks():
    """After L attention blocks the last token has mixed in the whole image, as the CLS token
    has: it does not "describe one corner of the image". What is wrong with reading it is that
    W_head was fitted to the CLS token's output (issue 47, item 8). Every such sentence: the
    mistake's explanation, the walk-through's first step, the equations' first line."""
    from pycore.explorer.panels.tex import steps
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    said = [comparisons.find("last_position").explanation, walk(s, 0)["note"],
            steps(s.state, s.trace, 0, 0)["items"][0]["note"]]
    for text in said:
        assert "corner" not in text and "describes" not in text, text
        assert "whole image" in text or "last token's" in text, text
        assert "W_head" in text and "fitted" in text, text
    assert "After L attention blocks that token has mixed in the whole image" in said[0]


def test_predicted_skips_nan_and_ranks_overflow():
    assert comparisons.predicted(np.array([[np.nan, 1.0, np.inf]])) == [2]
    line = comparisons.prediction_changes(np.array([[1.0, 0.0]]), np.array([[np.nan, np.nan]]))
    assert "no number" in line


def test_walk_answers_keep_to_the_protocol():
    s = Session()
    for request in ({"op": "load", "fragment": ""},
                    {"op": "option", "name": "walk", "value": 4},
                    {"op": "option", "name": "walk_class", "value": 1},
                    {"op": "edit", "key": "W_head", "index": [0, 1], "text": "2"},
                    {"op": "option", "name": "mistake", "value": "last_position"}):
        answer = s.handle(request)
        check_answer(answer)
        json.dumps(answer)
