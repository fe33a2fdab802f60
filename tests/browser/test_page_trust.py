"""A page a teacher can trust: an edit keeps only what was meant, sharing never lies, and the
boot tells the truth while Python loads. Expected numbers come from NumPy written out here
(tests/browser/trustkit.py), never from pycore. Nothing cut off: test_page_fit.py; keyboards and
screen readers: test_page_keyboard.py.
"""
import json
import re
import time
from urllib.parse import unquote

import numpy as np
import pytest

from .pagekit import (BOOT_TIMEOUT_MS, act, alert_text, heatmap_z, open_explorer, page_fragment,
                      renders, state_fragment, wait_ready, wait_render_after)
from .trustkit import CLS, W, cell, head, settle, type_keys

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


# ---- edits commit what was meant ----------------------------------------------------------

@pytest.mark.hosts("pyscript", "fallback")
def test_an_entry_that_ends_invalid_keeps_nothing_of_it(page, site_url):
    """Typing previews valid prefixes (1, 1e9, 3, 0), but Enter on the whole, invalid entry
    leaves every stage and the link as before the edit, and the cell shows its old value."""
    open_explorer(page, site_url)
    before_url, before_logits = page_fragment(page), heatmap_z(page, "heatmap-logits")
    np.testing.assert_allclose(before_logits, head(CLS, W), atol=1e-12)
    for text in ["1e999", "3/4", "1,5", "0x10"]:
        box = type_keys(page, "cls[0,1]", text)
        settle(page)
        assert "cls[0,1]" in alert_text(page), text
        box.press("Enter")
        page.wait_for_function("() => document.querySelector('[aria-label=\"cls[0,1]\"]').value === '-1'")
        settle(page)
        np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), CLS, err_msg=text)
        np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(CLS, W), atol=1e-12,
                                   err_msg=text)
        assert page_fragment(page) == before_url, text
        assert box.get_attribute("aria-invalid") is None, text


@pytest.mark.fresh_page  # the warm-up runs once, after the boot
@pytest.mark.hosts("pyscript", "fallback")
def test_pythons_warm_up_never_touches_what_the_page_shows(page, site_url):
    """Once ready, the page has Python practise edits in a session of its own (web/js/runtime/warmup.js).
    A person typing at once is answered in between; the practice ends ("done") and has changed
    nothing shown: cells, heatmaps, link, the render count."""
    open_explorer(page, site_url)
    assert page.evaluate("document.documentElement.dataset.warmUp") == "0 of 48"
    box = type_keys(page, "cls[1,2]", "2.5")
    box.press("Tab")
    settle(page)
    expected = CLS.copy()
    expected[1, 2] = 2.5
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    shown = (renders(page), page_fragment(page),
             page.evaluate("document.documentElement.dataset.lastRenderMs"))
    progress = set()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        progress.add(page.evaluate("document.documentElement.dataset.warmUp"))
        if "done" in progress:
            break
        time.sleep(0.05)
    assert "done" in progress, progress
    assert len(progress) >= 3  # it counted its way there ("12 of 48", ...)
    time.sleep(0.3)
    assert (renders(page), page_fragment(page),
            page.evaluate("document.documentElement.dataset.lastRenderMs")) == shown
    cells = page.evaluate("""() => Object.fromEntries(Array.from(
        document.querySelectorAll('#grid-input input, #grid-w input'), c => [c.getAttribute('aria-label'), c.value]))""")
    for (name, m) in (("cls", expected), ("W_head", W)):
        for (i, j), v in np.ndenumerate(m):
            assert float(cells["%s[%d,%d]" % (name, i, j)].replace("\u2212", "-")) == v
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), W)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(expected, W), atol=1e-12)
    link = json.loads(unquote(page_fragment(page).split("state=", 1)[1]))
    np.testing.assert_array_equal(link["cls"], expected)
    np.testing.assert_array_equal(link["W_head"], W)
    # and Python's state is the person's alone: the next edit shows it and nothing else
    w = W.copy()
    w[0, 0] = 1.5
    before = renders(page)
    type_keys(page, "W_head[0,0]", "1.5")
    wait_render_after(page, before)
    settle(page)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), w)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(expected, w), atol=1e-12)
    link = json.loads(unquote(page_fragment(page).split("state=", 1)[1]))
    assert (link["cls"], link["W_head"]) == (expected.tolist(), w.tolist())


def test_escape_restores_the_text_from_before_the_edit(page, site_url):
    open_explorer(page, site_url)
    box = type_keys(page, "W_head[1,2]", "25")  # valid all the way: previewed while typing
    page.wait_for_function("() => document.getElementById('heatmap-w').data[0].z[1][2] === 25")
    box.press("Escape")
    page.wait_for_function("() => document.getElementById('heatmap-w').data[0].z[1][2] === -0.5")
    assert box.input_value() == "-0.5"
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(CLS, W), atol=1e-12)


def test_text_that_can_still_become_a_number_raises_no_alert(page, site_url):
    open_explorer(page, site_url)
    for start in ["-", "1e", ".", "-."]:
        box = type_keys(page, "cls[1,0]", start)
        settle(page)
        assert alert_text(page) == "" and box.get_attribute("aria-invalid") is None, start
        assert page.locator("[role=alert]:visible").count() == 0, start
        box.press_sequentially("5", delay=30)
        number = float(start + "5") if start != "1e" else 1e5
        page.wait_for_function("v => document.getElementById('heatmap-cls').data[0].z[1][0] === v",
                               arg=number)
        expected = CLS.copy()
        expected[1, 0] = number
        np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), head(expected, W), atol=1e-9,
                                   err_msg=start)
        box.press("Tab")  # the entry ends: the next one selects the cell's text as it is entered


def test_the_focused_cell_shows_what_a_real_paste_put_there(page, site_url, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_explorer(page, site_url)
    page.evaluate("navigator.clipboard.writeText('9\\t8\\n7\\t6')")
    box = cell(page, "cls[0,1]")
    box.click()
    before = renders(page)
    page.keyboard.press("Control+V")
    wait_render_after(page, before)
    expected = CLS.copy()
    expected[0:2, 1:3] = [[9, 8], [7, 6]]
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[0,1]"
    assert box.input_value() == "9"  # the focused cell too, not only its neighbours
    assert cell(page, "cls[1,2]").input_value() == "6"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    assert box.input_value() == "9"


def test_a_new_link_redraws_the_focused_cell(page, site_url):
    open_explorer(page, site_url)
    box = cell(page, "cls[0,0]")
    box.click()
    state = {"cls": [[5, 1, 2, 3], [0, 1, 0, 1]], "W_head": W.tolist()}
    before = renders(page)
    page.evaluate("f => { location.hash = f; }", state_fragment(state)[1:])
    wait_render_after(page, before)
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "cls[0,0]"
    assert box.input_value() == "5"
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               head(np.array(state["cls"], float), W), atol=1e-12)


# ---- sharing never lies ----------------------------------------------------------------------

def set_dims(page, **dims):
    for name, value in dims.items():
        box = page.locator("#dim-" + name)
        box.click()
        box.press("Control+A")
        box.press_sequentially(str(value), delay=20)
    act(page, lambda: page.locator("#apply-dims").click())


def test_copy_link_refuses_a_state_too_big_for_a_link(page, site_url, context):
    """6,528 typed-in numbers at full precision make a link of more than 100 kB: Copy link
    leaves the clipboard alone, says why with the right count, and offers the JSON instead."""
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_explorer(page, site_url)
    set_dims(page, D=64, C=100)
    w = np.random.default_rng(7).standard_normal((64, 100))
    text = "\n".join("\t".join(repr(float(x)) for x in row) for row in w)
    page.evaluate("t => navigator.clipboard.writeText(t)", text)
    cell(page, "W_head[0,0]").click()
    before = renders(page)
    page.keyboard.press("Control+V")
    wait_render_after(page, before, timeout=60000)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), w)
    page.evaluate("navigator.clipboard.writeText('left alone')")
    page.locator("#copy-link").click()
    page.wait_for_selector("#export-dialog[open]")
    assert page.inner_text("#export-title") == "This state is too big for a link"
    note = page.inner_text("#export-message")
    assert "{:,}".format(2 * 64 + 64 * 100) in note and "too many for a link" in note
    assert page_fragment(page) == ""  # the address bar no longer holds the state before the paste
    assert page.evaluate("navigator.clipboard.readText()") == "left alone"
    assert "copied" not in page.locator("#toast").inner_text().lower()
    assert page.locator("#export-copy").is_hidden()  # no link to copy anyway
    with page.expect_download() as info:
        page.locator("#export-as-json").click()
    assert info.value.suggested_filename == "vit-head-state.json"
    with open(info.value.path(), encoding="utf-8") as f:
        shown = json.load(f)
    np.testing.assert_array_equal(np.array(shown["W_head"], dtype=float), w)


# ---- the boot tells the truth ------------------------------------------------------------------

@pytest.mark.fresh_context  # its subject is the boot (and its routes must see every download)
@pytest.mark.hosts("pyscript", "fallback")
def test_while_python_loads_cells_show_the_link_and_refuse_typing(page, site_url, site_host):
    """Hold the runtime's biggest download: meanwhile the grids show the link's own numbers,
    read-only, typing there says why, and the progress counts megabytes."""
    held = []
    page.add_init_script("""
        window.__bootTexts = [];
        new MutationObserver(() => {
          const el = document.getElementById("boot-status");
          if (el) window.__bootTexts.push(el.textContent);
        }).observe(document, {subtree: true, childList: true, characterData: true});
    """)
    wasm = re.compile(r"\.wasm(\.gz)?$")  # the PyScript host serves it gzipped
    page.route(wasm, lambda route: held.append(route))
    # The fallback host's other large download is held too until the page's script listens:
    # statuses said before then are shown at once, only the newest, and a quick download's
    # "x of y MB" would be replaced by "Starting Python" unseen (CI saw this under load).
    data, data_held = re.compile(r"pyodide\.asm\.data$"), []
    if site_host == "fallback":
        page.route(data, lambda route: data_held.append(route))
    state = {"cls": [[1.5, 2, 3, 4], [4, 3, 2, 1]], "W_head": W.tolist()}
    page.goto(site_url + "index.html" + state_fragment(state))
    page.wait_for_function("() => document.querySelector('[aria-label=\"cls[0,0]\"]') !== null")
    deadline = time.monotonic() + 60
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert held, "the runtime's .wasm was never requested"
    box = cell(page, "cls[0,0]")
    assert box.input_value() == "1.5" and box.evaluate("e => e.readOnly")
    assert page.locator("#dim-D").input_value() == "4"
    box.click()
    box.press("7")
    page.wait_for_function("() => document.getElementById('toast').textContent.length > 0")
    assert "still starting" in page.locator("#toast").inner_text()
    assert box.input_value() == "1.5"
    for route in data_held:
        route.continue_()
    # the progress comes from the runtime's other downloads as they stream in: wait for it (the
    # .wasm is still held), then check what was shown
    page.wait_for_function(r"() => window.__bootTexts.some(t => /\d+\.\d of \d+\.\d MB/.test(t))",
                           timeout=30000)
    texts = page.evaluate("window.__bootTexts")
    assert any(re.search(r"\d+\.\d of \d+\.\d MB", t) for t in texts), texts
    for route in held:
        route.continue_()
    page.unroute(wasm)
    wait_ready(page, BOOT_TIMEOUT_MS)
    assert not box.evaluate("e => e.readOnly")
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               head(np.array(state["cls"]), W), atol=1e-12)
