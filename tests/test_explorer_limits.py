"""What a state may hold, and what that costs: a cap on the numbers of each matrix
(pycore.explorer.state.explorer_state.ELEMENT_LIMITS) keeps the largest state a link, a resize or a mode switch
can make within 150 MB of Python memory (docs/interface.md, "Limits"); a refused resize or mode
switch copies nothing first. Memory is measured with tracemalloc, which counts NumPy's buffers
and does not depend on the machine's speed."""
import json
import tracemalloc

import numpy as np
import pytest

from pycore.explorer.finetune import (memory as training_memory_module, panel as finetune,
                                      section as finetune_panel)
from pycore.explorer.session import Session
from pycore.explorer.state import explorer_state as state_module
from pycore.explorer.state.presets import preset
from pycore.explorer.state.explorer_state import (ELEMENT_LIMITS, INPUT_ELEMENTS_MAX, LIMITS,
                                                  ExplorerState)

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


# ---- training: what a run keeps, and what a request adds ---------------------------------------

W_LARGEST = 1024 * 1000 * 8 / MB   # the largest W_head: 8.2 MB
SLOTS = {"sgd": 0, "momentum": 1, "adam": 2}   # W_head-sized buffers each optimizer keeps


def training_link(optimizer, B=64, D=1024, C=1000, tokens=None, input_scale=1.0, variant=None):
    """A link of seeded random inputs (B x D CLS rows, or a B x tokens x D encoder output), a
    D x C W_head, B labels spread over the classes, the training settings, and the head
    compared in "Other heads" (``variant``)."""
    inputs = {"preset": "random", "seed": 2, "shape": [B, tokens, D] if tokens else [B, D],
              "scale": 1.0}
    train = {"optimizer": optimizer}
    if input_scale != 1.0:
        train["input_scale"] = input_scale
    state = {"W_head": {"preset": "random", "seed": 1, "shape": [D, C], "scale": 0.02},
             "encoder_output" if tokens else "cls": inputs, "labels": [b % C for b in range(B)],
             "train": train}
    if variant:
        state["options"] = {"variant": variant}
    return "#state=" + json.dumps(state, separators=(",", ":"))


def training_memory(link, requests=2):
    """Python memory in MB, the state included (tracemalloc runs from before the session):
    (held once the link is loaded, [the peak of each train request], held after the last, the
    session)."""
    tracemalloc.start()
    try:
        s = Session()
        assert s.handle({"op": "load", "fragment": link})["ok"]
        state = tracemalloc.get_traced_memory()[0]
        peaks = []
        for _ in range(requests):
            tracemalloc.reset_peak()
            answer = s.handle({"op": "train", "n": 500})
            assert answer["ok"], answer["error"]
            peaks.append(tracemalloc.get_traced_memory()[1] / MB)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return state / MB, peaks, held / MB, s


def trained_heads(session):
    """The heads of the session's run that train, and why the others were left out."""
    curves = session.finetune.run.curves()
    return ([c.head for c in curves if c.trainer is not None],
            [c.stopped for c in curves if c.trainer is None])


@pytest.mark.parametrize("optimizer", ["sgd", "momentum", "adam"])
def test_training_at_the_largest_state_with_every_head_peaks_under_150_mb(optimizer):
    # The largest state the caps allow (64 x 32 x 1024 inputs, a 1024 x 1000 W_head), the
    # most heads the page trains (the correct head, on the rows as they are and scaled, and
    # the three mistaken ones) and the answer that needs the most beside them (the
    # pre-training MLP in "Other heads": its W1 and W2). Adam's five heads peaked at 188 MB
    # (each request also copied the correct head's m and v): the last two compared heads are
    # left out, saying why, and no copy is taken; momentum's five train without the copy.
    link = training_link(optimizer, tokens=32, input_scale=2.0, variant="mlp_gelu")
    state, peaks, held, s = training_memory(link)
    assert max(peaks) < 150, "peaks %s MB" % ["%.0f" % p for p in peaks]
    answer = s.handle({"op": "label", "index": [0], "text": "0"})   # the panel as it is now
    assert s.matrices["variant"].shape == (64, 1000)   # the MLP's logits, computed each request
    trained, left_out = trained_heads(s)
    if optimizer == "adam":
        assert trained == ["correct", "correct", "softmax_inside"]
        assert left_out[0].startswith("left out at this size: Adam keeps 3 arrays of 1024 × 1000")
        assert "with bias " + left_out[0] in answer["finetune"]["reading"]
        assert "no LayerNorm " + left_out[0] in answer["finetune"]["reading"]
    else:
        assert len(trained) == 5 and not left_out
    assert s.finetune.run.copy_fits is (optimizer == "sgd")


@pytest.mark.parametrize("optimizer, B, D, tokens, scale", [
    ("adam", 2, 768, None, 1.0),   # ViT-B/16's head and a batch of 2: 105 MB (215 MB)
    ("sgd", 64, 1024, None, 1.0), ("momentum", 64, 1024, None, 1.0),
    ("adam", 64, 1024, None, 1.0)])
def test_a_training_request_at_large_sizes_peaks_under_150_mb(optimizer, B, D, tokens, scale):
    # C = 1000: every head's W_head and optimizer buffers, the run's start, the state and its
    # gradient held, and what a request adds (one gradient, and the correct head's optimizer
    # buffers copied until its steps are kept, where that fits); each of the four heads trains
    link = training_link(optimizer, B=B, D=D, tokens=tokens, input_scale=scale)
    state, peaks, held, _ = training_memory(link)
    assert max(peaks) < 150, "peaks %s MB" % ["%.0f" % p for p in peaks]
    # each head copied once per request, with scratch buffers: 161-285 MB at B = 64, D = 1024


@pytest.mark.parametrize("optimizer, tokens, scale", [
    ("sgd", None, 1.0), ("adam", None, 1.0), ("adam", 32, 1.0), ("momentum", 32, 2.0)])
def test_what_a_run_keeps_and_a_request_adds_is_within_the_estimate(optimizer, tokens, scale):
    # The run keeps each trained head's W_head and optimizer buffers, its start and the
    # gradient shown; a request adds one gradient, the correct head's buffers copied when the
    # budget has room for them, and the answer the pre-training MLP's W1 and W2 (open here).
    # pycore.explorer.finetune.memory.need_mb counts the same and decides which heads train:
    # it must not count less than is measured.
    link = training_link(optimizer, tokens=tokens, input_scale=scale, variant="mlp_gelu")
    state, peaks, held, s = training_memory(link)
    heads, copy = len(trained_heads(s)[0]), s.finetune.run.copy_fits
    slots = SLOTS[optimizer]
    kept = (heads * (1 + slots) + 2) * W_LARGEST
    assert held - state < kept + 5, (held, state, kept)
    mlp = (1024 * 1024 + 1024 * 1000) * 8 / MB   # the MLP's W1 and W2, while it is computed
    assert max(peaks) - held < (slots if copy else 0) * W_LARGEST + mlp + 3, (peaks, held)
    inputs = 64 * (tokens or 1) * 1024
    need = training_memory_module.need_mb(inputs, 64, 1024, 1000, optimizer, heads, copy)
    assert max(peaks) <= need < max(peaks) + 5, (peaks, need)


def test_a_failed_answer_rewinds_every_head_bit_for_bit(monkeypatch):
    # Adam, a fifth head (the correct one on rows x 3), the heads rewound by replaying their
    # steps from the run's start: every parameter and optimizer buffer is as a twin's that was
    # never asked for the failed steps
    link = training_link("adam", B=6, D=5, C=4, input_scale=3.0)
    session, twin = Session(), Session()
    for s in (session, twin):
        assert s.handle({"op": "load", "fragment": link})["ok"]
        for _ in range(3):
            assert s.handle({"op": "train", "n": 4})["ok"]
    monkeypatch.setattr(finetune_panel, "reading", lambda run: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        session.handle({"op": "train", "n": 5})
    monkeypatch.undo()
    for s in (session, twin):
        assert s.handle({"op": "train", "n": 2})["ok"]
    curves = [s.finetune.run.curves() for s in (session, twin)]
    assert len(curves[0]) == 5
    for a, b in zip(*curves):
        assert a.losses == b.losses and a.own == b.own and a.stopped == b.stopped
        ta, tb = a.trainer, b.trainer
        assert ta.steps_taken == tb.steps_taken == 14 and ta.optimizer.t == tb.optimizer.t
        for name in ta.params:
            assert ta.params[name].tobytes() == tb.params[name].tobytes(), (a.head, name)
            for x, y in zip(ta.optimizer.state[name], tb.optimizer.state[name]):
                assert x.tobytes() == y.tobytes(), (a.head, name)
    np.testing.assert_array_equal(session.state.W_head, twin.state.W_head)


# ---- training: each request about 0.2 s of work ----------------------------------------------



def vit_b16_session(optimizer="sgd"):
    s = Session()
    assert s.handle({"op": "preset", "name": "vit-b16"})["ok"]
    assert s.handle({"op": "train_set", "name": "optimizer", "value": optimizer})["ok"]
    return s


@pytest.mark.parametrize("optimizer, taken, later", [("sgd", 4, 5), ("momentum", 2, 3),
                                                     ("adam", 1, 1)])
def test_a_train_request_at_vit_b16_size_takes_only_the_steps_that_fit(optimizer, taken, later):
    # the first request of a run also starts its four heads and makes their optimizer
    # buffers: it has room for fewer steps
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
@pytest.mark.parametrize("heads", [1, 4, 5])
def test_the_steps_chosen_fit_the_budget_and_never_exceed_what_was_asked(B, D, C, optimizer,
                                                                         heads):
    # The estimate decides, not a clock: the same request takes the same steps everywhere.
    # A request holds more than the budget only for the one step it cannot do without: Step's,
    # or a run's next step where a step alone is over the budget. The request of Play that
    # starts a run (its heads' starts and their optimizer buffers) takes no step rather than
    # the start and a step together when they do not fit.
    heads = training_memory_module.plan(B * D, B, D, C, optimizer, heads)[0]   # those trained
    budget = finetune.REQUEST_WORK_MS
    step = finetune.step_cost_ms(B, D, C, optimizer, heads)
    for fresh in (True, False):
        fit = finetune.steps_that_fit(B, D, C, optimizer, heads, 500, fresh=fresh)
        work = finetune.request_overhead_ms(B, D, C, optimizer, heads, fresh) + fit * step
        assert (0 if fresh else 1) <= fit <= 500
        assert work <= budget or (fit == 1 and not fresh)
    for fresh in (False, True):   # Step: one step, even the run's first
        assert finetune.steps_that_fit(B, D, C, optimizer, heads, 1, fresh=fresh) == 1
    assert finetune.steps_that_fit(B, D, C, optimizer, heads, 2) == min(
        2, finetune.steps_that_fit(B, D, C, optimizer, heads, 500))


def test_the_first_request_counts_the_heads_start_and_their_optimizer_buffers():
    # what a run's first request does besides a later one's work, in the estimate: each head's
    # start (its W_head copied, its first loss) and the buffers its optimizer makes
    extra = [finetune.request_overhead_ms(64, 1024, 1000, o, 4, fresh=True)
             - finetune.request_overhead_ms(64, 1024, 1000, o, 4)
             for o in ("sgd", "momentum", "adam")]
    assert 0 < extra[0] < extra[1] < extra[2]
    # at the largest sizes only the start fits: Play's first request takes no step
    assert finetune.steps_that_fit(64, 1024, 1000, "sgd", 4, 500, fresh=True) == 0


def test_a_run_started_without_a_step_trains_bit_for_bit_as_one_started_with_it():
    # the optimizer buffers made at the start (written once, so the first step does not pay
    # for new memory) are the zeros the first step would have made
    from pycore.explorer.finetune.run import Run
    s = Session()
    assert s.handle({"op": "load", "fragment": training_link("adam", B=6, D=5, C=4,
                                                             input_scale=3.0)})["ok"]
    early, plain = Run(1, s.state), Run(2, s.state)
    for c in early.curves():
        c.trainer.optimizer.make_buffers(c.trainer.params)
    early.advance(7), plain.advance(7)
    for a, b in zip(early.curves(), plain.curves()):
        assert a.losses == b.losses
        assert a.trainer.params["W_head"].tobytes() == b.trainer.params["W_head"].tobytes()


@pytest.mark.parametrize("start", ["current", "zero"])
def test_play_starts_a_run_at_the_largest_sizes_without_a_step_and_goes_on_from_there(start):
    # B = 64, D = 1024, C = 1000: the start of four heads and one step do not fit together in
    # the budget, so Play's first request only starts the run; Step still takes its step
    s = Session()
    link = json.loads(training_link("sgd")[len("#state="):])
    link["train"]["start"] = start
    assert s.handle({"op": "load", "fragment": "#state=" + json.dumps(link)})["ok"]
    before, before_link = s.state.W_head.copy(), s.link()
    answer = s.handle({"op": "train", "n": 2})
    assert answer["ok"], answer["error"]
    run, trained = answer["finetune"]["run"], answer["finetune"]["trained"]
    assert trained["taken"] == 0 and run["steps"] == 0 and len(run["loss"]) == 1
    assert trained["text"].startswith("Started the run (each head at step 0)")
    assert all(len(c["loss"]) == 1 for c in run["compare"])
    assert answer["finetune"]["status"].startswith("Step 0 of this run")
    json.dumps(answer, allow_nan=False)
    if start == "current":   # nothing changed: the link still has the W_head's recipe
        np.testing.assert_array_equal(s.state.W_head, before)
        assert s.link() == before_link
    else:                    # at the run's start, as Reset puts it
        assert not s.state.W_head.any()
    # Play's next request goes on with that run, from its step 0
    answer = s.handle({"op": "train", "n": 2, "run": run["id"]})
    assert answer["ok"], answer["error"]
    assert answer["finetune"]["run"]["id"] == run["id"]
    assert answer["finetune"]["trained"]["taken"] == 1
    assert answer["finetune"]["run"]["loss"][0] == run["loss"][0]
    assert len(answer["finetune"]["run"]["loss"]) == 2
    # Step on a new run takes its step at once
    assert s.handle({"op": "train_reset"})["ok"]
    answer = s.handle({"op": "train", "n": 1})
    assert answer["finetune"]["trained"]["taken"] == 1 and answer["finetune"]["run"]["steps"] == 1


def test_the_estimate_grows_with_every_size_and_the_optimizer():
    base = finetune.step_cost_ms(2, 768, 1000, "sgd", 4)
    assert finetune.step_cost_ms(64, 768, 1000, "sgd", 4) > base
    assert finetune.step_cost_ms(2, 1024, 1000, "sgd", 4) > base
    assert finetune.step_cost_ms(2, 768, 1000, "sgd", 1) < base
    assert (finetune.step_cost_ms(2, 768, 1000, "sgd", 4)
            < finetune.step_cost_ms(2, 768, 1000, "momentum", 4)
            < finetune.step_cost_ms(2, 768, 1000, "adam", 4))


def test_the_link_of_a_trained_w_head_is_not_spelled_out_to_find_it_too_long():
    # After a step the ViT-B/16 preset's W_head (768 x 1000) has no recipe: each of its
    # numbers takes at least two characters, so the link is over LINK_MAX without writing it
    s = vit_b16_session("sgd")
    assert s.handle({"op": "train", "n": 1})["ok"]
    answer, peak, _ = measured(s, {"op": "link"})
    link = answer["link"]
    assert link["fragment"] is None and "768,000 typed-in numbers" in link["note"]
    assert "more than 100 kB" in link["note"]
    assert peak < 2 * MB, "%.0f MB" % (peak / MB)   # spelled out: 58 MB


def test_the_request_benchmark_times_each_kind_of_train_request():
    # benchmarks/training_bench.py --requests at a small size: each kind of request is timed,
    # with the steps it took and the estimate that chose them (no timing is checked here)
    import importlib.util
    import os
    import time
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "benchmarks", "training_bench.py")
    spec = importlib.util.spec_from_file_location("training_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    times = bench.request_times(training_link("sgd", B=4, D=8, C=3), time.perf_counter, later=2)
    assert sorted(times) == sorted(bench.REQUEST_KINDS)
    assert [len(times[k]) for k in bench.REQUEST_KINDS] == [1, 1, 2, 1]
    for kind, rows in times.items():
        for ms, taken, estimate in rows:
            assert ms >= 0 and estimate > 0
            assert (taken == 1) if kind == "Step, new run" else (1 <= taken <= 500)
