"""Where a logit comes from, and the top-k classes: pycore.vit.readout, its panels, its requests."""
import json
import math

import numpy as np
import pytest

from pycore.explorer import preset
from pycore.explorer.model import class_names
from pycore.explorer.panels import readouts
from pycore.explorer.session import Session
from pycore.vit.readout import contributions, top_k
from pycore.vit.trace import trace_head
from protocol_check import check_answer


def test_contributions_are_the_products_and_sum_to_the_logit():
    rng = np.random.RandomState(3)
    h_hat, W = rng.standard_normal((3, 7)), rng.standard_normal((7, 5))
    for b in range(3):
        for c in range(5):
            terms = contributions(h_hat, W, b, c)
            assert terms.tolist() == [h_hat[b, d] * W[d, c] for d in range(7)]
            assert math.isclose(math.fsum(terms), sum(h_hat[b, d] * W[d, c] for d in range(7)),
                                rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("b, c", [(-1, 0), (0, -1), (2, 0), (0, 4)])
def test_contributions_refuse_a_logit_outside(b, c):
    with pytest.raises(ValueError):
        contributions(np.ones((2, 3)), np.ones((3, 4)), b, c)


def test_contributions_refuse_shapes_that_do_not_chain():
    with pytest.raises(ValueError, match="share D"):
        contributions(np.ones((2, 3)), np.ones((4, 4)), 0, 0)


def test_top_k_ranks_like_argmax_with_ties_to_the_lower_index():
    logits = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
    assert top_k(logits, 3).tolist() == [[1, 2, 4], [0, 1, 2]]
    assert top_k(logits, 9).shape == (2, 5)
    rng = np.random.RandomState(0)
    big = np.round(rng.standard_normal((4, 1000)), 1)  # many ties
    ranked = top_k(big, 5)
    assert ranked[:, 0].tolist() == big.argmax(axis=1).tolist()
    for b in range(4):  # an independent ranking: by (-value, index)
        expected = sorted(range(1000), key=lambda c: (-big[b, c], c))[:5]
        assert ranked[b].tolist() == expected


@pytest.mark.parametrize("k", [0, -1])
def test_top_k_refuses_k_below_one(k):
    with pytest.raises(ValueError):
        top_k(np.ones((1, 3)), k)


def test_chart_names_the_largest_terms_and_sums_the_rest():
    state = preset("vit-b16")
    t = trace_head(state.W_head, cls=state.cls)
    chart = readouts.contribution_chart(t, state.W_head, 1, 417)
    bars = chart["bars"]
    assert len(bars) == readouts.TERMS_NAMED + 1 and bars[-1]["d"] is None
    assert bars[-1]["label"] == "the other %d" % (768 - readouts.TERMS_NAMED)
    terms = t.h_hat[1] * state.W_head[:, 417]
    expected = sorted(range(768), key=lambda d: (-abs(terms[d]), d))[:readouts.TERMS_NAMED]
    assert [bar["d"] for bar in bars[:-1]] == expected
    assert [bar["label"] for bar in bars[:2]] == ["d = %d" % expected[0], "d = %d" % expected[1]]
    rest = math.fsum(terms[d] for d in range(768) if d not in expected)
    assert math.isclose(bars[-1]["value"], rest, abs_tol=1e-12)
    assert math.isclose(sum(bar["value"] for bar in bars), t.logits[1, 417], abs_tol=1e-12)
    assert chart["logit_text"] == "%.4f" % t.logits[1, 417]


def test_chart_of_a_small_head_shows_every_term():
    state = preset("worked")
    t = trace_head(state.W_head, cls=state.cls)
    chart = readouts.contribution_chart(t, state.W_head, 1, 0)
    assert sorted(bar["d"] for bar in chart["bars"]) == [0, 1, 2, 3]
    assert chart["logit_text"] == "0.2000" and "sample 1, class 0" in chart["title"]


def test_each_named_bar_shows_its_two_factors_and_the_sort_is_said():
    state = preset("vit-b16")
    t = trace_head(state.W_head, cls=state.cls)
    chart = readouts.contribution_chart(t, state.W_head, 0, 3)
    for bar in chart["bars"][:-1]:
        h, w = t.h_hat[0, bar["d"]], state.W_head[bar["d"], 3]
        assert bar["factors"] == "%.4f \u00d7 %.4f" % (h, w)
        assert math.isclose(bar["value"], h * w, rel_tol=1e-12)
    assert chart["bars"][-1]["factors"] == "their sum"
    assert "largest magnitude first" in chart["note"]


def test_top_k_table_only_from_21_classes():
    t20 = trace_head(np.ones((3, 20)), cls=np.array([[1.0, 2.0, 3.0]]))
    assert readouts.top_k_table(t20, 5) is None
    state = preset("vit-b16")
    t = trace_head(state.W_head, cls=state.cls)
    table = readouts.top_k_table(t, 7)
    assert table["k"] == 7 and table["header"][1:] == ["#%d" % r for r in range(1, 8)]
    for b, row in enumerate(table["rows"]):
        assert row["classes"] == sorted(range(1000), key=lambda c: (-t.logits[b, c], c))[:7]
        assert row["cells"][0] == "class %d: %.4f" % (row["classes"][0], t.logits[b, row["classes"][0]])


def test_session_keeps_the_selected_logit_through_edits():
    s = Session()
    hovered = s.handle({"op": "contributions", "b": 0, "c": 2})
    assert hovered["ok"] and hovered["contributions"]["logit_text"] == "1.5811"
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "4"})
    assert "contributions" not in answer  # hovering selects nothing
    s.handle({"op": "contributions", "b": 0, "c": 2, "select": True})
    answer = s.handle({"op": "edit", "key": "W_head", "index": [3, 2], "text": "1"})
    t = trace_head(s.state.W_head, cls=s.state.cls)
    assert answer["contributions"]["logit_text"] == "%.4f" % t.logits[0, 2]
    check_answer(answer)
    answer = s.handle({"op": "resize", "C": 2})  # the selected class is gone
    assert answer["contributions"] is None
    assert s.handle({"op": "contributions", "b": None, "c": None})["contributions"] is None


def test_pointing_at_a_logit_while_typing_keeps_the_cell_being_typed_in():
    s = Session()
    s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "12"})
    s.handle({"op": "contributions", "b": 1, "c": 1})
    answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "12x"})
    assert answer["error"]["message"] == "cls[0,0]: '12x' is not a number"
    assert float(s.state.cls[0, 0]) == 2.0  # the value before typing, not the 12 on the way


@pytest.mark.parametrize("request_", [
    {"op": "contributions", "b": 2, "c": 0}, {"op": "contributions", "b": 0, "c": 3},
    {"op": "contributions", "b": "0", "c": 0}, {"op": "contributions", "b": True, "c": 0},
    {"op": "option", "name": "top_k", "value": 0}, {"op": "option", "name": "top_k", "value": 21},
])
def test_session_refuses_what_does_not_exist_and_changes_nothing(request_):
    s = Session()
    before = s.handle({"op": "link"})
    answer = s.handle(request_)
    assert answer["ok"] is False and answer["error"]["message"]
    assert s.handle({"op": "link"}) == before


def test_top_k_option_is_a_view_setting_outside_the_link():
    s = Session()
    s.handle({"op": "preset", "name": "vit-b16", "seed": 0})
    link = s.handle({"op": "link"})["link"]
    answer = s.handle({"op": "option", "name": "top_k", "value": 3})
    assert answer["top_k"]["k"] == 3 and len(answer["top_k"]["rows"][0]["cells"]) == 3
    assert s.handle({"op": "link"})["link"] == link
    check_answer(answer)


NAMES = ["name of %d" % i for i in range(1000)]


@pytest.fixture
def imagenet():
    class_names.use_imagenet(NAMES)
    yield
    class_names.use_imagenet(None)


def test_vit_b16_preset_is_named_with_imagenet_classes(imagenet):
    s = Session()
    answer = s.handle({"op": "preset", "name": "vit-b16", "seed": 0})
    assert answer["labels"]["classes"][417] == "class 417 \u00b7 name of 417"
    assert answer["heatmaps"]["heatmap-logits"]["x_labels"] == "classes"
    assert "%{customdata}" in answer["heatmaps"]["heatmap-logits"]["hover"]
    first = answer["top_k"]["rows"][0]["classes"][0]
    assert answer["top_k"]["rows"][0]["cells"][0].startswith("class %d \u00b7 name of %d: " % (first, first))
    assert "name of %d" % first in answer["prediction"]["text"]
    chart = s.handle({"op": "contributions", "b": 0, "c": 5})["contributions"]
    assert "name of 5" in chart["title"]
    # resized to other classes, or another 1000-class head: numbered
    assert s.handle({"op": "resize", "C": 999})["labels"]["classes"][5] == "class 5"
    assert class_names.class_names(preset("random")) is None


def test_names_file_is_read_once_built(tmp_path, imagenet):
    path = tmp_path / class_names.FILE_NAME
    path.write_text(json.dumps({"names": ["n%d" % i for i in range(1000)]}), encoding="utf-8")
    assert class_names.load_imagenet(str(path))
    assert class_names.imagenet_names()[999] == "n999"
    path.write_text(json.dumps({"names": ["too few"]}), encoding="utf-8")
    assert not class_names.load_imagenet(str(path))  # a damaged file changes nothing
    assert class_names.imagenet_names()[999] == "n999"
