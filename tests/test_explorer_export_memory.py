"""Exports within the 150 MB budget (docs/interface.md, "Limits"): each export format at the
largest state, beside a training run and without one, peaks under 150 MB of Python memory (what
``handle`` draws, then what the bridge's ``answer_json`` draws to send it); an export that would
pass the budget is refused before anything is made, changes nothing, and names the format and
what to do instead. Memory is measured with tracemalloc, as tests/test_explorer_limits.py does."""
import base64
import hashlib
import io
import json
import tracemalloc

import numpy as np
import pytest

from test_explorer_limits import MB, training_link

from pycore.explorer.export import memory as export_memory
from pycore.explorer.errors import StateError
from pycore.explorer.session import Session, answer_json
from pycore.explorer.state.explorer_state import ExplorerState

FORMATS = ["json", "numpy", "csv", "npz", "training"]


def export_peak(session, fmt):
    """(answer, peak MB of Python memory while the session answered the export and the bridge
    made its JSON); tracemalloc must be running since before the session was made."""
    tracemalloc.reset_peak()
    answer = session.handle({"op": "export", "format": fmt})
    text = answer_json(answer)
    del text
    return answer, tracemalloc.get_traced_memory()[1] / MB


def look(session):
    """What a refusal must leave as it was: the state's arrays (as digests, so that nothing
    big is held while the export is measured) and its link."""
    s = session.state
    return tuple(hashlib.sha256(np.ascontiguousarray(a).data).hexdigest() + str(a.shape)
                 for a in (s.W_head, s.inputs)) + (json.dumps(session.handle({"op": "link"})),)


def test_every_export_beside_an_adam_run_at_the_largest_state_peaks_under_150_mb():
    # The largest state (64 x 32 x 1024 inputs, a 1024 x 1000 W_head), trained by Adam as in
    # test_training_at_the_largest_state_with_every_head_peaks_under_150_mb: the run holds
    # ~120 MB. The state as JSON peaked at 215 MB, as NumPy code 185 MB, as .npz 195 MB (and
    # more once the bridge made the answer's JSON).
    tracemalloc.start()
    try:
        s = Session()
        assert s.handle({"op": "load", "fragment": training_link(
            "adam", tokens=32, input_scale=2.0, variant="mlp_gelu")})["ok"]
        for _ in range(2):
            assert s.handle({"op": "train", "n": 500})["ok"]
        answers, peaks = {}, {}
        for fmt in FORMATS:
            before = look(s)
            answers[fmt], peaks[fmt] = export_peak(s, fmt)
            if not answers[fmt]["ok"]:
                assert before == look(s), fmt
        run, trained_logits = s.finetune.run, s.trace.logits.copy()
        needs = {fmt: export_memory.need_mb(s.state, fmt, run, run) for fmt in FORMATS}
        del run
        # after Reset the run's heads are let go of, and the state's exports fit
        assert s.handle({"op": "train_reset"})["ok"]
        after = {fmt: export_peak(s, fmt) for fmt in ("json", "numpy", "npz")}
    finally:
        tracemalloc.stop()
    assert max(peaks.values()) < 150, peaks
    refused = sorted(f for f in FORMATS if not answers[f]["ok"])
    assert refused == ["json", "npz", "numpy"], refused
    for fmt in refused:   # the estimate refused them: it counts more than the run holds
        assert needs[fmt] > 150, needs
        message = answers[fmt]["error"]["message"]
        assert message.startswith(export_memory.NAMES[fmt]), message
        assert "over the 150 MB" in message and "Nothing was exported" in message
        assert "Reset in \u201cFine-tune the head\u201d" in message, message
    for fmt in ("csv", "training"):   # small texts: answered, within their estimate
        assert peaks[fmt] <= needs[fmt], (fmt, peaks[fmt], needs[fmt])
    logits = np.loadtxt(io.StringIO(answers["csv"]["export"]["text"]), delimiter=",",
                        skiprows=1)[:, 1:]
    assert np.array_equal(logits, trained_logits)   # bit for bit
    for fmt, (answer, peak) in after.items():
        assert answer["ok"], answer["error"]
        assert peak < 150, (fmt, peak)
    npz = np.load(io.BytesIO(base64.b64decode(after["npz"][0]["export"]["text"])))
    assert np.array_equal(npz["W_head"], s.state.W_head)
    assert np.array_equal(npz["encoder_output"], s.state.inputs)


def test_the_state_as_text_spelled_out_at_the_largest_size_is_refused_for_the_npz():
    # Without a run: a dense 32 x 64 x 1024 encoder output and 1024 x 1000 W_head are 3.1M
    # numbers, up to 81 MB of text held three times (the JSON export peaked at 318 MB); the
    # .npz (8 bytes a number, in base64) fits and keeps every value
    r = np.random.RandomState(0)
    state = ExplorerState(r.standard_normal((1024, 1000)),
                          encoder_output=r.standard_normal((32, 64, 1024)))
    for fmt in ("json", "numpy"):
        with pytest.raises(StateError) as err:
            export_memory.check(state, fmt)
        message = str(err.value)
        assert message.startswith(export_memory.NAMES[fmt] + " writes up to 81 MB of text")
        assert "\u201cState as .npz\u201d keeps every value bit for bit" in message
        assert "Reset" not in message   # no run to let go of
    export_memory.check(state, "npz")
    export_memory.check(state, "csv")
    # the W_head alone spelled out (the inputs a preset's recipe) fits
    small = ExplorerState(r.standard_normal((1024, 1000)),
                          encoder_output=r.standard_normal((2, 4, 1024)))
    export_memory.check(small, "json")


def test_the_text_estimate_is_at_least_the_text():
    # the bound holds for the longest numbers repr writes, and for a few of each kind
    r = np.random.RandomState(1)
    W = r.standard_normal((40, 30)) * 10.0 ** r.randint(-320, 308, (40, 30))
    W[0, :3] = [-2.2250738585072014e-308, -5e-324, -1.7976931348623157e+308]
    state = ExplorerState(W, cls=-np.abs(r.standard_normal((5, 40))) / 3)
    s = Session()
    assert s.handle({"op": "load", "fragment": "#state=" + json.dumps(
        {"W_head": W.tolist(), "cls": state.inputs.tolist()})})["ok"]
    for fmt in ("json", "numpy", "csv", "npz"):
        text = s.handle({"op": "export", "format": fmt})["export"]["text"]
        assert len(text) <= export_memory.text_chars(s.state, fmt) + 1000, fmt
