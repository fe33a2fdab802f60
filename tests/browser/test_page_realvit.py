"""The digit panel: draw a digit with the mouse, a finger or the keyboard, or pick a held-out
one, and the stages show the tiny ViT's encoder output, trained head and logits.

What the page shows (the pad's pixels, heatmap z, the attention overlay, the URL) is checked
against the tiny ViT's equations run here in NumPy (tests/reference_vit.py, not pycore) on the
pixels the page reports, and, for the
held-out digits, on the data set read out of the pinned wheel (buildtools/data/digits.py)."""
import numpy as np
import pytest

from buildtools.data import digits as wheel_digits
from pycore.explorer import decode_fragment
from reference_vit import ShippedViT, head

from .pagekit import act, edit, heatmap_z, model_pixels, open_explorer, page_fragment

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


@pytest.fixture(scope="module")
def model():
    return ShippedViT()


def pad_pixels(page):
    """The drawing grid's 64 pixels, as the page shows them, (8, 8)."""
    values = page.evaluate("""() => Array.from(document.querySelectorAll('#digit-pad [role=gridcell]'))
        .map(cell => Number(cell.dataset.value))""")
    assert len(values) == 64
    return np.array(values, dtype=float).reshape(8, 8)


def settled(page):
    """Wait until the newest drawing is on screen (docs/interface.md: data-drawing)."""
    page.wait_for_function(
        "() => document.getElementById('digit').dataset.drawing === 'done'", timeout=30000)


def attention_shown(page):
    return np.array(page.evaluate("""() => Array.from(
        document.querySelectorAll('#digit-attention-layer .pad-patch'))
        .map(p => Number(p.dataset.attention))"""), dtype=float)


def check_shown(page, model, W_head=None):
    """Every stage shows the model's numbers for the image it reads (the pad's drawing prepared,
    shown beside the pad); returns the logits."""
    images = model_pixels(page)[None]
    z_L, attention, _ = model.run(images)
    W = model.W_head if W_head is None else W_head
    logits = head(z_L[:, 0, :], W)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-encoder"), z_L[0], atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-cls"), z_L[:, 0, :], atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-w"), W, atol=0)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), logits, atol=1e-12)
    np.testing.assert_allclose(attention_shown(page), attention[0], atol=1e-12)
    state = decode_fragment(page_fragment(page))          # the link holds what is shown
    np.testing.assert_allclose(state.encoder_output, z_L, atol=1e-12)
    np.testing.assert_array_equal(state.W_head, W)
    return logits


def draw(page, points):
    """Press the mouse at the first point (in pixels of the pad: row, column) and move through
    the others, as a person draws."""
    box = page.locator("#digit-pad").bounding_box()
    cell = box["width"] / 8

    def at(p):
        return box["x"] + p[1] * cell, box["y"] + p[0] * cell

    page.locator("#digit-pad").scroll_into_view_if_needed()
    box = page.locator("#digit-pad").bounding_box()
    cell = box["width"] / 8
    page.mouse.move(*at(points[0]))
    page.mouse.down()
    for p in points[1:]:
        page.mouse.move(*at(p), steps=2)
    page.mouse.up()
    settled(page)


@pytest.mark.hosts("pyscript", "fallback")
def test_a_vertical_stroke_is_read_as_a_one(page, site_url, model):
    open_explorer(page, site_url)
    draw(page, [(1.0, 4.5), (3.0, 4.5), (5.0, 4.5), (7.0, 4.5)])
    pixels = pad_pixels(page)
    # the pen inks the column it runs down the middle of, and not its neighbours (the data
    # set's strokes, not a blob); its ends (rows 1.0 and 7.0) half-ink rows 0 and 7
    assert pixels[1:7, 4].tolist() == [16] * 6 and 0 < pixels[0, 4] < 16 and 0 < pixels[7, 4] < 16
    assert np.delete(pixels, 4, axis=1).max() == 0
    logits = check_shown(page, model)
    assert int(logits.argmax()) == 1
    assert page.inner_text("#digit-prediction").startswith("1 (softmax ")
    assert page.evaluate("document.documentElement.dataset.mode") == "encoder"
    # the logits table names the classes by their digits
    header = page.evaluate("Array.from(document.querySelectorAll('#logits-table thead tr > *'))"
                           ".map(th => th.textContent)")
    assert header == [""] + [str(d) for d in range(10)]
    # the encoder's time in this browser's Python is measured and said (its speed is a
    # benchmark's business: a wall-clock bound here fails on a loaded machine)
    ms = float(page.evaluate("document.getElementById('digit').dataset.encodeMs"))
    assert ms > 0 and ("Encoded in %.1f ms per image" % ms) in page.inner_text("#digit")


@pytest.mark.hosts("pyscript", "fallback")
def test_picking_a_held_out_digit_shows_its_logits(page, site_url, model):
    images, labels = wheel_digits.load_digits(log=lambda *a: None)
    open_explorer(page, site_url)
    thumbs = page.locator("#digit-gallery .digit-thumb")
    assert thumbs.count() == 30
    thumb = thumbs.nth(22)                                   # the second "7"
    index, label = int(thumb.get_attribute("data-index")), int(thumb.get_attribute("data-label"))
    assert label == labels[index] == 7 and index in set(model.test_indices.tolist())
    # the thumbnail is a picture of that digit: white paper, black at full ink (16)
    shades = np.array(thumb.locator("img").evaluate("""async (img) => {
        await img.decode();
        const c = document.createElement("canvas");
        c.width = img.naturalWidth; c.height = img.naturalHeight;
        const ctx = c.getContext("2d");
        ctx.drawImage(img, 0, 0);
        const px = ctx.getImageData(0, 0, c.width, c.height).data;
        return Array.from({length: c.width * c.height}, (_, i) => px[4 * i]); }"""))
    np.testing.assert_array_equal(shades, np.floor(255 * (1 - images[index].ravel() / 16) + 0.5))
    thumb.click()
    settled(page)
    np.testing.assert_array_equal(pad_pixels(page), images[index])
    logits = heatmap_z(page, "heatmap-logits")
    np.testing.assert_allclose(
        logits, model.logits(images[index][None]), atol=1e-12)
    check_shown(page, model)
    assert "Alpaydin" in page.inner_text("#digit .source")


def test_drawing_with_the_keyboard(page, site_url, model):
    open_explorer(page, site_url)
    page.locator("#digit-pad [role=gridcell]").first.focus()
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "pixel 0,0: 0"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")                              # full ink at (1, 2)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("5")                                  # 5/9 of full ink: 9 at (2, 2)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")                              # full ink at (2, 3)
    page.keyboard.press("Delete")                             # and erased again
    page.keyboard.press("ArrowDown")
    page.keyboard.press("9")                                  # full ink at (3, 3)
    settled(page)
    expected = np.zeros((8, 8))
    expected[1, 2], expected[2, 2], expected[3, 3] = 16, 9, 16
    np.testing.assert_array_equal(pad_pixels(page), expected)
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "pixel 3,3: 16"
    check_shown(page, model)
    # one tab stop: Tab leaves the grid for the next control
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "digit-erase"


def test_a_finger_draws_too(browser, site_url, model):
    context = browser.new_context(has_touch=True, viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        open_explorer(page, site_url)
        page.locator("#digit-pad").scroll_into_view_if_needed()
        box = page.locator("#digit-pad").bounding_box()
        cell = box["width"] / 8
        page.touchscreen.tap(box["x"] + 2.5 * cell, box["y"] + 5.5 * cell)
        settled(page)
        pixels = pad_pixels(page)
        assert pixels[5, 2] == 16 and pixels.sum() == 16  # a dot in a pixel's middle inks it alone
        check_shown(page, model)
    finally:
        context.close()


def test_what_if_a_weight_were_zero(page, site_url, model):
    """Edit W_head in this mode, draw again (the edit stays), then put the trained head back."""
    open_explorer(page, site_url)
    draw(page, [(1.0, 4.5), (7.0, 4.5)])
    W = model.W_head.copy()
    edit(page, "W_head[0,1]", "0")
    W[0, 1] = 0.0
    check_shown(page, model, W)
    assert "1 weight edited" in page.inner_text("#digit-edits")
    page.click("#digit-erase")
    draw(page, [(4.0, 4.5), (5.0, 4.5)])                     # erase the middle of the stroke
    pixels = pad_pixels(page)
    assert pixels[4, 4] == 0 and pixels[1, 4] == 16
    check_shown(page, model, W)                               # the edited head stays
    act(page, lambda: page.click("#digit-trained"))
    check_shown(page, model)
    assert "edited" not in page.inner_text("#digit-edits")


@pytest.mark.hosts("pyscript", "fallback")
def test_the_link_brings_the_drawing_back(page, site_url, context, model):
    open_explorer(page, site_url)
    draw(page, [(1.5, 1.5), (1.5, 6.0), (6.5, 3.0)])         # a "7"
    edit(page, "encoder_output[0,0,5]", "3")
    fragment = page_fragment(page)
    assert len(fragment) < 700
    other = context.new_page()
    open_explorer(other, site_url, fragment)
    # the link holds the image the model read: the other page's pad shows it, and reads it as is
    np.testing.assert_array_equal(pad_pixels(other), model_pixels(page))
    np.testing.assert_array_equal(model_pixels(other), model_pixels(page))
    np.testing.assert_array_equal(heatmap_z(other, "heatmap-logits"),
                                  heatmap_z(page, "heatmap-logits"))
    np.testing.assert_allclose(attention_shown(other), attention_shown(page), atol=0)
    z_L = model.encode(model_pixels(page)[None])
    z_L[0, 0, 5] = 3.0
    np.testing.assert_allclose(heatmap_z(other, "heatmap-logits"),
                               head(z_L[:, 0, :], model.W_head), atol=1e-12)
    other.close()
    # from 1200 px stage 1 is a third of the row: the edited cell scrolled its grid sideways,
    # back to its first cells, which the page's own reset (a link) leaves alone
    page.evaluate("""() => document.querySelectorAll('.grid-body')
        .forEach((e) => { e.scrollTop = 0; e.scrollLeft = 0; })""")
    page.wait_for_function("""() => Array.from(document.querySelectorAll('.grid-body'),
        (e) => e.scrollTop + e.scrollLeft).every((v) => v === 0)""")
