"""Moving the page to a projector, snapping or rotating: every figure keeps its size and nothing
overlaps after the window is resized (the heatmaps used to drop to 120 px high)."""
import pytest

from .engines.kit import layout_problems
from .pagekit import open_explorer, set_viewport

pytestmark = [pytest.mark.browser]

FIGURES = ["heatmap-cls", "heatmap-normalized", "heatmap-w", "heatmap-logits"]
WIDTHS = [1408, 1180, 1920, 390, 1280]


def geometry(page):
    """Per figure: its element's height, its drawing's height and width, and its element's
    width, in CSS pixels."""
    return page.evaluate(
        """ids => ids.map(id => {
            const el = document.getElementById(id);
            const svg = el.querySelector('svg.main-svg');
            const box = el.getBoundingClientRect();
            return [id, Math.round(box.height), Math.round(Number(svg.getAttribute('height'))),
                    Math.round(Number(svg.getAttribute('width'))), Math.round(box.width)];
        })""", FIGURES)


@pytest.mark.fresh_page  # drawn first by its boot at 1280 x 800 (in the warm context)
def test_figures_keep_their_size_through_window_resizes(page, site_url):
    set_viewport(page, {"width": 1280, "height": 800})
    open_explorer(page, site_url)
    drawn = {g[0]: g[2] for g in geometry(page)}
    assert all(h > 130 for h in drawn.values()), drawn  # taller than the CSS minimum
    for width in WIDTHS:
        set_viewport(page, {"width": width, "height": 800})
        # Plotly answers a resize after its own debounce; the titles' rewrap after 250 ms
        page.wait_for_function(
            """([ids, w]) => window.innerWidth === w && ids.every(id => {
                const el = document.getElementById(id);
                const svg = el.querySelector('svg.main-svg');
                return Math.abs(Number(svg.getAttribute('width')) - el.clientWidth) <= 1;
            })""", arg=[FIGURES, width], timeout=10000)
        page.wait_for_timeout(400)
        for name, box_h, svg_h, svg_w, box_w in geometry(page):
            # as tall as drawn, give or take the title's lines (the stages' widths differ
            # between the layouts: a title may wrap to one line more or fewer)
            assert box_h == svg_h and abs(svg_h - drawn[name]) <= 40 and svg_h > 130, (
                width, name, box_h, svg_h, drawn[name])
            assert abs(svg_w - box_w) <= 1, (width, name, svg_w, box_w)
        assert layout_problems(page) == [], width
