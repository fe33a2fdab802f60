"""Editing the inputs: cells, keyboard, paste, sizes, presets, and every bad-input path."""
import time
from urllib.parse import urlsplit

import numpy as np
import pytest

from pycore.explorer import decode_fragment, default_state, preset
from reference import WORKED_CLS, WORKED_W_HEAD, layer_norm_rows, reference_head

from .pagekit import (act, alert_text, edit, heatmap_z, load_link, logits_table, open_explorer,
                      page_fragment, renders, wait_render_after, worked_link)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_editing_a_cls_cell_recomputes_every_stage(page, site_url):
    open_explorer(page, site_url)
    start = time.monotonic()
    edit(page, "cls[0,1]", "4.5")
    waited_ms = (time.monotonic() - start) * 1000
    state = default_state()
    state.cls[0, 1] = 4.5
    # against the head in plain Python (tests/reference.py), not pycore's own trace
    np.testing.assert_allclose(heatmap_z(page, "heatmap-cls"), state.cls)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-normalized"), layer_norm_rows(state.cls), atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), reference_head(state.cls, state.W_head),
                               atol=1e-12)
    # The link now carries the edit.
    np.testing.assert_array_equal(decode_fragment(page_fragment(page)).cls, state.cls)
    # The page's own measure of this edit (from its input event to the end of its redraw) lies
    # within the time this test waited for it, from before the typing to the render signal.
    ms = float(page.evaluate("document.documentElement.dataset.lastRenderMs"))
    assert 0 < ms <= waited_ms + 1, "the page says %.1f ms; the test waited %.1f ms" % (ms, waited_ms)


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_editing_w_head_redraws_w_and_logits(page, site_url):
    open_explorer(page, site_url)
    edit(page, "W_head[3,2]", "\u22122")  # a Unicode minus, as typed on some keyboards
    state = default_state()
    state.W_head[3, 2] = -2
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), state.W_head)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(state.cls, state.W_head), atol=1e-12)


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_invalid_cell_is_marked_and_nothing_is_lost(page, site_url):
    open_explorer(page, site_url)
    cell = page.get_by_label("cls[1,2]", exact=True)
    for k, text in enumerate(["abc", "nan", "1,5", "--3", "1e400"]):
        before_z = heatmap_z(page, "heatmap-logits")
        before_url = page_fragment(page)
        cell.fill(text)
        page.wait_for_function("() => document.querySelector('[aria-label=\"cls[1,2]\"]')"
                               ".getAttribute('aria-invalid') === 'true'")
        assert "cls[1,2]" in alert_text(page), text
        np.testing.assert_array_equal(heatmap_z(page, "heatmap-logits"), before_z, err_msg=text)
        assert page_fragment(page) == before_url, text
        # Fixing the cell clears the mark and the alert, and the page computes again (a value
        # the cell did not hold yet, so that there is something to compute).
        edit(page, "cls[1,2]", "%g" % (0.5 + k))
        assert cell.get_attribute("aria-invalid") is None, text
        assert alert_text(page) == "", text
        cell.press("Tab")  # the entry ends: the next text is a new entry, of the value fixed here


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_an_empty_cell_is_no_error_until_it_is_left(page, site_url):
    """Emptying a cell to type a new number is not an error while typing; leaving it empty is,
    and the cell then shows the value it had (-1), which is still in effect everywhere."""
    open_explorer(page, site_url)
    before_z = heatmap_z(page, "heatmap-logits")
    before_url = page_fragment(page)
    cell = page.get_by_label("cls[1,2]", exact=True)
    cell.fill("")
    # not in effect yet, and no error: the cell is marked as pending, nothing is redrawn
    page.wait_for_function("() => document.querySelector('[aria-label=\"cls[1,2]\"]')"
                           ".classList.contains('pending')")
    assert alert_text(page) == "" and cell.get_attribute("aria-invalid") is None
    cell.press("Tab")
    page.wait_for_function(
        "() => document.getElementById('alert').textContent.includes('empty')")
    assert "cls[1,2]" in alert_text(page)
    assert cell.input_value() == "-1" and cell.get_attribute("class") == "cell"
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-logits"), before_z)
    assert page_fragment(page) == before_url


def test_keyboard_only_editing(page, site_url):
    open_explorer(page, site_url)
    page.get_by_label("cls[0,0]", exact=True).focus()
    page.keyboard.press("ArrowRight")  # the whole text is selected on focus: move right
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[0,1]"
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[1,1]"
    before = renders(page)
    page.keyboard.type("7")  # replaces the selected text
    wait_render_after(page, before)
    page.keyboard.press("Enter")  # Enter moves down; from the last row it stays
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[1,2]"
    state = default_state()
    state.cls[1, 1] = 7
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(state.cls, state.W_head), atol=1e-12)
    # The focused cell is visibly marked.
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none")
    # Escape undoes an invalid entry, even when pressed before Python has answered the entry:
    # the cell at once; the box showing the refusal of 'x' (if its answer came first) once the
    # answer to the entry taken back has come
    page.keyboard.type("x")
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.activeElement.value === '-1'", timeout=10000)
    assert page.evaluate("document.activeElement.getAttribute('aria-invalid')") is None
    page.wait_for_function("() => document.getElementById('alert').hidden", timeout=10000)
    assert alert_text(page) == ""
    # Tab leaves the grid in one step, and Shift+Tab comes back to the cell it left.
    page.keyboard.press("Tab")
    assert page.evaluate("!document.getElementById('grid-input').contains(document.activeElement)")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[1,2]"


def paste(page, label, text):
    before = renders(page)
    page.get_by_label(label, exact=True).evaluate(
        """(el, text) => {
            const data = new DataTransfer();
            data.setData('text/plain', text);
            el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
        }""", text)
    return before


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_paste_a_block_at_the_focused_cell(page, site_url):
    open_explorer(page, site_url)
    for text in ["1\t2\n3\t4\n", "1,2\n3,4", "[[1, 2], [3, 4]]", "np.array([[1,2],[3,4]])"]:
        load_link(page, worked_link())  # the worked example again: the paste changes W_head
        wait_render_after(page, paste(page, "W_head[1,1]", text))
        np.testing.assert_array_equal(heatmap_z(page, "heatmap-w")[1:3, 1:3], [[1, 2], [3, 4]],
                                      err_msg=repr(text))
        assert page.get_by_label("W_head[2,2]", exact=True).input_value() == "4", repr(text)


def test_paste_past_the_edge_is_refused(page, site_url):
    open_explorer(page, site_url)
    before = heatmap_z(page, "heatmap-w")
    paste(page, "W_head[3,2]", "1\t2\n3\t4")
    page.wait_for_function("() => document.getElementById('alert').textContent.length > 0")
    assert "W_head" in alert_text(page)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), before)


def test_resize_and_limits(page, site_url):
    open_explorer(page, site_url)
    page.fill("#dim-B", "3")
    page.fill("#dim-C", "5")
    act(page, lambda: page.click("#apply-dims"))
    assert heatmap_z(page, "heatmap-cls").shape == (3, 4)
    assert heatmap_z(page, "heatmap-logits").shape == (3, 5)
    assert page.get_by_label("cls[2,3]", exact=True).count() == 1
    assert page.get_by_label("W_head[3,4]", exact=True).count() == 1
    before = heatmap_z(page, "heatmap-logits")
    page.fill("#dim-B", "65")
    page.click("#apply-dims")
    page.wait_for_function("() => document.getElementById('alert').textContent.includes('64')")
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-logits"), before)


def test_presets_and_reset(page, site_url):
    open_explorer(page, site_url)
    page.select_option("#preset", "random")
    page.fill("#seed", "5")
    act(page, lambda: page.click("#load-preset"))
    state = preset("random", seed=5)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(state.cls, state.W_head), atol=1e-12)
    act(page, lambda: page.click("#reset"))
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               [[0.8854, -1.3914, 1.5811], [0.2, -0.1, -1.4]], atol=5e-5)


def test_vit_b16_sized_head(page, site_url):
    open_explorer(page, site_url)
    page.select_option("#preset", "vit-b16")
    act(page, lambda: page.click("#load-preset"))
    assert heatmap_z(page, "heatmap-w").shape == (768, 1000)
    # W_head is 768,000 values; only the cells in view are inputs.
    assert page.locator("#grid-w input").count() < 1000
    edit(page, "W_head[0,0]", "1")
    state = preset("vit-b16")
    state.W_head[0, 0] = 1
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(state.cls, state.W_head), atol=1e-9)
    # Keyboard navigation scrolls the virtual grid to far cells.
    page.get_by_label("W_head[0,0]", exact=True).focus()
    page.keyboard.press("Control+End")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "W_head[767,999]"
    # and back: the grid at its first cell again (the reused page's reset needs it there)
    page.keyboard.press("Control+Home")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "W_head[0,0]"
    page.wait_for_function("""() => Array.from(document.querySelectorAll('.grid-body'),
        (e) => e.scrollTop + e.scrollLeft).every((v) => v === 0)""")


def test_encoder_mode_edits(page, site_url):
    open_explorer(page, site_url)
    act(page, lambda: page.select_option("#mode", "encoder"))
    assert page.get_by_label("encoder_output[0,0,1]", exact=True).count() == 1
    before = heatmap_z(page, "heatmap-logits")
    edit(page, "encoder_output[0,1,1]", "9")  # a patch token: the head ignores it
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-logits"), before)
    edit(page, "encoder_output[0,0,1]", "9")  # the CLS token
    state = default_state()
    state.cls[0, 1] = 9
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(state.cls, state.W_head), atol=1e-12)
    page.fill("#dim-N1", "3")
    act(page, lambda: page.click("#apply-dims"))
    assert heatmap_z(page, "heatmap-encoder").shape == (6, 4)


def test_a_big_typed_in_state_reaches_the_url_after_a_pause(page, site_url):
    open_explorer(page, site_url)
    page.fill("#dim-D", "100")
    page.fill("#dim-C", "100")
    act(page, lambda: page.click("#apply-dims"))
    edit(page, "W_head[0,0]", "3")
    # The edit's answer carries no link; the page asks for it once typing pauses.
    page.wait_for_function("() => document.documentElement.dataset.linkPending === 'false'",
                           timeout=30000)
    state = decode_fragment(page_fragment(page))
    assert state.W_head.shape == (100, 100) and state.W_head[0, 0] == 3


def test_each_grid_is_a_form_that_enter_never_submits(page, site_url):
    """Each grid is a <form> of its own (Chrome's autofill then reads that grid at a keystroke,
    not every text field of the page: docs/performance.md). A form whose only text field is
    the one where Enter is pressed would be submitted: a 1 x 1 grid. Enter there must only end
    the entry (a submission would reload the page, or be refused by the page's CSP with a
    console error, which assert_page_clean reports)."""
    open_explorer(page, site_url)
    assert page.evaluate("""() => ['grid-input', 'grid-w'].map(
        id => document.getElementById(id).firstElementChild.tagName)""") == ["FORM", "FORM"]
    for dim, value in (("#dim-B", "1"), ("#dim-D", "1"), ("#dim-C", "1")):
        page.fill(dim, value)
    act(page, lambda: page.click("#apply-dims"))
    assert heatmap_z(page, "heatmap-w").shape == (1, 1)
    page.evaluate("() => { window.__notReloaded = true; }")
    opened = urlsplit(page.url)
    page.get_by_label("W_head[0,0]", exact=True).focus()
    page.keyboard.type("2.5")  # three edits: "2", "2.", "2.5"
    page.wait_for_function("""() => document.getElementById('heatmap-w').data[0].z[0][0] === 2.5
        && decodeURIComponent(location.hash).includes('"W_head":[[2.5]]')""", timeout=30000)
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)  # a submission, had there been one, would have begun by now
    assert page.evaluate("() => window.__notReloaded === true")
    assert urlsplit(page.url)[:4] == opened[:4]  # same page and query: only the fragment moved
    assert page.get_by_label("W_head[0,0]", exact=True).input_value() == "2.5"
    state = decode_fragment(page_fragment(page))
    assert state.W_head.tolist() == [[2.5]]
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(state.cls, state.W_head), atol=1e-12)


def test_the_tables_follow_each_edit_in_place_and_the_predicted_class_moves(page, site_url):
    """The statistics and logits tables of a new answer of the same shape have their numbers and
    marks changed in place (js/panels/text.js): after each edit, every number shown and the predicted
    class of each sample are the reference head's, and the rows are the ones first drawn."""
    open_explorer(page, site_url)
    page.evaluate("""() => { window.__rows = Array.from(
        document.querySelectorAll('#logits-table tbody tr, #stats tbody tr')); }""")
    W = [row[:] for row in WORKED_W_HEAD]
    for value in (9.0, -9.0, 0.5):  # sample 0 predicts class 0, then 2 again, sample 1 class 1
        edit(page, "W_head[0,0]", "%g" % value)
        W[0][0] = value
        logits = reference_head(WORKED_CLS, W)
        shown = logits_table(page)
        np.testing.assert_allclose([[float(x) for x in row] for row in shown], logits, atol=5e-5)
        predicted = page.evaluate("""() => Array.from(document.querySelectorAll('#logits-table tbody tr'))
            .map(tr => Array.from(tr.querySelectorAll('td')).findIndex(td => td.classList.contains('predicted')))""")
        assert predicted == [int(np.argmax(row)) for row in logits], value
        assert page.locator("#logits-table td.predicted").count() == 2
        assert page.evaluate("""() => window.__rows.every(tr => tr.isConnected)"""), value
    cls = [row[:] for row in WORKED_CLS]
    for value in (7.0, -2.5):  # each changes sample 1's mean and variance
        edit(page, "cls[1,3]", "%g" % value)
        cls[1][3] = value
        shown = page.evaluate("""() => Array.from(document.querySelectorAll('#stats tbody tr'))
            .map(tr => Array.from(tr.querySelectorAll('td')).map(td => Number(td.textContent)))""")
        for row, sample in zip(shown, cls):
            mean = sum(sample) / len(sample)
            var = sum((v - mean) ** 2 for v in sample) / len(sample)
            np.testing.assert_allclose(row, [mean, var, (var + 1e-6) ** 0.5], atol=5e-5)
        logits = reference_head(cls, W)
        np.testing.assert_allclose([[float(x) for x in row] for row in logits_table(page)],
                                   logits, atol=5e-5)
    assert page.evaluate("""() => window.__rows.every(tr => tr.isConnected)""")
