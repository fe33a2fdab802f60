"""Hostile and mistaken requests, each answered: a refused request changes nothing and says why in words; every answer is strict JSON;
a refusal quotes little of what was sent; a cleared cell after a refused entry puts the value in
use back."""
import importlib.util
import json
import os

import numpy as np
import pytest

from pycore.explorer import encode_fragment, state_to_json
from pycore.explorer.finetune import section as finetune_panel
from pycore.explorer.session import Session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_bridge():
    spec = importlib.util.spec_from_file_location("bridge", os.path.join(ROOT, "web", "py", "bridge.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def loaded(state):
    session = Session()
    answer = session.handle({"op": "load", "fragment": "#state=" + json.dumps(state)})
    assert answer["ok"] and answer["error"] is None, answer["error"]
    return session


def strict(answer):
    """The answer as the bridge sends it (no NaN or infinity), read back."""
    return json.loads(json.dumps(answer, allow_nan=False))


def snapshot(session):
    return json.dumps(state_to_json(session.state)), encode_fragment(session.state)


# ---- case 1: training at an input scale that overflows ---------------------------------------

HUGE_SCALE = {"W_head": [[1, 2], [3, 4]], "cls": [[2, -1]], "train": {"input_scale": 1e308}}


def test_training_at_an_overflowing_input_scale_trains_and_says_which_head_stopped():
    """The reported link: the correct head on rows scaled by 1e308 cannot start (it had no loss,
    and reading its last one raised after W_head was trained). The run trains the correct head
    on the rows as they are, the answer says which heads could not start, and the link is the
    trained state's."""
    session = loaded(HUGE_SCALE)
    W0 = session.state.W_head.copy()
    for steps in (1, 5):
        answer = strict(session.handle({"op": "train", "n": steps}))
        assert answer["ok"] and answer["error"] is None
        assert answer["link"]["fragment"] == encode_fragment(session.state)
    assert not np.array_equal(session.state.W_head, W0)
    section = answer["finetune"]
    assert section["run"]["steps"] == 6
    assert section["reading"].startswith("After 6 steps (SGD, lr 0.1): correct head ")
    assert "correct head (inputs \u00d7 1e+308) could not start" in section["reading"]
    stopped = {c["head"]: c["stopped"] for c in section["run"]["compare"]}
    assert all("could not start" in why for why in stopped.values()), stopped


def test_a_training_step_whose_answer_fails_is_taken_back(monkeypatch):
    """Should the answer to a Step fail (a bug), the step is taken back: the state, the link and
    the run are as before, so the bridge's "Internal error" (ok: false) is true to its word, and
    the next Step continues the run as if the failed one had never been asked for."""
    session, twin = Session(), Session()
    for s in (session, twin):
        assert s.handle({"op": "preset", "name": "finetune"})["ok"]
        assert s.handle({"op": "train", "n": 2})["ok"]
    before, run = snapshot(session), session.finetune.run

    def broken(run):
        raise RuntimeError("a bug in the reading")

    monkeypatch.setattr(finetune_panel, "reading", broken)
    with pytest.raises(RuntimeError):
        session.handle({"op": "train", "n": 3})
    monkeypatch.undo()
    assert snapshot(session) == before
    assert session.finetune.run is run and run.steps == 2 and len(run.main.losses) == 3
    np.testing.assert_array_equal(session.trace.logits, twin.trace.logits)
    a, b = session.handle({"op": "train", "n": 3}), twin.handle({"op": "train", "n": 3})
    assert a["finetune"]["run"] == b["finetune"]["run"]
    assert a["link"] == b["link"]


def test_the_bridge_answers_a_failed_step_with_nothing_changed(monkeypatch):
    bridge = load_bridge()
    assert json.loads(bridge.answer(json.dumps({"op": "preset", "name": "finetune"}))[0])["ok"]
    before = snapshot(bridge._session)
    monkeypatch.setattr(finetune_panel, "reading", lambda run: 1 / 0)
    answer = json.loads(bridge.answer(json.dumps({"op": "train", "n": 1}))[0])
    assert answer["ok"] is False and "Internal error" in answer["error"]["message"]
    assert snapshot(bridge._session) == before


# ---- case 2: a contribution chart beyond float64 -----------------------------------------------

# 30 features: h_hat is [sqrt 2, -1/sqrt 2, -1/sqrt 2] ten times, W_head 1e308 in each row: the
# ten largest terms (+1.41e308 each) and the other twenty (-0.71e308 each) cancel, so the logit
# is 0; the twenty summed, the chart's "rest" bar, are -1.41e309, beyond float64. Whether the
# logits' own sums overflow on the way depends on the BLAS's order: the head then redoes them
# scaled (vit/head.py), so both links load on every machine.
REST_BEYOND = {"W_head": [[1e308]] * 30, "cls": [[2, -1, -1] * 10]}
# 16 features whose "rest" (6 terms) is -1.76e308: within float64, but a plain sum of the terms
# in their order overflows on the way.
REST_WITHIN = {"W_head": [[s * 1e308] for s in (1, 1, 1, -1, 1, 1, 1, 1, 1, 1, 1, -1, 1, -1, 1, 1)],
               "cls": [[2.2, -0.8, -0.9, -0.8, -0.6, 1.4, -0.1, -0.5, 1.8, 0.2, -1.6, 1.0, -1.6,
                        -0.2, 1.3, 1.2]]}


def test_a_rest_bar_beyond_float64_is_said_in_words_and_every_edit_stays_answered():
    session = loaded(REST_BEYOND)
    # the terms cancel: 0, up to a few roundings of terms near 1.4e308 (one ulp is 2.0e292),
    # which depend on the order in which this machine's BLAS sums them
    assert abs(session.trace.logits[0, 0]) < 2 ** 975
    chart = strict(session.handle({"op": "contributions", "b": 0, "c": 0, "select": True}))["contributions"]
    rest = chart["bars"][-1]
    assert rest["label"] == "the other 20" and rest["value"] is None
    assert rest["text"] == "-beyond float64" and "beyond float64" in chart["note"]  # -1.41e309
    assert [bar["value"] for bar in chart["bars"][:10]] == [pytest.approx(2 ** 0.5 * 1e308)] * 10
    assert chart["total_text"] == "0.0000"          # the chart's own sum, in NumPy's order
    # The selection follows every edit: each is applied, and answered ok in strict JSON.
    for text in ("-1.5", "-0.5"):
        answer = strict(session.handle({"op": "edit", "key": "cls", "index": [0, 2], "text": text}))
        assert answer["ok"] and answer["value"] == float(text)
        assert answer["contributions"]["b"] == 0
        assert answer["link"]["fragment"] == encode_fragment(session.state)


def test_a_rest_bar_that_a_plain_sum_overflows_gets_its_value():
    session = loaded(REST_WITHIN)
    chart = strict(session.handle({"op": "contributions", "b": 0, "c": 0}))["contributions"]
    terms = session.trace.h_hat[0] * session.state.W_head[:, 0]
    order = np.argsort(-np.abs(terms), kind="stable")
    rest = chart["bars"][-1]
    assert rest["label"] == "the other 6"
    assert rest["value"] == pytest.approx(sum(terms[order[10:]] / 2.0 ** 16) * 2.0 ** 16, rel=1e-12)
    assert rest["value"] == pytest.approx(-1.755e308, rel=1e-3)
    assert chart["total_text"] == chart["logit_text"] == "6.4209e+307"


def test_the_bridge_sends_the_chart_beyond_float64_as_json():
    bridge = load_bridge()
    bridge.answer(json.dumps({"op": "load", "fragment": "#state=" + json.dumps(REST_BEYOND)}))[0]
    for request in ({"op": "contributions", "b": 0, "c": 0, "select": True},
                    {"op": "edit", "key": "W_head", "index": [3, 0], "text": "5e307"}):
        answer = json.loads(bridge.answer(json.dumps(request))[0])
        assert answer["ok"] and answer.get("error") is None, answer


# ---- case 7: refusals quote little of what was sent ---------------------------------------------

BIG_TEXT = "x" * 5000000
BIG_LIST = list(range(1000000))


@pytest.mark.parametrize("request_", [
    {"op": "edit", "key": BIG_TEXT, "index": [0, 0], "text": "1"},
    {"op": "edit", "key": "cls", "index": BIG_LIST, "text": "1"},
    {"op": "edit", "key": "cls", "index": [[[[[[BIG_TEXT]]]]]] * 1000, "text": "1"},
    {"op": "paste", "key": BIG_TEXT, "index": [0, 0], "text": "1"},
    {"op": "paste", "key": "W_head", "index": BIG_LIST, "text": "1"},
    {"op": "paste", "key": "cls", "index": [0, 0], "text": BIG_TEXT},
    {"op": BIG_TEXT},
    {"op": "equations", BIG_TEXT: 1},
    {"op": "preset", "name": BIG_TEXT},
    {"op": "mode", "mode": BIG_TEXT},
    {"op": "mode", "mode": BIG_LIST},
    {"op": "option", "name": BIG_TEXT, "value": 1},
    {"op": "option", "name": "sample", "value": BIG_LIST},
    {"op": "export", "format": BIG_TEXT},
    {"op": "train_set", "name": "optimizer", "value": BIG_TEXT},
    {"op": "train_set", "name": "lr", "value": BIG_TEXT},
    {"op": "label", "index": BIG_LIST, "text": "1"},
    {"op": "contributions", "b": BIG_TEXT, "c": 0},
    {"op": "digit", "images": [BIG_TEXT]},
    {"op": "resize", "B": BIG_TEXT},
], ids=lambda r: "-".join("%s=%s" % (k if len(k) <= 20 else "%d-character-key" % len(k), type(v).__name__)
                          for k, v in r.items()))
def test_a_refusal_quotes_at_most_about_100_characters_of_what_was_sent(request_):
    session = Session()
    before = snapshot(session)
    answer = session.handle(request_)
    text = json.dumps(answer, allow_nan=False)
    assert answer["ok"] is False and len(text) < 500, text[:300]
    message = answer["error"]["message"]
    longest = max(len(run) for run in message.replace("x" * 20, "\0").split("\0")) if message else 0
    assert message.count("x") <= 100 and len(message) < 400 and longest
    assert snapshot(session) == before


def test_a_link_with_a_long_unknown_key_is_refused_briefly():
    session = Session()
    state = {"W_head": {"preset": "random", "seed": 1, "shape": [4, 3], "scale": 1.0,
                        "k" * 90000: 1}, "cls": [[1, 2, 3, 4]]}
    answer = session.handle({"op": "load", "fragment": "#state=" + json.dumps(state)})
    assert answer["ok"] and "unknown key 'kkkk" in answer["error"]["message"]
    assert len(answer["error"]["message"]) < 400


@pytest.mark.parametrize("text, says", [
    ("not json", "The request is not JSON: Expecting value: line 1 column 1 (char 0)."),
    ('{"op": "equations"', "The request is not JSON: Expecting ',' delimiter"),
    ('{"op": "equations"} {}', "The request is not JSON: Extra data"),
    ('{"op": "resize", "B": %s}' % ("7" * 5000), "The request holds a number 5,000 characters long"),
    ('{"op": "edit", "key": "cls", "index": [%s, 0], "text": "1"}' % ("1" * 4301),
     "The request holds a number 4,301 characters long"),
    ('{"op": "option", "name": "sample", "value": %s}' % ("9" * 100000), "100,000 characters long"),
    ("[" * 100000 + "]" * 100000, "nests arrays or objects 100,000 deep"),
    # a few thousand levels overflow the browser's WebAssembly stack: refused before parsing
    ('{"op": "equations", "x": %s}' % ("[" * 1900 + "]" * 1900),
     "The request nests arrays or objects 1,901 deep; the page reads JSON at most 32 deep"),
    # a million numbers cost Python a million objects: refused from their commas, before parsing
    ('{"op": "equations", "x": [%s]}' % ",".join(["1"] * 1000000),
     "The request holds about 1,000,001 values; the page reads JSON of at most 65,536"),
    ('{"op": "digit_preview", "images": %s}' % json.dumps([[[0] * 8] * 8] * 100000),
     "The request holds about 6,400,001 values"),
    # commas inside strings are not values
    ('{"op": "equations", "x": "%s"}' % ("," * 100000), "The request equations has no field text 'x'."),
], ids=["not-json", "cut-short", "extra-data", "a-5000-digit-number", "a-4301-digit-index",
        "a-100000-digit-value", "nested-100000-deep", "nested-1900-deep", "a-million-numbers",
        "6400001-values", "commas-in-a-string"])  # (the texts themselves are up to 21 MB)
def test_request_text_that_is_not_usable_json_is_refused_in_words(text, says):
    bridge = load_bridge()
    before = snapshot(bridge._session)
    out = bridge.answer(text)[0]
    answer = json.loads(out)
    assert answer["ok"] is False and says in answer["error"]["message"], answer
    assert "Internal error" not in answer["error"]["message"] and len(out) < 400
    assert snapshot(bridge._session) == before
    assert Session().handle_json(text) == answer


# ---- case 8: an empty entry after a refused one --------------------------------------------------

def edit(session, text, commit=False):
    return session.handle({"op": "edit", "key": "cls", "index": [1, 2], "text": text,
                           "commit": commit})


def test_clearing_a_cell_after_a_refused_entry_puts_the_value_in_use_back():
    """Type "nan" and commit it (refused: the cell keeps -1), then clear the cell and commit the
    empty text: the answer names the value in use and says, not as "incomplete", that an empty
    cell is no number: exactly what clearing a cell that held a valid number answers. (The
    page must send the commit for Enter in the bottom row too: web/js/grid/entry.js.)"""
    session, fresh = Session(), Session()
    before = snapshot(session)
    for text in ("n", "na", "nan"):
        assert edit(session, text)["error"]["incomplete"] is False
    refused = edit(session, "nan", commit=True)
    assert refused["value"] == -1.0 and "NaN" in refused["error"]["message"]
    typing = edit(session, "")
    assert typing["value"] == -1.0 and typing["error"]["incomplete"] is True
    left = edit(session, "", commit=True)
    assert left == {"ok": True, "unchanged": True, "value": -1.0,
                    "error": {"message": "cls[1,2]: empty: type a number", "key": "cls",
                              "index": [1, 2], "incomplete": False}}
    edit(fresh, "")
    assert edit(fresh, "", commit=True) == left
    assert snapshot(session) == before
    # the same within one entry, with no commit between the refused text and the empty one
    for text in ("n", "na", "nan", ""):
        edit(session, text)
    assert edit(session, "", commit=True) == left
    assert snapshot(session) == before


# ---- case 4: keystrokes after a paste into a preset's matrix ----------------------------------

def block(rows, cols, seed=0):
    values = np.round(np.random.RandomState(seed).standard_normal((rows, cols)) * 0.02, 4)
    return "\n".join("\t".join(repr(float(v)) for v in row) for row in values)


def test_keystrokes_after_a_paste_into_a_preset_never_spell_out_the_link(monkeypatch):
    """Pasted cells of a preset's matrix are recipe edits: they count as typed-in numbers, so
    past SYNC_LINK_NUMBERS of them a keystroke's link is pending and the link is not spelled out
    (a whole ViT-B/16 W_head pasted: 768,000 edits, a 31 MB link rebuilt per keystroke, 3.4 s);
    asked for once typing pauses, a link that is surely too long is not spelled out either."""
    from pycore.explorer.state import link_answer as session_module
    calls = []
    encode = session_module.encode_fragment
    monkeypatch.setattr(session_module, "encode_fragment", lambda s: calls.append(1) or encode(s))
    s = Session()
    assert s.handle({"op": "preset", "name": "vit-b16"})["link"]["fragment"]
    assert calls == [1]
    answer = s.handle({"op": "paste", "key": "W_head", "index": [0, 0], "text": block(40, 30)})
    assert len(s.state.generated["W_head"].edits) == 1200
    assert answer["link"] == {"fragment": None, "pending": True, "note": None}
    for k in range(5):
        answer = s.handle({"op": "edit", "key": "W_head", "index": [100, k], "text": str(k + 0.5)})
        assert answer["link"]["pending"] is True
    assert calls == [1]     # no keystroke spelled the link out
    link = s.handle({"op": "link"})["link"]      # typing paused: the page asks for it
    assert calls == [1, 1] and link["fragment"] == encode(s.state)
    # 13,000 edits: at 8 characters or more each, past LINK_MAX without spelling it out
    s.handle({"op": "paste", "key": "W_head", "index": [200, 0], "text": block(130, 100, 1)})
    link = s.handle({"op": "link"})["link"]
    assert calls == [1, 1] and link["fragment"] is None and link["pending"] is False
    assert "more than 100 kB" in link["note"] and len(encode(s.state)) > 100000


# ---- pastes: linear in their length, and a block too large refused before it is parsed ------

@pytest.mark.parametrize("text, pasted", [
    ("\n" * 1000000 + "1\t2", [[1.0, 2.0]]),                        # quadratic once: 21.9 s
    ("\r\n" * 300000 + "1 2\r\n3 4" + "\r\n" * 300000, [[1.0, 2.0], [3.0, 4.0]]),
    (" " * 3000000 + "[[1, 2], [3, 4]]", [[1.0, 2.0], [3.0, 4.0]]),
], ids=["1M blank lines", "CRLF around", "3M spaces before a literal"])
def test_blank_lines_around_a_pasted_block_cost_one_pass(text, pasted):
    s = Session()
    answer = s.handle({"op": "paste", "key": "W_head", "index": [0, 0], "text": text})
    assert answer["ok"], answer["error"]  # its time (one pass): benchmarks/refusal_bench.py
    np.testing.assert_array_equal(s.state.W_head[:len(pasted), :2], pasted)


@pytest.mark.parametrize("text, shape", [
    ("1\t2\t3\n" * 2000000, "2,000,000 \u00d7 3"),                 # 12 MB of rows
    ("1\t2\t3\t4\t5\t6\n" * 2, "2 \u00d7 6"),
    ("[" + "[1, 2], " * 1500000 + "[1, 2]]", "1,500,001 \u00d7 2"),
    ("[" + ", ".join(["1"] * 2000000) + "]", "1 \u00d7 2,000,000"),
], ids=["tall table", "wide table", "tall literal", "wide literal"])
def test_a_block_larger_than_its_grid_is_refused_before_its_cells_are_read(monkeypatch, text, shape):
    """A 10 MB block pasted into the worked example's 4 x 3 W_head parsed every cell (5.0 s in the
    browser) before saying it does not fit; its size is known from its rows and its first row."""
    from pycore.explorer.state import cells
    parsed = []
    cell_problem = cells._cell_problem
    monkeypatch.setattr(cells, "_cell_problem", lambda t: parsed.append(t) or cell_problem(t))
    s = Session()
    before = snapshot(s)
    answer = s.handle({"op": "paste", "key": "W_head", "index": [0, 0], "text": text})
    assert not answer["ok"] and parsed == []
    message = answer["error"]["message"]
    assert "the pasted block is %s but from W_head[0,0] only 4 \u00d7 3 cells fit" % shape in message
    assert "nothing was pasted" in message and snapshot(s) == before


def test_a_refused_reset_resets_nothing():
    s = Session()
    s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "7", "commit": True})
    before = snapshot(s)
    answer = s.handle({"op": "reset", "fragment": 5})
    assert not answer["ok"] and "must be text" in answer["error"]["message"]
    assert snapshot(s) == before and s.state.W_head[0, 0] == 7
