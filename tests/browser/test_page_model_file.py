"""A ViT-B/16-size model file in the page (Chromium, the reused page): chosen in the file
chooser, drawn with its class names (a long one cut after a whole word, said whole in its title
and hover) and its own head offered; saved with "State as .npz" from the
dialog Copy link opens for a state with no link (a real download, the same bytes as the toolbar's)
and chosen again, every number and whole name back bit for bit; a bad file refused, the URL, the
screen and the exports as they were; the files docs/own-model.md's scripts wrote from real timm
and Hugging Face models (tests/fixtures/own_model/), the model's own head drawn with PyTorch's
logits. (The three engines: tests/browser/test_engines.py.)"""
import hashlib
import os

import numpy as np
import pytest

from model_files import page_head, real_head, safetensors_by_spec
from .pagekit import act, alert_text, heatmap_z, open_explorer, page_fragment

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

OWN_MODEL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
                         "own_model")
DONE = "() => ['loaded', 'refused'].includes(document.documentElement.dataset.modelFile)"


# A heatmap's data[0].z as float64 bytes, hashed in the page (768,000 numbers would take
# seconds to cross as JSON): equal digests mean equal numbers, bit for bit.
Z_DIGEST = """async (id) => {
    const z = document.getElementById(id).data[0].z, cols = z[0].length;
    const all = new Float64Array(z.length * cols);
    z.forEach((row, i) => all.set(row, i * cols));
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', all.buffer));
    return [z.length, cols, Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')];
}"""


def shows(page, element_id, expected):
    expected = np.ascontiguousarray(expected, dtype="<f8")
    return page.evaluate(Z_DIGEST, element_id) == [
        expected.shape[0], expected.shape[1], hashlib.sha256(expected.tobytes()).hexdigest()]


def choose(page, path):
    page.evaluate("() => { document.documentElement.dataset.modelFile = 'choosing'; }")
    page.set_input_files("#model-file", str(path))
    page.wait_for_function(DONE, timeout=60000)
    return page.evaluate("() => document.documentElement.dataset.modelFile")


def drop(page, cdp, selector, path):
    """Drop the file at `path` on `selector` as a drag from outside the page: the browser itself
    delivers dragenter, dragover and drop (DevTools' Input.dispatchDragEvent, trusted events whose
    DataTransfer holds the file read from disk), as tests/browser/engines/chromium.py does."""
    page.evaluate("() => { document.documentElement.dataset.modelFile = 'dropping'; }")
    target = page.locator(selector)
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    at = {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}
    data = {"items": [], "files": [str(path)], "dragOperationsMask": 1}
    for kind in ("dragEnter", "dragOver", "drop"):
        cdp.send("Input.dispatchDragEvent", dict(at, type=kind, data=data))
    page.wait_for_function(DONE, timeout=60000)
    return page.evaluate("() => document.documentElement.dataset.modelFile")


def test_an_npz_and_a_safetensors_dropped_on_the_page_show_numpy_s_logits(page, site_url, tmp_path):
    """A real drop (Chromium's own drag events) of each container format: the .npz with its
    own names, then a timm .safetensors head ((C, D) float32, transposed by the page) that keeps
    the CLS vectors shown; each time the logits of this page's head and of the model's own head
    are NumPy's. (Firefox and WebKit get a script-made drop: tests/browser/engines/base.py.)"""
    open_explorer(page, site_url)
    rng = np.random.RandomState(4)
    cls, W = rng.standard_normal((3, 6)), rng.standard_normal((6, 5))
    gamma, beta, b = 1 + rng.standard_normal(6) * 0.5, rng.standard_normal(6), rng.standard_normal(5)
    np.savez(str(tmp_path / "dropped.npz"), W_head=W, cls=cls, ln_gamma=gamma, ln_beta=beta,
             b_head=b)
    W2 = rng.standard_normal((6, 5)).astype(np.float32)
    g2, b2, bias2 = (rng.standard_normal(n).astype(np.float32) for n in (6, 6, 5))
    (tmp_path / "head.safetensors").write_bytes(safetensors_by_spec({
        "head.weight": ("F32", (5, 6), np.ascontiguousarray(W2.T).astype("<f4").tobytes()),
        "head.bias": ("F32", (5,), bias2.astype("<f4").tobytes()),
        "norm.weight": ("F32", (6,), g2.astype("<f4").tobytes()),
        "norm.bias": ("F32", (6,), b2.astype("<f4").tobytes())}))
    cdp = page.context.new_cdp_session(page)
    try:
        for name, w, own in (("dropped.npz", W, (gamma, beta, b)),
                             ("head.safetensors", W2.astype(float),
                              tuple(v.astype(float) for v in (g2, b2, bias2)))):
            assert act(page, lambda: drop(page, cdp, "#stage-w", tmp_path / name)) is None
            assert page.evaluate("() => document.documentElement.dataset.modelFile") == "loaded", \
                alert_text(page)
            assert page.locator("#model-file-status").inner_text().startswith("Loaded from " + name)
            np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), w)
            np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), cls)
            # the pipeline shows the model's own head; the problem's is one click away
            np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                                       real_head(cls, w, *own, 1e-6), rtol=0, atol=1e-12)
            np.testing.assert_allclose(heatmap_z(page, "heatmap-bias"), [own[2]], rtol=0, atol=0)
            assert page.locator("#head-choice").is_visible()
            act(page, lambda: page.select_option("#variant", "page_head"))
            np.testing.assert_allclose(heatmap_z(page, "heatmap-variant"), page_head(cls, w),
                                       rtol=0, atol=1e-12)
    finally:
        cdp.detach()


def test_a_vit_b16_file_loads_saves_as_npz_and_loads_back_bit_for_bit(page, site_url, tmp_path):
    open_explorer(page, site_url)
    rng = np.random.RandomState(16)
    W = (rng.standard_normal((768, 1000)) * 0.02).astype(np.float32)
    cls = rng.standard_normal((4, 768)).astype(np.float32)
    # ImageNet's longest kind of name: past 60 characters the page cuts it after a whole part
    names = np.array(["kind %d, German shepherd, German shepherd dog, German police dog, alsatian"
                      % c for c in range(1000)])
    np.savez(str(tmp_path / "vit.npz"), W_head=W, cls=cls, b_head=np.full(1000, 0.5, np.float32),
             class_names=names)
    assert act(page, lambda: choose(page, tmp_path / "vit.npz")) is None
    assert page.evaluate("() => document.documentElement.dataset.modelFile") == "loaded"
    assert shows(page, "heatmap-w", W) and shows(page, "heatmap-cls", cls)
    assert page.locator("#top-k-table").inner_text().count("kind ") >= 4
    pick = page.locator("#top-k-table button.logit-pick").first
    c = int(pick.get_attribute("data-c"))
    assert pick.inner_text().startswith("class %d \u00b7 kind %d, German shepherd, German "
                                        "shepherd dog\u2026: " % (c, c)), pick.inner_text()
    assert pick.get_attribute("title") == ("class %d \u00b7 %s. Show where this logit comes from"
                                           % (c, names[c]))
    assert page_fragment(page) == ""  # no link for a model: the note offers the .npz
    assert "State as .npz" in page.locator("#link-note").inner_text()
    page.click("#link-note-close")  # a note that can be closed, and is not said again
    assert page.locator("#link-note").is_hidden()
    assert page.locator("#variant option[value=page_head]").count() == 1  # its own is shown
    # Copy link: no link, and the dialog offers the .npz (which keeps γ, β, bias and names) as
    # well as the JSON; its download is the toolbar's "State as .npz", byte for byte
    page.click("#copy-link")
    page.wait_for_selector("#export-dialog[open]")
    assert page.locator("#export-title").inner_text() == "This state is too big for a link"
    assert "State as .npz" in page.locator("#export-message").inner_text()
    assert page.locator("#export-as-json").is_visible()
    with page.expect_download() as info:
        page.locator("#export-as-npz").click()
    saved = tmp_path / info.value.suggested_filename
    info.value.save_as(str(saved))
    assert saved.name == "vit-head-state.npz"
    assert page.locator("#export-dialog[open]").count() == 0  # closed, its download said
    with page.expect_download() as info:
        page.click("#export-npz")
    info.value.save_as(str(tmp_path / "toolbar.npz"))
    assert (tmp_path / "toolbar.npz").read_bytes() == saved.read_bytes()
    with np.load(str(saved), allow_pickle=False) as f:  # NumPy's own reader
        assert f["W_head"].tobytes() == W.astype(np.float64).tobytes()
        assert f["cls"].tobytes() == cls.astype(np.float64).tobytes()
        assert list(f["class_names"]) == list(names) and f["b_head"][0] == 0.5
    # a refused file: nothing changes, the screen, the URL and the exports neither
    np.save(str(tmp_path / "bad.npy"), np.zeros((768, 1000), np.int32))
    page.click('[aria-label="W_head[0,0]"]')
    page.keyboard.press("Escape")
    assert choose(page, tmp_path / "bad.npy") == "refused"
    assert "'bad.npy': W_head is int32; expected floating-point" in alert_text(page)
    assert shows(page, "heatmap-w", W)
    assert page_fragment(page) == ""
    # the saved state, chosen again after the worked example: back bit for bit
    open_explorer(page, site_url, "#state=%7B%22cls%22%3A%5B%5B1%2C2%5D%5D%2C%22W_head%22%3A%5B%5B1%5D%2C%5B2%5D%5D%7D")
    assert act(page, lambda: choose(page, saved)) is None
    assert shows(page, "heatmap-w", W) and shows(page, "heatmap-cls", cls)
    assert not shows(page, "heatmap-w", W + np.float32(1e-7) * (np.arange(1000) == 3))  # can fail


def test_files_from_the_docs_scripts_show_pytorch_s_logits_in_the_model_s_own_head(page, site_url,
                                                                                  tmp_path):
    """The page's file reading (slices, base64, Pyodide's NumPy) gives what CPython's gives in
    tests/test_own_model_files.py: PyTorch's logits, to float32's rounding."""
    open_explorer(page, site_url)
    for lib, files in (("timm", ["timm.npz"]), ("hf", ["hf-head.safetensors", "hf-cls.npz"])):
        with np.load(os.path.join(OWN_MODEL, "%s.npz" % lib), allow_pickle=False) as f:
            cls, W = f["cls"].astype(float), f["W_head"].astype(float)
            np.savez(str(tmp_path / "hf-cls.npz"), cls=f["cls"])   # the CLS vectors alone
        torch_logits = np.load(os.path.join(OWN_MODEL, "%s-torch-logits.npy" % lib)).astype(float)
        for name in files:
            path = tmp_path / name if name == "hf-cls.npz" else os.path.join(OWN_MODEL, name)
            assert act(page, lambda: choose(page, path)) is None
            assert page.evaluate("() => document.documentElement.dataset.modelFile") == "loaded", \
                alert_text(page)
        assert shows(page, "heatmap-w", W) and shows(page, "heatmap-cls", cls)
        # the pipeline's logits, top-k table and prediction are the model's own: PyTorch's
        shown = heatmap_z(page, "heatmap-logits")
        assert shown.shape == torch_logits.shape
        assert np.abs(shown - torch_logits).max() <= 1e-5 * np.abs(torch_logits).max(), lib
        names = page.evaluate("() => document.getElementById('prediction').textContent")
        assert "predicts class %d" % int(np.argmax(torch_logits[0])) in names, names
        # the head at every depth: the .npz's hidden_cls, each row PyTorch's (sample 0); the
        # head alone and CLS vectors without depths have none
        if lib == "timm":
            torch_lens = np.load(os.path.join(OWN_MODEL, "timm-torch-lens.npy")).astype(float)
            page.locator("#heatmap-lens").scroll_into_view_if_needed()
            assert page.locator("#heatmap-lens").is_visible()
            lens = heatmap_z(page, "heatmap-lens")
            assert lens.shape == torch_lens[:, 0, :].shape
            assert np.abs(lens - torch_lens[:, 0, :]).max() <= 1e-5 * np.abs(torch_lens).max()
        else:
            assert not page.locator("#heatmap-lens").is_visible()
        # the problem's head in the pipeline: another head, far from PyTorch's
        act(page, lambda: page.select_option("#head-shown", "page"))
        assert np.abs(heatmap_z(page, "heatmap-logits") - torch_logits).max() > 0.1  # can fail
        assert not page.locator("#heatmap-y").is_visible()
        act(page, lambda: page.select_option("#head-shown", "model"))
        np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), shown, rtol=0, atol=0)
