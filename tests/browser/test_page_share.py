"""Sharing and exporting: links, JSON, runnable NumPy code, CSV, and the embed view.
(How every export is saved and copied: test_page_export.py.)"""
import contextlib
import csv
import io
import json

import numpy as np
import pytest

from pycore.explorer import decode_fragment, default_state, state_from_json

from buildtools.serve import serve_in_thread
from reference import WORKED_CLS, WORKED_W_HEAD, reference_head

from .pagekit import act, download, edit, heatmap_z, open_explorer, page_fragment
from .pagekit import state_fragment as state_fragment_of

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


def exported_text(page, button):
    """The file `button` downloads, as text."""
    return download(page, lambda: page.click(button))[1].decode("utf-8")


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
    np.testing.assert_allclose(logits, reference_head(state.cls, state.W_head), atol=1e-12)

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
        np.testing.assert_allclose(z, reference_head(state.cls, state.W_head),
                                   rtol=1e-12, atol=1e-12)
    finally:
        if server:
            server.shutdown()
            server.server_close()


# Test-only: the moment the answer to the page's own `link` request arrives, another link is put
# in the address bar (window.pasteOnLinkAnswer), as a person pasting one just then would: the
# answer is handled first, the hashchange that loads the pasted link comes after it. Only a link
# asked for after a `train` request counts: the link of the state before the Step may still be on
# its way when the test arms the paste, and pasting then would have the Step train the pasted state.
PASTE_ON_LINK_ANSWER = """(() => {
  const asked = new Set();
  let trained = false;
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (m, ...rest) {
    const op = m && m.kind === 'call' && m.request && m.request.op;
    if (op === 'train') trained = true;
    if (op === 'link' && trained) asked.add(m.id);
    return post.call(this, m, ...rest);
  };
  const own = Object.getOwnPropertyDescriptor(Worker.prototype, 'onmessage');
  Object.defineProperty(Worker.prototype, 'onmessage', { configurable: true, get: own.get,
    set(handler) {
      own.set.call(this, (event) => {
        const m = event.data;
        if (m && m.kind === 'answer' && asked.has(m.id) && window.pasteOnLinkAnswer) {
          location.hash = window.pasteOnLinkAnswer;
          window.pasteOnLinkAnswer = null;
        }
        return handler(event);
      });
    } });
})();"""


@pytest.mark.hosts("fallback")  # the page's own code (js/page/share.js); the fallback host's worker
def test_a_link_pasted_while_the_pages_own_link_is_on_its_way_is_loaded(site_url, context):
    """A state of more than 1,000 numbers (the fine-tuning preset, after a Step) has its link
    asked for once the page is idle. A link pasted just as that answer comes is loaded: the
    answer must not write the old state's link over it (the hashchange would then find its
    own link in the address bar and load nothing)."""
    cls, w = [[1.0, -2.0, 0.5]], [[0.25, -1.0], [2.0, 0.0], [-0.5, 1.5]]
    pasted = state_fragment_of({"cls": cls, "W_head": w})
    page = context.new_page()
    try:
        page.add_init_script(PASTE_ON_LINK_ANSWER)
        open_explorer(page, site_url)
        page.wait_for_function("() => !document.getElementById('ft-load-means').disabled", timeout=30000)
        act(page, lambda: page.click("#ft-load-means"))
        page.wait_for_function("() => document.querySelectorAll('#ft-labels input').length === 60")
        page.evaluate("(link) => { window.pasteOnLinkAnswer = link; }", pasted)
        page.click("#ft-step")
        page.wait_for_function("() => window.pasteOnLinkAnswer === null", timeout=30000)
        page.wait_for_function("""() => { const z = document.getElementById('heatmap-w').data[0].z;
            return z.length === 3 && z[0].length === 2; }""", timeout=30000)
        np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), w)
        np.testing.assert_array_equal(heatmap_z(page, "heatmap-cls"), cls)
        shown = decode_fragment(page_fragment(page))  # the address bar holds the pasted state
        np.testing.assert_array_equal(shown.W_head, w)
        np.testing.assert_array_equal(shown.cls, cls)
    finally:
        page.close()


@pytest.mark.fresh_page  # booted from the link itself
@pytest.mark.hosts("pyscript", "fallback")
def test_a_page_opened_from_a_link_nested_1900_deep_boots_and_says_why(page, site_url):
    """The 11 KB link that once left the page at "The explorer could not start: Maximum call
    stack size exceeded" (Python's JSON reader recursing past the WebAssembly stack)."""
    open_explorer(page, site_url, fragment="#state=" + "%5B" * 1900 + "%5D" * 1900)
    said = " | ".join(page.locator("[role=alert]").all_inner_texts())
    assert "nests arrays or objects 1,900 deep; the page reads JSON at most 32 deep" in said
    cls, w = np.array(WORKED_CLS), np.array(WORKED_W_HEAD)  # the worked example instead
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), reference_head(cls, w),
                               atol=1e-12)
    edit(page, "cls[1,0]", "2.25")  # and the page answers edits
    cls[1, 0] = 2.25
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), reference_head(cls, w),
                               atol=1e-12)
