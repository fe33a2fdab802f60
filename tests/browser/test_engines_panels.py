"""The page in three engines on both hosts (test_engines.py says how): the tiny ViT's digit
panel, a fine-tuning step, a lecturer's own model file, and axe-core in the states no other
scenario reaches. Expected numbers: NumPy written out here and tests/reference_vit.py."""
import numpy as np
import pytest

from reference import reference_head
from reference_vit import ShippedViT, reference_encode

from .engines import axe
from .engines.app import (BEYOND_CHROMIUM, CLS, FITS, PAGE, SHOWN, UNSEEN, W, choose, head,
                          layout_settled, settle_layout, shown_numbers)
from .engines.kit import alerts, cell, curve_drawn, heatmap_z, renders, SETTLED, wait_render_after
from .pagekit import model_pixels

pytestmark = [pytest.mark.browser]


# ---- the tiny ViT's digit panel -------------------------------------------------------------

@pytest.fixture(scope="module")
def model():
    return ShippedViT()


# The pad is below the pipeline: in view before a pointer reaches it or its buttons (WebDriver's
# actions do not scroll).
PAD_IN_VIEW = """() => new Promise((done) => {
    document.getElementById('digit-pad').scrollIntoView({block: 'center', behavior: 'instant'});
    requestAnimationFrame(() => requestAnimationFrame(done));
})"""


def pad_pixels(engine):
    values = engine.evaluate("""() => Array.from(document.querySelectorAll('#digit-pad [role=gridcell]'),
                                                 (c) => Number(c.dataset.value))""")
    assert len(values) == 64
    return np.array(values, float).reshape(8, 8)


def check_digit_shown(engine, model):
    """Every stage shows the model's numbers for the image it reads (beside the pad); returns
    the logits."""
    images = model_pixels(engine)[None]
    z_L = model.encode(images)
    logits = model.logits(images)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-cls"), z_L[:, 0, :], atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), logits, atol=1e-12)
    return logits


@PAGE  # in Chromium too: axe-core with a digit drawn by a finger on a phone
def test_a_finger_taps_a_pixel_on_a_phone(app, model):
    engine = app.start(viewport=(390, 844))
    settle_layout(engine)
    engine.evaluate(PAD_IN_VIEW)
    engine.tap("#digit-pad", at=(2.5 / 8, 5.5 / 8))  # (x, y): column 2, row 5
    engine.wait_for("""() => document.getElementById('digit').dataset.drawing === 'done'
        && document.documentElement.dataset.mode === 'encoder'""")
    pixels = pad_pixels(engine)
    assert pixels[5, 2] == 16 and pixels.sum() == 16  # a dot in a pixel's middle inks it alone
    check_digit_shown(engine, model)
    app.assert_axe_clean("a digit drawn by a finger, on a phone (390 x 844; WebKit 460 x 844)")
    app.assert_clean()


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_drawing.py, test_page_realvit.py (both hosts)
def test_a_drawn_digit_is_read(app, model):
    engine = app.start()
    engine.evaluate(PAD_IN_VIEW)  # and its Clear button, below it
    engine.click("#digit-clear")  # the pad keeps an earlier drawing (a link does not clear it)
    # The blank pad is drawn through the tiny ViT: the pipeline above the pad grows (the encoder
    # output), so the pad moves down until that answer is drawn.
    engine.wait_for("""() => Array.from(document.querySelectorAll('#digit-pad [role=gridcell]'))
        .every((c) => Number(c.dataset.value) === 0)
        && document.getElementById('digit').dataset.drawing === 'done'
        && document.documentElement.dataset.mode === 'encoder'""")
    engine.evaluate(PAD_IN_VIEW)  # again: WebKit's WebDriver scrolls the button it clicks
    rows = [0.5, 2.5, 4.5, 7.5]  # a vertical stroke down column 4 through cell centres: a "1"
    engine.drag("#digit-pad", [(4.5 / 8, r / 8) for r in rows])
    engine.wait_for("""() => document.getElementById('digit').dataset.drawing === 'done'
        && document.documentElement.dataset.mode === 'encoder'
        && Number(document.querySelectorAll('#digit-pad [role=gridcell]')[60].dataset.value) === 16""")
    pixels = pad_pixels(engine)
    assert pixels[:, 4].min() == 16 and pixels[:, :2].max() == 0
    logits = check_digit_shown(engine, model)
    assert int(logits.argmax()) == 1
    assert engine.evaluate("() => document.getElementById('digit-prediction').textContent"
                           ).startswith("1 (softmax ")
    # the head at every depth: LayerNorm and W_head on the CLS row after each block, from a
    # forward pass written out loop by loop (tests/reference_vit.py)
    image = model_pixels(engine)[None]
    _, _, hidden = reference_encode(model.params, image, model.patch_size, model.heads)
    lens = heatmap_z(engine, "heatmap-lens")
    want = [reference_head(hidden[l], model.W_head)[0] for l in range(model.L + 1)]
    np.testing.assert_allclose(lens, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(lens[-1], logits[0], atol=1e-12)
    app.assert_clean()


# ---- fine-tuning ----------------------------------------------------------------------------

def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def mean_cross_entropy_gradient(h_cls, w, y):
    """d(mean cross-entropy of softmax(LayerNorm(h_cls) @ w) against the labels y)/dw, in NumPy."""
    h_hat = head(h_cls, w)[0]
    delta = softmax(h_hat @ w)
    delta[np.arange(len(y)), y] -= 1.0
    return h_hat.T @ delta / len(y)


IDLE = """() => { const s = document.getElementById('finetune').dataset;
    return s.busy === 'false' && s.playing === 'false'; }"""


@PAGE  # in Chromium too: axe-core on the panel and its export dialog
def test_a_fine_tune_step_is_sgd_written_here(app):
    engine = app.start()
    # dW_head, made ahead while the fine-tuning panel was not used, shown by its first Step: the
    # gradient of the mean cross-entropy at W_head after one SGD step (lr 0.1) from the worked
    # example, its labels as the page shows them
    engine.wait_for("() => document.documentElement.dataset.ahead === 'done'", timeout=90)
    assert engine.evaluate(UNSEEN, ["heatmap-dw"]) == [True]
    y = np.array([int(v) for v in engine.evaluate(
        "() => Array.from(document.querySelectorAll('#ft-labels input'), (i) => i.value)")])
    before = renders(engine)
    engine.click("#ft-step")
    wait_render_after(engine, before)
    engine.wait_for("() => document.getElementById('heatmap-dw').data !== undefined")
    w1 = W - 0.1 * mean_cross_entropy_gradient(CLS, W, y)
    dw = mean_cross_entropy_gradient(CLS, w1, y)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-dw"), dw, rtol=1e-9, atol=1e-12)
    got = engine.evaluate(SHOWN, "heatmap-dw")
    assert got["key"] and got["painted"] and got["numberInCell"] and got["rowsTitle"] == "feature d", got
    assert got["title"].startswith("dW_head = ")
    np.testing.assert_allclose(shown_numbers(got["table"]), dw, rtol=0, atol=5.01e-5)
    assert engine.evaluate(UNSEEN, ["heatmap-dw"]) == [False]
    assert 0 <= engine.evaluate(FITS, ["heatmap-dw"])[0] <= 1
    assert layout_settled(engine) == []
    # then the 60-sample class means, from W_head = 0
    engine.click("#ft-load-means")
    engine.wait_for("() => document.querySelectorAll('#ft-labels input').length === 60", timeout=60)
    engine.wait_for(IDLE, timeout=60)
    h_cls = heatmap_z(engine, "heatmap-cls")
    y = np.array([int(v) for v in engine.evaluate(
        "() => Array.from(document.querySelectorAll('#ft-labels input'), (i) => i.value)")])
    assert h_cls.shape == (60, 64) and not heatmap_z(engine, "heatmap-w").any()
    steps = int(engine.evaluate("() => Number(document.getElementById('finetune').dataset.runSteps || 0)"))
    engine.click("#ft-step")
    engine.wait_for("(n) => Number(document.getElementById('finetune').dataset.runSteps) > n",
                    steps, timeout=60)
    engine.wait_for(IDLE, timeout=60)
    h_hat = head(h_cls, np.zeros((64, 10)))[0]
    w1 = -0.1 * mean_cross_entropy_gradient(h_cls, np.zeros((64, 10)), y)
    losses = [float(-np.mean(np.log(softmax(h_hat @ w)[np.arange(60), y])))
              for w in (np.zeros((64, 10)), w1)]
    shown = engine.evaluate("() => Array.from(document.getElementById('loss-curve').data[0].y)")
    np.testing.assert_allclose(shown, losses, rtol=1e-9, atol=1e-12)
    drawn, per_pixel = curve_drawn(engine)  # the curve on screen, read back from the drawing
    np.testing.assert_allclose(drawn[-2:, 0], [steps, steps + 1], atol=0.1)
    np.testing.assert_allclose(drawn[-2:, 1], losses, atol=2 * per_pixel)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-w"), w1, rtol=1e-9, atol=1e-12)
    app.assert_axe_clean("the fine-tuning panel: 60 samples loaded, a step taken")
    # Copy link: this state's link is too long to share, so the export dialog says so and
    # offers the state as a file (js/page/share.js); axe with the dialog open, then Esc closes it
    engine.click("#copy-link")
    engine.wait_for("() => document.getElementById('export-dialog').open")
    assert engine.evaluate("() => document.activeElement.id") == "export-as-npz"
    app.assert_axe_clean("Copy link's export dialog open over the fine-tuning panel")
    engine.press("Escape")
    engine.wait_for("() => !document.getElementById('export-dialog').open")
    app.assert_clean()


# ---- a lecturer's own model file ------------------------------------------------------------

def real_head(cls, w, gamma, beta, b, eps=1e-6):
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    return (gamma * (cls - mu) / np.sqrt(var + eps) + beta) @ w + b


def file_outcome(engine, before):
    """'loaded' or 'refused' (with the alert) once the page has answered the file; a loaded one
    is drawn (a render after `before`)."""
    engine.wait_for("() => ['loaded', 'refused'].includes(document.documentElement.dataset.modelFile)",
                    timeout=60)
    outcome = engine.evaluate("() => document.documentElement.dataset.modelFile")
    if outcome == "loaded":
        wait_render_after(engine, before)
    return outcome, alerts(engine)


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_model_file.py
def test_a_model_file_through_the_file_chooser_then_a_matrix_dropped(app, tmp_path):
    engine = app.start()
    rng = np.random.RandomState(31)
    cls, w = rng.standard_normal((3, 6)), rng.standard_normal((6, 5)).astype(np.float32)
    gamma, beta, b = 1 + rng.standard_normal(6) * 0.5, rng.standard_normal(6), rng.standard_normal(5) * 2
    np.savez(str(tmp_path / "lecture.npz"), W_head=w, cls=cls, ln_gamma=gamma, ln_beta=beta, b_head=b)
    before = renders(engine)
    engine.set_files("#model-file", str(tmp_path / "lecture.npz"))
    assert file_outcome(engine, before) == ("loaded", "")
    w = w.astype(float)
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    # the pipeline shows the model's own head: LayerNorm with its gamma and beta, its bias
    own = real_head(cls, w, gamma, beta, b)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), own, atol=1e-12)
    h_hat = head(cls, w)[0]
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-y"), h_hat * gamma + beta, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-bias"), [b], atol=0)
    # the problem's head one click away, beside it; and in the pipeline, at the control's word
    choose(engine, "variant", "page_head")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-variant"), head(cls, w)[1], atol=1e-12)
    choose(engine, "head-shown", "page")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w)[1], atol=1e-12)
    choose(engine, "head-shown", "model")
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), own, atol=1e-12)
    assert engine.evaluate("() => document.getElementById('model-file-status').textContent"
                           ).startswith("Loaded from lecture.npz: W_head (6 \u00d7 5)")
    # a bad file: refused in words, nothing changes
    np.save(str(tmp_path / "bad.npy"), np.full((6, 5), np.nan))
    engine.click(cell("W_head[0,0]"))  # a .npy fills the grid that has focus
    engine.press("Escape")
    engine.set_files("#model-file", str(tmp_path / "bad.npy"))
    outcome, alert = file_outcome(engine, renders(engine))
    assert outcome == "refused" and "'bad.npy': W_head[0,0] is NaN" in alert, alert
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    # a W_head dropped on the page, into the grid that had focus
    w2 = np.round(rng.standard_normal((6, 5)), 2)
    np.save(str(tmp_path / "w2.npy"), w2)
    before = renders(engine)
    engine.evaluate("() => { document.documentElement.dataset.modelFile = 'dropping'; }")
    engine.drop_file("#stage-w", str(tmp_path / "w2.npy"))
    assert file_outcome(engine, before) == ("loaded", "")
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w2)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w2)[1], atol=1e-12)
    # a W_head alone ends the model's own head; so does a link (a new session)
    assert engine.evaluate("() => document.documentElement.dataset.realHead") != "true"
    assert engine.evaluate("() => document.getElementById('head-choice').hidden") is True
    app.assert_clean()


# ---- axe-core: the states no scenario above reaches (docs/accessibility-checks.md) ---------

def load_preset(engine, name):
    """Choose the preset `name` in the toolbar and press Load (a new session: every panel redrawn)."""
    engine.evaluate("""(name) => { const s = document.getElementById('preset'); s.value = name;
        s.dispatchEvent(new Event('change', { bubbles: true })); }""", name)
    before = renders(engine)
    engine.click("#load-preset")
    wait_render_after(engine, before, timeout=90)
    engine.wait_for(SETTLED, timeout=30)


@PAGE  # the markup is the same on both hosts
def test_axe_while_an_invalid_entry_is_typed_and_in_the_large_presets(app, engine_host):
    """axe-core's WCAG A/AA rules (App.assert_axe_clean) in the states no scenario above leaves
    the page in: "abc" typed key by key into a cell; the full encoder output; the ViT-B/16
    preset. (The others, on the way: the worked example as booted, a mistake and another head,
    the walk-through, the fine-tuning panel; the dark scheme and the embed view in the tests
    below that boot pages of their own.) Then a check that axe reports what it should in this
    engine: a button without a name."""
    engine = app.start()
    engine.click(cell("cls[0,0]"))
    engine.type_keys("abc")
    engine.wait_for("() => document.getElementById('alert').textContent.includes(\"'abc'\")")
    app.assert_axe_clean("an invalid entry being typed")
    engine.press("Escape")  # the entry undone (it never reached Python: no render)
    engine.wait_for("(s) => document.querySelector(s).getAttribute('aria-invalid') !== 'true'",
                    cell("cls[0,0]"))
    load_preset(engine, "encoder")
    app.assert_axe_clean("the full encoder output")
    load_preset(engine, "vit-b16")
    app.assert_axe_clean("the ViT-B/16 preset")
    assert axe.catches_a_nameless_button(engine)
    app.assert_clean()
