"""The "Fine-tune the head" panel in CPython: labels and training settings in the state and the
link, one run and what ends it, the requests train / train_reset / train_set / label as typed,
the run exported as NumPy code, and the protocol. The curves: test_explorer_finetune_curves.py.

Expected numbers come from tests/finetune_reference.py (plain NumPy from docs/training.md's
formulas), never from pycore."""
import contextlib
import io
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from finetune_reference import (cross_entropy as ref_cross_entropy, layer_norm as ref_layer_norm,
                                train as ref_train)
from pycore.explorer import (decode_fragment, encode_fragment, preset, resize, state_from_json,
                             state_to_json, StateError)
from pycore.explorer.finetune import memory as training_memory
from pycore.explorer.shared import LINK_MAX
from pycore.explorer.protocol import FINETUNE
from protocol_check import check_answer
from pycore.explorer.session import Session
from pycore.explorer.state.finetuning import TRAIN_DEFAULTS, check_labels

from finetune_session import WORKED, session_with, loaded_preset, snapshot


# ---- the state and the link ------------------------------------------------------------------

def test_labels_and_training_settings_travel_in_the_link():
    state = dict(WORKED, labels=[2, 0], train={"lr": 0.02, "optimizer": "momentum",
                                                "start": "zero", "compare": ["bias"],
                                                "input_scale": 10})
    s = state_from_json(state)
    assert s.labels == (2, 0)
    assert s.train == {"lr": 0.02, "optimizer": "momentum", "start": "zero",
                       "compare": ("bias",), "input_scale": 10.0}
    back = decode_fragment(encode_fragment(s))
    assert back == s and back.labels == (2, 0) and back.train == s.train
    written = state_to_json(s)
    assert written["labels"] == [2, 0] and written["train"]["compare"] == ["bias"]


def test_an_old_link_reads_as_no_labels_and_default_settings_and_is_written_the_same():
    s = state_from_json(WORKED)
    assert s.labels == (0, 0) and s.train == TRAIN_DEFAULTS
    assert set(state_to_json(s)) == {"W_head", "cls"}  # nothing new in the link
    s.train["lr"] = 0.5
    assert state_to_json(s)["train"] == {"lr": 0.5}  # only what differs from the defaults


@pytest.mark.parametrize("labels, words", [
    ([0], "labels has 1 entries but there are B = 2 samples"),
    ([0, 3], "labels[1] = 3 is out of range: a class index from 0 to 2 (C = 3 classes)"),
    ([-1, 0], "labels[0] = -1 is out of range"),
    ([0, 1.0], "labels[1] is 1.0, not a class index"),
    ([True, 0], "labels[0] is true, not a class index"),
    (["1", 0], "labels[0] is text '1', not a class index"),
    ("0,1", "labels must be a list of B = 2 class indices"),
])
def test_bad_labels_in_a_link_are_refused_with_a_clear_message(labels, words):
    with pytest.raises(StateError) as err:
        state_from_json(dict(WORKED, labels=labels))
    assert words in str(err.value) and err.value.key == "labels"
    answer = Session().handle({"op": "load", "fragment": "#state=" + json.dumps(
        dict(WORKED, labels=labels))})
    assert words in answer["error"]["message"] and "worked example" in answer["error"]["message"]


@pytest.mark.parametrize("labels, index", [
    ([0, 1.5], (1,)), (["a", 0], (0,)), ([0, 7], (1,)), ([0], None), (np.zeros((2, 1), int), None),
])
def test_a_wrong_label_is_refused_at_its_entry(labels, index):
    """The state's check is pycore.vit.loss.check_labels: its refusal becomes a StateError that
    names the entry (the page outlines that label's field)."""
    with pytest.raises(StateError) as err:
        check_labels(labels, B=2, C=3)
    assert err.value.key == "labels" and err.value.index == index


@pytest.mark.parametrize("train, words", [
    ({"lr": -1}, "train.lr must be a positive finite number; got -1"),
    ({"lr": 0}, "train.lr must be a positive finite number; got 0"),
    ({"lr": "0.1"}, "train.lr must be a positive finite number; got text '0.1'"),
    ({"lr": 1e400}, "train.lr must be a positive finite number; got Infinity"),
    ({"input_scale": -2}, "train.input_scale must be a positive finite number"),
    ({"optimizer": "rmsprop"}, 'train.optimizer must be one of "sgd", "momentum", "adam"'),
    ({"start": "random"}, 'train.start must be one of "current", "zero"'),
    ({"compare": ["bias", "bias"]}, "train.compare must be a list of distinct heads"),
    ({"compare": ["correct"]}, "train.compare must be a list of distinct heads"),
    ([1], "train must be an object"),
])
def test_bad_training_settings_in_a_link_are_refused(train, words):
    with pytest.raises(StateError) as err:
        state_from_json(dict(WORKED, train=train))
    assert words in str(err.value) and err.value.key == "train"


def test_unknown_training_settings_are_ignored_as_unknown_options_are():
    assert state_from_json(dict(WORKED, train={"lr": 0.5, "momentum": 0.8})).train["lr"] == 0.5


def test_a_resize_keeps_the_labels_in_step():
    s = state_from_json(dict(WORKED, labels=[2, 1]))
    resize(s, B=3)
    assert s.labels == (2, 1, 0)        # a new sample: label 0
    resize(s, B=1)
    assert s.labels == (2,)             # removed samples drop theirs
    resize(s, C=2)
    assert s.labels == (0,)             # its class is gone: 0, like a new cell
    assert decode_fragment(encode_fragment(s)) == s


def test_the_fine_tuning_preset():
    s = preset("finetune", seed=0)
    assert (s.B, s.D, s.C) == (60, 64, 10) and not s.W_head.any()
    assert s.labels == tuple(b % 10 for b in range(60))
    assert preset("finetune", seed=1).cls[0, 0] != s.cls[0, 0]
    assert decode_fragment(encode_fragment(s)) == s


# ---- one run, and what ends it ---------------------------------------------------------------

def test_an_edit_ends_the_run_and_the_next_step_starts_a_new_one_from_there():
    s = loaded_preset()
    first = s.handle({"op": "train", "n": 5})["finetune"]["run"]
    edit = s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "0.5"})
    assert edit["finetune"]["run"] is None  # the page clears its curves
    W = s.state.W_head.copy()
    second = s.handle({"op": "train", "n": 1})["finetune"]["run"]
    assert second["id"] != first["id"] and second["steps"] == 1
    state = preset("finetune")
    losses, _, _, _ = ref_train(state.cls, state.labels, W, 0.1, "sgd", 1)
    np.testing.assert_allclose(second["loss"], losses, rtol=1e-10)


@pytest.mark.parametrize("change", [
    {"op": "label", "index": [0], "text": "3", "commit": True},
    {"op": "train_set", "name": "optimizer", "value": "adam"},
    {"op": "edit", "key": "cls", "index": [0, 0], "text": "1"},
    {"op": "preset", "name": "finetune", "seed": 0},
])
def test_playing_a_run_that_changed_is_refused_and_changes_nothing(change):
    s = loaded_preset()
    run = s.handle({"op": "train", "n": 2})["finetune"]["run"]
    s.handle(change)
    before = snapshot(s)
    answer = s.handle({"op": "train", "n": 1, "run": run["id"]})
    assert answer["ok"] is False and answer["error"]["key"] == "run"
    after = snapshot(s)
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[2] == after[2]


@pytest.mark.parametrize("copy_fits", [True, False])
def test_a_refused_training_step_changes_nothing_and_says_why(monkeypatch, copy_fits):
    """Adam at lr 1e306 moves every weight by about 1e306 per step: the first step is fine,
    a few more make the logits overflow. The request is refused whole: W_head, the link and
    the run stay as they were after the first step, whether the correct head is put back from
    a copy of its optimizer buffers or (where the memory budget has no room for that copy)
    by replaying its steps: bit for bit as a twin's that was never asked for them."""
    real_plan = training_memory.plan
    monkeypatch.setattr(training_memory, "plan", lambda *args: (real_plan(*args)[0], copy_fits))
    s, twin = loaded_preset(optimizer="adam", lr="1e306"), loaded_preset(optimizer="adam",
                                                                         lr="1e306")
    run = s.handle({"op": "train", "n": 1})["finetune"]["run"]
    assert twin.handle({"op": "train", "n": 1})["ok"]
    assert s.finetune.run.copy_fits is copy_fits
    before = snapshot(s)
    answer = s.handle({"op": "train", "n": 50})
    assert answer["ok"] is False and "nothing was changed" in answer["error"]["message"]
    assert "smaller learning rate" in answer["error"]["message"]
    after = snapshot(s)
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[2] == after[2]
    t, t_twin = s.finetune.run.main.trainer, twin.finetune.run.main.trainer
    assert t.steps_taken == t_twin.steps_taken == 1 and t.optimizer.t == t_twin.optimizer.t
    assert t.params["W_head"].tobytes() == t_twin.params["W_head"].tobytes()
    for a, b in zip(t.optimizer.state["W_head"], t_twin.optimizer.state["W_head"]):
        assert a.tobytes() == b.tobytes()
    # the run is the one it was: playing it goes on from step 1
    on = s.handle({"op": "train", "n": 1, "run": run["id"]})["finetune"]["run"]
    assert on["id"] == run["id"] and on["steps"] == 2 and on["loss"][:2] == run["loss"]
    assert on == twin.handle({"op": "train", "n": 1})["finetune"]["run"]


def test_a_fresh_run_that_cannot_take_its_first_step_leaves_no_run():
    s = loaded_preset(lr="1e308")
    before = snapshot(s)
    answer = s.handle({"op": "train", "n": 1})
    assert answer["ok"] is False and "overflowed float64" in answer["error"]["message"]
    assert s.finetune.run is None
    after = snapshot(s)
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[2] == after[2]


def test_reset_goes_back_to_where_training_started():
    s = session_with(dict(WORKED, labels=[2, 1]))
    s.handle({"op": "train", "n": 4})
    answer = s.handle({"op": "train_reset"})
    np.testing.assert_array_equal(s.state.W_head, WORKED["W_head"])
    assert answer["finetune"]["run"] is None and "heatmap-w" in answer["heatmaps"]
    s.handle({"op": "train_set", "name": "start", "value": "zero"})
    answer = s.handle({"op": "train_reset"})
    assert not s.state.W_head.any()
    assert answer["finetune"]["loss"] == math.log(3) and answer["finetune"]["accuracy"] == 0.0
    assert "log C = log 3 = 1.0986" in answer["finetune"]["start_note"]


def test_a_run_has_at_most_1000_steps():
    s = session_with(dict(WORKED, labels=[2, 1]))
    steps = 0
    while steps < 1000:   # each request takes what fits in its time (test_explorer_limits.py)
        answer = s.handle({"op": "train", "n": 500})
        taken = answer["finetune"]["trained"]["taken"]
        assert answer["finetune"]["run"]["steps"] == steps + taken and 0 < taken <= 500
        steps += taken
    assert steps == 1000
    refused = s.handle({"op": "train", "n": 1})
    assert refused["ok"] is False and "1000 steps" in refused["error"]["message"]
    assert s.handle({"op": "train", "n": 501})["ok"] is False   # over 500 per request


# ---- labels and settings, as typed -----------------------------------------------------------

def test_a_label_typed_key_by_key_changes_the_loss_at_once():
    s = loaded_preset()
    s.handle({"op": "train", "n": 5})
    state, W = preset("finetune"), s.state.W_head.copy()
    assert s.state.labels[3] == 3
    for text in ("1", "7"):
        answer = s.handle({"op": "label", "index": [3], "text": text})
        assert answer["value"] == int(text) and answer["error"] is None
        labels = list(state.labels)
        labels[3] = int(text)
        assert answer["finetune"]["labels"] == labels
        want = ref_cross_entropy(ref_layer_norm(state.cls) @ W, labels)
        assert answer["finetune"]["loss"] == pytest.approx(want, rel=1e-12)
        assert answer["finetune"]["run"] is None  # the run was for other labels
        assert decode_fragment(answer["link"]["fragment"] or "#" + encode_fragment(
            s.state)).labels[3] == int(text)


def test_a_label_out_of_range_goes_back_to_the_label_before_typing():
    s = loaded_preset()
    link = s.handle({"op": "link"})["link"]
    seen = [s.handle({"op": "label", "index": [3], "text": t}) for t in ("1", "12", "")]
    assert [a["value"] for a in seen] == [1, 3, 3]
    assert "labels[3] = 12 is out of range" in seen[1]["error"]["message"]
    assert seen[1]["error"]["incomplete"] is False and seen[2]["error"]["incomplete"] is True
    assert s.handle({"op": "link"})["link"] == link and s.state.labels[3] == 3
    left = s.handle({"op": "label", "index": [3], "text": "x", "commit": True})
    assert left["value"] == 3 and "not a class index" in left["error"]["message"]
    s.handle({"op": "label", "index": [3], "text": "5", "commit": True})
    assert s.handle({"op": "label", "index": [3], "text": "99"})["value"] == 5  # from 5 now


@pytest.mark.parametrize("request_, words", [
    ({"op": "label", "index": [60], "text": "1"}, "labels index must be a whole number from 0 to 59"),
    ({"op": "label", "index": 3, "text": "1"}, "A label's index is [b]"),
    ({"op": "train", "n": 0}, "n must be a whole number from 1 to 500"),
    ({"op": "train_set", "name": "lr", "value": "-1"}, "train.lr must be a positive finite number; got -1; it stays 0.1"),
    ({"op": "train_set", "name": "lr", "value": "abc"}, "train.lr: 'abc' is not a number"),
    ({"op": "train_set", "name": "momentum", "value": 0.5}, "there is no training setting"),
    ({"op": "export", "format": "training"}, "There is no training run to export"),
])
def test_refused_requests_change_nothing_and_say_why(request_, words):
    s = loaded_preset()
    before = snapshot(s)
    answer = s.handle(request_)
    assert answer["ok"] is False and words in answer["error"]["message"], answer["error"]
    after = snapshot(s)
    assert before[0] == after[0] and np.array_equal(before[1], after[1]) and before[2] == after[2]


def test_a_setting_typed_as_text_is_read_as_a_number():
    s = loaded_preset()
    answer = s.handle({"op": "train_set", "name": "lr", "value": " 2.5e-2 "})
    assert answer["ok"] and s.state.train["lr"] == 0.025
    assert answer["finetune"]["settings"]["lr"] == 0.025
    assert decode_fragment(answer["link"]["fragment"] or "#" + encode_fragment(s.state)).train["lr"] == 0.025


# ---- the export --------------------------------------------------------------------------------

@pytest.mark.parametrize("optimizer, start", [("sgd", "zero"), ("momentum", "current"),
                                              ("adam", "zero")])
def test_the_training_export_reproduces_the_curve_in_cpython(optimizer, start):
    s = session_with(dict(WORKED, labels=[2, 1], train={"optimizer": optimizer,
                                                         "start": start, "lr": 0.05}))
    for n in (3, 9):
        curve = s.handle({"op": "train", "n": n})["finetune"]["run"]["loss"]
    code = s.handle({"op": "export", "format": "training"})["export"]["text"]
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(compile(code, "<exported>", "exec"), namespace)  # noqa: S102 - our own export
    np.testing.assert_allclose(namespace["losses"], curve, rtol=1e-12)
    assert len(namespace["losses"]) == 13 and printed.getvalue().strip()


# ---- the protocol ------------------------------------------------------------------------------

def test_the_panel_answers_keep_to_the_protocol():
    s = Session()
    for request in ({"op": "load", "fragment": ""},
                    {"op": "preset", "name": "finetune", "seed": 2},
                    {"op": "train", "n": 3}, {"op": "train", "n": 2, "run": 1},
                    {"op": "train_set", "name": "compare", "value": ["bias"]},
                    {"op": "train_set", "name": "start", "value": "zero"},
                    {"op": "label", "index": [0], "text": "4"},
                    {"op": "label", "index": [0], "text": "", "commit": True},
                    {"op": "train_reset"}, {"op": "train", "n": 1},
                    {"op": "export", "format": "training"},
                    {"op": "edit", "key": "W_head", "index": [0, 0], "text": "1"},
                    {"op": "resize", "B": 3, "D": 4, "C": 2},
                    {"op": "train", "n": 1, "run": 99}, {"op": "train", "fly": 1}):
        answer = s.handle(request)
        check_answer(answer)
        json.dumps(answer, allow_nan=False)
        if answer["ok"] and request["op"] != "export":
            assert set(answer["finetune"]) == set(FINETUNE)


TRAIN_REQUESTS = st.one_of(
    st.fixed_dictionaries({"op": st.just("train")}, optional={
        "n": st.integers(-1, 40) | st.just(2.5), "run": st.integers(0, 4)}),
    st.fixed_dictionaries({"op": st.just("train_reset")}),
    st.fixed_dictionaries({"op": st.just("train_set"), "name": st.sampled_from(
        ["lr", "optimizer", "start", "compare", "input_scale", "x"]), "value": st.sampled_from(
        ["0.1", "1e300", "-1", "abc", 0.5, "sgd", "momentum", "adam", "zero", "current",
         ["bias"], [], ["softmax_inside", "no_layernorm"], "1e200", None])}),
    st.fixed_dictionaries({"op": st.just("label"), "index": st.sampled_from([[0], [1], [2], [-1],
                                                                              5]),
                           "text": st.sampled_from(["0", "1", "2", "7", "", "x", "-1"])},
                          optional={"commit": st.booleans()}),
    st.fixed_dictionaries({"op": st.just("edit"), "key": st.just("W_head"),
                           "index": st.just([0, 0]), "text": st.sampled_from(["1", "1e308", "x"])}),
    st.fixed_dictionaries({"op": st.just("resize"), "B": st.integers(1, 3), "C": st.integers(1, 3)}),
    st.fixed_dictionaries({"op": st.just("preset"), "name": st.sampled_from(["worked", "finetune"])}),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TRAIN_REQUESTS, min_size=1, max_size=10))
def test_every_panel_request_applies_fully_or_changes_nothing(requests):
    session = Session()
    for request in requests:
        before = json.dumps(state_to_json(session.state)), session.state.W_head.copy()
        answer = session.handle(request)
        check_answer(answer)
        json.dumps(answer, allow_nan=False)
        if answer["ok"] is False:
            assert before[0] == json.dumps(state_to_json(session.state)), request
            assert np.array_equal(before[1], session.state.W_head)
        s = session.state
        assert np.isfinite(s.W_head).all() and np.isfinite(session.trace.logits).all()
        assert len(s.labels) == s.B and all(0 <= y < s.C for y in s.labels)
        fragment = encode_fragment(s)  # a state too long for a link has none (a huge lr's W_head)
        if len(fragment) <= LINK_MAX:
            assert decode_fragment(fragment) == s


def test_the_converged_note_says_how_much_the_loss_fell_and_against_what():
    """A loss that nearly halved over the window, yet by under 1 % of its start: the note once
    said "Converged ... fell by less than 1 % ... (0.0393 -> 0.0209)", which reads as false. It
    now says what the rule measured (the fall against the start: a flat curve on the chart)
    and that the loss itself is still falling, by how much of its own value."""
    from pycore.explorer.finetune.run import converged
    losses = [2.3] + [0.0393] * 10 + list(np.linspace(0.0393, 0.0209, 21))
    text = converged(losses, [1.0] * len(losses))
    assert text.startswith("Play stopped at step 31: every sample is classified right"), text
    assert "Converged" not in text and "converged" not in text
    fell, own = 0.0393 - 0.0209, 100 * (0.0393 - 0.0209) / 0.0393  # 0.0184, 46.8 %
    assert "over the last 20 steps the loss fell by %.3g (0.0393 \u2192 0.0209), under 1%% of " \
           "where it started (2.3)" % fell in text, text
    assert "still falling, by %.0f%% of its own value in those steps" % own in text, text
    assert "%.0f" % own == "47"
