"""What a state may hold, and what that costs: a cap on the numbers of each matrix
(pycore.explorer.state.ELEMENT_LIMITS) keeps the largest state a link, a resize or a mode switch
can make within 150 MB of Python memory (docs/interface.md, "Limits"); a refused resize or mode
switch copies nothing first. Memory is measured with tracemalloc, which counts NumPy's buffers
and does not depend on the machine's speed."""
import json
import tracemalloc

import pytest

from pycore.explorer import state as state_module
from pycore.explorer.presets import preset
from pycore.explorer.session import Session
from pycore.explorer.state import ELEMENT_LIMITS, INPUT_ELEMENTS_MAX, LIMITS, ExplorerState

MB = 1e6


def fragment(z_shape, w_shape=(1024, 1000)):
    """A link of a seeded random encoder output and W_head: ~260 characters, whatever the
    sizes."""
    state = {"W_head": {"preset": "random", "seed": 1, "shape": list(w_shape), "scale": 0.02},
             "encoder_output": {"preset": "random", "seed": 2, "shape": list(z_shape),
                                "scale": 1.0}}
    return "#state=" + json.dumps(state, separators=(",", ":"))


def measured(session, request):
    """(answer, peak bytes of Python memory while `session` answered `request`, bytes held after)."""
    tracemalloc.start()
    try:
        answer = session.handle(request)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return answer, peak, held


def load_measured(frag):
    """(session, answer, peak MB of Python memory while loading, MB still held after)."""
    session = Session()
    answer, peak, held = measured(session, {"op": "load", "fragment": frag})
    return session, answer, peak / MB, held / MB


def test_the_short_link_of_a_huge_encoder_output_is_refused_before_it_is_made():
    session, answer, peak, _ = load_measured(fragment((64, 257, 1024)))
    assert len(fragment((64, 257, 1024))) < 300
    message = answer["error"]["message"]
    assert "encoder_output would hold 64 × 257 × 1024 = 16,842,752 numbers" in message
    assert "over the limit of 2,097,152" in message
    assert session.state == preset("worked")
    assert peak < 30, "%.0f MB held while refusing" % peak   # was 161 MB (and 280-410 MB in all)


def test_the_largest_state_allowed_stays_far_under_150_mb():
    # B x (N+1) x D at its cap (32 x 64 x 1024) beside the largest W_head (1024 x 1000)
    assert 32 * 64 * 1024 == INPUT_ELEMENTS_MAX
    session, answer, peak, held = load_measured(fragment((32, 64, 1024)))
    assert answer["ok"] and answer["error"] is None, answer["error"]
    assert session.state.encoder_output.size == INPUT_ELEMENTS_MAX
    assert peak < 150 and held < 150, (peak, held)


@pytest.mark.parametrize("z_shape", [(64, 257, 1024), (33, 64, 1024), (64, 257, 128)])
def test_every_input_over_the_cap_is_refused_whatever_its_dimensions(z_shape):
    answer = Session().handle({"op": "load", "fragment": fragment(z_shape, (z_shape[2], 10))})
    assert "over the limit of 2,097,152 (B × (N+1) × D)" in answer["error"]["message"]
    assert answer["error"]["key"] == "encoder_output"


def test_a_compact_form_resized_past_the_cap_is_refused_before_it_is_made():
    state = {"W_head": {"preset": "zeros", "shape": [1024, 10]},
             "encoder_output": {"preset": "zeros", "shape": [1, 1, 1024],
                                "size": [64, 257, 1024]}}
    _, answer, peak, _ = load_measured("#state=" + json.dumps(state))
    assert "encoder_output would hold 64 × 257 × 1024" in answer["error"]["message"]
    assert peak < 30


def test_the_vit_b16_preset_and_its_encoder_output_stay_allowed():
    s = Session()
    assert s.handle({"op": "preset", "name": "vit-b16"})["ok"]
    answer = s.handle({"op": "mode", "mode": "encoder"})
    assert answer["ok"], answer["error"]
    assert s.state.encoder_output.shape == (2, 5, 768)
    # ViT-B/16's whole encoder output (197 tokens) for a batch of 13 fits too
    assert s.handle({"op": "resize", "B": 13, "N1": 197})["ok"]
    assert ELEMENT_LIMITS["W_head"] == LIMITS["D"] * LIMITS["C"]


def test_a_resize_past_the_cap_is_refused_naming_the_limit_and_what_was_asked():
    s = Session()
    assert s.handle({"op": "preset", "name": "vit-b16"})["ok"]
    assert s.handle({"op": "mode", "mode": "encoder"})["ok"]
    before = s.state.copy()
    answer = s.handle({"op": "resize", "B": 64, "N1": 257})
    assert answer["ok"] is False
    assert answer["error"]["message"] == (
        "encoder_output would hold 64 × 257 × 768 = 12,632,064 numbers, over the limit of "
        "2,097,152 (B × (N+1) × D): make B, N+1 or D smaller")
    assert s.state == before


@pytest.mark.parametrize("request_", [
    {"op": "resize", "B": 64, "N1": 257, "D": 1024},   # over the cap on numbers
    {"op": "resize", "C": 1001},                        # over a dimension's limit
    {"op": "mode", "mode": "both"},                     # no such mode
])
def test_a_refused_resize_or_mode_switch_copies_nothing_first(monkeypatch, request_):
    s = Session()
    assert s.handle({"op": "load", "fragment": fragment((2, 257, 1024))})["error"] is None
    copies = []
    real_copy = ExplorerState.copy

    def counted(self):
        copies.append(self)
        return real_copy(self)
    monkeypatch.setattr(ExplorerState, "copy", counted)
    answer = s.handle(request_)
    assert answer["ok"] is False
    assert copies == [], "the state was copied before the request was refused"


def test_a_refused_resize_of_a_big_state_allocates_nothing_big():
    s = Session()
    assert s.handle({"op": "load", "fragment": fragment((7, 257, 1024))})["error"] is None
    answer, peak, _ = measured(s, {"op": "resize", "B": 64})
    assert answer["ok"] is False and "over the limit" in answer["error"]["message"]
    assert peak < 1 * MB, "%.1f MB" % (peak / MB)   # a copy of the whole state: 23 MB


def test_check_size_names_the_matrix_and_the_product():
    with pytest.raises(state_module.StateError) as err:
        state_module.check_size("W_head", (1025, 10))
    assert str(err.value) == "D = 1025 is over the limit of 1024 features (the hidden size D)"


def test_a_training_request_at_vit_b16_size_copies_each_head_once():
    # Each head's W_head and optimizer state are copied once per request (to take the steps
    # back if the answer fails), not twice, and scratch buffers not at all.
    s = Session()
    assert s.handle({"op": "preset", "name": "vit-b16"})["ok"]
    assert s.handle({"op": "train_set", "name": "optimizer", "value": "adam"})["ok"]
    assert s.handle({"op": "train", "n": 1})["ok"]
    answer, peak, _ = measured(s, {"op": "train", "n": 1})
    assert answer["ok"], answer["error"]
    W = 768 * 1000 * 8 / MB   # one W_head: 6.1 MB
    # four heads: params + m + v copied (12 W), the state's W before and after, temporaries
    assert peak / MB < 17 * W, "%.0f MB" % (peak / MB)   # copied twice, scratch too: 209 MB


# ---- training: each request about 0.2 s of work ----------------------------------------------

from pycore.explorer import finetune  # noqa: E402  (beside the tests that use it)


def vit_b16_session(optimizer="sgd"):
    s = Session()
    assert s.handle({"op": "preset", "name": "vit-b16"})["ok"]
    assert s.handle({"op": "train_set", "name": "optimizer", "value": optimizer})["ok"]
    return s


@pytest.mark.parametrize("optimizer, taken, later", [("sgd", 4, 5), ("momentum", 3, 3),
                                                     ("adam", 1, 1)])
def test_a_train_request_at_vit_b16_size_takes_only_the_steps_that_fit(optimizer, taken, later):
    # the first request of a run also starts its four heads: it has room for fewer steps
    s = vit_b16_session(optimizer)
    answer = s.handle({"op": "train", "n": 500})
    assert answer["ok"], answer["error"]
    trained = answer["finetune"]["trained"]
    assert trained["asked"] == 500 and trained["taken"] == taken
    assert answer["finetune"]["run"]["steps"] == taken
    assert trained["text"].startswith("Took %d of the 500 steps asked" % taken)
    # the next request goes on from there; answers to other requests carry no "trained"
    assert s.handle({"op": "train", "n": 500})["finetune"]["run"]["steps"] == taken + later
    assert s.handle({"op": "label", "index": [0], "text": "3"})["finetune"]["trained"] is None


def test_a_small_request_takes_every_step_it_asks_for():
    s = Session()
    assert s.handle({"op": "preset", "name": "finetune"})["ok"]
    answer = s.handle({"op": "train", "n": 20})
    assert answer["finetune"]["trained"] == {"asked": 20, "taken": 20,
                                             "text": "Took 20 steps; the run is at step 20."}


@pytest.mark.parametrize("B, D, C", [(2, 768, 1000), (64, 1024, 1000), (60, 64, 10),
                                     (2, 4, 3), (16, 512, 500), (64, 256, 1000)])
@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
@pytest.mark.parametrize("heads", [1, 4])
def test_the_steps_chosen_fit_the_budget_and_never_exceed_what_was_asked(B, D, C, optimizer,
                                                                         heads):
    for fresh in (False, True):
        fit = finetune.steps_that_fit(B, D, C, optimizer, heads, 500, fresh=fresh)
        work = (finetune.request_overhead_ms(B, D, C, optimizer, heads, fresh)
                + fit * finetune.step_cost_ms(B, D, C, optimizer, heads))
        assert 1 <= fit <= 500
        assert fit == 1 or work <= finetune.REQUEST_WORK_MS
    assert finetune.steps_that_fit(B, D, C, optimizer, heads, 1) == 1   # Step: one step
    assert finetune.steps_that_fit(B, D, C, optimizer, heads, 2) == min(2, fit)


def test_the_estimate_grows_with_every_size_and_the_optimizer():
    base = finetune.step_cost_ms(2, 768, 1000, "sgd", 4)
    assert finetune.step_cost_ms(64, 768, 1000, "sgd", 4) > base
    assert finetune.step_cost_ms(2, 1024, 1000, "sgd", 4) > base
    assert finetune.step_cost_ms(2, 768, 1000, "sgd", 1) < base
    assert (finetune.step_cost_ms(2, 768, 1000, "sgd", 4)
            < finetune.step_cost_ms(2, 768, 1000, "momentum", 4)
            < finetune.step_cost_ms(2, 768, 1000, "adam", 4))
