"""Scrubbing a number (js/grid/scrub.js) with a mouse and the keyboard in Chromium, and what the page
then shows: the cells' numbers and colours on the screen, every stage against NumPy, the link,
what a screen reader hears. The same keys and a finger on the handle run in every engine in
test_engines.py.
"""
import numpy as np
import pytest

from pycore.explorer import decode_fragment, default_state
from reference import layer_norm_rows, reference_head

from .pagekit import (DEFAULT_LINK, heatmap_z, load_link, on_bridge, open_explorer, page_fragment,
                      set_viewport)
from .test_page_bitmap import assert_screen_shows

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

Z = "([id, r, c]) => document.getElementById(id).data[0].z[r][c]"


def value_of(page, element_id, r, c):
    return page.evaluate(Z, [element_id, r, c])


def wait_value(page, element_id, r, c, want):
    page.wait_for_function("([id, r, c, v]) => document.getElementById(id).data[0].z[r][c] === v",
                           arg=[element_id, r, c, want])


def settled(page):
    """Wait until the page's link is written (it follows a scrub once the changes pause)."""
    page.wait_for_function("() => document.documentElement.dataset.linkPending === 'false'")


def assert_every_stage(page, state):
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), state.cls)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), state.W_head)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-normalized"), layer_norm_rows(state.cls),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(state.cls, state.W_head), rtol=0, atol=1e-12)


def test_keys_step_by_point_one_one_and_a_hundredth_and_esc_puts_the_number_back(page, site_url):
    open_explorer(page, site_url)
    state = default_state()
    cell = page.get_by_label("cls[1,2]", exact=True)   # -1 in the worked example
    cell.click()
    page.evaluate("""() => { window.__scrubSaid = [];
        const region = document.getElementById('grid-input-scrub-said');
        new MutationObserver(() => window.__scrubSaid.push(region.textContent))
            .observe(region, { childList: true, characterData: true, subtree: true }); }""")
    page.keyboard.press("Alt+ArrowUp")            # +0.1
    page.keyboard.press("Shift+Alt+ArrowUp")      # +1
    page.keyboard.press("Control+Alt+ArrowDown")  # -0.01
    wait_value(page, "heatmap-cls", 1, 2, 0.09)
    state.cls[1, 2] = 0.09
    assert cell.input_value() == "0.09"
    assert_every_stage(page, state)
    # said once, where the steps ended, once they stop (not at each step)
    page.wait_for_function("() => window.__scrubSaid.length > 0")
    page.wait_for_timeout(800)
    assert page.evaluate("() => window.__scrubSaid") == ["cls[1,2] = 0.09"]
    settled(page)
    np.testing.assert_array_equal(decode_fragment(page_fragment(page)).cls, state.cls)
    page.keyboard.press("Escape")
    wait_value(page, "heatmap-cls", 1, 2, -1)
    assert cell.input_value() == "-1"
    # a plain arrow still moves to the next cell
    page.keyboard.press("ArrowUp")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[0,2]"


def test_the_handle_never_covers_the_number_and_the_hint_says_how_to_scrub(page, site_url):
    """The focused number's text stops where the handle starts (in Firefox the handle once hid
    all of a focused "2"), and the hint under the grid names the drag and the keys."""
    open_explorer(page, site_url)
    for label in ("cls[0,0]", "W_head[3,2]"):
        page.get_by_label(label, exact=True).click()
        page.wait_for_selector(".scrub-handle:not([hidden])")
        text_end, handle_start = page.evaluate("""() => {
            const cell = document.activeElement, style = getComputedStyle(cell);
            const handle = cell.closest('.grid').querySelector('.scrub-handle:not([hidden])');
            return [cell.getBoundingClientRect().right - parseFloat(style.paddingRight)
                    - parseFloat(style.borderRightWidth), handle.getBoundingClientRect().left]; }""")
        assert text_end <= handle_start + 0.5, (label, text_end, handle_start)
    hint = page.locator("#stage-input .hint").inner_text()
    assert "drag the handle" in hint and "Alt+\u2191" in hint


def test_a_mouse_drag_sideways_on_a_cell_scrubs_it_and_the_cells_are_recoloured_in_place(page, site_url):
    open_explorer(page, site_url)
    # count Plotly's full redraws from here: a change of values must not need one
    page.evaluate("""() => { const react = window.Plotly.react; window.__reacts = 0;
        window.Plotly.react = function (...args) { window.__reacts += 1; return react.apply(this, args); }; }""")
    state = default_state()
    cell = page.get_by_label("W_head[1,2]", exact=True)   # -0.5, not focused
    cell.scroll_into_view_if_needed()
    box = cell.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for dx in range(2, 42, 2):        # 40 px to the right: +0.40
        page.mouse.move(x + dx, y)
    page.mouse.up()
    wait_value(page, "heatmap-w", 1, 2, -0.1)
    settled(page)
    state.W_head[1, 2] = -0.1
    assert page.get_by_label("W_head[1,2]", exact=True).input_value() == "-0.1"
    assert_every_stage(page, state)
    np.testing.assert_array_equal(decode_fragment(page_fragment(page)).W_head, state.W_head)
    assert page.evaluate("window.__reacts") == 0, "a change of values redrew a figure with Plotly.react"
    # what is on the screen: each cell's colour from the colour scale (away from its number)
    page.locator("#heatmap-w").scroll_into_view_if_needed()
    assert_screen_shows(page, "heatmap-w", state.W_head, inset=0.3)
    # Esc during a drag (of the focused cell's handle: a drag inside a focused cell selects
    # its text, as in any text field): the number it started from, everywhere
    handle = page.locator("#grid-w .scrub-handle").bounding_box()
    x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for dx in range(2, 30, 2):
        page.mouse.move(x - dx, y)
    page.wait_for_function("() => document.getElementById('heatmap-w').data[0].z[1][2] < -0.2")
    page.keyboard.press("Escape")
    page.mouse.up()
    wait_value(page, "heatmap-w", 1, 2, -0.1)
    settled(page)
    assert_every_stage(page, state)
    np.testing.assert_array_equal(decode_fragment(page_fragment(page)).W_head, state.W_head)


def test_a_fast_drag_ends_at_its_last_value_whatever_was_skipped(page, site_url):
    open_explorer(page, site_url)
    page.get_by_label("cls[0,0]", exact=True).click()   # 2 in the worked example
    page.locator("#grid-input .scrub-handle").scroll_into_view_if_needed()
    handle = page.locator("#grid-input .scrub-handle").bounding_box()
    x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for dx in range(1, 151):   # 150 moves as fast as they come: many merge into later ones
        page.mouse.move(x + dx, y)
    page.mouse.up()
    wait_value(page, "heatmap-cls", 0, 0, 3.5)
    settled(page)
    state = default_state()
    state.cls[0, 0] = 3.5
    assert_every_stage(page, state)
    assert page.get_by_label("cls[0,0]", exact=True).input_value() == "3.5"


# Answers held back while window.__answerDelay (ms) is set.
DELAY_ANSWERS = on_bridge("""const call = bridge.call.bind(bridge);
      bridge.call = (request) => call(request).then((answer) => new Promise((done) =>
        setTimeout(() => done(answer), window.__answerDelay || 0)));""")

# Each frame's [cell's text, its heatmap's value, time], as the frame paints them: read by a
# ResizeObserver, which runs after every animation-frame callback and the layout, just before
# the paint (a tiny element is resized every frame to call it).
WATCH_FRAMES = """([label, id, r, c]) => {
  const cell = document.querySelector(`[aria-label="${label}"]`);
  const probe = document.createElement('div');
  probe.style.cssText = 'position: fixed; left: 0; top: 0; height: 1px; width: 1px; visibility: hidden';
  document.body.append(probe);
  window.__pairs = [];
  window.__keys = [];
  addEventListener('keydown', () => window.__keys.push(performance.now()), true);
  const seen = new ResizeObserver(() => {
    window.__pairs.push([cell.value, document.getElementById(id).data[0].z[r][c], performance.now()]);
  });
  seen.observe(probe);
  const look = () => {
    probe.style.width = probe.style.width === '1px' ? '2px' : '1px';
    window.__watch = requestAnimationFrame(look);
  };
  look();
  window.__stopWatch = () => { cancelAnimationFrame(window.__watch); seen.disconnect(); probe.remove(); };
}"""


@pytest.mark.fresh_page  # its init script holds the answers back on request
def test_with_slow_answers_a_scrubbed_cell_keeps_pace_and_an_entry_taken_back_shows_no_refusal(
        page, site_url):
    """The cell's new number is painted in the frame that paints its answer: no frame shows the
    cell ahead of the heatmaps (the frame spent on it would hold the answer back to the next),
    unless the answer took longer than a tenth of a second: an answer that slow does not hold
    the cell back. (While a change is on its way, the next is not sent: when it is drawn, the
    cell shows the newest number. So each step here waits for its own answer.) And a text taken
    back by Escape before its answer came shows no refusal when it comes (it once did, until the
    answer to the entry taken back cleared it)."""
    page.add_init_script(DELAY_ANSWERS)
    open_explorer(page, site_url)
    cell = page.get_by_label("cls[1,2]", exact=True)   # -1 in the worked example
    cell.click()
    page.evaluate(WATCH_FRAMES, ["cls[1,2]", "heatmap-cls", 1, 2])
    for value in (-0.9, -0.8, -0.7, -0.6, -0.5, -0.4):
        page.keyboard.press("Alt+ArrowUp")
        wait_value(page, "heatmap-cls", 1, 2, value)
        page.wait_for_timeout(30)
    seen = page.evaluate("() => { window.__stopWatch(); return [window.__pairs, window.__keys]; }")
    pairs, keys = seen
    assert len(pairs) > 10 and len(keys) >= 6, seen   # frames were drawn throughout
    ahead = []
    for text, z, at in pairs:
        since = at - max([k for k in keys if k <= at] or [at])
        if float(text) != z and since < 100:
            ahead.append((text, z, round(since, 1)))
    assert ahead == [], "frames showed the cell ahead of its heatmap (text, z, ms after the key)"
    assert {float(t) for t, _, _ in pairs} >= {-0.9, -0.4}
    settled(page)

    page.evaluate("() => { window.__answerDelay = 600; }")
    page.keyboard.press("Alt+ArrowUp")
    page.wait_for_function("() => document.activeElement.value === '-0.3'", timeout=400)
    assert value_of(page, "heatmap-cls", 1, 2) == -0.4   # its answer is still on its way
    wait_value(page, "heatmap-cls", 1, 2, -0.3)
    page.evaluate("() => { window.__answerDelay = 0; }")
    settled(page)
    state = default_state()
    state.cls[1, 2] = -0.3
    assert_every_stage(page, state)

    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")  # the cell entered again: Escape takes an entry back to -0.3
    page.evaluate("""() => { window.__answerDelay = 300; window.__alertShown = 0;
        new MutationObserver(() => { if (!document.getElementById('alert').hidden) window.__alertShown++; })
            .observe(document.getElementById('alert'), { attributes: true, childList: true }); }""")
    page.keyboard.type("x")
    page.keyboard.press("Escape")  # before the answer to "x" has come
    page.wait_for_function("() => document.activeElement.value === '-0.3'", timeout=1000)
    page.wait_for_timeout(900)  # the answers to "x" and to the entry taken back have come
    page.evaluate("() => { window.__answerDelay = 0; }")
    assert page.evaluate("() => window.__alertShown") == 0
    assert page.evaluate("() => document.getElementById('alert').hidden")
    assert page.evaluate("() => document.activeElement.getAttribute('aria-invalid')") is None
    assert_every_stage(page, state)


def test_the_fine_tuning_settings_scrub_too(page, site_url):
    open_explorer(page, site_url)
    lr = page.locator("#ft-lr")
    lr.scroll_into_view_if_needed()
    before = float(lr.input_value())
    lr.focus()
    page.keyboard.press("Alt+ArrowUp")
    page.keyboard.press("Shift+Alt+ArrowUp")
    want = round(before + 1.1, 6)
    # Python's answer sets the field to the rate in effect: the stepped one, accepted
    page.wait_for_function("v => Number(document.getElementById('ft-lr').value) === v"
                           " && document.getElementById('ft-lr').getAttribute('aria-invalid') === 'false'",
                           arg=want)
    page.keyboard.press("Tab")
    assert float(lr.input_value()) == want
    # a mouse drag sideways on the (unfocused) input scale: 0.01 per pixel
    scale = page.locator("#ft-scale")
    start = float(scale.input_value())
    box = scale.bounding_box()
    x, y = box["x"] + 10, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for dx in range(2, 22, 2):
        page.mouse.move(x + dx, y)
    page.mouse.up()
    page.wait_for_function("v => Number(document.getElementById('ft-scale').value) === v"
                           " && document.getElementById('ft-scale').getAttribute('aria-invalid') === 'false'",
                           arg=round(start + 0.2, 6))
    # the settings as they were (the reused page is checked against a fresh one's after a test)
    for field, value in ((lr, before), (scale, start)):
        field.fill(repr(value))
        field.press("Tab")
    page.wait_for_function("v => Number(document.getElementById('ft-scale').value) === v", arg=start)
    page.wait_for_function("v => Number(document.getElementById('ft-lr').value) === v", arg=before)


# The panels an answer writes as text, each compared after a scrub with the same page loading
# the scrub's final link (every section built from scratch).
PANELS = "ids => ids.map((id) => document.getElementById(id).textContent)"
PANEL_IDS = ["stats", "logits-table", "prediction", "top-classes", "ft-labels", "ft-status",
             "ft-reading", "mistake-explanation", "variant-explanation"]

WATCH_DEFERRED = """() => {
    const root = document.documentElement;
    window.__deferred = [];
    new MutationObserver(() => window.__deferred.push(root.dataset.deferred))
        .observe(root, { attributes: true, attributeFilter: ['data-deferred'] });
}"""


def caught_up(page):
    """Wait until the link is written and no panel is left out of date."""
    settled(page)
    page.wait_for_function("() => document.documentElement.dataset.deferred === ''")


def test_a_scrub_leaves_the_panels_out_of_view_for_the_pause_and_ends_with_all_of_it_exact(page, site_url):
    """While a number is scrubbed the panels out of view (the fine-tuning panel at the bottom)
    wait; once the changes pause, the heatmaps, the tables, the panels and the link all show
    the final state: the heatmaps as NumPy computes it, the text as a page that loads that
    state's link writes it."""
    open_explorer(page, site_url)
    page.evaluate(WATCH_DEFERRED)
    page.get_by_label("cls[0,1]", exact=True).click()   # -1 in the worked example
    page.keyboard.down("Alt")
    page.keyboard.down("Shift")
    for _ in range(3):   # held: the key's auto-repeat, 1 per step
        page.keyboard.down("ArrowUp")
    page.keyboard.up("ArrowUp")
    page.keyboard.up("Shift")
    page.keyboard.up("Alt")
    wait_value(page, "heatmap-cls", 0, 1, 2)
    caught_up(page)
    # the answers while the key was held left the fine-tuning panel (out of view) for later
    assert any("finetune" in (d or "").split() for d in page.evaluate("() => window.__deferred"))
    state = default_state()
    state.cls[0, 1] = 2   # sample 0's prediction moves from class 2 to class 0
    assert_every_stage(page, state)
    fragment = page_fragment(page)
    np.testing.assert_array_equal(decode_fragment(fragment).cls, state.cls)
    scrubbed = page.evaluate(PANELS, PANEL_IDS)
    assert "0" in page.locator("#ft-labels .ft-pred").first.text_content()
    load_link(page, DEFAULT_LINK)   # the page loads a link only when it is not its own
    load_link(page, fragment)
    assert page.evaluate(PANELS, PANEL_IDS) == scrubbed


def test_panels_in_view_follow_every_change_and_one_scrolled_into_view_is_brought_up_to_date(page, site_url):
    """On a screen tall enough for the whole page no panel shown is left for later: each answer
    brings them. On an ordinary one, the fine-tuning panel left out while a key was held is
    up to date once it is scrolled into view."""
    open_explorer(page, site_url)
    size = page.viewport_size
    page.evaluate(WATCH_DEFERRED)
    cell = page.get_by_label("cls[0,1]", exact=True)   # -1 in the worked example
    try:
        set_viewport(page, {"width": size["width"], "height": 20000})
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        cell.click()
        page.keyboard.down("Alt")
        page.keyboard.down("Shift")
        for _ in range(3):   # held: -1 to 2, where sample 0's prediction moves to class 0
            page.keyboard.down("ArrowUp")
        page.keyboard.up("ArrowUp")
        wait_value(page, "heatmap-cls", 0, 1, 2)
        page.wait_for_function("() => document.querySelector('#ft-labels .ft-pred').textContent.endsWith(' 0')")
        settled(page)
        # no answer left out a panel on the screen (only the hidden ones: the top-k table is for
        # 21 classes and more, and no logit's terms are selected)
        left = {name for d in page.evaluate("() => window.__deferred") for name in (d or "").split()}
        assert left <= {"top_k", "contributions"}, left
    finally:
        set_viewport(page, size)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    for _ in range(2):   # held: 2 to 0, sample 0 back to class 2; the fine-tuning panel is now
        page.keyboard.down("ArrowDown")   # out of view, left for later
    wait_value(page, "heatmap-cls", 0, 1, 0)
    page.wait_for_function("() => window.__deferred.some((d) => (d || '').split(' ').includes('finetune'))")
    page.evaluate("() => document.getElementById('finetune').scrollIntoView({ block: 'start' })")
    caught_up(page)
    assert page.locator("#ft-labels .ft-pred").first.text_content().endswith(" 2")
    page.keyboard.up("ArrowDown")
    page.keyboard.up("Shift")
    page.keyboard.up("Alt")
    caught_up(page)
