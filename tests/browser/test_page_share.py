"""Sharing and exporting: links, JSON, runnable NumPy code, CSV, and the embed view."""
import contextlib
import csv
import io
import json

import numpy as np
import pytest

from pycore.explorer import default_state, state_from_json
from pycore.vit.trace import trace_head

from buildtools.serve import serve_in_thread

from .pagekit import edit, heatmap_z, open_explorer, page_fragment

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


def exported_text(page, button):
    page.click(button)
    page.wait_for_function("() => document.getElementById('export-dialog').open")
    text = page.locator("#export-text").input_value()
    page.click("#export-close")
    return text


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_a_link_reproduces_the_view(page, site_url, context):
    open_explorer(page, site_url)
    edit(page, "W_head[1,0]", "-0.75")
    fragment = page_fragment(page)
    other = context.new_page()
    open_explorer(other, site_url, fragment)
    np.testing.assert_array_equal(heatmap_z(other, "heatmap-logits"), heatmap_z(page, "heatmap-logits"))
    np.testing.assert_array_equal(heatmap_z(other, "heatmap-w"), heatmap_z(page, "heatmap-w"))
    other.close()


def test_copy_link_puts_the_link_on_the_clipboard(page, site_url, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_explorer(page, site_url)
    edit(page, "cls[0,0]", "5")
    page.click("#copy-link")
    page.wait_for_function("() => document.getElementById('toast').textContent.length > 0")
    link = page.evaluate("navigator.clipboard.readText()")
    assert link.endswith(page_fragment(page)) and "embed" not in link


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_exports_reproduce_the_logits(page, site_url):
    open_explorer(page, site_url)
    edit(page, "cls[1,0]", "2.25")
    logits = heatmap_z(page, "heatmap-logits")
    state = default_state()
    state.cls[1, 0] = 2.25
    np.testing.assert_allclose(logits, trace_head(state.W_head, cls=state.cls).logits, atol=1e-12)

    code = exported_text(page, "#export-numpy")
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(compile(code, "<exported>", "exec"), namespace)  # noqa: S102 - the page's own export
    np.testing.assert_allclose(namespace["logits"], logits, rtol=1e-12, atol=1e-12)
    assert printed.getvalue().strip()

    rows = list(csv.reader(io.StringIO(exported_text(page, "#export-csv"))))
    np.testing.assert_array_equal(np.array([[float(x) for x in r[1:]] for r in rows[1:]]), logits)

    exported = state_from_json(json.loads(exported_text(page, "#export-json")))
    np.testing.assert_array_equal(exported.cls, state.cls)
    np.testing.assert_array_equal(exported.W_head, state.W_head)


@pytest.mark.fresh_page  # the embed view (?embed=1) is another page than the one reused
def test_embed_view_fits_an_iframe(page, site_url):
    page.set_viewport_size({"width": 800, "height": 600})
    open_explorer(page, site_url, query="?embed=1")
    assert page.locator(".lede").is_hidden()
    assert page.locator("#pitfalls").is_hidden()
    # The inputs show as their editable grids (the numbers, and where to change them); their
    # heatmaps would repeat them in a frame that has no room to spare (the whole
    # embed fits 800 x 600 without a scroll bar). The computed stages show as heatmaps.
    for grid_id in ("grid-input", "grid-w"):
        assert page.locator("#" + grid_id).is_visible()
    for element_id in ("heatmap-cls", "heatmap-w"):
        assert page.locator("#" + element_id).is_hidden()
    for element_id in ("heatmap-normalized", "heatmap-logits"):
        assert page.locator("#" + element_id).is_visible()
        # small matrices print their values here: no colour key takes the room
        assert page.locator("#%s + .colour-key" % element_id).is_hidden()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 800, "the embed view scrolls sideways: %d px" % width
    box = page.locator("#heatmap-logits").bounding_box()
    assert box["y"] + box["height"] <= 600 + 1, "the logits do not fit in 600 px: %r" % box


@pytest.mark.fresh_page  # the page is another site's, or has no origin
@pytest.mark.parametrize("top", ["cross-site", "about:blank"])
def test_embed_inside_an_iframe(page, site_url, page_log, tmp_path, top):
    """The page in an 800 x 600 iframe of a course website (another site, where the browser
    denies the frame storage), or of a page without an origin: it starts and computes edits."""
    src = site_url.rstrip("/") + "/index.html?embed=1"
    frame_html = ('<iframe id="f" src="%s" width="800" height="600" title="ViT head explorer">'
                  '</iframe>' % src)
    server = None
    if top == "about:blank":
        page.set_content(frame_html)
    else:
        (tmp_path / "course.html").write_text(
            '<!doctype html><link rel="icon" href="data:,"><title>Course</title>' + frame_html)
        server, outer = serve_in_thread(str(tmp_path))
        outer = outer.replace("127.0.0.1", "localhost")  # another site than the explorer's
        page_log.other_origins.append(outer)
        page.goto(outer + "course.html")
    try:
        frame = page.frame_locator("#f")
        frame.locator("html[data-ready='true']").wait_for(state="attached", timeout=90000)
        inner = [f for f in page.frames if f.url.startswith(src)][0]
        before = int(inner.evaluate("document.documentElement.dataset.renders"))
        cell = frame.get_by_label("cls[0,0]", exact=True)
        cell.focus()
        cell.press("Control+a")
        cell.press_sequentially("1")
        inner.wait_for_function("n => Number(document.documentElement.dataset.renders) > n",
                                arg=before, timeout=30000)
        state = default_state()
        state.cls[0, 0] = 1.0
        z = inner.evaluate("Array.from(document.getElementById('heatmap-logits').data[0].z,"
                           " r => Array.from(r))")
        np.testing.assert_allclose(z, trace_head(state.W_head, cls=state.cls).logits,
                                   rtol=1e-12, atol=1e-12)
    finally:
        if server:
            server.shutdown()
            server.server_close()
