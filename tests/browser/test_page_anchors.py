"""In-page anchors only scroll: the skip link and a link to a section never touch the state."""
import numpy as np
import pytest

from pycore.explorer import decode_fragment
from reference import reference_head

from .pagekit import (act, alert_text, edit, heatmap_z, open_explorer, page_fragment,
                      state_fragment, wait_ready)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

CLS = [[1.0, 2.0, 0.0], [0.5, -1.0, 2.0]]
W = [[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]]


def test_the_skip_link_keeps_the_state_and_its_link(page, site_url):
    open_explorer(page, site_url, state_fragment({"cls": CLS, "W_head": W}))
    edit(page, "cls[0,1]", "7")
    expected = np.array(CLS)
    expected[0, 1] = 7
    link = page_fragment(page)
    np.testing.assert_array_equal(decode_fragment(link).cls, expected)
    # a keyboard user's first stop: "Skip to the explorer"
    page.focus("a.skip")
    skip = page.evaluate("() => document.activeElement.getAttribute('href')")
    assert skip and skip.startswith("#") and not skip.startswith("#state="), skip
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.hash.startsWith('#state=')")  # the link is back
    page.wait_for_timeout(300)  # a load would have been sent by now
    assert page_fragment(page) == link
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), expected)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(expected, W), atol=1e-12)
    assert alert_text(page) == ""


# the heatmap of W_head as the page holds it, in a few numbers: its shape and sums
W_SEEN = """() => { const z = document.getElementById('heatmap-w').data[0].z;
    let sum = 0, weighted = 0;
    z.forEach((row, d) => row.forEach((v, c) => { sum += v; weighted += v * (d + 2 * c + 1); }));
    return [z.length, z[0].length, sum, weighted]; }"""


def test_the_skip_link_keeps_a_state_too_big_for_a_link(page, site_url):
    # The ViT-B/16 preset trained one step: 768,000 numbers with no recipe, no link (the
    # address bar holds none, a note says to save the state as JSON). Nothing could bring
    # such a state back, so following an anchor must not load anything in its place.
    open_explorer(page, site_url)
    page.select_option("#preset", "vit-b16")
    act(page, lambda: page.click("#load-preset"))
    act(page, lambda: page.click("#ft-step"))
    page.wait_for_function("""() => document.documentElement.dataset.linkPending === 'false'
        && !document.getElementById('link-note').hidden""", timeout=30000)
    assert page_fragment(page) == ""
    status = page.locator("#ft-status").inner_text()
    assert status.startswith("Step 1 of this run"), status
    seen = page.evaluate(W_SEEN)
    assert seen[:2] == [768, 1000]
    page.focus("a.skip")
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)  # a load would have been sent and answered by now
    assert page.evaluate(W_SEEN) == seen
    assert page.locator("#ft-status").inner_text() == status
    assert page_fragment(page) in ("", "#pipeline")  # no state's link in the address bar
    assert not page.locator("#link-note").is_hidden()
    assert alert_text(page) == ""


@pytest.mark.fresh_page  # a boot of its own: what opening such a link does (warm caches)
def test_a_link_to_a_section_opens_the_worked_example_without_a_complaint(page, site_url):
    page.goto(site_url + "index.html#pipeline")
    wait_ready(page)
    assert alert_text(page) == ""
    assert heatmap_z(page, "heatmap-logits").shape == (2, 3)  # the worked example
