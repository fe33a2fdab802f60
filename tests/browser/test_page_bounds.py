"""Input that costs time, in the page (issue 14): a link holding a 1,000,000-digit number and a
100,000-character text typed into a cell are refused within 2 s on both hosts (the fallback
host's Python 3.8 would spend 45 s turning the digits into an int), and nothing changes."""
import time
from urllib.parse import quote

import numpy as np
import pytest

from reference import WORKED_LOGITS

from .pagekit import alert_text, heatmap_z, open_explorer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

SECONDS = 2.0


@pytest.mark.hosts("pyscript", "fallback")
@pytest.mark.parametrize("number", ["9" * 1000000, "9" * 90000], ids=["1e6-digits", "9e4-digits"])
def test_a_link_with_a_huge_number_is_refused_at_once(page, site_url, number):
    open_explorer(page, site_url)
    fragment = "#state=" + quote('{"W_head":[[1],[2]],"cls":[[%s,0]]}' % number)
    # Timed in the page from the hashchange, when the page gets the link, to the refusal shown:
    # what comes before (Chromium parsing a 1 MB URL, ~1 s here) is the browser's, not the page's.
    page.evaluate("""f => {
        window.addEventListener('hashchange', () => {
          const start = performance.now();
          const box = document.getElementById('alert');
          new MutationObserver((_, observer) => {
            if (!box.textContent.includes('could not be used')) return;
            window.__refusedMs = performance.now() - start;
            observer.disconnect();
          }).observe(box, { childList: true, characterData: true, subtree: true });
        }, { once: true, capture: true });
        location.hash = f;   // as a pasted link would be opened
    }""", fragment)
    page.wait_for_function("() => window.__refusedMs !== undefined", timeout=30000)
    elapsed = page.evaluate("window.__refusedMs") / 1000
    text = alert_text(page)
    if len(number) > 100000:
        assert "characters long, longer than any link this page writes" in text, text
    else:
        assert "holds a number 90,000 characters long (99999999999999999999...)" in text, text
    assert elapsed < SECONDS, "refused after %.1f s" % elapsed
    # The worked example is shown (it was before: nothing else changed).
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), WORKED_LOGITS, atol=5e-5)


@pytest.mark.hosts("pyscript", "fallback")
def test_a_100000_character_cell_text_is_refused_at_once(page, site_url):
    open_explorer(page, site_url)
    cell = page.get_by_label("cls[0,1]", exact=True)
    before = cell.input_value()
    start = time.monotonic()
    cell.fill("1" * 100000)
    cell.press("Tab")
    page.wait_for_function(
        "() => document.getElementById('alert').textContent.includes('100,000 characters long')",
        timeout=30000)
    elapsed = time.monotonic() - start
    assert elapsed < SECONDS, "refused after %.1f s" % elapsed
    # the cell goes back to what it held once the commit's answer is in
    page.wait_for_function("([label, v]) => document.querySelector(`[aria-label=\"${label}\"]`)"
                           ".value === v", arg=["cls[0,1]", before], timeout=30000)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), WORKED_LOGITS, atol=5e-5)


def test_a_comparison_that_overflows_is_shown_and_editing_goes_on(page, site_url):
    """Issue 14's reproduction: with 1e200 in the inputs the no-LayerNorm head's logits overflow
    float64. Opened from a link that selects that mistake, the page starts, shows the overflow
    as such, and every later edit is computed and drawn (the bridge never throws)."""
    from .pagekit import edit, state_fragment
    state = {"W_head": [[1e200, 1], [0, 1]], "cls": [[1e200, 0], [1, 2]],
             "options": {"pitfall": "no_layernorm"}}
    open_explorer(page, site_url, fragment=state_fragment(state))
    shown = heatmap_z(page, "heatmap-pitfall")
    assert shown is not None and not np.isfinite(shown).all()  # 1e200 * 1e200 overflows
    words = page.locator("#pitfalls").inner_text().lower()
    assert "inf" in words or "overflow" in words
    edit(page, "cls[1,1]", "5")
    # the correct head, independently and in 50-digit decimals (1e200 squared is past float64)
    from decimal import Decimal, getcontext
    getcontext().prec = 50
    expected = []
    for row in ([1e200, 0], [1, 5]):
        x = [Decimal(v) for v in row]
        mu = sum(x) / len(x)
        std = (sum((v - mu) ** 2 for v in x) / len(x) + Decimal("1e-6")).sqrt()
        expected.append([float(sum((x[d] - mu) / std * Decimal(state["W_head"][d][c])
                                   for d in range(2))) for c in range(2)])
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), expected, rtol=1e-12)
