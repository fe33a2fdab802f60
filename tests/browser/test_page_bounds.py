"""Input that costs time, in the page: a link holding a 1,000,000-digit number and a
100,000-character text typed into a cell are refused on both hosts, and nothing changes.

The promise is that Python refuses them before the costly work (the fallback host's Python 3.8
would spend 45 s turning 1,000,000 digits into an int). Each refusal's words name the check
that refused, and each of those checks runs before any number is converted: the link's length
(pycore/explorer/state/link.py, decode_fragment, before decoding it), a number's length (json_loads,
as the parser meets it, before int() or float()), a cell text's length (pycore/explorer/state/cells.py,
before anything else). So the words shown prove the cheap path was taken, whatever the
machine's speed; tests/test_explorer_bounds.py checks the same refusals in CPython alone."""
from urllib.parse import quote

import numpy as np
import pytest

from reference import WORKED_LOGITS

from .pagekit import alert_text, heatmap_z, open_explorer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


@pytest.mark.hosts("pyscript", "fallback")
def test_a_link_with_a_huge_number_is_refused_before_it_is_read(page, site_url):
    open_explorer(page, site_url)
    for number in ["9" * 1000000, "9" * 90000]:
        what = "%d digits" % len(number)
        fragment = "#state=" + quote('{"W_head":[[1],[2]],"cls":[[%s,0]]}' % number)
        page.evaluate("""f => {
            document.getElementById('alert').textContent = '';  // the last refusal's, if any
            location.hash = f;   // as a pasted link would be opened
        }""", fragment)
        page.wait_for_function("() => document.getElementById('alert').textContent"
                               ".includes('could not be used')", timeout=30000)
        text = alert_text(page)
        if len(number) > 100000:   # refused by its length, before it is percent-decoded
            assert "characters long, longer than any link this page writes" in text, text
        else:   # refused as the number is met, before its digits become an int
            assert "holds a number 90,000 characters long (99999999999999999999...)" in text, text
        # The worked example is shown (it was before: nothing else changed).
        np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), WORKED_LOGITS, atol=5e-5,
                                   err_msg=what)


@pytest.mark.hosts("pyscript", "fallback")
def test_a_100000_character_cell_text_is_refused_by_its_length(page, site_url):
    open_explorer(page, site_url)
    cell = page.get_by_label("cls[0,1]", exact=True)
    before = cell.input_value()
    cell.fill("1" * 100000)
    cell.press("Tab")
    # refused by its length, before it is read as a number (the words say which check refused)
    page.wait_for_function("() => document.getElementById('alert').textContent"
                           ".includes('is 100,000 characters long: too long for a number')",
                           timeout=30000)
    # the cell goes back to what it held once the commit's answer is in
    page.wait_for_function("([label, v]) => document.querySelector(`[aria-label=\"${label}\"]`)"
                           ".value === v", arg=["cls[0,1]", before], timeout=30000)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), WORKED_LOGITS, atol=5e-5)


def test_a_comparison_that_overflows_is_shown_and_editing_goes_on(page, site_url):
    """With 1e200 in the inputs the no-LayerNorm head's logits overflow float64. Opened from a
    link that selects that mistake, the page starts, shows the overflow as such, and every later
    edit is computed and drawn (the bridge never throws)."""
    from .pagekit import edit, state_fragment
    state = {"W_head": [[1e200, 1], [0, 1]], "cls": [[1e200, 0], [1, 2]],
             "options": {"mistake": "no_layernorm"}}
    open_explorer(page, site_url, fragment=state_fragment(state))
    shown = heatmap_z(page, "heatmap-mistake")
    assert shown is not None and not np.isfinite(shown).all()  # 1e200 * 1e200 overflows
    words = page.locator("#mistakes").inner_text().lower()
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


def test_a_contribution_past_float64_is_drawn_full_length_and_said(page, site_url):
    """Thirty terms of +-1.4e308 cancel to a logit of 0, but the twenty smaller ones summed (the
    chart's last bar) are -1.41e309: its bar runs the whole negative half, and says why."""
    from .pagekit import state_fragment
    open_explorer(page, site_url, state_fragment({"W_head": [[1e308]] * 30,
                                                  "cls": [[2, -1, -1] * 10]}))
    page.locator("#heatmap-logits").focus()
    page.keyboard.press("Enter")  # select the focused logit (0, 0)
    page.wait_for_function("() => document.querySelectorAll('#contributions-bars li').length === 11")
    bars = page.evaluate("""() => Array.from(document.querySelectorAll('#contributions-bars li'),
        (li) => [li.querySelector('.bar-label').textContent, li.querySelector('.bar-value').textContent,
                 li.className, parseFloat(li.querySelector('.bar-fill').style.width),
                 parseFloat(li.querySelector('.bar-fill').style.left)])""")
    assert bars[-1][:3] == ["the other 20", "-beyond float64", "bar negative rest"], bars[-1]
    assert bars[-1][3:] == [50, 0], bars[-1]  # the whole negative half
    for label, text, cls, width, left in bars[:10]:  # +1.41e308 each: the largest finite bars
        assert cls == "bar" and width == 50 and left == 50, (label, text, width, left)
    assert "beyond float64" in page.locator("#contributions-note").inner_text()


def test_a_far_cell_focused_in_a_big_w_head_does_not_stall_the_next_view(page, site_url):
    """The cell focused at the far corner of a 768 x 1000 W_head is outlined in its heatmap;
    once a 4 x 3 W_head replaces it, that outline must not stretch the new figure's axes to
    column 999 (Plotly then measured a thousand tick labels: over 100 s of main thread)."""
    from .pagekit import act
    open_explorer(page, site_url)
    page.select_option("#preset", "vit-b16")
    act(page, lambda: page.click("#load-preset"))
    page.get_by_label("W_head[0,0]", exact=True).focus()
    page.keyboard.press("Control+End")
    assert page.evaluate("() => document.activeElement.getAttribute('aria-label')") == "W_head[767,999]"
    page.evaluate("() => document.activeElement.blur()")
    act(page, lambda: page.click("#reset", timeout=20000))
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), WORKED_LOGITS, atol=5e-5)
    # the axes are the matrix's own: 4 rows, 3 columns
    ranges = page.evaluate("""() => { const l = document.getElementById('heatmap-w').layout;
        return [l.xaxis.range, l.yaxis.range]; }""")
    assert max(ranges[0]) <= 2.5 + 1e-6 and max(ranges[1]) <= 3.5 + 1e-6, ranges
