"""The answer's sections read the session and change nothing (docs/architecture.md, "Layers"):
every section builder, run on the session's snapshot after many kinds of request, leaves the
session exactly as it was; what an answer changes, the session applies itself."""
import pickle

import pytest

from pycore.explorer.panels import sections
from pycore.explorer.session import Session

DIGIT = [[[0] * 3 + [16] * 2 + [0] * 3] * 8]


def fingerprint(session):
    """Everything the session keeps, as bytes: its state (every array, option, label, recipe),
    its trace and matrices, what it last sent, the selected logit, k, the sections deferred,
    the fine-tuning panel (its run, curves, notices) and the cell being typed in. The
    computed's caches of W_head's colour range and of the page's head's trace are left out:
    asking for them fills them, and they hold nothing the answers do not already follow."""
    computed = session.computed
    kept = {k: v for k, v in vars(session).items() if k != "computed"}
    return pickle.dumps((kept, computed.state, computed.trace, computed.matrices,
                         computed.exact, computed._traced), protocol=4)


def after(requests):
    s = Session()
    for request in requests:
        answer = s.handle(request)
        assert answer["ok"], (request, answer.get("error"))
    return s


LOAD = {"op": "load", "fragment": ""}
CASES = {
    "worked": [LOAD],
    "edited": [LOAD, {"op": "edit", "key": "cls", "index": [0, 1], "text": "2.5"},
               {"op": "edit", "key": "W_head", "index": [1, 0], "text": "-1"}],
    "typing": [LOAD, {"op": "edit", "key": "cls", "index": [0, 0], "text": "1e"}],
    "selected, then resized away": [
        LOAD, {"op": "contributions", "b": 1, "c": 2, "select": True},
        {"op": "resize", "B": 1}],
    "a mistake and a variant": [
        LOAD, {"op": "option", "name": "mistake", "value": "last_position"},
        {"op": "option", "name": "variant", "value": "mlp_tanh"}],
    "walk-through": [LOAD, {"op": "option", "name": "walk", "value": 6}],
    "top-k": [{"op": "preset", "name": "random", "seed": 2}, {"op": "resize", "C": 30},
              {"op": "option", "name": "top_k", "value": 3}],
    "encoder": [{"op": "preset", "name": "encoder"},
                {"op": "edit", "key": "encoder_output", "index": [1, 2, 0], "text": "4"}],
    "trained": [{"op": "preset", "name": "finetune"}, {"op": "train", "n": 3}],
    "a setting's notice": [{"op": "preset", "name": "finetune"}, {"op": "train", "n": 2},
                           {"op": "train_set", "name": "optimizer", "value": "adam"}],
    "labelled": [LOAD, {"op": "label", "index": [0], "text": "2"}],
    "digits": [{"op": "digit", "images": DIGIT}],
    "deferred": [LOAD, {"op": "edit", "key": "cls", "index": [0, 0], "text": "3",
                        "later": ["stats", "finetune", "prediction"]}],
    "vit-b16": [{"op": "preset", "name": "vit-b16"}],
}


class ReadOnly(object):
    """An object's attributes to read, none to write (the fine-tuning panel, for builders)."""

    def __init__(self, target):
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_target"), name)

    def __setattr__(self, name, value):
        raise AttributeError("a builder wrote %s" % name)


def mid_request(s, stale):
    """The session as a request leaves it before its answer is built: steps just taken (the
    line saying so not yet said), and a selected logit that a resize took away; ``stale``: then
    a label changed, so the run no longer describes the state."""
    s.finetune.train(s.computed, 2)
    s.selected_logit = (s.state.B, 0)
    if stale:
        s.finetune.label(s.state, [0], str((s.state.labels[0] + 1) % s.state.C), commit=True)
    return s


@pytest.mark.parametrize("requests", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("live", [False, True], ids=["edit", "panel's own"])
@pytest.mark.parametrize("midway", [None, False, True], ids=["between", "midway", "stale run"])
def test_building_every_section_changes_nothing_in_the_session(requests, live, midway):
    s = after(requests)
    if midway is not None:
        mid_request(s, stale=midway)
    before = fingerprint(s)
    snap = s.snapshot(live=live)._replace(finetune=ReadOnly(s.finetune))
    for section in sections.SECTIONS:   # each builder alone ...
        section.build(snap)
        assert fingerprint(s) == before, section.name
    answer, changes = sections.build_answer(snap, {sections.STATE})  # ... and all together
    assert fingerprint(s) == before
    assert answer["ok"] and "shape" in answer


def test_the_snapshot_cannot_be_written():
    snap = after([LOAD]).snapshot()
    with pytest.raises(AttributeError):
        snap.k = 3
    with pytest.raises(TypeError):
        snap.sent["labels"] = None


def test_what_an_answer_changes_the_session_applies():
    """The changes builders return are applied by the session: the sections sent only when
    they change are remembered, dW_head is kept, a selection a resize took away ends, and the
    fine-tuning panel's line about the steps taken is said once."""
    s = after([{"op": "preset", "name": "finetune"},
               {"op": "contributions", "b": 3, "c": 1, "select": True}])
    assert "labels" in s.sent and "dW_head" in s.matrices
    assert s.handle({"op": "train", "n": 1})["finetune"]["trained"]["taken"] == 1
    assert s.finetune.trained is None
    assert s.handle({"op": "resize", "B": 2})["contributions"] is None
    assert s.selected_logit is None
