"""The fine-tuning preset on real frozen features in CPython: the build's
seeded subset of training digits, their tiny-ViT CLS features as the CLS rows, W_head = 0, and
the held-out accuracy the panel reports as it trains.

Expected numbers come from tests/finetune_reference.py and from NumPy written here; the
features come from the tiny ViT (its forward pass is tested in test_tiny_vit.py)."""
import numpy as np
import pytest

from buildtools.data.digits import load_digits
from buildtools.data.page_digits import FINETUNE_PER_CLASS, finetune_digits
from finetune_reference import layer_norm as ref_layer_norm, train as ref_train
from protocol_check import check_answer
from pycore.explorer.session import Session
from pycore.vit.tiny.model import load_tiny_vit


@pytest.fixture(scope="module")
def data():
    images, labels = load_digits()
    model = load_tiny_vit()
    return images, labels, model, finetune_digits(images, labels, model.test_indices)


def test_the_subset_is_seeded_per_class_from_training_digits_only(data):
    images, labels, model, ft = data
    assert len(ft["train"]) == 10 * FINETUNE_PER_CLASS == 60
    held = set(int(i) for i in model.test_indices)
    assert not held & set(ft["train_indices"])
    assert [labels[i] for i in ft["train_indices"]].count(3) == FINETUNE_PER_CLASS
    assert finetune_digits(images, labels, model.test_indices) == ft  # the same every build
    assert len(ft["held_out"]) == len(model.test_indices) == 359
    text, label = ft["held_out"][0]
    i = int(model.test_indices[0])
    assert label == labels[i] and [int(c, 17) for c in text] == images[i].ravel().tolist()


def test_training_on_the_frozen_features_and_the_held_out_accuracy(data):
    images, labels, model, ft = data
    s = Session()
    answer = s.handle({"op": "preset", "name": "finetune-digits",
                       "digits": {"train": ft["train"], "held_out": ft["held_out"]}})
    assert answer["ok"], answer.get("error")
    check_answer(answer)
    X = model.features(images[ft["train_indices"]].astype(float))
    y = labels[ft["train_indices"]]
    assert np.array_equal(s.state.cls, X) and s.state.labels == tuple(int(v) for v in y)
    assert not s.state.W_head.any() and s.state.W_head.shape == (32, 10)
    assert s.state.train["start"] == "zero" and s.state.train["lr"] == 0.5
    section = answer["finetune"]
    assert section["held_out"]["count"] == 359
    assert section["held_out"]["accuracy"] == pytest.approx(0.1, abs=0.01)  # W = 0: class 0

    for _ in range(3):
        answer = s.handle({"op": "train", "n": 5})
    section = answer["finetune"]
    losses, _, _, W = ref_train(X, y, np.zeros((32, 10)), 0.5, "sgd", 15)
    assert section["run"]["loss"] == pytest.approx(losses, rel=1e-9, abs=1e-12)
    assert losses[-1] < 0.1
    test = np.array(model.test_indices)
    X_test = ref_layer_norm(model.features(images[test].astype(float)))

    def held_out_accuracy(W_head):
        return float(np.mean(np.argmax(X_test @ W_head, axis=1) == labels[test]))

    expected = held_out_accuracy(W)
    assert expected > 0.9
    assert section["held_out"]["accuracy"] == pytest.approx(expected)
    assert [p[0] for p in section["held_out"]["curve"]] == [0, 5, 10, 15]
    assert section["held_out"]["curve"][-1][1] == pytest.approx(expected)
    assert "%d of 359" % round(expected * 359) in section["held_out"]["text"]

    # an edit keeps the held-out set (the same data set); another preset ends it
    answer = s.handle({"op": "edit", "key": "W_head", "index": [0, 0], "text": "1",
                       "commit": True})
    assert answer["finetune"]["held_out"]["count"] == 359
    assert s.handle({"op": "preset", "name": "worked"})["finetune"]["held_out"] is None


@pytest.mark.parametrize("request_, words", [
    ({"op": "preset", "name": "worked", "digits": {"train": [], "held_out": []}},
     "digits belong to the preset finetune-digits"),
    ({"op": "preset", "name": "finetune-digits"}, "needs them"),
    ({"op": "preset", "name": "finetune-digits",
      "digits": {"train": [["0" * 64, 10]], "held_out": [["0" * 64, 1]]}},
     "digits.train[0]: the label must be a digit 0 to 9; got 10"),
    ({"op": "preset", "name": "finetune-digits",
      "digits": {"train": [["0" * 63 + "h", 1]], "held_out": [["0" * 64, 1]]}},
     "digits.train[0]: the pixels must be 64 characters"),
    ({"op": "preset", "name": "finetune-digits",
      "digits": {"train": [["0" * 64, 1]] * 65, "held_out": [["0" * 64, 1]]}},
     "1 to 64"),
])
def test_a_bad_digits_preset_is_refused_and_changes_nothing(request_, words):
    s = Session()
    before = s.state.copy()
    answer = s.handle(request_)
    assert not answer["ok"] and words in answer["error"]["message"]
    assert s.state == before and s.finetune.held_out is None


def test_a_probe_at_every_depth_reads_the_digit_from_where_it_becomes_readable(data):
    """A head trained on each depth's CLS features (the encoder written out loop by loop,
    tests/reference_vit.py; SGD written out, tests/finetune_reference.py): the panel's
    accuracies are these. At depth 0 the CLS token has not met the image: chance."""
    from reference_vit import reference_encode

    images, labels, model, ft = data
    s = Session()
    answer = s.handle({"op": "preset", "name": "finetune-digits",
                       "digits": {"train": ft["train"], "held_out": ft["held_out"][:60]}})
    probes = answer["finetune"]["held_out"]["probes"]
    assert probes["depths"] == list(range(model.L + 1)) and probes["steps"] == 200
    train_idx, held_idx = ft["train_indices"], np.array(model.test_indices)[:60]
    _, _, hidden = reference_encode(model.params, images[train_idx].astype(float),
                                    model.patch_size, model.heads)
    _, _, hidden_held = reference_encode(model.params, images[held_idx].astype(float),
                                         model.patch_size, model.heads)
    y, y_held = labels[train_idx], labels[held_idx]
    for depth in probes["depths"]:
        _, accuracies, _, W = ref_train(hidden[depth], y, np.zeros((32, 10)), 0.5, "sgd", 200)
        held = float(np.mean(np.argmax(ref_layer_norm(hidden_held[depth]) @ W, axis=1)
                             == y_held))
        assert probes["train"][depth] == pytest.approx(accuracies[-1]), depth
        assert probes["held_out"][depth] == pytest.approx(held), depth
    # depth 0: one vector for every digit, so one class for all (that class's share)
    assert probes["held_out"][0] in [float(np.mean(y_held == c)) for c in range(10)]
    assert probes["held_out"][-1] >= 0.9
    assert "same learned vector for every digit" in probes["text"]
