"""Figures for slides (issue 47, item 10): every heatmap and line chart has a "Download figure"
menu named after it, reached by Tab and worked by keys, that saves the figure as it is shown
(web/js/figure/export.js) as SVG (real text: the title, the numbers on the cells as the page
prints them, the colour key's range), as a PNG at twice its size and as a 1920 x 1080 PNG for a
projector, light or dark as the page is. The bar charts too: a logit's terms, the drawn digit's
top 3 (and the probes' accuracies, drawn the same way). Firefox and WebKit save one too (tests/browser/
test_engines.py); the largest, a ViT-B/16 W_head, is saved under the page's policy in
tests/browser/test_csp.py."""
import re

import numpy as np
import pytest

from reference import WORKED_CLS, WORKED_W_HEAD

from .figure_files import luminance, png_looks, png_size, save_figure, svg_figure
from .pagekit import act, heatmap_z, open_explorer, set_viewport

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

SHOWN = ["heatmap-cls", "heatmap-normalized", "heatmap-w", "heatmap-logits"]
TITLE = "() => Object.fromEntries(%s.map((id) => [id, document.getElementById(id).vitHover.spec.title]))" % SHOWN


def menu_state(page, figure):
    return page.evaluate("""(id) => { const b = document.getElementById(id + '-download');
        const m = document.getElementById(id + '-download-menu');
        return { expanded: b.getAttribute('aria-expanded'), open: !m.hidden,
                 focus: document.activeElement.id || document.activeElement.dataset.format || '' }; }""",
                         figure)


def test_each_figure_has_a_menu_named_after_it_worked_by_keys(page, site_url):
    open_explorer(page, site_url)
    titles = page.evaluate(TITLE)
    for figure in SHOWN:
        button = page.locator("#%s-download" % figure)
        assert button.is_visible(), figure
        name = re.sub(r"\s+", " ", titles[figure]).strip()
        assert button.get_attribute("aria-label") == "Download figure: " + name
        box = button.bounding_box()
        assert box["width"] >= 24 and box["height"] >= 24, box  # WCAG 2.5.8
        # clear of the figure's title, in its band above the plot area
        title = page.locator("#%s .gtitle" % figure).bounding_box()
        assert box["x"] >= title["x"] + title["width"] or box["y"] >= title["y"] + title["height"], (box, title)
    # nothing to save: a comparison not chosen, the loss curves before a step
    for figure in ["heatmap-mistake", "heatmap-variant", "loss-curve", "compare-curves"]:
        assert page.locator("#%s-download" % figure).is_hidden(), figure

    # Tab reaches it (before its figure); Enter opens the menu on its first item; the arrows
    # move round it; Escape closes it and gives the focus back
    page.locator("#heatmap-w-download").focus()
    page.keyboard.press("Tab")  # on to the figure's own controls ("Show the numbers")
    assert page.evaluate("() => document.activeElement.closest('.plot-box') === "
                         "document.getElementById('heatmap-w').closest('.plot-box')")
    page.keyboard.press("Shift+Tab")
    assert menu_state(page, "heatmap-w") == {"expanded": "false", "open": False, "focus": "heatmap-w-download"}
    page.keyboard.press("Enter")
    assert menu_state(page, "heatmap-w") == {"expanded": "true", "open": True, "focus": "png"}
    page.keyboard.press("ArrowDown")
    assert menu_state(page, "heatmap-w")["focus"] == "projector"
    page.keyboard.press("End")
    assert menu_state(page, "heatmap-w")["focus"] == "svg"
    page.keyboard.press("ArrowDown")
    assert menu_state(page, "heatmap-w")["focus"] == "png"
    page.keyboard.press("Escape")
    assert menu_state(page, "heatmap-w") == {"expanded": "false", "open": False, "focus": "heatmap-w-download"}
    # ArrowUp opens it on its last item; Tab leaves and closes it
    page.keyboard.press("ArrowUp")
    assert menu_state(page, "heatmap-w") == {"expanded": "true", "open": True, "focus": "svg"}
    page.keyboard.press("Tab")
    assert not menu_state(page, "heatmap-w")["open"]

    # At 200 % zoom (a 640 px wide window) and in forced colours, the button still shows: inside
    # the window, its border in the system's button text colour against the figure's paper
    set_viewport(page, {"width": 640, "height": 720})
    page.locator("#heatmap-logits-download").click()
    menu = page.locator("#heatmap-logits-download-menu").bounding_box()
    assert menu["x"] >= 0 and menu["x"] + menu["width"] <= 640, menu
    page.keyboard.press("Escape")
    page.emulate_media(forced_colors="active")
    page.wait_for_function("() => matchMedia('(forced-colors: active)').matches")
    border = page.evaluate("""() => { const b = document.getElementById('heatmap-logits-download');
        return [getComputedStyle(b).borderTopColor, getComputedStyle(b).borderTopWidth,
                getComputedStyle(b.closest('.plot-box')).backgroundColor]; }""")
    assert border[1] == "1px" and border[0] != border[2], border
    page.emulate_media(forced_colors="none")


def test_a_heatmap_saved_as_svg_holds_its_title_numbers_and_key(page, site_url):
    open_explorer(page, site_url)
    name, data = save_figure(page, "heatmap-logits", "svg", keys=True)
    assert name == "vit-head-logits.svg"
    text = data.decode("utf-8")  # UTF-8, with the page's own characters in it
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>') and "×" in text
    svg = svg_figure(text)
    title = page.evaluate("() => document.getElementById('heatmap-logits').vitHover.spec.title")
    assert svg["title"] == re.sub(r"\s+", " ", title).strip() == " ".join(svg["texts"]["figure-title"])
    # the numbers on the cells, row by row, as the page prints them (two decimals, text_format)
    z = heatmap_z(page, "heatmap-logits")
    assert page.evaluate("() => document.getElementById('heatmap-logits').vitHover.spec.text_format") == "%{z:.2f}"
    assert svg["texts"]["cell-number"] == ["%.2f" % v for v in z.ravel()]
    # the colour key's range, as under the figure; the axes' titles and ticks
    key = page.locator("#heatmap-logits + .colour-key > span").all_inner_texts()
    assert [svg["texts"][k][0] for k in ("key-low", "key-mid", "key-high")] == key
    assert svg["gradients"] == 1
    assert sorted(svg["texts"]["axis-title"]) == ["class c", "sample b"]
    assert sorted(svg["texts"]["tick"]) == ["0", "0", "1", "1", "2"]
    # the predicted classes' outlines (a line over a halo, each): two marks
    assert svg["outlines"] == 4
    assert svg["background"] == "rgb(255, 255, 255)" and svg["images"] == 0


def test_pngs_at_2x_and_for_a_projector_light_and_dark(page, site_url):
    open_explorer(page, site_url)
    _, svg = save_figure(page, "heatmap-logits", "svg")
    size = svg_figure(svg.decode("utf-8"))
    name, png = save_figure(page, "heatmap-logits", "png")
    assert name == "vit-head-logits.png"
    assert png_size(png) == (2 * size["width"], 2 * size["height"])
    looks = png_looks(page, png)
    assert looks["corner"][:3] == [255, 255, 255] and looks["inked"] > 0.3 and looks["colours"] > 8, looks
    name, png = save_figure(page, "heatmap-logits", "projector")
    assert name == "vit-head-logits-1920x1080.png" and png_size(png) == (1920, 1080)

    page.emulate_media(color_scheme="dark")
    page.wait_for_function("() => matchMedia('(prefers-color-scheme: dark)').matches")
    page.wait_for_function("() => document.getElementById('heatmap-w').layout.font.color !== '#1d2330'")
    for fmt, shape in [("projector", (1920, 1080)), ("png", None)]:
        name, png = save_figure(page, "heatmap-w", fmt)
        if shape:
            assert png_size(png) == shape
        looks = png_looks(page, png)
        # dark paper, the page's own; the cells and the light ink on it
        assert luminance(looks["corner"]) < 0.02, looks
        assert looks["inked"] > 0.1 and looks["colours"] > 8, looks
    _, svg = save_figure(page, "heatmap-w", "svg")
    assert svg_figure(svg.decode("utf-8"))["background"] == "rgb(22, 26, 34)"


def test_the_loss_curves_saved_with_their_title_and_legend(page, site_url):
    open_explorer(page, site_url)
    act(page, lambda: page.click("#ft-step"))
    page.wait_for_function("() => document.getElementById('finetune').dataset.busy === 'false'")
    name, data = save_figure(page, "loss-curve", "svg")
    assert name == "vit-head-loss-curve.svg"
    svg = svg_figure(data.decode("utf-8"))
    assert svg["title"] == "Loss, step by step"
    legend = page.locator("#loss-curve .chart-legend li").all_inner_texts()
    assert svg["texts"]["legend"] == [t.strip() for t in legend]
    assert sorted(svg["texts"]["axis-title"]) == ["accuracy %", "loss", "step"]
    name, png = save_figure(page, "compare-curves", "projector")
    assert name == "vit-head-compare-curves-1920x1080.png" and png_size(png) == (1920, 1080)
    assert png_looks(page, png)["inked"] > 0.01


def test_the_bar_charts_saved_with_their_title_numbers_and_bars(page, site_url):
    """A logit's terms (clicked: logit[0, 1]) and the drawn digit's top 3, saved as SVG with
    their titles, every label and number, one bar each; as PNGs at 2x and for a projector."""
    open_explorer(page, site_url)
    # nothing to save before a logit is chosen and a digit drawn
    assert page.locator("#contributions-bars-download").is_hidden()
    assert page.locator("#digit-top-download").is_hidden()
    area = page.locator("#heatmap-logits .nsewdrag")
    box = area.bounding_box()
    act(page, lambda: area.click(position={"x": 1.5 / 3 * box["width"], "y": 0.5 / 2 * box["height"]}))
    assert page.locator("#contributions").get_attribute("data-logit") == "0,1"
    name, data = save_figure(page, "contributions-bars", "svg")
    assert name == "vit-head-logit-terms.svg"
    svg = svg_figure(data.decode("utf-8"))
    # the terms h_hat[0, d] * W_head[d, 1], largest magnitude first, to 4 decimals
    cls, w = np.array(WORKED_CLS), np.array(WORKED_W_HEAD)
    h_hat = (cls - cls.mean(1, keepdims=True)) / np.sqrt(cls.var(1, keepdims=True) + 1e-6)
    terms = h_hat[0] * w[:, 1]
    order = sorted(range(4), key=lambda d: (-abs(terms[d]), d))
    logit = terms.sum()
    assert svg["title"].startswith("logit[0, 1] = %.4f" % logit)
    texts = svg["texts"]["bar-text"]
    assert texts[0::3] == ["d = %d" % d for d in order]
    assert texts[2::3] == ["%.4f" % terms[d] for d in order]
    assert svg["bars"] == 4
    assert ("Sum of the bars: %.4f; logit: %.4f." % (logit, logit)) in " ".join(svg["texts"]["note"])
    _, png = save_figure(page, "contributions-bars", "png")
    assert png_size(png) == (2 * svg["width"], 2 * svg["height"])
    assert png_looks(page, png)["inked"] > 0.03

    act(page, lambda: page.click("#digit-gallery button >> nth=0"))
    top = page.evaluate("() => Array.from(document.querySelectorAll('#digit-top li:not([hidden])'),"
                        " (li) => [li.querySelector('.top-name').textContent, li.querySelector('.top-p').textContent])")
    name, data = save_figure(page, "digit-top", "svg", keys=True)
    assert name == "vit-head-digit-top3.svg"
    svg = svg_figure(data.decode("utf-8"))
    assert svg["title"] == "The three most likely digits (softmax)"
    assert [svg["texts"]["bar-text"][0::2], svg["texts"]["bar-text"][1::2]] == [list(t) for t in zip(*top)]
    # three tracks, and at least the likeliest digit's bar on its track
    assert len(top) == 3 and svg["tracks"] == 3 and svg["bars"] >= 1
    name, png = save_figure(page, "digit-top", "projector")
    assert name == "vit-head-digit-top3-1920x1080.png" and png_size(png) == (1920, 1080)
    assert png_looks(page, png)["inked"] > 0.01
