"""The lecture walk-through and the mistake panels that say what changed: what the
page SHOWS (the equation's text, the outlined cells, data[0].z, the URL) against NumPy
computations written here."""
import numpy as np
import pytest
from playwright.sync_api import expect

from pycore.explorer import preset, state_to_json

from .pagekit import (act, edit, heatmap_z, open_explorer, renders, set_viewport, state_fragment,
                      wait_render_after)
from .test_engines_keyboard import TAB_STOP

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

CLS = np.array([[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]])  # the worked example
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]])


def head(cls, W):
    """mean, variance, h_hat and logits, written out here (not the code under test)."""
    mu = cls.mean(axis=1)
    var = ((cls - mu[:, None]) ** 2).mean(axis=1)
    h_hat = (cls - mu[:, None]) / np.sqrt(var[:, None] + 1e-6)
    return mu, var, h_hat, h_hat @ W


def shown_math(page):
    """The walk-through's equation as it reads on screen: KaTeX's visible text, ASCII minus, no
    white space (nor the zero-width spaces that KaTeX puts between aligned lines)."""
    text = page.locator("#walk-math .katex-html").inner_text().replace("\u2212", "-")
    return "".join(ch for ch in text if not ch.isspace() and ch != "\u200b")


def outlined(page, element_id):
    """The cells the walk-through outlines in a heatmap: [[row0, col0, row1, col1]]."""
    return page.evaluate(
        """id => ((document.getElementById(id).layout || {}).shapes || [])
                 .filter(s => s.name === 'highlight')
                 .map(s => [s.y0 + 0.5, s.x0 + 0.5, s.y1 - 0.5, s.x1 - 0.5])""", element_id)


def press(page, key):
    before = renders(page)
    page.keyboard.press(key)
    wait_render_after(page, before)


def start_walk(page):
    act(page, lambda: page.click("#walk-start"))
    page.wait_for_function("() => document.activeElement.id === 'walk-next'")


def test_each_step_shows_the_chosen_samples_numbers_and_outlines_them(page, site_url):
    open_explorer(page, site_url)
    start_walk(page)
    act(page, lambda: page.select_option("#walk-sample", "1"))
    page.focus("#walk-next")
    mu, var, h_hat, logits = head(CLS, W)
    title = page.locator("#walk-title")
    expect(title).to_have_text("Step 1 of 7: the CLS token of sample 1")
    assert outlined(page, "heatmap-cls") == [[1, 0, 1, 3]]
    press(page, "ArrowRight")
    expect(title).to_contain_text("mean")
    assert shown_math(page).endswith("%.4f" % mu[1])
    press(page, "ArrowRight")
    assert shown_math(page).endswith("%.4f" % var[1])
    press(page, "ArrowRight")
    math = shown_math(page)
    assert all(("%.4f" % v) in math for v in h_hat[1])
    assert outlined(page, "heatmap-normalized") == [[1, 0, 1, 3]]
    press(page, "ArrowRight")  # one dot product: the predicted class by default
    c = int(np.argmax(logits[1]))
    expect(title).to_have_text("Step 5 of 7: one dot product: sample 1, class %d" % c)
    math = shown_math(page)
    for d in range(4):
        assert ("%.4f" % h_hat[1, d]).lstrip("-") in math and ("%.4f" % W[d, c]).lstrip("-") in math
    assert math.endswith("%.4f" % (h_hat[1] @ W[:, c]))
    assert outlined(page, "heatmap-w") == [[0, c, 3, c]]
    assert outlined(page, "heatmap-logits") == [[1, c, 1, c]]
    assert outlined(page, "heatmap-cls") == []  # the earlier step's outline is gone
    act(page, lambda: page.select_option("#walk-class", "1"))  # another class
    assert shown_math(page).endswith("%.4f" % (h_hat[1] @ W[:, 1]))
    page.focus("#walk-next")
    press(page, "ArrowRight")
    assert all(("%.4f" % v) in shown_math(page) for v in logits[1])
    press(page, "ArrowRight")
    expect(title).to_have_text("Step 7 of 7: the prediction for sample 1: class %d" % c)
    page.keyboard.press("ArrowRight")  # the last step: nothing further
    press(page, "ArrowLeft")
    expect(page.locator("#walk-position")).to_have_text("Step 6 of 7")


def test_arrow_keys_stay_with_the_grid_when_it_has_focus(page, site_url):
    open_explorer(page, site_url)
    start_walk(page)
    page.get_by_label("cls[0,0]", exact=True).focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[0,1]"
    expect(page.locator("#walk-position")).to_have_text("Step 1 of 7")


def test_typing_in_a_cell_redoes_the_step_with_the_new_numbers(page, site_url):
    open_explorer(page, site_url)
    start_walk(page)
    press(page, "ArrowRight")  # the mean of sample 0
    cell = page.get_by_label("cls[0,3]", exact=True)
    cell.focus()
    before = renders(page)
    cell.press_sequentially("-5")
    page.keyboard.press("Tab")
    wait_render_after(page, before)
    cls = CLS.copy()
    cls[0, 3] = -5
    page.wait_for_function("t => document.getElementById('walk-math').textContent.includes(t)",
                           arg="%.4f" % cls[0].mean())
    assert shown_math(page).endswith("%.4f" % cls[0].mean())


@pytest.mark.hosts("pyscript", "fallback")  # the numbers from NumPy 1.17 too
def test_the_link_reopens_the_step_on_a_fresh_page(page, site_url, context):
    """A link opened in a new page reproduces the view: the numbers (an edited W_head, the
    logits) and the walk-through at its step."""
    open_explorer(page, site_url)
    edit(page, "W_head[1,0]", "-0.75")  # W_head is not in the step shown: only the link has it
    start_walk(page)
    act(page, lambda: page.select_option("#walk-sample", "1"))
    page.focus("#walk-next")
    for _ in range(3):
        press(page, "ArrowRight")
    fragment = page.evaluate("location.hash")
    assert "walk" in fragment
    fresh = context.new_page()
    open_explorer(fresh, site_url, fragment)
    expect(fresh.locator("#walk-title")).to_have_text("Step 4 of 7: normalize sample 1")
    _, _, h_hat, _ = head(CLS, W)
    assert all(("%.4f" % v) in shown_math(fresh) for v in h_hat[1])
    assert outlined(fresh, "heatmap-normalized") == [[1, 0, 1, 3]]
    w = W.copy()
    w[1, 0] = -0.75
    np.testing.assert_array_equal(heatmap_z(fresh, "heatmap-w"), w)
    np.testing.assert_array_equal(heatmap_z(fresh, "heatmap-w"), heatmap_z(page, "heatmap-w"))
    np.testing.assert_array_equal(heatmap_z(fresh, "heatmap-logits"),
                                  heatmap_z(page, "heatmap-logits"))
    fresh.close()


def test_walk_reads_on_a_projector_with_large_text(page, site_url):
    set_viewport(page, {"width": 1920, "height": 1080})
    open_explorer(page, site_url)
    page.click("#text-size")  # the toolbar's large-text toggle, as a lecturer would
    assert page.evaluate("document.documentElement.classList.contains('large')")
    start_walk(page)
    press(page, "ArrowRight")
    box = page.locator("#walk").bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 1080 + 1, "the walk-through is off screen"
    sizes = page.evaluate("""() => ['walk-title', 'walk-math', 'walk-note'].map(id =>
        parseFloat(getComputedStyle(document.getElementById(id)).fontSize))""")
    assert sizes[0] >= 28 and sizes[1] >= 32 and sizes[2] >= 20, sizes
    # the equation fits: no sideways scrolling at projector size
    assert page.evaluate("(e => e.scrollWidth <= e.clientWidth)(document.getElementById('walk-math'))")


def equals_signs(page):
    """Where the walk-through's equation draws its "=" signs: [(left, top)] in px, in order."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('#walk-math .katex-html .mrel'))
        .filter(e => e.textContent === '=')
        .map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top]; })""")


def test_every_step_fits_the_width_and_keeps_its_equals_signs_under_each_other(
        page, site_url, reset_page):
    """On a phone a long sum (the dot product's above all) wraps inside the walk-through instead
    of scrolling sideways; on a laptop it stays one line. Either way each line's "=" stands
    under the first."""
    for width, height in [(390, 844), (360, 740), (1280, 800)]:
        reset_page()
        try:
            walk_at_width(page, site_url, width, height)
        except AssertionError as exc:
            raise AssertionError("at %d x %d px: %s" % (width, height, exc)) from exc


def walk_at_width(page, site_url, width, height):
    set_viewport(page, {"width": width, "height": height})
    open_explorer(page, site_url)
    start_walk(page)
    for step in range(7):
        if step:
            press(page, "ArrowRight")
        expect(page.locator("#walk-position")).to_have_text("Step %d of 7" % (step + 1))
        sizes = page.evaluate("""() => ['walk-math', 'walk'].map(id => {
            const e = document.getElementById(id); return [e.scrollWidth, e.clientWidth]; })
            .concat([[document.documentElement.scrollWidth, innerWidth]])""")
        for (scroll, client), name in zip(sizes, ["#walk-math", "#walk", "the page"]):
            assert scroll <= client + 1, "step %d: %s is %d px wide in %d px at %d px" % (
                step + 1, name, scroll, client, width)
    press(page, "ArrowLeft")  # back from the prediction to the dot product
    press(page, "ArrowLeft")
    expect(page.locator("#walk-title")).to_contain_text("one dot product")
    signs = equals_signs(page)
    assert len(signs) == 3  # logit = sum, = the terms, = the value: one per line
    assert max(x for x, _ in signs) - min(x for x, _ in signs) < 1, signs
    assert signs[0][1] < signs[1][1] < signs[2][1], signs
    logits = head(CLS, W)[3]
    assert shown_math(page).endswith("%.4f" % logits[0, 2])
    pluses = page.evaluate("""() => Array.from(document.querySelectorAll('#walk-math .katex-html .mbin'))
        .filter(e => e.textContent === '+').map(e => Math.round(e.getBoundingClientRect().top))""")
    assert len(pluses) == 3
    if width >= 1000:
        assert len(set(pluses)) == 1, "the sum wraps at %d px" % width


def test_comparisons_share_one_colour_scale_and_say_what_changed(page, site_url):
    state = preset("encoder")
    open_explorer(page, site_url, state_fragment(state_to_json(state)))
    act(page, lambda: page.select_option("#mistake", "last_position"))
    ranges = page.evaluate("""() => ['heatmap-mistake-correct', 'heatmap-mistake'].map(id => {
        const t = document.getElementById(id).data[0]; return [t.zmin, t.zmax]; })""")
    z = state.encoder_output
    _, _, _, right = head(z[:, 0, :], state.W_head)
    _, _, _, wrong = head(z[:, -1, :], state.W_head)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-mistake"), wrong, atol=1e-12)
    top = max(np.abs(right).max(), np.abs(wrong).max())
    assert ranges[0] == ranges[1]
    np.testing.assert_allclose(ranges[0], [-top, top], rtol=1e-12)
    changed = [(b, r, w) for b, (r, w) in enumerate(zip(right.argmax(1), wrong.argmax(1))) if r != w]
    assert changed
    line = page.locator("#mistake-changes").inner_text()
    for b, r, w in changed:
        assert "sample %d: class %d \u2192 class %d" % (b, r, w) in line
    assert line.startswith("Prediction changed for %d of %d" % (len(changed), len(right)))
    marks = page.evaluate("""() => ['heatmap-mistake-correct', 'heatmap-mistake'].map(id =>
        document.getElementById(id).layout.shapes.filter(s => s.name === 'mark')
            .map(s => [s.y0 + 0.5, s.x0 + 0.5]))""")
    assert marks == [[[b, int(c)] for b, c in enumerate(right.argmax(1))],
                     [[b, int(c)] for b, c in enumerate(wrong.argmax(1))]]


def test_a_mistake_that_needs_patch_tokens_switches_to_the_encoder_output(page, site_url):
    open_explorer(page, site_url)
    offer = page.locator("#mistake-explanation").inner_text()
    assert offer.startswith("Choose one of 4 classic mistakes") and "Position -1" in offer
    page.click("#compare-mistake")  # next to the logits: one click to the select
    assert page.evaluate("document.activeElement.id") == "mistake"
    act(page, lambda: page.select_option("#mistake", "last_position"))
    assert page.locator("#mode").input_value() == "encoder"
    notice = page.locator("#mistake-notice")
    expect(notice).to_be_visible()
    assert "full encoder output" in notice.inner_text()
    z = heatmap_z(page, "heatmap-encoder").reshape(2, 5, 4)
    np.testing.assert_array_equal(z[:, 0, :], CLS)  # the CLS vectors kept at position 0
    _, _, _, right = head(z[:, 0, :], W)
    _, _, _, wrong = head(z[:, -1, :], W)
    diff = heatmap_z(page, "heatmap-mistake-diff")
    np.testing.assert_allclose(diff, wrong - right, atol=1e-12)
    assert np.abs(diff).max() > 0.1  # not a difference of zeros


def test_small_d_is_explained_next_to_the_logits_and_in_the_walk(page, site_url, reset_page):
    for D, words in [("1", "D = 1"), ("2", "D = 2")]:
        reset_page()
        open_explorer(page, site_url)
        page.locator("#dim-D").fill("")
        page.locator("#dim-D").press_sequentially(D)
        act(page, lambda: page.click("#apply-dims"))
        expect(page.locator("#prediction")).to_contain_text(words)
        start_walk(page)
        press(page, "End")
        expect(page.locator("#walk-notes")).to_contain_text(words)


def test_a_constant_row_and_its_tie_are_explained(page, site_url):
    open_explorer(page, site_url)
    for d in range(4):
        cell = page.get_by_label("cls[1,%d]" % d, exact=True)
        cell.focus()
        before = renders(page)
        cell.press_sequentially("5")
        page.keyboard.press("Tab")
        wait_render_after(page, before)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-logits")[1], [0, 0, 0])
    prediction = page.locator("#prediction")
    expect(prediction).to_contain_text("Sample 1's features are all equal")
    expect(prediction).to_contain_text("classes 0, 1, 2 tie")
    expect(prediction).to_contain_text("class 0")
    start_walk(page)
    act(page, lambda: page.select_option("#walk-sample", "1"))
    page.focus("#walk-next")
    press(page, "End")
    notes = page.locator("#walk-notes")
    expect(notes).to_contain_text("tie")
    expect(notes).to_contain_text("lowest index")


@pytest.mark.parametrize("size", [{"width": 1280, "height": 720}, {"width": 390, "height": 844}])
def test_no_tab_stop_is_hidden_behind_the_walk_through(page, site_url, size):
    """WCAG 2.4.11: with the walk-through's panel pinned over the bottom of the window, every
    Tab stop of the page, from the top, is at least partly on screen when it has the focus
    (once 32 of 60 at 1280 x 720 were entirely behind the panel)."""
    set_viewport(page, size)
    open_explorer(page, site_url)
    start_walk(page)
    page.evaluate("() => { window.scrollTo(0, 0); document.activeElement.blur(); }")
    hidden, seen = [], set()
    for _ in range(90):
        page.keyboard.press("Tab")
        name, visible = page.evaluate(TAB_STOP)[:2]
        seen.add(name)
        if not visible:
            hidden.append(name)
    assert len(seen) > 40, seen     # the tour went through the page
    assert hidden == [], hidden
    act(page, lambda: page.click("#walk-start"))  # ends it
    # at 390 px the Tab stops scrolled the grids sideways: back to their first cells, which the
    # page's own reset (a link) leaves alone
    page.evaluate("""() => document.querySelectorAll('.grid-body')
        .forEach((e) => { e.scrollTop = 0; e.scrollLeft = 0; })""")
    page.wait_for_function("""() => Array.from(document.querySelectorAll('.grid-body'),
        (e) => e.scrollTop + e.scrollLeft).every((v) => v === 0)""")


def test_a_step_is_said_whole_once(page, site_url):
    """Next said only "Step 2 of 7": the step's title and note are said with it now, in one
    polite live region (the position itself is no longer a live region of its own)."""
    open_explorer(page, site_url)
    start_walk(page)
    for k in (2, 3):
        press(page, "ArrowRight")
        title = page.inner_text("#walk-title")
        note = page.inner_text("#walk-note")
        said = page.evaluate("() => document.getElementById('walk-said').textContent")
        assert title.startswith("Step %d of 7: " % k) and said == ("%s. %s" % (title, note)).strip(), said
    assert page.get_attribute("#walk-said", "aria-live") == "polite"
    assert page.get_attribute("#walk-position", "aria-live") is None
    act(page, lambda: page.click("#walk-start"))  # ends it


# For `ms` after it is called, at every frame: each shown figure's "Show the numbers" and colour
# key that something else covers (the element at a point inside it is not it, nor inside it),
# and each figure drawn wider than its box by more than a pixel, as [what, where].
COVERED_WHILE = """(ms) => new Promise((done) => {
    const found = new Set(), end = performance.now() + ms;
    const frame = () => {
        for (const box of document.querySelectorAll('.comparisons .plot-box, .pipeline .plot-box')) {
            const plot = box.querySelector('.js-plotly-plot');
            if (!plot || !plot.data || !box.getClientRects().length) continue;
            const svg = plot.querySelector('svg.main-svg');
            const over = svg && svg.getBoundingClientRect().right - box.getBoundingClientRect().right;
            for (const part of box.querySelectorAll('details.numbers-toggle > summary, .colour-key')) {
                const r = part.getBoundingClientRect();
                if (!r.width || r.bottom < 0 || r.top > innerHeight) continue;
                const at = document.elementFromPoint(r.left + 4, r.top + r.height / 2);
                if (at && at !== part && !part.contains(at)) found.add(plot.id + ' ' + part.className + ' under ' + (at.closest('[id]') || at).id);
            }
            // a drawing wider than its box is painted past it unless the box cuts it
            const cut = ['clip', 'hidden'].includes(getComputedStyle(box).overflowX);
            if (over > 1 && !cut) found.add(plot.id + ' painted past its box');
        }
        if (performance.now() < end) requestAnimationFrame(frame); else done([...found]);
    };
    requestAnimationFrame(frame);
})"""


def test_ending_the_walk_with_the_comparisons_in_view_covers_nothing(page, site_url):
    """At 1280 x 720 with Large text, a mistake and another head chosen, the walk-through ended
    with the comparisons in view: the page's width changes as its docked panel goes, and the
    comparisons' figures kept their docked width until Plotly's resize of them a moment later
    (up to seconds on a busy machine), the "Correct head" heatmap painting over the next
    figure's "Show the numbers" and colour key. No figure covers another's, at any frame."""
    set_viewport(page, {"width": 1280, "height": 720})
    open_explorer(page, site_url)
    page.click("#text-size")
    act(page, lambda: page.select_option("#mistake", "no_layernorm"))
    act(page, lambda: page.select_option("#variant", "affine"))
    start_walk(page)
    assert page.evaluate("document.documentElement.dataset.walkDock") == "true"
    page.evaluate("() => document.getElementById('mistakes').scrollIntoView()")
    page.wait_for_timeout(600)
    assert page.evaluate(COVERED_WHILE, 300) == []  # docked, settled
    page.evaluate("() => document.getElementById('walk-start').click()")  # ends it, width changes
    assert page.evaluate(COVERED_WHILE, 1500) == []
    assert page.evaluate("document.documentElement.dataset.walkDock") == "false"
