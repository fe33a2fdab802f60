"""The explorer session in CPython: what an answer leaves for later (the panels out of view, the
link while typing or scrubbing), what a catch-up brings, and which sections a request builds.

Expected values come from an independent plain-Python reference (tests/reference.py), never from
the code under test.
"""
import json

import numpy as np
import pytest

from pycore.explorer.session import Session
from reference import WORKED_LOGITS, reference_head
from pycore.explorer import decode_fragment
from pycore.explorer.shared import FINETUNE_PRESET



reference_logits = reference_head  # plain Python, independent of pycore (tests/reference.py)


def test_a_big_typed_in_state_gets_its_link_when_asked():
    s = Session()
    answer = s.handle({"op": "resize", "B": 2, "D": 100, "C": 100})
    assert answer["ok"] and answer["link"] == {"fragment": None, "pending": True, "note": None}
    link = s.handle({"op": "link"})["link"]
    assert link["pending"] is False and link["note"] is None
    state = decode_fragment(link["fragment"])
    assert state.W_head.shape == (100, 100)
    np.testing.assert_array_equal(state.W_head[:4, :3], s.matrix("W_head")[:4, :3])
    # Small states carry their link in every answer.
    small = Session().handle({"op": "load", "fragment": ""})
    assert small["link"]["fragment"] and small["link"]["pending"] is False


def test_one_edit_is_one_answer_with_its_link_and_only_the_cells_that_changed():
    """One round trip per keystroke: the link is in the answer, and the matrix the page edited
    comes back as the cell that changed, not whole (6 MB at ViT-B/16 size)."""
    from pycore.explorer.protocol import matrix_names
    s = Session()
    s.handle({"op": "preset", "name": "vit-b16", "seed": 0})
    answer = s.handle({"op": "edit", "key": "W_head", "index": [3, 2], "text": "-2"})
    assert decode_fragment("#" + answer["link"]["fragment"]).W_head[3, 2] == -2.0
    assert "grids" not in answer and answer["value"] == -2.0
    assert answer["patched"] == {"W_head": [[3, 2, -2.0]]}
    assert "W_head" not in matrix_names(answer) and "logits" in matrix_names(answer)
    size = len(json.dumps(answer)) + sum(s.matrix(k).nbytes for k in matrix_names(answer))
    assert size <= 64000, size
    # labels and the comparisons' choices were sent with the preset, not again
    assert "labels" not in answer and "choices" not in answer["mistake"]
    answer = s.handle({"op": "edit", "key": "cls", "index": [1, 5], "text": "3"})
    assert answer["patched"] == {"input": [[1, 5, 3.0]], "h_cls": [[1, 5, 3.0]]}


def test_the_build_time_first_view_is_the_load_answer_without_link_and_runtime():
    from buildtools.assembly.first_view import first_view
    from pycore.explorer.protocol import matrix_names
    view = json.loads(json.dumps(first_view()))  # what default-view.json holds
    s = Session()
    answer = s.handle({"op": "load", "fragment": ""})
    assert set(answer) - set(view) == {"link", "host"}
    assert {k: view[k] for k in answer if k in view} == json.loads(json.dumps(
        {k: v for k, v in answer.items() if k not in ("link", "host")}))
    assert sorted(view["matrices"]) == matrix_names(answer) == ["W_head", "h_cls", "h_hat",
                                                                "input", "logits", "probs"]
    logits = view["matrices"]["logits"]
    assert (logits["rows"], logits["cols"]) == (2, 3)
    np.testing.assert_allclose(np.reshape(logits["data"], (2, 3)), WORKED_LOGITS, atol=5e-5)


def test_an_edit_can_leave_its_equations_for_later():
    """Off-screen equations: the answer says they changed, an "equations" request fetches them."""
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "4", "equations": "later"})
    assert "equations" not in answer and answer["equations_follow"] is True
    later = s.handle({"op": "equations"})
    s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "5", "equations": "later"})
    now = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "4"})
    assert later["ok"] and later["equations"] == now["equations"] and "equations_follow" not in now
    # choosing a mistake changes no equation, and says nothing about them
    assert "equations_follow" not in s.handle({"op": "option", "name": "mistake", "value": "no_layernorm"})


def test_an_option_can_leave_its_equations_for_later():
    """A sample chosen, or a mistake that switches the input to the encoder output, while the
    equations are out of view: the answer says they changed, and an "equations" request brings the
    equations an answer with them would have held."""
    for name, value in (("sample", 1), ("mistake", "last_position")):
        s, t = Session(), Session()
        for session in (s, t):
            session.handle({"op": "load", "fragment": ""})
        answer = s.handle({"op": "option", "name": name, "value": value, "equations": "later"})
        now = t.handle({"op": "option", "name": name, "value": value})
        assert answer["ok"] and "equations" not in answer and answer["equations_follow"] is True
        assert "equations" in now and "equations_follow" not in now
        assert s.handle({"op": "equations"})["equations"] == now["equations"]
        assert s.handle({"op": "link"}) == t.handle({"op": "link"})


def test_a_drawing_in_progress_leaves_its_link_and_the_panels_out_of_view_for_later():
    """While the pen is down the page's "digit" requests say link "later" and name the panels
    out of view: the answer's link is pending and those panels are deferred; a catch_up and a
    link request then bring what an answer without them would have held."""
    image = [[0] * 8 for _ in range(8)]
    for r in range(1, 7):
        image[r][4] = 16
    s, t = Session(), Session()
    for session in (s, t):
        session.handle({"op": "load", "fragment": ""})
    later = ["stats", "logits_table", "top_classes"]
    answer = s.handle({"op": "digit", "images": [image], "link": "later", "later": later,
                       "equations": "later"})
    whole = t.handle({"op": "digit", "images": [image]})
    assert answer["ok"] and answer["link"]["pending"] and not whole["link"]["pending"]
    assert sorted(answer["deferred"]) == sorted(later) and not any(name in answer for name in later)
    assert answer["digit"] == whole["digit"] and answer["heatmaps"] == whole["heatmaps"]
    caught = s.handle({"op": "catch_up"})
    assert {name: caught[name] for name in later} == {name: whole[name] for name in later}
    assert s.handle({"op": "link"})["link"] == whole["link"]
    refused = s.handle({"op": "digit", "images": [image], "later": ["heatmap-logits"]})
    assert not refused["ok"] and "heatmap-logits" in refused["error"]["message"]


def test_a_comparison_at_1000_classes_lists_each_samples_top_classes():
    """At C = 1000 a comparison's heatmap is a barcode: its section carries the k largest
    outputs of each sample (here softmax inside the head), and follows k."""
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    s.handle({"op": "preset", "name": "vit-b16"})
    answer = s.handle({"op": "option", "name": "mistake", "value": "softmax_inside"})
    cls, W = s.state.cls, s.state.W_head  # the inputs, as the preset made them
    h_hat = (cls - cls.mean(1, keepdims=True)) / np.sqrt(cls.var(1, keepdims=True) + 1e-6)
    logits = h_hat @ W
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    table = answer["mistake"]["top_k"]
    for b, row in enumerate(table["rows"]):
        want = sorted(range(1000), key=lambda c: (-p[b, c], c))[:5]
        assert row["classes"] == want
        assert row["cells"][0].endswith("%.4f" % p[b, want[0]])
    assert s.handle({"op": "option", "name": "top_k", "value": 3})["mistake"]["top_k"]["k"] == 3
    # below 21 classes there is no table
    s.handle({"op": "preset", "name": "worked"})
    assert s.handle({"op": "option", "name": "mistake", "value": "softmax_inside"})["mistake"]["top_k"] is None


def test_a_scrubbed_edit_leaves_the_link_pending_until_asked_and_the_last_value_is_in_it():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    for k, text in enumerate(["-0.9", "-0.8", "-0.7"]):
        answer = s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": text, "link": "later"})
        assert answer["ok"] and answer["link"] == {"fragment": None, "pending": True, "note": None}
        assert answer["value"] == float(text)
    final = s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "-0.7", "commit": True})
    assert final["ok"] and final.get("unchanged") is True   # the value was in effect already
    link = s.handle({"op": "link"})["link"]
    cls = decode_fragment(link["fragment"]).cls
    assert cls[0, 1] == -0.7 and cls[0, 0] == 2.0   # the worked example, with the last value


def test_a_scrub_leaves_the_sections_out_of_view_for_later_and_catch_up_brings_them_exact():
    """An edit's "later" sections are left out and listed in "deferred" (so are those an
    earlier edit left out); catch_up then brings each as a session that was never scrubbed
    would answer it, and the page is up to date again (deferred: [])."""
    s, fresh = Session(), Session()
    s.handle({"op": "load", "fragment": ""})
    fresh.handle({"op": "load", "fragment": ""})
    want = fresh.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "0.3"})
    out = ["finetune", "mistake", "variant", "stats", "prediction"]
    for text in ("-0.5", "0.1", "0.3"):
        answer = s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": text,
                           "link": "later", "later": out})
        assert answer["ok"] and answer["value"] == float(text)
        assert not set(out) & set(answer) and answer["deferred"] == sorted(out)
        assert "logits_table" in answer and "heatmap-logits" in answer["heatmaps"]
    # a later edit in view of the statistics brings them, and still lists the others
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "0.3", "link": "later",
                       "later": out[:3]})
    assert answer.get("unchanged") is True and "deferred" not in answer  # nothing was built
    caught = s.handle({"op": "catch_up"})
    for key in out:
        assert caught[key] == want[key], key
    assert caught["deferred"] == [] and "heatmap-input" not in caught["heatmaps"]
    assert "deferred" not in s.handle({"op": "catch_up"})  # nothing left: an empty answer
    # an edit without "later" brings what earlier ones left out
    s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "0.4", "later": ["finetune"]})
    answer = s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "1.5"})
    fresh.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "0.4"})
    want = fresh.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "1.5"})
    assert answer["finetune"] == want["finetune"] and answer["deferred"] == []


def test_plays_train_requests_leave_panels_out_of_view_for_later_and_catch_up_brings_them():
    """While Play runs, a train request's "later" sections are left out (the statistics and
    logits tables of every sample, ...), never the panel's own; once Play pauses, catch_up
    brings each as a session trained the same steps without "later" answers it. A "later"
    that is not a list of such sections is refused before any step is taken."""
    s, fresh = Session(), Session()
    for session in (s, fresh):
        session.handle({"op": "preset", "name": FINETUNE_PRESET, "seed": 0})
    out = ["stats", "logits_table", "top_classes", "prediction", "mistake"]
    for _ in range(3):
        answer = s.handle({"op": "train", "n": 2, "link": "later", "later": out})
        want = fresh.handle({"op": "train", "n": 2})
        # training changes W_head, not the inputs: their statistics are not out of date
        assert answer["ok"] and not set(out) & set(answer)
        assert answer["deferred"] == sorted(set(out) - {"stats"}) and "stats" not in want
        assert answer["finetune"] == want["finetune"]
        assert answer["heatmaps"].keys() == want["heatmaps"].keys()
    caught = s.handle({"op": "catch_up"})
    for key in answer["deferred"]:
        assert caught[key] == want[key], key
    assert caught["deferred"] == []
    steps = s.handle({"op": "train", "n": 1, "later": "stats"})
    assert steps["ok"] is False and "later" in steps["error"]["message"]
    np.testing.assert_array_equal(s.state.W_head, fresh.state.W_head)  # no step was taken


def test_a_request_may_leave_for_later_only_panels_the_page_can_tell_are_out_of_view():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    for later in (["heatmap-logits"], ["link"], "finetune", [3]):
        answer = s.handle({"op": "edit", "key": "cls", "index": [0, 1], "text": "7", "later": later})
        assert answer["ok"] is False and "later" in answer["error"]["message"]
    assert s.state.cls[0, 1] == -1.0  # refused: nothing changed


@pytest.mark.parametrize("request_, changed, built, not_built", [
    # a CLS cell: everything downstream of the input, nothing of W_head's
    ({"op": "edit", "key": "cls", "index": [0, 1], "text": "2"}, {"input"},
     {"heatmap-input", "heatmap-normalized", "stats", "heatmap-logits", "prediction", "equations"},
     {"heatmap-w", "labels", "ahead"}),
    # a W_head cell: nothing of the input's (its heatmap, h_hat, the statistics)
    ({"op": "edit", "key": "W_head", "index": [0, 1], "text": "2"}, {"W_head"},
     {"heatmap-w", "heatmap-logits", "prediction", "finetune", "equations"},
     {"heatmap-input", "heatmap-normalized", "stats", "labels", "ahead"}),
    ({"op": "option", "name": "walk", "value": 2}, {"walk"}, {"shape", "link", "walk"},
     {"heatmap-logits", "equations", "finetune"}),
    ({"op": "option", "name": "sample", "value": 1}, {"sample"}, {"walk", "equations", "heatmap-lens"},
     {"heatmap-logits", "stats", "finetune"}),
    ({"op": "option", "name": "mistake", "value": "no_layernorm"}, {"mistake"},
     {"mistake", "walk"}, {"variant", "equations", "heatmap-logits"}),
    ({"op": "option", "name": "top_k", "value": 3}, {"top_k"}, {"top_k", "mistake", "variant"},
     {"equations", "heatmap-logits"}),
    ({"op": "train_set", "name": "lr", "value": "0.5"}, {"finetune"}, {"finetune"},
     {"heatmap-w", "equations"}),
    ({"op": "label", "index": [0], "text": "1"}, {"finetune"}, {"finetune"},
     {"heatmap-w", "equations"}),
], ids=lambda v: v["op"] + ("-" + v.get("key", v.get("name", ""))) if isinstance(v, dict) and "op" in v else None)
def test_a_request_builds_only_the_sections_that_follow_what_it_changed(request_, changed, built,
                                                                        not_built, monkeypatch):
    """A request builds exactly the sections whose ``after`` names what it changed (sections
    declare what they follow, so a new panel needs no line here); a few named sections say
    what that means for this request, independently of the declaration."""
    from pycore.explorer.panels import sections
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    names = []
    monkeypatch.setattr(sections, "SECTIONS", tuple(
        section._replace(build=lambda snap, section=section: (names.append(section.name),
                                                              section.build(snap))[1])
        for section in sections.SECTIONS))
    assert s.handle(request_)["ok"]
    following = {section.name for section in sections.SECTIONS if section.after & changed}
    assert set(names) == following and len(names) == len(following)
    assert built <= following and not not_built & following
    everything = {section.name for section in sections.SECTIONS}
    names.clear()
    s.handle({"op": "preset", "name": "random", "seed": 1})  # a new state: every section
    assert set(names) == everything


@pytest.mark.parametrize("asked", [{"op": "link"}, {"op": "equations"}, {"op": "catch_up"}],
                         ids=lambda r: r["op"])
def test_what_the_page_asks_while_typing_keeps_the_value_before_typing(asked):
    """A pending link asked for when typing pauses (a large state), or the equations and panels
    that scroll into view, change nothing: a refused text then still puts back the value the
    cell held when it was entered, never a number typed on the way."""
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "1e99"})
    s.handle(asked)
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "1e999",
                       "commit": True})
    assert answer["value"] == 2.0 and float(s.state.cls[0, 0]) == 2.0
