"""What a browser that cannot run the page is told, and how entries end at a grid's edge.

The engines' own tests (test_engines.py) run the page in Chromium, Firefox and WebKit; these
check, in Chromium, what only an older browser would meet: each missing feature is simulated
by an init script before the page's first script runs.
"""

import numpy as np
import pytest

from pycore.explorer import default_state
from reference import reference_head

from .pagekit import alert_text, heatmap_z, open_explorer

pytestmark = [pytest.mark.browser]

MINIMUM = "The explorer needs Chrome or Edge 97, Firefox 114, Safari 16 or newer."
OLD_BROWSERS = {
    # what the init script takes away -> what the alert must name
    "no WebAssembly": ("delete window.WebAssembly;", "WebAssembly"),
    # a Worker that never reads its options, as browsers without module workers
    "no module workers": ("""(() => { const W = window.Worker;
        window.Worker = function (url) { return new W(url); }; })();""", "module workers"),
    "no Promise.allSettled": ("delete Promise.allSettled;", "the JavaScript of 2020"),
}


@pytest.mark.hosts("pyscript", "fallback")
@pytest.mark.parametrize("missing", list(OLD_BROWSERS))
def test_a_browser_too_old_is_told_what_it_lacks_at_once(browser, site_url, missing):
    script, named = OLD_BROWSERS[missing]
    context = browser.new_context()
    try:
        page = context.new_page()
        page.add_init_script(script)
        page.goto(site_url + "index.html", wait_until="commit")
        # from "commit" on, the document may not have its <html> element yet
        page.wait_for_function("() => document.documentElement?.dataset.bootFailed === 'true'",
                               timeout=10000)
        # at once: before the runtime (Pyodide, its WebAssembly, its worker) was asked for
        runtime = page.evaluate("() => performance.getEntriesByType('resource').map((e) => e.name)"
                                ".filter((n) => /pyodide|\\.wasm|-worker\\.m?js/.test(n))")
        text = alert_text(page)
        assert text.startswith("This browser is too old for the explorer: it lacks "), text
        assert named in text and text.endswith(MINIMUM), text
        assert runtime == [], runtime
        assert page.evaluate("() => document.documentElement.dataset.ready") != "true"
    finally:
        context.close()


@pytest.mark.hosts("pyscript", "fallback")
def test_enter_in_the_bottom_row_ends_the_entry_there(page, site_url):
    """Enter in W_head's last row has no cell below: the entry ends in place, so an invalid
    text is refused and replaced by the value in use (so is an empty one after it),
    and a valid one is in effect."""
    open_explorer(page, site_url)
    state = default_state()
    bottom = "W_head[%d,1]" % (state.W_head.shape[0] - 1)
    cell = page.get_by_label(bottom, exact=True)
    before_z = heatmap_z(page, "heatmap-logits")
    cell.click()
    page.keyboard.type("abc")
    page.keyboard.press("Enter")
    page.wait_for_function("([label]) => document.getElementById('alert').textContent"
                           ".includes(label)", arg=[bottom])
    page.wait_for_function("([label, v]) => document.querySelector(`[aria-label=\"${label}\"]`)"
                           ".value === v", arg=[bottom, str(state.W_head[-1, 1])])
    assert cell.get_attribute("aria-invalid") is None
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-logits"), before_z)
    # emptied after a refused entry, then Enter: the value in use comes back, with a message
    page.keyboard.press("Backspace")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('alert').textContent.includes('empty')")
    assert cell.input_value() == str(state.W_head[-1, 1]) and bottom in alert_text(page)
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-logits"), before_z)
    # the cell still has focus and its text is selected: typing replaces it (each keystroke is
    # an edit: the last one's answer is awaited)
    page.keyboard.type("2.5")
    page.keyboard.press("Enter")
    state.W_head[-1, 1] = 2.5
    expected = np.array(reference_head(state.cls, state.W_head))
    page.wait_for_function(
        "([b, c, v]) => Math.abs(document.getElementById('heatmap-logits').data[0].z[b][c] - v)"
        " < 1e-12", arg=[0, 1, float(expected[0, 1])])
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), expected, atol=1e-12)
    assert cell.input_value() == "2.5"
    assert alert_text(page) == ""
