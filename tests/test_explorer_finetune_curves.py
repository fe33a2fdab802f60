"""The "Fine-tune the head" panel's curves in CPython: the losses of full-batch training, each
head's own curve side by side, the reading of them, the input scale, an overflowing head, the
memory budget, and the gradient heatmap. Expected numbers come from tests/finetune_reference.py
(plain NumPy from docs/training.md's formulas), never from pycore."""
import json

import numpy as np
import pytest

from finetune_reference import gradient as ref_gradient, train as ref_train
from pycore.explorer import decode_fragment, preset
from pycore.explorer.finetune import memory as training_memory
from pycore.explorer.session import Session

from finetune_session import WORKED, session_with, loaded_preset


# ---- training: the curves against an independent computation ---------------------------------

@pytest.mark.parametrize("optimizer, lr", [("sgd", 0.1), ("momentum", 0.02), ("adam", 0.01)])
@pytest.mark.parametrize("start", ["zero", "current"])
def test_the_loss_curve_is_the_losses_of_full_batch_training(optimizer, lr, start):
    state = dict(WORKED, labels=[2, 1], train={"lr": lr, "optimizer": optimizer,
                                                "start": start})
    s = session_with(state)
    run = None
    for n in (1, 4, 10):  # one run across requests
        answer = s.handle({"op": "train", "n": n})
        assert answer["ok"], answer["error"]
        run = answer["finetune"]["run"]
    W0 = np.zeros((4, 3)) if start == "zero" else np.array(WORKED["W_head"])
    losses, accuracies, _, W = ref_train(WORKED["cls"], [2, 1], W0, lr, optimizer, 15)
    assert run["steps"] == 15 and len(run["loss"]) == 16
    np.testing.assert_allclose(run["loss"], losses, rtol=1e-10)
    assert run["accuracy"] == accuracies
    np.testing.assert_allclose(s.state.W_head, W, rtol=1e-9, atol=1e-12)
    # the state's W_head IS the trained one: the link carries it
    np.testing.assert_array_equal(decode_fragment(answer["link"]["fragment"]).W_head,
                                  s.state.W_head)
    assert answer["finetune"]["loss"] == run["loss"][-1]


@pytest.mark.parametrize("optimizer, lr", [("sgd", 0.1), ("momentum", 0.02), ("adam", 0.01)])
@pytest.mark.parametrize("scale", [1.0, 0.1])
def test_the_side_by_side_curves_are_each_heads_own_training(optimizer, lr, scale):
    s = loaded_preset(optimizer=optimizer, lr=str(lr), input_scale=str(scale))
    answer = s.handle({"op": "train", "n": 20})
    curves = {c["head"]: c for c in answer["finetune"]["run"]["compare"]}
    assert list(curves) == ["correct", "softmax_inside", "no_layernorm", "bias"]
    state = preset("finetune")
    for head, c in curves.items():
        losses, _, own, _ = ref_train(state.cls, state.labels, np.zeros((64, 10)), lr,
                                      optimizer, 20, head=head, input_scale=scale)
        np.testing.assert_allclose(c["loss"], losses, rtol=1e-8, err_msg=head)
        if head == "softmax_inside":
            np.testing.assert_allclose(c["own"], own, rtol=1e-8)
        assert c["stopped"] is None


def parse_reading(line):
    """{head name: (loss, order, correct loss)} from the reading's words."""
    out = {}
    for part in line.rstrip(".").split("; ")[1:]:
        if ": " not in part or " vs " not in part:
            continue
        name, rest = part.split(": ", 1)
        loss, rest = rest.split(" vs ", 1)
        correct, rest = rest.split(" for the correct head (", 1)
        order = rest.split(";")[0].rstrip(")")
        out[name] = (float(loss), order, float(correct))
    return out


@pytest.mark.parametrize("optimizer, lr, softmax_order", [
    ("sgd", 0.1, "higher"), ("momentum", 0.02, "higher"), ("adam", 0.01, "lower")])
def test_the_reading_says_what_the_curves_show(optimizer, lr, softmax_order):
    """docs/training.md's measurements: with SGD or momentum the softmax-inside head learns
    much slower on the preset; with Adam the order reverses. The reading must say so because
    the numbers say so, and every word of it must agree with the curves."""
    s = loaded_preset(optimizer=optimizer, lr=str(lr))
    section = s.handle({"op": "train", "n": 50})["finetune"]
    claims = parse_reading(section["reading"])
    curves = {c["name"]: c["loss"][-1] for c in section["run"]["compare"]}
    assert set(claims) == {"softmax inside the head", "no LayerNorm", "with bias"}
    for name, (loss, order, correct) in claims.items():
        assert float("%.3g" % curves[name]) == loss and float("%.3g" % curves["correct head"]) == correct
        a, b = curves[name], curves["correct head"]
        same = abs(a - b) <= max(0.02 * max(a, b), 5e-4)
        assert order == ("about the same" if same else "higher" if a > b else "lower"), name
    assert claims["softmax inside the head"][1] == softmax_order
    assert claims["with bias"][1] == "about the same"
    assert ("1/C" in section["why"]) and (("Adam" in section["why"]) == (optimizer == "adam"))
    assert section["reading"].startswith("After 50 steps")
    # a mistaken head that trains as well: the line says why, and that real ViTs have a bias
    assert "real ViTs have one" in section["why"]
    no_ln = claims["no LayerNorm"][1]
    assert ("protects a head against" in section["why"]) == (no_ln != "higher"), no_ln


def test_the_input_scale_shows_the_step_size_without_layernorm():
    small = loaded_preset(input_scale="0.1").handle({"op": "train", "n": 50})["finetune"]["run"]
    large = loaded_preset(input_scale="10").handle({"op": "train", "n": 2})["finetune"]["run"]
    by = lambda run: {c["head"]: c["loss"] for c in run["compare"]}  # noqa: E731
    assert by(small)["no_layernorm"][-1] > 1.5 > by(small)["correct"][-1]    # 1.86 vs 0.165
    assert by(large)["no_layernorm"][1] < 1e-6 < by(large)["correct"][1]     # one giant step
    # LayerNorm divides the scale out: the correct head trains the same (up to eps)
    np.testing.assert_allclose(by(small)["correct"][:3], by(large)["correct"][:3], rtol=1e-4)


def test_a_head_that_overflows_stops_alone_and_says_so():
    s = loaded_preset(input_scale="1e150", lr="1e10")
    answer = s.handle({"op": "train", "n": 3})
    assert answer["ok"], answer["error"]
    curves = {c["head"]: c for c in answer["finetune"]["run"]["compare"]}
    assert "overflow" in curves["no_layernorm"]["stopped"]
    assert "no LayerNorm stopped at step" in answer["finetune"]["reading"]
    json.dumps(answer, allow_nan=False)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_heads_left_out_by_the_memory_budget_change_no_other_heads_numbers(monkeypatch,
                                                                          optimizer):
    # five heads (input scale 2); a budget with room for three: the last two compared heads
    # (no LayerNorm, with bias) are left out, saying why, and the three that train give the
    # same numbers, bit for bit, as in a run of all five
    full = loaded_preset(optimizer=optimizer, input_scale="2")
    s = full.state
    need = training_memory.need_mb(s.inputs.size, s.B, s.D, s.C, optimizer, 3)
    monkeypatch.setattr(training_memory, "MEMORY_MB", need)
    small = loaded_preset(optimizer=optimizer, input_scale="2")
    answers = [x.handle({"op": "train", "n": 4}) for x in (full, small)]
    answers = [x.handle({"op": "train", "n": 3}) for x in (full, small)]
    runs = [a["finetune"]["run"] for a in answers]
    assert runs[0]["loss"] == runs[1]["loss"] and runs[0]["accuracy"] == runs[1]["accuracy"]
    assert [c["head"] for c in runs[1]["compare"]] == [
        "correct", "softmax_inside", "no_layernorm", "bias"]
    for a, b in zip(runs[0]["compare"][:2], runs[1]["compare"][:2]):
        assert a == b
    for c in runs[1]["compare"][2:]:
        assert c["loss"] == [] and c["stopped"].startswith("left out at this size: ")
    assert "no LayerNorm left out at this size" in answers[1]["finetune"]["reading"]
    assert "with bias left out at this size" in answers[1]["finetune"]["reading"]
    # Adam's copy (m and v) needs more room than three heads leave; SGD's is nothing
    assert small.finetune.run.copy_fits is (optimizer == "sgd")
    np.testing.assert_array_equal(full.state.W_head, small.state.W_head)
    assert answers[1]["finetune"]["trained"]["taken"] == 3


def test_the_gradient_heatmap_is_dw_head_at_the_current_w_head():
    s = loaded_preset()
    answer = s.handle({"op": "train", "n": 2})
    state = preset("finetune")
    np.testing.assert_allclose(s.matrix("dW_head"),
                               ref_gradient(state.cls, state.labels, s.state.W_head),
                               rtol=1e-9, atol=1e-14)
    assert answer["heatmaps"]["heatmap-dw"]["matrix"] == "dW_head"


def test_the_gradient_waits_until_the_panel_is_used():
    s = Session()
    answer = s.handle({"op": "load", "fragment": ""})
    assert "heatmap-dw" in answer["hide"] and answer["finetune"]["gradient_note"]
    assert "heatmap-dw" not in answer["heatmaps"]
    answer = s.handle({"op": "label", "index": [1], "text": "2", "commit": True})
    assert "heatmap-dw" in answer["heatmaps"]
    edit = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "4"})
    np.testing.assert_allclose(s.matrix("dW_head"), ref_gradient(s.state.cls, [0, 2],
                                                                 s.state.W_head), atol=1e-14)
    assert "heatmap-dw" in edit["heatmaps"]
