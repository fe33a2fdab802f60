"""Projector mode: with large text on a 720p or 768p projector, everything a
walk-through step outlines, its title and its equation are on screen at once; a presenter's
clicker drives the walk from anywhere on the page; the walk starts from the top of the page."""
import pytest
from playwright.sync_api import expect

from .pagekit import STEP_REVEALED, act, open_explorer, renders, set_viewport, wait_render_after

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

# Each outlined cell range (shape "highlight") in screen pixels, and the walk-through's own
# boxes: what a student must see of each step.
TARGETS = """() => {
  const boxes = [];
  for (const id of ['heatmap-encoder', 'heatmap-cls', 'heatmap-normalized', 'heatmap-w', 'heatmap-logits']) {
    const el = document.getElementById(id);
    if (!el || !el.layout || !el._fullLayout) continue;
    const area = el.querySelector('.nsewdrag').getBoundingClientRect();
    const { xaxis, yaxis } = el._fullLayout;
    for (const s of (el.layout.shapes || []).filter((s) => s.name === 'highlight')) {
      const xs = [area.left + xaxis.l2p(s.x0), area.left + xaxis.l2p(s.x1)];
      const ys = [area.top + yaxis.l2p(s.y0), area.top + yaxis.l2p(s.y1)];
      boxes.push([id, Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]);
    }
  }
  const walk = document.getElementById('walk');
  const own = ['walk-title', 'walk-math', 'walk-note', 'walk-next', 'walk-back'].map((id) => {
    const r = document.getElementById(id).getBoundingClientRect();
    return [id, r.left, r.top, r.right, r.bottom];
  });
  const r = walk.getBoundingClientRect();
  return { boxes, own, panel: [r.left, r.top, r.right, r.bottom],
           panelScrolls: walk.scrollHeight > walk.clientHeight + 1, view: [innerWidth, innerHeight] };
}"""


def press(page, key):
    before = renders(page)
    page.keyboard.press(key)
    wait_render_after(page, before)


def settled(page):
    """The step drawn and scrolled into view (js/panels/walkthrough.js reveals after a redraw, and again
    300 ms after the layout has changed: its data-revealed and data-settling), a frame later."""
    page.wait_for_function(STEP_REVEALED)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return page.evaluate(TARGETS)


def check_step(seen, where):
    width, height = seen["view"]
    px0, py0, px1, py1 = seen["panel"]
    assert not seen["panelScrolls"], "%s: the walk-through's panel scrolls" % where
    assert seen["boxes"], "%s: nothing outlined" % where
    for name, x0, y0, x1, y1 in seen["boxes"] + seen["own"]:
        assert x0 >= -1 and y0 >= -1 and x1 <= width + 1 and y1 <= height + 1, (
            "%s: %s at (%d, %d)-(%d, %d) is not inside the %d x %d window"
            % (where, name, x0, y0, x1, y1, width, height))
    for name, x0, y0, x1, y1 in seen["boxes"]:
        covered = min(x1, px1) - max(x0, px0) > 1 and min(y1, py1) - max(y0, py0) > 1
        assert not covered, "%s: the walk-through's panel covers %s" % (where, name)


def test_every_step_is_on_screen_at_once_on_a_small_projector(page, site_url, reset_page):
    for width, height in [(1280, 720), (1366, 768)]:
        reset_page()
        set_viewport(page, {"width": width, "height": height})
        open_explorer(page, site_url)
        page.click("#text-size")
        # Start is in the toolbar, in view without scrolling past the pipeline
        start = page.locator("#walk-open").bounding_box()
        assert start["y"] + start["height"] <= height, start
        act(page, lambda: page.click("#walk-open"))
        for step in range(7):
            if step:
                press(page, "PageDown")
            expect(page.locator("#walk-position")).to_have_text("Step %d of 7" % (step + 1))
            check_step(settled(page), "%d x %d, step %d" % (width, height, step + 1))


def check_essentials(seen, where):
    """What a step needs at any zoom: its title, equation, Back and Next, and every outlined cell
    range inside the window and not under the panel (the panel may scroll to its note)."""
    width, height = seen["view"]
    px0, py0, px1, py1 = seen["panel"]
    assert seen["boxes"], "%s: nothing outlined" % where
    own = [box for box in seen["own"] if box[0] != "walk-note"]
    for name, x0, y0, x1, y1 in seen["boxes"] + own:
        assert x0 >= -1 and y0 >= -1 and x1 <= width + 1 and y1 <= height + 1, (
            "%s: %s at (%d, %d)-(%d, %d) is not inside the %d x %d window"
            % (where, name, x0, y0, x1, y1, width, height))
    for name, x0, y0, x1, y1 in seen["boxes"]:
        covered = min(x1, px1) - max(x0, px0) > 1 and min(y1, py1) - max(y0, py0) > 1
        assert not covered, "%s: the walk-through's panel covers %s" % (where, name)


def test_every_step_and_its_figures_at_200_percent_zoom_and_on_a_phone(page, site_url, reset_page):
    """1920 x 1080 at 200 % and 300 % zoom (960 x 540 and 640 x 360 CSS px) with Large text, and
    two phones: each step's equation and the cells it outlines on screen together (at 960 x 540
    the panel was a bottom sheet 253 px tall, its equation at y = 534, the outlined W_head column
    off screen; at 320 x 640 step 5's equation ended at y = 677, and at 640 x 360 the outlined
    W_head column and logits were below the window); the step buttons are there too."""
    for width, height, large in [(960, 540, True), (640, 360, True), (390, 844, False), (320, 640, False)]:
        reset_page()
        set_viewport(page, {"width": width, "height": height})
        open_explorer(page, site_url)
        if large:
            page.click("#text-size")
        act(page, lambda: page.click("#walk-open"))
        for step in range(7):
            if step:
                press(page, "PageDown")
            expect(page.locator("#walk-position")).to_have_text("Step %d of 7" % (step + 1))
            where = "%d x %d, step %d" % (width, height, step + 1)
            check_essentials(settled(page), where)
            buttons = page.locator("#walk-progress button")
            assert buttons.count() == 7 and buttons.nth(step).is_visible(), where
            assert buttons.nth(step).get_attribute("aria-current") == "step", where
        act(page, lambda: page.click("#walk-open"))


def test_a_clicker_drives_the_walk_from_anywhere_but_not_while_typing(page, site_url):
    open_explorer(page, site_url)
    act(page, lambda: page.click("#walk-open"))
    position = page.locator("#walk-position")
    page.evaluate("document.activeElement.blur()")  # focus on the page itself
    for key, shown in [("PageDown", 2), ("ArrowRight", 3), ("PageDown", 4), ("PageUp", 3), ("ArrowLeft", 2)]:
        press(page, key)
        expect(position).to_have_text("Step %d of 7" % shown)
    page.click("#h-softmax")  # a click elsewhere on the page, far from the panel
    press(page, "PageDown")
    expect(position).to_have_text("Step 3 of 7")
    # the page's own scrolling keys scroll it, and leave the step (a keyboard user scrolls)
    page.evaluate("() => { document.activeElement.blur(); window.scrollTo(0, 0); }")
    for key in ["ArrowDown", "Space"]:
        page.keyboard.press(key)
    page.wait_for_function("() => window.scrollY > 0")
    page.wait_for_timeout(300)
    expect(position).to_have_text("Step 3 of 7")
    page.focus("#walk-next")  # inside the panel ↓ moves it; Space presses Next once, not twice
    press(page, "ArrowDown")
    expect(position).to_have_text("Step 4 of 7")
    press(page, "Space")
    page.wait_for_timeout(300)
    expect(position).to_have_text("Step 5 of 7")
    press(page, "ArrowUp")
    expect(position).to_have_text("Step 4 of 7")
    cell = page.get_by_label("W_head[0,0]", exact=True)
    cell.focus()
    for key in ["PageDown", "ArrowRight", "Space"]:
        page.keyboard.press(key)
    page.wait_for_timeout(300)
    expect(position).to_have_text("Step 4 of 7")  # the keys were the cell's
    page.keyboard.press("Escape")
    act(page, lambda: page.click("#walk-open"))  # the same button ends it
    expect(page.locator("#walk")).to_have_attribute("data-active", "false")


# The sizes a 1080p projector shows, in CSS pixels: each heatmap's cell numbers and tick labels
# as Plotly drew them (its SVG text), and each equation's KaTeX text.
SIZES = """() => {
  const px = (e) => parseFloat(getComputedStyle(e).fontSize);
  const figures = ['heatmap-cls', 'heatmap-normalized', 'heatmap-w', 'heatmap-logits'].map((id) => {
    const el = document.getElementById(id);
    const ticks = Array.from(el.querySelectorAll('.xtick text, .ytick text'), px);
    // the numbers the page paints in the cells (js/heatmap/draw.js says how many, and their size)
    const count = Number(el.dataset.cellNumbers), cell = Number(el.dataset.cellNumberPx);
    return [id, Math.min(...ticks), ticks.length, count ? cell : 0, count];
  });
  const maths = Array.from(document.querySelectorAll('#step-list .katex, #walk-math .katex'), px);
  return { figures, maths: [Math.min(...maths), maths.length] };
}"""


def test_large_text_is_legible_from_the_back_on_a_1080p_projector(page, site_url):
    set_viewport(page, {"width": 1920, "height": 1080})
    open_explorer(page, site_url)
    page.click("#text-size")
    act(page, lambda: page.click("#walk-open"))
    page.locator("#steps").scroll_into_view_if_needed()  # its equations are typeset when in view
    page.wait_for_function("() => document.querySelectorAll('#step-list .katex').length >= 3")
    page.wait_for_timeout(500)  # the figures drawn again at the new size
    sizes = page.evaluate(SIZES)
    for name, tick, ticks, cell, cells in sizes["figures"]:
        assert ticks and tick >= 24, (name, tick)
        assert cells and cell >= 24, (name, cell)
    smallest, count = sizes["maths"]
    assert count >= 4 and smallest >= 32, sizes["maths"]
    press(page, "PageDown")  # the clicker: the step's cells come back into view
    check_step(settled(page), "1920 x 1080, step 2")


def test_paper_and_the_example_menu_say_only_what_is_there(page, site_url, reset_page):
    """Printed for a handout, the page leaves out its buttons, the empty drawing pad and the
    charts of a training that has not run; the Example menu says when the pipeline shows the
    drawn digit's model rather than the worked example."""
    open_explorer(page, site_url)
    page.emulate_media(media="print")
    shown = page.evaluate("""() => Object.fromEntries(['digit', 'ft-step', 'loss-curve', 'walk',
        'heatmap-cls', 'heatmap-logits', 'contributions'].map((id) =>
        [id, document.getElementById(id).getClientRects().length > 0
             && getComputedStyle(document.getElementById(id)).visibility !== 'hidden']))""")
    assert shown == {"digit": False, "ft-step": False, "loss-curve": False, "walk": False,
                     "heatmap-cls": True, "heatmap-logits": True, "contributions": False}, shown
    page.emulate_media(media="screen")
    assert page.locator("#preset").input_value() == "worked"
    act(page, lambda: page.click("#digit-gallery button >> nth=0"))
    assert page.locator("#preset").input_value() == "digit"
    assert "Drawn digit" in page.locator("#preset option:checked").inner_text()
    page.emulate_media(media="print")
    assert page.evaluate("document.getElementById('digit').getClientRects().length") > 0
    page.emulate_media(media="null")


CELL_TEXTS = """id => { const d = document.getElementById(id).dataset;
    return [Number(d.cellNumbers), Number(d.cellNumberWidest), Number(d.cellWidth)]; }"""


def test_a_phones_logits_never_run_together(page, site_url):
    """On a phone the drawn digit's 10 logits, printed in 34 px cells, would read as one string
    ("9.57-0.33-1.01..."): where a cell cannot hold its number it shows none, and the hover and
    the table do."""
    set_viewport(page, {"width": 390, "height": 844})
    open_explorer(page, site_url)
    act(page, lambda: page.click("#digit-gallery button >> nth=0"))
    for width in (390, 1100):  # at 1100 px stage 4 is half the row (from 1200 px, a quarter)
        set_viewport(page, {"width": width, "height": 844})
        page.wait_for_timeout(700)  # Plotly's resize, then the figures drawn again (250 ms)
        count, widest, cell = page.evaluate(CELL_TEXTS, "heatmap-logits")
        assert widest <= cell, (width, widest, cell)  # each painted number fits its cell
        assert (count == 10) == (width == 1100), (width, count)


MENU_TEXT_FITS = """() => {
    const s = document.getElementById('preset');
    const style = getComputedStyle(s);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = style.font;
    const text = ctx.measureText(s.options[s.selectedIndex].text).width;
    // the text, the select's padding and its arrow (about 20 px in every engine here)
    const needed = text + parseFloat(style.paddingLeft) + parseFloat(style.paddingRight) + 20;
    return [needed, s.getBoundingClientRect().width, document.documentElement.scrollWidth];
}"""


def test_a_phones_example_menu_shows_its_whole_choice(page, site_url):
    """At 390 px the Example menu read "Worked example (B=2, D=4, C=3" (a width kept for a
    label beside it, though the label wraps above it there); it must show the whole choice
    without widening the page."""
    set_viewport(page, {"width": 390, "height": 844})
    open_explorer(page, site_url)
    needed, width, page_width = page.evaluate(MENU_TEXT_FITS)
    assert needed <= width, (needed, width)
    assert page_width <= 390, page_width
