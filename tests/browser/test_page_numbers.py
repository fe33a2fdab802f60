"""Numbers as a person reads them: every cell and hover shows one short form
of its value (at most 4 decimals and 8 characters, scientific for very large or small values),
never a number cut mid-digit, at a phone's, a laptop's and a projector's size; a focused cell
and the exports keep the full value. The expected texts come from the rule written out here."""
import math

import pytest

from .pagekit import download, open_explorer, set_viewport, state_fragment

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

# Values that used to be shown long or cut: trained weights, float noise, big and tiny numbers.
CLS = [[0.534354123, -0.09999995, 12.3456789, -123.456789],
       [1234.56789, -99999.9, 123456.7, -0.0000632455]]
W = [[0.5, -0.2, 0.1], [0.63245540554, 0.4, -0.5], [-0.1, 0.6, 1e-300], [0.7, -0.3, 0.8]]


def short(x):
    """The short form, from its definition: up to 4 decimals with trailing zeros dropped, fewer
    from 1,000 on so that it stays within 8 characters; from 1e5 on or below 1e-4, scientific
    with 4 significant digits (3 when negative), trailing zeros of the mantissa dropped."""
    if x == 0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-4:
        mantissa, exponent = ("%.*e" % (2 if x < 0 else 3, x)).split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return "%se%s%d" % (mantissa, "-" if exponent[0] == "-" else "+", abs(int(exponent)))
    whole = len(str(int(abs(x)))) + (1 if x < 0 else 0)
    text = "%.*f" % (max(0, min(4, 8 - whole - 1)), x)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


CELLS = """() => Array.from(document.querySelectorAll('.grid .cell, .grid-rowhead .grid-h'), (e) => [
    e.getAttribute('aria-label') || e.textContent, e.value === undefined ? e.textContent : e.value,
    e.scrollWidth, e.clientWidth])"""


def test_cells_and_hovers_read_short_and_never_cut_and_focus_shows_the_full_value(
        page, site_url, reset_page):
    expected = {"cls[%d,%d]" % (b, d): short(v) for b, row in enumerate(CLS) for d, v in enumerate(row)}
    expected.update({"W_head[%d,%d]" % (d, c): short(v) for d, row in enumerate(W) for c, v in enumerate(row)})
    assert expected["cls[0,0]"] == "0.5344" and expected["W_head[2,2]"] == "1e-300"
    for width, height, large in [(1280, 800, False), (390, 844, False), (1920, 1080, True)]:
        reset_page()
        set_viewport(page, {"width": width, "height": height})
        open_explorer(page, site_url, state_fragment({"cls": CLS, "W_head": W}))
        if large:
            page.click("#text-size")
            page.wait_for_timeout(300)
        shown = {label: (text, scroll, client) for label, text, scroll, client in page.evaluate(CELLS)}
        for label, text in expected.items():
            assert shown[label][0] == text, (width, label, shown[label][0], text)
        for label, (text, scroll, client) in shown.items():
            assert scroll <= client, "%d px: %s %r is cut (%d of %d px)" % (width, label, text, scroll, client)
    # the focused cell holds the exact number; leaving it, the short form again
    cell = page.get_by_label("cls[0,0]", exact=True)
    cell.focus()
    assert cell.input_value() == repr(CLS[0][0])
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert cell.input_value() == "0.5344"
    # a hover reads the short form too: what the hover label says over W_head[1, 0]
    set_viewport(page, {"width": 1280, "height": 800})
    area = page.locator("#heatmap-w .nsewdrag")
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    area.hover(position={"x": box["width"] / 6, "y": box["height"] * 3 / 8})
    label = page.locator("#heatmap-w").locator("xpath=..").locator(".hover-value")   # the page's own hover label
    label.wait_for(state="visible")
    hover = label.text_content()
    assert short(W[1][0]) == "0.6325" and "0.6325" in hover and "0.63245540554" not in hover, hover
    # the exports keep every digit
    name, data = download(page, lambda: page.click("#export-json"))
    text = data.decode("utf-8")
    assert name == "vit-head-state.json" and "W_head" in text
    assert "0.534354123" in text and "0.63245540554" in text and "1e-300" in text.lower()


def test_short_form_rule_examples():
    """The rule's own examples (what the page is checked against above)."""
    assert [short(x) for x in (0.5, -1.0, 0.6324555320336759, -1234.5678, 123456.7, -6.32455e-5)] \
        == ["0.5", "-1", "0.6325", "-1234.57", "1.235e+5", "-6.32e-5"]
    assert all(len(short(x)) <= 8 for x in (-99999.9, 99999.99, -0.00011, 1.5e-250, -math.pi * 1e4))
