"""The softmax bars panel (the answer's ``softmax_bars``): the chosen sample's class
probabilities, checked against a softmax written here from the reference head's logits."""
import math

import numpy as np
import pytest

from pycore.explorer import encode_fragment, state_from_json
from pycore.explorer.session import Session
from reference import reference_head


def softmax(row):
    top = max(row)
    e = [math.exp(v - top) for v in row]
    total = math.fsum(e)
    return [v / total for v in e]


def expected(cls, W, b, shown=10):
    """(class, probability) of the bars, most probable first (ties to the lower class), and
    the rest's sum (None up to `shown` classes)."""
    p = softmax(reference_head(cls, W)[b])
    order = sorted(range(len(p)), key=lambda c: (-p[c], c))
    rest = math.fsum(p[c] for c in order[shown:]) if len(p) > shown else None
    return [(c, p[c]) for c in order[:shown]], rest


@pytest.mark.parametrize("C", [3, 10, 25])
def test_the_bars_are_the_chosen_samples_probabilities(C):
    rng = np.random.default_rng(C)
    cls, W = rng.normal(size=(3, 6)), rng.normal(size=(6, C))
    s = Session()
    link = {"W_head": W.tolist(), "cls": cls.tolist()}
    assert s.handle({"op": "load", "fragment": "#" + encode_fragment(
        state_from_json(link))})["ok"]
    for b in (0, 2):
        answer = s.handle({"op": "option", "name": "sample", "value": b})
        chart = answer["softmax_bars"]
        bars, rest = expected(cls.tolist(), W.tolist(), b)
        assert chart["b"] == b and "Sample %d's" % b in chart["title"]
        shown = [bar for bar in chart["bars"] if not bar["rest"]]
        assert [bar["label"] for bar in shown] == ["class %d" % c for c, _ in bars]
        assert [bar["value"] for bar in shown] == pytest.approx([p for _, p in bars], abs=1e-12)
        assert [bar["text"] for bar in shown] == ["%.4f" % p for _, p in bars]
        assert [bar["mark"] for bar in shown] == [i == 0 for i in range(len(shown))]
        if rest is None:
            assert len(chart["bars"]) == len(shown) == C
        else:
            assert chart["bars"][-1]["rest"] and chart["bars"][-1]["value"] == \
                pytest.approx(rest, abs=1e-12)
            assert chart["bars"][-1]["label"] == "the other %d" % (C - 10)
        assert math.fsum(bar["value"] for bar in chart["bars"]) == pytest.approx(1.0, abs=1e-12)


def test_the_bars_follow_edits_and_name_digits():
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    answer = s.handle({"op": "edit", "key": "W_head", "index": [0, 1], "text": "5"})
    cls = [[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]]
    W = [[0.5, 5.0, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]]
    bars, _ = expected(cls, W, 0)
    assert [bar["value"] for bar in answer["softmax_bars"]["bars"]] == \
        pytest.approx([p for _, p in bars], abs=1e-12)
    digit = s.handle({"op": "digit", "images": [[[0] * 3 + [16] * 2 + [0] * 3] * 8]})
    assert all(bar["label"].startswith("digit ") or bar["rest"]
               for bar in digit["softmax_bars"]["bars"])
