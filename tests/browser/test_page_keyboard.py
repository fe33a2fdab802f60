"""A page a teacher can trust with a keyboard and a screen reader: Tab stops where it should with
its focus visible, every heatmap's numbers are a table, and what changes is said once, in words.
Expected numbers come from NumPy written out here (tests/browser/trustkit.py).
"""
import numpy as np
import pytest

from .engines.kit import contrast, rgb
from .pagekit import alert_text, open_explorer
from .trustkit import CLS, W, cell, head, load_preset, type_keys

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


# ---- keyboard and screen readers ---------------------------------------------------------------

def test_tab_never_stops_in_a_chart_toolbar_and_focus_is_visible(page, site_url):
    open_explorer(page, site_url)
    page.locator("body").click(position={"x": 1, "y": 1})
    stops = []
    for _ in range(90):  # the toolbar's controls, then the grids
        page.keyboard.press("Tab")
        stops.append(page.evaluate("""() => { const e = document.activeElement;
            return [e.closest('.modebar') ? 'modebar' : '', e.tagName, e.id || e.getAttribute('aria-label') || ''] }"""))
    assert not [s for s in stops if s[0] == "modebar"]
    assert any(s[2].startswith("cls[") for s in stops) and any(s[2].startswith("W_head[") for s in stops)
    cell(page, "cls[0,0]").focus()
    ring = page.evaluate("getComputedStyle(document.activeElement).outlineColor")
    paper = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert contrast(rgb(ring), rgb(paper)) >= 3
    border = page.evaluate("getComputedStyle(document.getElementById('copy-link')).borderTopColor")
    assert contrast(rgb(border), rgb(paper)) >= 3


def test_every_heatmap_has_its_numbers_as_a_table(page, site_url):
    open_explorer(page, site_url)
    expected = {"heatmap-cls": CLS, "heatmap-w": W, "heatmap-logits": head(CLS, W)}
    mu = CLS.mean(axis=1, keepdims=True)
    expected["heatmap-normalized"] = (CLS - mu) / np.sqrt(((CLS - mu) ** 2).mean(1, keepdims=True) + 1e-6)
    for plot_id, matrix in expected.items():
        toggle = page.locator("#%s ~ details.numbers-toggle" % plot_id)
        toggle.locator("summary").click()
        # the table is built on the details' toggle event, a task after the click's
        toggle.locator("tbody tr").first.wait_for()
        rows = toggle.evaluate("""d => [...d.querySelectorAll('tbody tr')].map(
            tr => [...tr.querySelectorAll('td')].map(td => td.textContent))""")
        shown = np.array([[float(x) for x in row] for row in rows])
        np.testing.assert_allclose(shown, matrix, atol=5e-5, err_msg=plot_id)
        assert toggle.locator("th[scope=col]").count() == matrix.shape[1]


def test_a_large_heatmaps_numbers_are_read_a_window_at_a_time_without_a_mouse(page, site_url):
    """At ViT-B/16 size (h_hat 2 x 768, W_head 768 x 1000) "Show the numbers" lists 24 x 24 at a
    time; two fields, typed into, choose the window's first row and column, so every value can
    be read with the keyboard. Checked against LayerNorm written out here on the preset's CLS."""
    from pycore.explorer.state.presets import preset
    open_explorer(page, site_url)
    load_preset(page, "vit-b16")
    state = preset("vit-b16")
    cls, w = state.cls, state.W_head
    mu = cls.mean(axis=1, keepdims=True)
    h_hat = (cls - mu) / np.sqrt(((cls - mu) ** 2).mean(axis=1, keepdims=True) + 1e-6)
    for plot_id, matrix, row, col in (("heatmap-normalized", h_hat, 0, 700),
                                      ("heatmap-w", w, 750, 990)):
        toggle = page.locator("#%s ~ details.numbers-toggle" % plot_id)
        toggle.locator("summary").click()
        toggle.locator("tbody tr").first.wait_for()
        for name, value in (("row", row), ("col", col)):
            field = toggle.locator("input[name=%s]" % name)
            field.click()
            page.keyboard.press("Control+a")
            field.press_sequentially(str(value), delay=20)
            field.press("Tab")
        page.wait_for_function("""([id, r, c]) => {
            const d = document.querySelector('#' + id + ' ~ details.numbers-toggle');
            const th = d.querySelector('tbody th'), col = d.querySelector('thead th');
            return th && th.textContent.endsWith(' ' + r) && col && col.textContent.endsWith(' ' + c); }""",
                               arg=[plot_id, row, col])
        rows = toggle.evaluate("""d => [...d.querySelectorAll('tbody tr')].map(
            tr => [...tr.querySelectorAll('td')].map(td => td.textContent))""")
        want = matrix[row:row + 24, col:col + 24]
        np.testing.assert_allclose(np.array(rows, dtype=float), want, atol=5e-5, err_msg=plot_id)
        caption = toggle.locator("caption").inner_text()
        assert "rows %d to %d of %d" % (row, row + want.shape[0] - 1, matrix.shape[0]) in caption
        assert "columns %d to %d of %d" % (col, col + want.shape[1] - 1, matrix.shape[1]) in caption
        toggle.locator("summary").click()  # closed again, as the next test expects


def test_the_prediction_is_said_in_words_and_announced(page, site_url):
    open_explorer(page, site_url)
    region = page.locator("#prediction")
    said = page.locator("#prediction-said")
    assert said.get_attribute("aria-live") == "polite" and region.get_attribute("aria-live") is None
    logits = head(CLS, W)
    words = "; ".join("%s %d predicts class %d (logit %.4f)" % ("Sample" if b == 0 else "sample", b,
                                                                 int(np.argmax(row)), row.max())
                      for b, row in enumerate(logits)) + "."
    assert region.inner_text().startswith(words)
    page.wait_for_function("(w) => document.getElementById('prediction-said').textContent.startsWith(w)",
                           arg=words)
    # A constant row: every logit 0, a tie of all three classes, said as such.
    type_keys(page, "cls[1,0]", "1").press("Tab")
    for d in (1, 2, 3):
        type_keys(page, "cls[1,%d]" % d, "1").press("Tab")
    page.wait_for_function("() => document.getElementById('prediction').textContent.includes('tie')")
    text = region.inner_text()
    assert "Sample 1's features are all equal" in text and "classes 0, 1, 2 tie" in text


# Every live region's text changes from now on: [region id or role, text]. The observers of an
# earlier test on the same (reused) page are disconnected first, or each change would count twice.
WATCH_SAID = """() => {
    for (const o of window.__sayers || []) o.disconnect();
    window.__said = [];
    window.__sayers = Array.from(document.querySelectorAll('[aria-live], [role=alert], [role=status]'), (el) => {
        const o = new MutationObserver(() => window.__said.push([el.id || el.getAttribute('role'), el.textContent]));
        o.observe(el, { childList: true, characterData: true, subtree: true });
        return o;
    });
}"""


def test_an_edit_typed_key_by_key_is_said_once(page, site_url):
    """Typing "-1.25" into a cell and pressing Enter is one action: its result, the prediction,
    is said once when the typing is over; the fine-tuning panel's status, whose loss the edit
    changes too, is not said (once 4 announcements for this, the unrelated status among them)."""
    open_explorer(page, site_url)
    page.wait_for_timeout(800)  # what the page said as it opened is said
    page.evaluate(WATCH_SAID)
    type_keys(page, "cls[0,1]", "-1.25").press("Enter")
    page.wait_for_function("() => document.getElementById('prediction-said').textContent && "
                           "window.__said.length > 0")
    page.wait_for_timeout(1500)  # a calm second and more: nothing else is said
    said = page.evaluate("() => window.__said")
    assert [region for region, _ in said] == ["prediction-said"], said
    assert said[0][1] == page.inner_text("#prediction")


def test_a_refused_entry_is_shown_as_it_is_typed_and_said_once_when_it_ends(page, site_url):
    """Typing "abc" into a cell is refused at each key ('a', 'ab', 'abc' are not numbers): the
    alert box shows it and the cell is marked invalid, but nothing is said until the entry ends;
    Enter then says it once (each key used to fire an assertive alert). The cell is not described
    by the box: Orca said a focused field's changed description key by key ('ab', then 'abc' is
    not a number: benchmarks/screen_reader/)."""
    open_explorer(page, site_url)
    page.wait_for_timeout(800)
    page.evaluate(WATCH_SAID)
    box = type_keys(page, "cls[0,0]", "abc")
    page.wait_for_function("() => document.getElementById('alert').textContent.includes(\"'abc'\")")
    assert alert_text(page) == "cls[0,0]: 'abc' is not a number"
    assert box.get_attribute("aria-invalid") == "true"
    assert box.get_attribute("aria-describedby") is None
    page.wait_for_timeout(700)
    assert page.evaluate("() => window.__said") == []
    box.press("Enter")
    page.wait_for_function("() => window.__said.length > 0")
    page.wait_for_timeout(1000)
    assert page.evaluate("() => window.__said") == [["alert-said", "cls[0,0]: 'abc' is not a number"]]
    assert alert_text(page) == "cls[0,0]: 'abc' is not a number"


def test_dimension_labels_are_words(page, site_url):
    open_explorer(page, site_url)
    for dim, word in (("B", "samples"), ("D", "features"), ("C", "classes")):
        name = page.locator("#dim-" + dim).evaluate(
            "e => (e.labels && e.labels[0] ? e.labels[0].textContent : e.getAttribute('aria-label') || '')")
        assert word in name.lower(), (dim, name)


# axe-core (every WCAG 2.x A and AA rule, in Chromium, Firefox and WebKit, in each state):
# tests/browser/test_engines*.py, App.assert_axe_clean (tests/browser/engines/app.py); docs/accessibility-checks.md.
