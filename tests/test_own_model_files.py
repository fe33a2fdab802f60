"""docs/own-model.md's scripts, tied to what the page makes of the files they write.

tests/fixtures/own_model/ holds what those scripts wrote from real timm and Hugging Face ViTs
made tiny (tests/fixtures/make_own_model_fixtures.py, which needs PyTorch; its README says how),
with the logits PyTorch computed. Here, without PyTorch, each file is loaded as the page loads
one (tests/model_files.py) and:

* this page's head (LayerNorm without gamma/beta, no bias) matches the same head written out
  here with NumPy;
* the model's own head (the file's gamma, beta, epsilon and bias) gives PyTorch's logits again,
  from the ``.npz`` and from the head saved alone as ``.safetensors``;
* the doc's scripts are still the ones that wrote the files, at the versions the doc names.
"""
import base64
import json
import os

import numpy as np
import pytest

from fixtures import make_own_model_fixtures as made_by
from model_files import npz_bytes, open_file, page_head, real_head
from pycore.explorer.session import Session

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "own_model")
LIBS = ("timm", "hf")
EPS = {"timm": 1e-6, "hf": 1e-12}  # each library's LayerNorm epsilon for ViT
# PyTorch computes in float32, the page in float64 from the same float32 numbers: they agree to
# float32's rounding of a D-term sum, a few 1e-7 of the largest logit.
TOLERANCE = 1e-5


def made():
    with open(os.path.join(HERE, "made.json"), encoding="utf-8") as f:
        return json.load(f)


def fixture(lib):
    """(the .npz's bytes, its arrays, PyTorch's logits (B, C) as float64)."""
    with open(os.path.join(HERE, "%s.npz" % lib), "rb") as f:
        data = f.read()
    with np.load(os.path.join(HERE, "%s.npz" % lib), allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    return data, arrays, np.load(os.path.join(HERE, "%s-torch-logits.npy" % lib)).astype(float)


def agree(shown, torch_logits):
    """Whether the page's logits are PyTorch's, to TOLERANCE of the largest one."""
    return np.abs(shown - torch_logits).max() <= TOLERANCE * np.abs(torch_logits).max()


@pytest.mark.parametrize("lib", LIBS)
def test_the_head_at_every_depth_is_pytorch_s_row_by_row(lib):
    """The file's hidden_cls (L+1, B, D) through the model's own head, for each sample chosen:
    every row is PyTorch's final LayerNorm and classifier on that depth's CLS row (computed by
    the fixture's maker, in PyTorch), the last one the pipeline's logits; with the page's head
    chosen, the page's head on each row, written out with NumPy."""
    data, f, torch_logits = fixture(lib)
    torch_lens = np.load(os.path.join(HERE, "%s-torch-lens.npy" % lib)).astype(float)
    depths = f["hidden_cls"].astype(float)
    assert depths.shape == (made_by.DEPTH + 1, 3, made_by.D) == torch_lens.shape[:2] + (made_by.D,)
    s = Session()
    answer, _ = open_file(s, "my_vit.npz", data)
    assert answer["ok"], answer["error"]
    assert answer["digit"]["lens"] is True and "heatmap-lens" in answer["heatmaps"]
    for b in range(3):
        answer = s.handle({"op": "option", "name": "sample", "value": b})
        assert answer["ok"]
        shown = s.matrices["lens"]
        assert shown.shape == (made_by.DEPTH + 1, made_by.C)  # C = 5: every class
        assert agree(shown, torch_lens[:, b, :]), (b, shown, torch_lens[:, b, :])
        np.testing.assert_array_equal(shown[-1], s.matrices["logits"][b])
    assert s.handle({"op": "option", "name": "head", "value": "page"})["ok"]
    W = f["W_head"].astype(float)
    np.testing.assert_allclose(s.matrices["lens"], page_head(depths[:, 2, :], W), rtol=0, atol=1e-12)
    # the .npz the page writes keeps them, and reads back to the same lens
    again = Session()
    saved = s.handle({"op": "export", "format": "npz"})["export"]
    answer, _ = open_file(again, "saved.npz", base64.b64decode(saved["text"]))
    assert answer["ok"], answer["error"]
    assert again.handle({"op": "option", "name": "sample", "value": 2})["ok"]
    assert again.handle({"op": "option", "name": "head", "value": "page"})["ok"]
    np.testing.assert_array_equal(again.matrices["lens"], s.matrices["lens"])


def test_the_depths_must_come_with_the_cls_vectors_and_fit_them():
    W, cls = np.ones((4, 3)), np.ones((2, 4))
    for arrays, says in (
            (dict(W_head=W, hidden_cls=np.ones((3, 2, 4))), "hidden_cls needs the CLS vectors"),
            (dict(W_head=W, cls=cls, hidden_cls=np.ones((3, 5, 4))),
             "hidden_cls has shape 3 \u00d7 5 \u00d7 4; expected (L+1, B, D) = (L+1, 2, 4)"),
            (dict(W_head=W, cls=cls, hidden_cls=np.ones((1, 2, 4))), "with L+1 from 2 to 65")):
        answer, _ = open_file(Session(), "m.npz", npz_bytes(**arrays))
        assert not answer["ok"] and says in answer["error"]["message"], answer["error"]
    # new CLS vectors without depths leave the lens; a resize does too
    s = Session()
    assert open_file(s, "m.npz", npz_bytes(W_head=W, cls=cls, hidden_cls=np.ones((3, 2, 4)) * [1, 2, 3, 5]))[0]["ok"]
    assert "heatmap-lens" in s.handle({"op": "option", "name": "sample", "value": 1})["heatmaps"]
    answer = open_file(s, "c.npz", npz_bytes(cls=cls * 2))[0]
    assert answer["ok"] and answer["digit"]["lens"] is False and "heatmap-lens" in answer["hide"]


def model_head(session):
    assert session.handle({"op": "option", "name": "variant", "value": "model_head"})["ok"]
    return session.matrices["variant"]


def test_the_files_were_written_by_the_docs_scripts_at_the_versions_it_names():
    scripts, record = made_by.doc_scripts(), made()
    stale = [k for k, code in scripts.items() if made_by.digest(code) != record["sha256"][k]]
    assert not stale, ("docs/own-model.md's %s changed since tests/fixtures/own_model/ was made: "
                       "run tests/fixtures/make_own_model_fixtures.py" % ", ".join(stale))
    doc = " ".join(open(made_by.DOC, encoding="utf-8").read().split())  # lines joined
    for package, called in (("torch", "PyTorch"), ("timm", "timm"), ("transformers", "transformers")):
        version = record["versions"][package].split("+")[0]
        assert "%s %s" % (called, version) in doc, (called, version)


@pytest.mark.parametrize("lib", LIBS)
def test_the_model_s_own_head_gives_pytorch_s_logits_from_the_npz(lib):
    data, f, torch_logits = fixture(lib)
    s = Session()
    answer, _ = open_file(s, "my_vit.npz", data)
    assert answer["ok"], answer["error"]
    cls, W = f["cls"].astype(float), f["W_head"].astype(float)
    assert cls.shape == (3, made_by.D) and W.shape == (made_by.D, made_by.C)
    assert f["cls"].dtype == f["W_head"].dtype == np.float32  # the model's own dtype, as written
    np.testing.assert_array_equal(s.state.W_head, W)
    np.testing.assert_array_equal(s.state.cls, cls)
    # the pipeline shows the model's own head: the file's gamma/beta/bias here, PyTorch's logits
    assert s.state.model["eps"] == EPS[lib]
    shown = s.matrices["logits"]
    np.testing.assert_allclose(shown, real_head(cls, W, f["ln_gamma"], f["ln_beta"], f["b_head"],
                                                EPS[lib]), rtol=0, atol=1e-12)
    assert agree(shown, torch_logits), np.abs(shown - torch_logits).max()
    np.testing.assert_array_equal(np.argsort(-shown, axis=1), np.argsort(-torch_logits, axis=1))
    assert answer["labels"]["classes"][0].startswith("class 0 \u00b7 tench")
    # its predictions named in words, PyTorch's arg-max
    names = answer["labels"]["classes"]
    for b, c in enumerate(np.argmax(torch_logits, axis=1)):
        assert "predicts %s" % names[c] in answer["prediction"]["text"], (b, names[c])
    # the problem's head, one click away, against the same head written out here
    assert s.handle({"op": "option", "name": "variant", "value": "page_head"})["ok"]
    np.testing.assert_allclose(s.matrices["variant"], page_head(cls, W), rtol=0, atol=1e-12)
    # and the exported NumPy code reproduces what is shown
    namespace = {}
    exec(s.handle({"op": "export", "format": "numpy"})["export"]["text"].replace(
        "print(logits)", ""), namespace)
    np.testing.assert_allclose(namespace["logits"], shown, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lib", LIBS)
def test_the_head_saved_alone_as_safetensors_then_the_cls_vectors(lib):
    _, f, torch_logits = fixture(lib)
    with open(os.path.join(HERE, "%s-head.safetensors" % lib), "rb") as g:
        head = g.read()
    s = Session()
    answer, _ = open_file(s, "head.safetensors", head)
    assert answer["ok"], answer["error"]
    assert ("timm's names" if lib == "timm" else "Hugging Face's names") in answer["file"]["summary"]
    np.testing.assert_array_equal(s.state.W_head, f["W_head"].astype(float))
    answer, _ = open_file(s, "cls.npz", npz_bytes(cls=f["cls"]))
    assert answer["ok"], answer["error"]
    assert s.state.model["eps"] == EPS[lib]  # not in the file: the library's, from its names
    assert agree(model_head(s), torch_logits)


@pytest.mark.parametrize("lib", LIBS)
def test_each_part_of_the_real_head_matters_in_the_fixtures(lib):
    """A page that dropped gamma, beta or the bias would not give PyTorch's logits: the
    fixtures' own values are far enough from 1, 0 and 0 for the tests above to see it."""
    _, f, torch_logits = fixture(lib)
    cls, W = f["cls"].astype(float), f["W_head"].astype(float)
    parts = {"ln_gamma": np.ones(made_by.D), "ln_beta": np.zeros(made_by.D),
             "b_head": np.zeros(made_by.C)}
    for name, neutral in parts.items():
        kept = {k: (neutral if k == name else f[k].astype(float)) for k in parts}
        wrong = real_head(cls, W, kept["ln_gamma"], kept["ln_beta"], kept["b_head"], EPS[lib])
        assert not agree(wrong, torch_logits), name
    assert agree(real_head(cls, W, f["ln_gamma"], f["ln_beta"], f["b_head"], EPS[lib]),
                 torch_logits)
