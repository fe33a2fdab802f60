"""Links shared before the code took the glossary's names (docs/glossary.md, "Old names still
read") open as they did. Each link is written out here as the page wrote it then, not made by
pycore, and what the page shows is computed from the equations (tests/reference.py)."""
import math

import numpy as np
import pytest

from reference import reference_head

from .pagekit import alert_text, heatmap_z, open_explorer, wait_ready

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

CLS = [[1.0, 2.0, 0.0], [0.5, -1.0, 2.0]]
W = [[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]]

# {"W_head":[[1,0],[0,1],[2,-1]],"cls":[[1,2,0],[0.5,-1,2]],"options":{"pitfall":"no_layernorm"}}
# as encodeURIComponent wrote it: the mistake "LayerNorm skipped" chosen, by its old option name.
OLD_MISTAKE_LINK = (
    "#state=%7B%22W_head%22%3A%5B%5B1%2C0%5D%2C%5B0%2C1%5D%2C%5B2%2C-1%5D%5D%2C%22cls%22%3A%5B%5B"
    "1%2C2%2C0%5D%2C%5B0.5%2C-1%2C2%5D%5D%2C%22options%22%3A%7B%22pitfall%22%3A%22no_layernorm"
    "%22%7D%7D")


def _in_view(page, element_id):
    return page.evaluate("""id => { const r = document.getElementById(id).getBoundingClientRect();
        return r.height > 0 && r.top < innerHeight && r.bottom > 0; }""", element_id)


def test_a_link_with_the_old_option_pitfall_shows_that_mistake(page, site_url):
    open_explorer(page, site_url, OLD_MISTAKE_LINK)
    assert alert_text(page) == ""
    assert page.input_value("#mistake") == "no_layernorm"
    assert page.get_attribute("#mistakes", "data-active") == "true"
    # LayerNorm skipped: the CLS rows times W_head, written out
    skipped = [[math.fsum(h[d] * W[d][c] for d in range(3)) for c in range(2)] for h in CLS]
    np.testing.assert_allclose(heatmap_z(page, "heatmap-mistake"), skipped, rtol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-mistake-correct"),
                               reference_head(CLS, W), atol=1e-12)


@pytest.mark.fresh_page  # a boot of its own: what opening such a link does
def test_links_to_old_section_ids_show_those_sections(page, site_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(site_url + "index.html#pitfalls")
    wait_ready(page)
    assert alert_text(page) == ""
    assert page.evaluate("scrollY") > 0 and _in_view(page, "mistakes")
    # followed from the page (hashchange), the drawing panel's old id
    page.evaluate("() => { scrollTo(0, 0); location.hash = '#real-vit'; }")
    page.wait_for_function("() => scrollY > 0")
    assert _in_view(page, "digit") and not _in_view(page, "mistakes")
    assert alert_text(page) == ""
