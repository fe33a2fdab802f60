"""The browser tests' tiny-ViT reference (tests/reference_vit.py) and pycore's encoder agree: the
loop-by-loop forward, the batched one and pycore/vit/tiny/model.py on the shipped weights and on
random ones, so that a page showing what the reference computes shows what pycore computes."""
import numpy as np

from pycore import classification_head, load_tiny_vit
from pycore.vit.tiny import model as tiny_vit, params as tiny_vit_params
from reference_vit import ShippedViT, forward, head, reference_encode

TOL = dict(rtol=1e-10, atol=1e-10)


def digits(rs, n):
    return rs.randint(0, 17, size=(n, 8, 8)).astype(float)


def test_the_shipped_model_read_by_numpy_alone_is_pycores():
    ours, theirs = ShippedViT(), load_tiny_vit()
    assert set(ours.params) == set(theirs.params)
    for name, value in theirs.params.items():
        np.testing.assert_array_equal(ours.params[name], value)
    assert (ours.patch_size, ours.heads, ours.L) == (
        theirs.patch_size, theirs.heads, theirs.L)
    np.testing.assert_array_equal(ours.test_indices, theirs.test_indices)


def test_the_references_and_pycore_agree_on_the_shipped_model():
    rs = np.random.RandomState(48)
    images = np.concatenate([digits(rs, 5), np.zeros((1, 8, 8)), np.full((1, 8, 8), 16.0)])
    model, vit = ShippedViT(), load_tiny_vit()
    z, attention, hidden = model.run(images)
    assert np.abs(z).max() > 1.0 and np.ptp(attention) > 0.01   # not a trivial output
    slow_z, slow_attn, slow_hidden = reference_encode(model.params, images[:2], model.patch_size,
                                                      model.heads)
    np.testing.assert_allclose(z[:2], slow_z, **TOL)
    np.testing.assert_allclose(attention[:2], slow_attn[:, :, 0, 1:].mean(axis=1), **TOL)
    np.testing.assert_allclose(hidden[:, :2], slow_hidden, **TOL)
    np.testing.assert_allclose(z, vit.encode(images), **TOL)
    np.testing.assert_allclose(attention, vit.cls_attention(images), **TOL)
    np.testing.assert_allclose(hidden, vit.hidden_cls(images), **TOL)
    np.testing.assert_allclose(model.features(images), vit.features(images), **TOL)
    np.testing.assert_allclose(model.logits(images), vit.logits(images), **TOL)
    np.testing.assert_array_equal(model.predict(images), vit.predict(images))
    W = rs.randn(*model.W_head.shape)
    np.testing.assert_allclose(model.logits(images, W), classification_head(z, W), **TOL)


def test_the_references_and_pycore_agree_on_random_weights():
    rs = np.random.RandomState(7)
    for P, D, L, heads, mlp in ((4, 8, 1, 2, 16), (2, 12, 2, 3, 20), (8, 6, 3, 1, 6)):
        params = {name: rs.randn(*shape)
                  for name, shape in tiny_vit_params.parameter_shapes(P, D, L, mlp)}
        images = digits(rs, 3)
        z, attn, hidden = forward(params, images, P, heads)
        slow_z, slow_attn, slow_hidden = reference_encode(params, images, P, heads)
        np.testing.assert_allclose(z, slow_z, **TOL)
        np.testing.assert_allclose(attn, slow_attn, **TOL)
        np.testing.assert_allclose(hidden, slow_hidden, **TOL)
        vit = tiny_vit.TinyViT(params, heads=heads, patch_size=P)
        np.testing.assert_allclose(z, vit.encode(images), **TOL)
        np.testing.assert_allclose(hidden, vit.hidden_cls(images), **TOL)


def test_the_head_reference_is_the_head():
    rs = np.random.RandomState(1)
    cls, W = rs.randn(4, 6) * 3, rs.randn(6, 5)
    np.testing.assert_allclose(head(cls, W), classification_head(cls[:, None, :], W), **TOL)

