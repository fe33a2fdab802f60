"""The tiny ViT: its encoder against a loop-by-loop re-implementation, the committed weights'
held-out accuracy on the real digits, the training script's gradient check, and the digits as
the pinned scikit-learn wheel holds them (the wheel's checks: test_build_pypi_files.py).

The held-out test reads the digits through buildtools/data/digits.py, which downloads the pinned
wheel from PyPI into the build cache the first time (about 8 MB) and reuses it after.
"""
import importlib.util
import math
import os

import numpy as np
import pytest

from buildtools.data import digits
from pycore import classification_head, load_tiny_vit
from pycore.vit.readout import logit_lens
from pycore.vit.tiny import layers as tiny_vit_layers, model as tiny_vit, params as tiny_vit_params
from reference import reference_head
from reference_vit import reference_encode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_training_script():
    path = os.path.join(ROOT, "training", "train_tiny_vit.py")
    spec = importlib.util.spec_from_file_location("train_tiny_vit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def model():
    return load_tiny_vit()


@pytest.fixture(scope="module")
def data():
    return digits.load_digits(log=lambda *a: None)


# ---- (a) the encoder against a straightforward re-implementation ----------------------------

def random_params(rs, patch_size, D, L, mlp_dim):
    return {name: rs.randn(*shape) * (0.4 if len(shape) == 2 else 0.5)
            for name, shape in tiny_vit_params.parameter_shapes(patch_size, D, L, mlp_dim)}


@pytest.mark.parametrize("sizes", ["committed", (4, 12, 1, 3, 24)])
def test_encoder_matches_a_loop_by_loop_reimplementation(model, sizes):
    if sizes == "committed":
        sizes = (model.patch_size, model.D, model.L, model.heads, model.mlp_dim)
    P, D, L, heads, mlp_dim = sizes
    rs = np.random.RandomState(7)
    params = random_params(rs, P, D, L, mlp_dim)
    vit = tiny_vit.TinyViT(params, heads=heads, patch_size=P)
    images = rs.randint(0, 17, size=(2, 8, 8)).astype(float)
    want_z, want_attn, want_cls = reference_encode(params, images, P, heads)
    z_L = vit.encode(images)
    assert z_L.shape == (2, (8 // P) ** 2 + 1, D) and z_L.dtype == np.float64
    assert np.abs(want_z).max() > 1.0  # not a trivially small output
    assert np.allclose(z_L, want_z, rtol=1e-12, atol=1e-12)
    assert np.allclose(vit.cls_attention(images), want_attn[:, :, 0, 1:].mean(axis=1),
                       rtol=1e-12, atol=1e-13)
    # the CLS row at every depth, the logit lens's input: z_0's, then each block's output's
    hidden = vit.hidden_cls(images)
    assert hidden.shape == (L + 1, 2, D)
    assert np.allclose(hidden, want_cls, rtol=1e-12, atol=1e-12)
    W = rs.randn(D, 5)
    lens = logit_lens(hidden, W)
    for l in range(L + 1):
        np.testing.assert_allclose(lens[l], reference_head(want_cls[l], W), rtol=1e-11, atol=1e-11)


def test_the_encoder_reads_every_patch_and_position_zero_is_cls():
    rs = np.random.RandomState(3)
    params = random_params(rs, 2, 8, 1, 16)
    vit = tiny_vit.TinyViT(params, heads=2, patch_size=2)
    image = np.zeros((1, 8, 8))
    moved = image.copy()
    moved[0, 7, 7] = 16.0                               # the last pixel: patch 16 only
    z0, z1 = vit.encode(image), vit.encode(moved)
    assert not np.allclose(z0[0, 0], z1[0, 0])         # CLS reads it through attention
    # Without attention (zero W_o, b_o) and MLP, tokens stay where embedding put them.
    still = dict(params)
    for name in ("block0.W_o", "block0.b_o", "block0.W_2", "block0.b_2"):
        still[name] = np.zeros_like(params[name])
    z = tiny_vit.TinyViT(still, heads=2, patch_size=2).encode(moved)
    assert np.allclose(z[0, 0], params["x_class"] + params["E_pos"][0], atol=1e-15)
    patch = moved[0, 6:8, 6:8].reshape(4) / 16.0
    assert np.allclose(z[0, 16], patch @ params["E"] + params["b_E"] + params["E_pos"][16])


def test_gelu_is_the_exact_one():
    x = np.linspace(-8, 8, 1601)
    want = [v * 0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x]
    assert np.allclose(tiny_vit_layers.gelu(x), want, rtol=0, atol=1e-15)
    assert abs(tiny_vit_layers.gelu(np.array([1.0]))[0] - 0.8413447460685429) < 1e-15


@pytest.mark.parametrize("images, words", [
    (np.zeros((8, 8)), "got shape (8, 8) (one image?"),
    (np.zeros((2, 8, 7)), "shape (B, 8, 8)"),
    (np.zeros((0, 8, 8)), "B >= 1"),
    (np.full((1, 8, 8), np.nan), "images[0, 0, 0] is nan"),
])
def test_bad_images_are_named(model, images, words):
    with pytest.raises(ValueError) as err:
        model.encode(images)
    assert words in str(err.value)


def test_bad_weights_are_named():
    rs = np.random.RandomState(0)
    params = random_params(rs, 4, 8, 1, 16)
    with pytest.raises(ValueError, match="heads must divide D = 8"):
        tiny_vit.TinyViT(params, heads=3, patch_size=4)
    bad = dict(params, **{"block0.W_o": np.zeros((8, 9))})
    with pytest.raises(ValueError, match=r"block0.W_o must have shape \(8, 8\); got \(8, 9\)"):
        tiny_vit.TinyViT(bad, heads=2, patch_size=4)
    with pytest.raises(ValueError, match="W_head .* is missing"):
        tiny_vit.TinyViT({k: v for k, v in params.items() if k != "W_head"}, 2, 4)


# ---- (b), (c) the committed weights on the held-out digits ----------------------------------

def test_committed_weights_reach_their_recorded_held_out_accuracy(model, data):
    images, labels = data
    test = model.test_indices
    assert len(np.unique(test)) == len(test) == model.meta["n_test"]
    assert test.min() >= 0 and test.max() < len(labels)
    per_class = np.bincount(labels[test], minlength=10) / np.bincount(labels, minlength=10)
    assert np.allclose(per_class, 0.2, atol=0.01)      # the stratified 80/20 split
    logits = classification_head(model.encode(images[test].astype(float)), model.W_head)
    correct = int((logits.argmax(axis=1) == labels[test]).sum())
    accuracy = correct / float(len(test))
    assert accuracy >= 0.95
    assert correct == model.meta["test_correct"]
    assert accuracy == model.meta["test_accuracy"]
    train = np.setdiff1d(np.arange(len(labels)), test)
    train_correct = int((model.predict(images[train]) == labels[train]).sum())
    assert train_correct == model.meta["train_correct"]


def test_the_head_on_z_L_is_the_models_prediction(model, data):
    images, labels = data
    x = images[model.test_indices[:64]].astype(float)
    z_L = model.encode(x)
    assert z_L.shape == (64, model.N + 1, model.D) and z_L.dtype == np.float64
    assert model.N == (8 // model.patch_size) ** 2
    logits = classification_head(z_L, model.W_head)
    assert np.array_equal(logits, model.logits(x))
    assert np.array_equal(logits.argmax(axis=1), model.predict(x))
    # the head reads position 0 only: the patch tokens can be anything
    scrambled = z_L.copy()
    scrambled[:, 1:, :] = np.random.RandomState(0).randn(64, model.N, model.D)
    assert np.array_equal(classification_head(scrambled, model.W_head), logits)
    one = model.encode(x[:1])
    assert np.allclose(one, z_L[:1], rtol=0, atol=1e-12)  # batching changes nothing


def test_cls_attention_of_the_trained_model(model, data):
    images, _ = data
    a = model.cls_attention(images[:5].astype(float))
    assert a.shape == (5, model.N) and (a >= 0).all() and (a.sum(axis=1) <= 1 + 1e-12).all()


def test_the_weights_file_is_small_and_describes_its_training(model):
    size = os.path.getsize(tiny_vit_params.WEIGHTS_PATH)
    assert size <= 150 * 1024
    meta = model.meta
    for key in ("seed", "split_seed", "epochs", "train_accuracy", "test_accuracy", "n_params"):
        assert key in meta
    assert meta["n_params"] == sum(v.size for v in model.params.values())
    # the training script's config (training/train_tiny_vit.py) names L "depth", as timm does
    assert (meta["D"], meta["depth"], meta["heads"]) == (model.D, model.L, model.heads)
    assert 32 <= model.D <= 64 and 2 <= model.L <= 4


# Python 3.8 / NumPy 1.17, the import rule and the docstring examples of tiny_vit*.py are checked
# with every other pycore file by tests/test_pycore_meta.py.


# ---- (d) the training script's backward pass ------------------------------------------------

def test_the_training_backward_pass_matches_finite_differences():
    train = load_training_script()
    assert train.gradient_check() < 1e-7


def test_the_gradient_check_catches_a_wrong_backward_pass(monkeypatch):
    train = load_training_script()
    real = train._ln_back

    def no_mean_term(dy, cache, gamma=None):   # forgets that the mean depends on x
        dx, dg, db = real(dy, cache, gamma)
        dx_hat = dy if gamma is None else dy * gamma
        return dx + cache[1] * dx_hat.mean(axis=-1, keepdims=True), dg, db

    monkeypatch.setattr(train, "_ln_back", no_mean_term)
    assert train.gradient_check() > 1e-3


def test_the_split_is_stratified_and_fixed():
    train = load_training_script()
    labels = np.repeat(np.arange(10), 50)
    a_train, a_test = train.stratified_split(labels, 0.2, 0)
    b_train, b_test = train.stratified_split(labels, 0.2, 0)
    assert np.array_equal(a_test, b_test) and len(a_test) == 100
    assert np.array_equal(np.bincount(labels[a_test]), [10] * 10)
    assert len(np.intersect1d(a_train, a_test)) == 0 and len(a_train) + len(a_test) == 500


def test_random_shift_moves_by_at_most_one_pixel():
    train = load_training_script()
    image = np.zeros((1, 8, 8))
    image[0, 3, 4] = 5.0
    seen = set()
    rs = np.random.RandomState(0)
    for _ in range(200):
        out = train.random_shift(image, 1, rs)
        (r,), (c,) = np.nonzero(out[0])
        seen.add((int(r) - 3, int(c) - 4))
        assert out.sum() == 5.0
    assert seen == {(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1)}


# ---- (e) the digits, from the pinned wheel ---------------------------------------------------

def test_the_real_digits(data):
    images, labels = data
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
    assert labels.shape == (1797,) and labels.dtype == np.int64
    assert images.min() == 0 and images.max() == 16
    assert labels[:10].tolist() == list(range(10))
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


# ---- (f) frozen CLS features, for fine-tuning a head on the real digits ----------------------

def test_features_are_the_cls_rows_of_the_encoder_output_in_any_batch(model, data):
    images, _ = data
    some = images[:37]
    z_L = model.encode(some)
    feats = model.features(some, batch_size=10)
    assert feats.shape == (37, model.D) and feats.dtype == np.float64
    np.testing.assert_allclose(feats, z_L[:, 0, :], rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.features(some), feats, rtol=0, atol=1e-12)
    from pycore import head_from_cls
    np.testing.assert_allclose(head_from_cls(feats, model.W_head),
                               classification_head(z_L, model.W_head), atol=1e-12)


def test_the_training_features_and_labels_are_the_training_split(model, data):
    images, labels = data
    train = model.training_indices(len(images))
    assert len(train) == 1438 and len(set(train) | set(model.test_indices)) == 1797
    assert not set(train) & set(model.test_indices) and list(train) == sorted(train)
    feats, y = model.features(images[train]), labels[train]
    assert feats.shape == (1438, 32) and y.shape == (1438,)
    # the trained head reads them as the model does: 99.93 % of the training digits right
    accuracy = float(np.mean(classification_head(feats[:, None, :], model.W_head).argmax(1) == y))
    assert accuracy == pytest.approx(model.meta["train_accuracy"], abs=1e-9)


@pytest.mark.parametrize("batch_size", [0, 2.5, -1])
def test_features_refuse_a_batch_size_that_is_none(model, batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        model.features(np.zeros((2, 8, 8)), batch_size=batch_size)


def test_one_pass_gives_the_encoder_output_and_the_attention(model, data):
    images = data[0][:5]
    z_L, attention = model.encode_with_attention(images)
    np.testing.assert_array_equal(z_L, model.encode(images))
    np.testing.assert_array_equal(attention, model.cls_attention(images))
