"""An answer checked against the protocol's names (pycore/explorer/protocol.py), for the tests:
the shipped page never checks its own answers this way."""
from pycore.explorer.protocol import ANSWER, FINETUNE, HEATMAP


def check_answer(answer):
    """Raise AssertionError unless `answer` uses only the protocol's keys.

    Examples
    --------
    >>> check_answer({"ok": True, "shape": {"mode": "cls", "B": 1, "D": 2, "C": 1, "N1": None}})
    >>> check_answer({"ok": True, "shapes": {}})
    Traceback (most recent call last):
    ...
    AssertionError: answer keys outside the protocol: ['shapes']
    """
    unknown = set(answer) - set(ANSWER)
    assert not unknown, "answer keys outside the protocol: %s" % sorted(unknown)
    assert isinstance(answer.get("ok"), bool), "every answer says ok"
    for spec in (answer.get("heatmaps") or {}).values():
        extra = set(spec) - set(HEATMAP)
        missing = set(HEATMAP) - set(spec)
        assert not extra and not missing, "heatmap spec: extra %s, missing %s" % (extra, missing)
    if "finetune" in answer:
        keys = set(answer["finetune"])
        assert keys == set(FINETUNE), "finetune section: %s" % sorted(keys ^ set(FINETUNE))
