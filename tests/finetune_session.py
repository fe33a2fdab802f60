"""Sessions for the tests of the "Fine-tune the head" panel in CPython
(tests/test_explorer_finetune.py, test_explorer_finetune_curves.py): one loaded with a state or
the fine-tuning preset, and a snapshot of what a refused request must leave unchanged."""
import json

from pycore.explorer import state_to_json
from pycore.explorer.session import Session

WORKED = {"W_head": [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]],
          "cls": [[2, -1, 0, 3], [1, 1, -1, -1]]}


def session_with(state_json):
    s = Session()
    answer = s.handle({"op": "load", "fragment": "#state=" + json.dumps(state_json)})
    assert answer["ok"] and answer["error"] is None, answer["error"]
    return s


def loaded_preset(**train):
    s = Session()
    s.handle({"op": "preset", "name": "finetune", "seed": 0})
    for name, value in train.items():
        assert s.handle({"op": "train_set", "name": name, "value": value})["ok"]
    return s


def snapshot(s):
    return (json.dumps(state_to_json(s.state)), s.state.W_head.copy(),
            s.handle({"op": "link"})["link"])
