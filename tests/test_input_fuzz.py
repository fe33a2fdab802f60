"""A seeded, bounded fuzz of what arrives from outside: model files (bit flips, bytes changed,
cut short, headers rewritten), links and request texts (characters changed, brackets and
quotes doubled), each sent as the page sends it. Every answer must be JSON the bridge can send,
never "Internal error", and a refusal must change nothing (the state, the link, the exports).
How long each holds Python: benchmarks/refusal_bench.py."""
import importlib.util
import json
import os
import random

import numpy as np
import pytest

from model_files import npy_bytes, npz_bytes, open_file, safetensors_by_spec, session_with_a_model
from pycore.explorer import encode_fragment
from pycore.explorer.session import Session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.RandomState(11)
W, CLS = RNG.standard_normal((8, 5)), RNG.standard_normal((3, 8))

FILES = {
    "w.npy": npy_bytes(W),
    "m.npz": npz_bytes(W_head=W, cls=CLS, b_head=np.ones(5), labels=np.array([0, 1, 2]),
                       class_names=np.array(["a", "b", "c", "d", "e"])),
    "mc.npz": npz_bytes(compressed=True, W_head=W, cls=CLS, ln_gamma=np.ones(8)),
    "m.safetensors": safetensors_by_spec({
        "head.weight": ("F32", (5, 8), W.T.astype("<f4").tobytes()),
        "head.bias": ("F32", (5,), np.ones(5, "<f4").tobytes()),
        "norm.weight": ("F32", (8,), np.ones(8, "<f4").tobytes())}),
}
CASES_PER_FILE = 60


def load_bridge():
    spec = importlib.util.spec_from_file_location("bridge", os.path.join(ROOT, "web", "py",
                                                                          "bridge.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mutate_bytes(data, rng):
    """One of: bit flips, a run of bytes replaced, cut short, a run duplicated, header text
    rewritten (digits to long digit runs, brackets or minus signs repeated)."""
    data = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif kind == 1:
        i = rng.randrange(len(data))
        data[i:i + rng.randint(1, 16)] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    elif kind == 2:
        del data[rng.randrange(len(data)):]
    elif kind == 3:
        i = rng.randrange(len(data))
        data[i:i] = data[i:i + rng.randint(1, 64)] * rng.randint(1, 50)
    else:
        head = bytes(data[:400])
        for old, new in ((b"(", b"(" * 3000), (b"[", b"[" * 3000), (b"8", b"9" * 40),
                         (b"'", b"'" * 5), (b"<f8", b"|S2147483647"), (b"5", b"-" * 3000)):
            if old in head and rng.random() < 0.5:
                i = data.index(old)
                data[i:i + len(old)] = new
                break
    return bytes(data)


@pytest.fixture(scope="module")
def loaded():
    return session_with_a_model(W, CLS)


def snapshot(s):
    return (s.state.W_head.tobytes(), s.state.inputs.tobytes(), id(s.state.model),
            s.handle({"op": "link"})["link"]["fragment"],
            s.handle({"op": "export", "format": "npz"})["export"]["text"])


@pytest.mark.parametrize("name", sorted(FILES))
def test_damaged_model_files_are_refused_in_words_or_read(loaded, name):
    rng = random.Random("%s-%d" % (name, 1))
    target = "W_head" if name.endswith(".npy") else None
    outcomes = {"read": 0, "refused": 0}
    for case in range(CASES_PER_FILE):
        data = mutate_bytes(FILES[name], rng)
        before = snapshot(loaded)
        answer, _ = open_file(loaded, name, data, target=target)
        json.dumps(answer, allow_nan=False)  # what the bridge sends
        where = "%s case %d (%d bytes)" % (name, case, len(data))
        if answer["ok"]:
            outcomes["read"] += 1
            open_file(loaded, "good.npz", npz_bytes(W_head=W, cls=CLS, b_head=np.ones(5)))
            continue
        outcomes["refused"] += 1
        message = answer["error"]["message"]
        assert "Internal error" not in message and message.startswith(repr(name)), (where, message)
        assert snapshot(loaded) == before, where
    assert outcomes["refused"] >= CASES_PER_FILE // 3, outcomes


def mutate_text(text, rng):
    """Characters changed, deleted or doubled; brackets, braces and quotes repeated."""
    chars = list(text)
    for _ in range(rng.randint(1, 6)):
        i = rng.randrange(len(chars))
        kind = rng.randrange(4)
        if kind == 0:
            chars[i] = rng.choice('[]{}",:0123456789.eE-+ %\\anull')
        elif kind == 1:
            del chars[i]
        elif kind == 2:
            chars.insert(i, rng.choice(["[" * 2000, "{\"a\":" * 40, "9" * 500, "\"", "%5B" * 900]))
        else:
            chars.insert(i, chars[i] * rng.randint(2, 40))
    return "".join(chars)


def test_damaged_links_and_requests_are_answered_in_words_and_refusals_change_nothing():
    bridge = load_bridge()
    s = bridge._session
    rng = random.Random(7)
    link = "#" + encode_fragment(Session().state)
    requests = [json.dumps(r) for r in (
        {"op": "edit", "key": "cls", "index": [0, 1], "text": "2.5", "commit": True},
        {"op": "paste", "key": "W_head", "index": [1, 1], "text": "1\t2\n3\t4"},
        {"op": "resize", "B": 3, "D": 5, "C": 4},
        {"op": "option", "name": "variant", "value": "bias"},
        {"op": "train", "n": 3})]
    for case in range(150):
        if case % 3 == 0:
            text = json.dumps({"op": "load", "fragment": mutate_text(link, rng)})
        else:
            text = mutate_text(rng.choice(requests), rng)
        before = (s.state.W_head.tobytes(), s.state.inputs.tobytes(), s.link()["fragment"])
        answer = json.loads(bridge.answer(text)[0])
        assert not (answer.get("error") and "Internal error" in answer["error"]["message"]), (
            case, text[:200], answer["error"])
        if not answer["ok"]:
            assert (s.state.W_head.tobytes(), s.state.inputs.tobytes(),
                    s.link()["fragment"]) == before, (case, text[:200])
