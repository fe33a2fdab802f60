"""Forced colours (Windows High Contrast, emulated in Chromium): where colour is the content, it
stays. Once the drawn digit vanished (every pad cell the system's background), the colour keys
were empty boxes, the softmax bars disappeared and a blue curve stood at 2.94:1 on black.
Checked here from the computed styles, against WCAG's contrast of the colours shown."""
import pytest

from .engines.kit import contrast, rgb
from .pagekit import act, open_explorer
from .test_page_finetune import step

pytestmark = [pytest.mark.browser]

STYLES = """() => {
    const css = (el, p) => getComputedStyle(el)[p];
    const pad = Array.from(document.querySelectorAll('#digit-pad .pad-cell'));
    const key = document.querySelector('.colour-key:not([hidden]) .key-bar');
    const bar = document.querySelector('#digit-top li:not([hidden]) .top-bar');
    const curve = document.querySelector('.line-chart .curve');
    const plot = document.getElementById('heatmap-logits').closest('.plot-box');
    return {
        pad: Array.from(new Set(pad.map((c) => css(c, 'backgroundColor')))),
        key: css(key, 'backgroundImage'),
        track: css(bar, 'backgroundColor'), fill: css(bar.firstElementChild, 'backgroundColor'),
        fillWidth: bar.firstElementChild.getBoundingClientRect().width,
        curve: css(curve, 'stroke'), canvas: css(document.body, 'backgroundColor'),
        text: css(document.body, 'color'),
        plotPaper: css(plot, 'backgroundColor'),
        plotTitle: css(plot.querySelector('.gtitle'), 'fill'),
    };
}"""


def test_colour_that_is_content_survives_forced_colours(page, site_url):
    open_explorer(page, site_url)
    act(page, lambda: page.locator("#digit-gallery .digit-thumb").first.click())
    step(page)  # the loss curves
    page.emulate_media(forced_colors="active")
    try:
        page.wait_for_function("() => matchMedia('(forced-colors: active)').matches")
        s = page.evaluate(STYLES)
        canvas = rgb(s["canvas"])
        # the digit: its cells in several greys (ink and paper), not all the system's background
        assert len(s["pad"]) >= 3, s["pad"]
        # the colour keys keep their gradient
        assert "gradient" in s["key"], s["key"]
        # a softmax bar: a fill in the system's highlight, visible on its track
        assert s["fillWidth"] > 0 and contrast(rgb(s["fill"]), rgb(s["track"])) >= 3, s
        # the loss curves in the system's text colour: as legible as its text
        assert rgb(s["curve"]) == rgb(s["text"]) and contrast(rgb(s["curve"]), canvas) >= 4.5, s
        # the figures on their own white paper, their titles dark on it
        assert rgb(s["plotPaper"]) == [255, 255, 255]
        assert contrast(rgb(s["plotTitle"]), (255, 255, 255)) >= 4.5, s
        # the value under the pointer, in the dark scheme too: once the dark scheme's paper under
        # the figure's dark text (1.1:1)
        page.emulate_media(forced_colors="active", color_scheme="dark")
        area = page.locator("#heatmap-logits .nsewdrag")
        area.scroll_into_view_if_needed()
        box = area.bounding_box()
        page.mouse.move(box["x"] + box["width"] * 5 / 6, box["y"] + box["height"] * 3 / 4)
        label = page.locator("#heatmap-logits").locator("xpath=..").locator(".hover-value")
        label.wait_for(state="visible")
        ink, paper = label.evaluate("(el) => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]")
        assert contrast(rgb(ink), rgb(paper)) >= 4.5, (ink, paper)
        page.mouse.move(2, 2)
    finally:
        page.emulate_media(forced_colors="none", color_scheme="null")
