"""Loading a lecturer's own model: files written here with NumPy, with the `safetensors` package
from PyPI (the format's own implementation) and by the format's spec (bfloat16), read by the
session in the byte ranges it asks for, as the page reads them (tests/model_files.py); and the
state exported as .npz and loaded back bit for bit."""
import base64

import numpy as np
import pytest
import safetensors.numpy as safetensors_numpy  # the format's own implementation ([test] extras)

from model_files import (bf16_values, npy_bytes, npz_bytes, open_file, page_head, real_head,
                         safetensors_by_spec)
from pycore.explorer.session import Session

RNG = np.random.RandomState(31)
B, D, C = 3, 8, 5
CLS = RNG.standard_normal((B, D))
W = RNG.standard_normal((D, C)) * 0.5
GAMMA, BETA, BIAS = 1 + RNG.standard_normal(D) * 0.3, RNG.standard_normal(D) * 0.2, RNG.standard_normal(C)


def variant_output(session):
    return session.matrices["variant"]


def test_an_npz_of_numpy_arrays_becomes_the_state_and_its_real_head_is_offered():
    data = npz_bytes(W_head=W, cls=CLS, ln_gamma=GAMMA, ln_beta=BETA, b_head=BIAS,
                     labels=np.array([4, 0, 2]), class_names=np.array(["cat", "dog", "a", "b", "c"]))
    s = Session()
    answer, _ = open_file(s, "lecture.npz", data)
    assert answer["ok"], answer["error"]
    np.testing.assert_array_equal(s.state.W_head, W)
    np.testing.assert_array_equal(s.state.cls, CLS)
    assert s.state.labels == (4, 0, 2)
    # the pipeline shows the model's own head; the problem's is one click away, beside it
    np.testing.assert_allclose(s.matrices["logits"], real_head(CLS, W, GAMMA, BETA, BIAS, 1e-6),
                               rtol=0, atol=1e-12)
    assert answer["head"]["shown"] == "model" and "pipeline shows its own head" in \
        answer["file"]["summary"]
    assert {"heatmap-y", "heatmap-bias"} <= set(answer["heatmaps"])
    np.testing.assert_allclose(s.matrices["b_head"], [BIAS], rtol=0, atol=0)
    assert answer["variant"]["selected"] is None
    assert ["page_head", "The problem's head (no \u03b3/\u03b2, no bias)"] in \
        answer["variant"]["choices"]
    assert all(key != "model_head" for key, _ in answer["variant"]["choices"])
    answer = s.handle({"op": "option", "name": "variant", "value": "page_head"})
    np.testing.assert_allclose(variant_output(s), page_head(CLS, W), rtol=0, atol=1e-12)
    assert answer["variant"]["changes"]
    # the problem's head in the pipeline: the model's own is offered beside it instead
    answer = s.handle({"op": "option", "name": "head", "value": "page"})
    np.testing.assert_allclose(s.matrices["logits"], page_head(CLS, W), rtol=0, atol=1e-12)
    assert answer["head"]["shown"] == "page" and {"heatmap-y", "heatmap-bias"} <= set(
        answer["hide"])
    assert ["model_head", "Model's own head (LayerNorm \u03b3/\u03b2, bias)"] in \
        answer["variant"]["choices"]
    answer = s.handle({"op": "option", "name": "variant", "value": "model_head"})
    np.testing.assert_allclose(variant_output(s), real_head(CLS, W, GAMMA, BETA, BIAS, 1e-6),
                               rtol=0, atol=1e-12)
    about = s.handle({"op": "export", "format": "json"})["export"]["about"]
    assert "(not the model file's \u03b3, \u03b2, bias, class names: \u201cState as .npz\u201d " \
           "keeps them)" in about
    answer, _ = open_file(Session(), "lecture.npz", data)
    assert answer["labels"]["classes"][:2] == ["class 0 \u00b7 cat", "class 1 \u00b7 dog"]
    assert "lecture.npz" in answer["file"]["summary"] and "W_head (8 \u00d7 5)" in answer["file"]["summary"]
    assert answer["link"]["fragment"] is None and ".npz" in answer["link"]["note"]


def test_a_compressed_npz_and_float32_read_exactly_as_float64():
    W32, C32 = W.astype(np.float32), CLS.astype(np.float32)
    s = Session()
    answer, _ = open_file(s, "m.npz", npz_bytes(compressed=True, W_head=W32, encoder_output=np.stack([C32, C32], 1)))
    assert answer["ok"], answer["error"]
    assert s.state.mode == "encoder" and s.state.W_head.dtype == np.float64
    np.testing.assert_array_equal(s.state.W_head, W32.astype(np.float64))
    assert answer["variant"]["selected"] is None  # no gamma/beta/bias: nothing to compare
    assert all(key != "model_head" for key, _ in answer["variant"]["choices"])


@pytest.mark.parametrize("names", ["timm", "hf"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_safetensors_written_by_the_safetensors_package(tmp_path, names, dtype):
    keys = {"timm": ("head.weight", "head.bias", "norm.weight", "norm.bias"),
            "hf": ("classifier.weight", "classifier.bias", "vit.layernorm.weight",
                   "vit.layernorm.bias")}[names]
    # (the package writes an array's memory as it lies: a transposed view must be made C-ordered)
    tensors = dict(zip(keys, (np.ascontiguousarray(W.T, dtype), BIAS.astype(dtype),
                              GAMMA.astype(dtype), BETA.astype(dtype))))
    tensors["blocks.0.attn.qkv.weight"] = np.ones((768, 2304), dtype)  # the rest of a checkpoint
    path = tmp_path / "model.safetensors"
    safetensors_numpy.save_file(tensors, str(path))
    data = path.read_bytes()
    s = Session()
    open_file(s, "cls.npz", npz_bytes(cls=CLS))   # refused: D = 8 against the worked example's 4
    answer, asked = open_file(s, "model.safetensors", data)
    assert answer["ok"], answer["error"]
    # PyTorch's (C, D) weight, transposed; half precision widened exactly
    np.testing.assert_array_equal(s.state.W_head, W.astype(dtype).astype(np.float64))
    assert s.state.cls.shape == (2, D)   # stand-ins until the CLS vectors come
    assert "seeded random" in answer["file"]["summary"]
    answer, _ = open_file(s, "cls.npz", npz_bytes(cls=CLS))   # now they fit the head
    assert answer["ok"], answer["error"]
    assert s.handle({"op": "option", "name": "variant", "value": "model_head"})["ok"]
    eps = 1e-6 if names == "timm" else 1e-12
    expected = real_head(CLS, W.astype(dtype).astype(float), GAMMA.astype(dtype).astype(float),
                         BETA.astype(dtype).astype(float), BIAS.astype(dtype).astype(float), eps)
    np.testing.assert_allclose(variant_output(s), expected, rtol=0, atol=1e-12)
    # the head's bytes were asked for, not the 3.5-7 MB of the rest of the checkpoint
    assert len(data) > 3e6 and sum(n for _, n in asked) < 2 * (64 * 1024 + 22) + 1000


def test_safetensors_in_bfloat16_by_the_formats_spec():
    exact_w, raw_w = bf16_values(RNG, (C, D))
    exact_b, raw_b = bf16_values(RNG, (C,))
    data = safetensors_by_spec({"head.weight": ("BF16", (C, D), raw_w),
                                "head.bias": ("BF16", (C,), raw_b)})
    s = Session()
    answer, _ = open_file(s, "bf16.safetensors", data)
    assert answer["ok"], answer["error"]
    np.testing.assert_array_equal(s.state.W_head, exact_w.T.astype(np.float64))
    np.testing.assert_array_equal(s.state.model["b_head"], exact_b.astype(np.float64))


def test_safetensors_read_by_the_package_match_the_pages_reading(tmp_path):
    path = tmp_path / "w.safetensors"
    safetensors_numpy.save_file({"W_head": W.astype(np.float32), "cls": CLS.astype(np.float32)},
                                str(path))
    s = Session()
    answer, _ = open_file(s, "w.safetensors", path.read_bytes())
    assert answer["ok"], answer["error"]
    theirs = safetensors_numpy.load_file(str(path))
    np.testing.assert_array_equal(s.state.W_head, theirs["W_head"].astype(np.float64))
    np.testing.assert_array_equal(s.state.cls, theirs["cls"].astype(np.float64))


def test_an_npy_fills_the_grid_it_is_for():
    s = Session()
    w = RNG.standard_normal((4, 3))
    answer, _ = open_file(s, "w.npy", npy_bytes(w), target="W_head")
    assert answer["ok"], answer["error"]
    np.testing.assert_array_equal(s.state.W_head, w)
    cls = RNG.standard_normal((5, 4)).astype(np.float32)
    answer, _ = open_file(s, "c.npy", npy_bytes(np.asfortranarray(cls)), target="cls")
    assert answer["ok"], answer["error"]
    np.testing.assert_array_equal(s.state.cls, cls.astype(np.float64))
    np.testing.assert_allclose(s.matrices["logits"], page_head(cls.astype(float), w), atol=1e-12)


def test_the_state_as_npz_loads_back_bit_for_bit():
    data = npz_bytes(W_head=W, cls=CLS, ln_gamma=GAMMA, ln_beta=BETA, b_head=BIAS,
                     class_names=np.array(["a", "b", "c", "d", "e"]))
    s = Session()
    assert open_file(s, "m.npz", data)[0]["ok"]
    s.handle({"op": "edit", "key": "W_head", "index": [1, 2], "text": "0.1"})
    s.handle({"op": "label", "index": [2], "text": "3", "commit": True})
    out = s.handle({"op": "export", "format": "npz"})["export"]
    assert out["base64"] is True and out["filename"].endswith(".npz")
    raw = base64.b64decode(out["text"])
    with np.load(__import__("io").BytesIO(raw), allow_pickle=False) as f:  # NumPy's own reader
        assert f["W_head"][1, 2] == 0.1 and list(f["labels"]) == [0, 0, 3]
    back = Session()
    answer, _ = open_file(back, "vit-head-state.npz", raw)
    assert answer["ok"], answer["error"]
    for key in ("W_head", "cls"):
        a, b = getattr(s.state, key), getattr(back.state, key)
        assert a.tobytes() == b.tobytes()
    for key in ("ln_gamma", "ln_beta", "b_head"):
        assert s.state.model[key].tobytes() == back.state.model[key].tobytes()
    assert back.state.model["class_names"] == ["a", "b", "c", "d", "e"]
    assert back.state.labels == (0, 0, 3) and back.state.model["eps"] == 1e-6
    for session in (s, back):
        assert session.handle({"op": "option", "name": "variant", "value": "model_head"})["ok"]
    assert s.matrices["variant"].tobytes() == back.matrices["variant"].tobytes()


def test_a_long_class_name_is_cut_after_a_whole_part_and_kept_whole():
    """A class name past 60 characters is shown cut after its last whole part, with an
    ellipsis ("...German police dog, als." once: cut mid-word); the whole name stays in the
    state, in the labels' class_titles (the page's hover and each name's title) and in the
    state's .npz (issue 47, item 8)."""
    whole = "German shepherd, German shepherd dog, German police dog, alsatian"
    names = np.array(["cat", whole, "a", "b", "c"])
    s = Session()
    answer, _ = open_file(s, "m.npz", npz_bytes(W_head=W, cls=CLS, class_names=names))
    assert answer["ok"], answer["error"]
    labels = answer["labels"]
    assert labels["classes"][:2] == ["class 0 \u00b7 cat", "class 1 \u00b7 German shepherd, "
                                     "German shepherd dog, German police dog\u2026"]
    assert labels["class_titles"][1] == "class 1 \u00b7 " + whole
    assert labels["class_titles"][0] == labels["classes"][0]
    # the prediction and the top-k table's words read the short one; nothing cut mid-word
    text = " ".join(labels["classes"])
    assert ", als" not in text and "alsatian" not in text
    out = s.handle({"op": "export", "format": "npz"})["export"]
    with np.load(__import__("io").BytesIO(base64.b64decode(out["text"])), allow_pickle=False) as f:
        assert list(f["class_names"]) == list(names)
    # names that all fit have no titles of their own
    answer, _ = open_file(Session(), "m.npz", npz_bytes(W_head=W, cls=CLS,
                                                        class_names=np.array(list("vwxyz"))))
    assert answer["labels"]["class_titles"] is None
