"""The page under its Content-Security-Policy, under stricter ones, and in a sandboxed iframe.

Every site the tests serve sends the policy its build wrote (build-info.json) as a header, and
index.html carries the same in a <meta http-equiv>. Here a person's core session runs on each
host with a listener for `securitypolicyviolation` installed before the page's first script; a
policy stricter than the site's (no WebAssembly, no worker) must be named in the alert; and a
sandboxed iframe without allow-same-origin must say, at once, what its embedding page must allow.
"""
import json
import os
from urllib.request import urlopen

import numpy as np
import pytest

from buildtools.serve import serve_in_thread
from pycore.explorer import preset
from reference import WORKED_CLS, WORKED_W_HEAD, layer_norm_rows, reference_head

from .figure_files import WATCH_LONG_TASKS, made_ms, png_size, save_figure, svg_figure
from .pagekit import act, heatmap_z, open_explorer

pytestmark = [pytest.mark.browser]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Runs before any of the page's scripts (Playwright injects it; the page's policy does not apply).
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(
  [e.effectiveDirective, e.blockedURI, e.sourceFile, e.lineNumber].join(' ')));
"""


def site_folder(variant):
    return os.path.join(ROOT, "build", "test-" + variant)


def site_policy(variant):
    with open(os.path.join(site_folder(variant), "build-info.json"), encoding="utf-8") as f:
        return json.load(f)["content_security_policy"]


@pytest.fixture
def served():
    """served(folder, policy) -> base URL of `folder` served with `policy` as its header."""
    servers = []

    def serve(folder, policy):
        server, url = serve_in_thread(folder, policy=policy)
        servers.append(server)
        return url

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def type_into(page, label, text):
    """Click the cell, select what it holds and type `text` key by key."""
    cell = page.get_by_label(label, exact=True)
    cell.click()
    page.keyboard.press("Control+A")
    cell.press_sequentially(text)
    return cell


def wait_shown(page, element_id, row, col, value):
    page.wait_for_function(
        "([id, r, c, v]) => { const el = document.getElementById(id);"
        " return el && el.data && el.data[0].z[r][c] === v; }",
        arg=[element_id, row, col, value], timeout=30000)


@pytest.mark.hosts("pyscript", "fallback")
def test_the_core_session_runs_under_the_sites_policy(page, page_log, sites, site_host):
    url = sites.url(site_host)
    policy = site_policy(site_host)
    assert "'unsafe-eval'" not in policy and "'unsafe-inline'" not in policy
    with urlopen(url + "index.html") as response:           # the header and the <meta> agree
        assert response.headers["Content-Security-Policy"] == policy
        assert ('<meta http-equiv="Content-Security-Policy" content="%s">'
                % policy.replace('"', "&quot;")) in response.read().decode("utf-8")
    page.add_init_script(RECORD_VIOLATIONS)
    open_explorer(page, url)

    cls = [row[:] for row in WORKED_CLS]
    W_head = [row[:] for row in WORKED_W_HEAD]
    type_into(page, "cls[0,1]", "4.5").press("Tab")
    cls[0][1] = 4.5
    wait_shown(page, "heatmap-cls", 0, 1, 4.5)
    type_into(page, "W_head[3,2]", "-2").press("Tab")
    W_head[3][2] = -2.0
    wait_shown(page, "heatmap-w", 3, 2, -2)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-normalized"), layer_norm_rows(cls),
                               atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), reference_head(cls, W_head),
                               atol=1e-12)

    # The ViT-B/16 head: W_head (768 x 1000) and the logits (2 x 1000) painted by the page on
    # canvases of its own, under Plotly's axes.
    page.select_option("#preset", "vit-b16")
    act(page, lambda: page.click("#load-preset"))
    big = preset("vit-b16")
    assert page.get_attribute("#heatmap-w", "data-bitmap") == "true"
    for stage in ("stage-w", "stage-logits"):
        assert page.evaluate("""stage => {
            const v = document.querySelector('#' + stage + ' canvas.heatmap-bitmap');
            const px = v.getContext('2d').getImageData(0, 0, v.width, v.height).data;
            return px.some((x, i) => i % 4 === 3 && x > 0);  // some pixel is painted
        }""", stage), stage
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"),
                               reference_head(big.cls.tolist(), big.W_head.tolist()), atol=1e-9)
    # The equations (KaTeX, its stylesheet and fonts) are typeset once the page is idle.
    page.locator("#step-list").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('#step-list .katex')", timeout=30000)
    page.evaluate("document.fonts.ready")
    if site_host == "pyscript":  # the page's own JavaScript, the same on both hosts
        figures_of_the_largest_heatmap(page)

    assert page.evaluate("window.__violations") == []
    assert not [e for e in page_log.console_errors if "Content Security Policy" in e]
    page_log.assert_clean(url)


def figures_of_the_largest_heatmap(page):
    """The ViT-B/16 W_head (768 x 1000) saved for slides (js/figure/export.js), as SVG, PNG and
    projector PNG: its cells go in as one image (one pixel per cell), nothing is loaded (the
    policy's img-src is data: alone), each file is made well within a second, and no task holds
    the page for long meanwhile (the PNGs are written a slice at a time)."""
    page.evaluate(WATCH_LONG_TASKS)
    made = {}
    for fmt, size in [("svg", None), ("png", None), ("projector", (1920, 1080))]:
        name, data = save_figure(page, "heatmap-w", fmt)
        made[fmt] = made_ms(page, "heatmap-w")
        if fmt == "svg":
            svg = svg_figure(data.decode("utf-8"))
            assert svg["images"] == 1 and "cell-number" not in svg["texts"]
            assert svg["title"].startswith("W_head") and len(data) > 1e6
        elif fmt == "projector":
            assert png_size(data) == size and len(data) > 1e6
        else:
            # at the figure's width on the page, twice over (its height follows its title and
            # key): its bytes follow its pixels, at least half a byte each, as the cells' noise
            # does not compress (a plot left blank would, to a few bytes a row)
            shown = page.evaluate("() => document.getElementById('heatmap-w').clientWidth")
            w, h = png_size(data)
            assert w == 2 * max(280, round(shown)) and len(data) > 0.5 * w * h, (w, h, len(data))
    longest = page.evaluate("window.__longest")
    print("\nthe largest heatmap's figures: made in %s ms; the longest task %.0f ms" % (made, longest))
    assert longest < 500 and max(made.values()) < 5000, (made, longest)


STRICTER = [
    # (host, the site's policy -> a stricter one, what the alert must name)
    ("pyscript", lambda p: p.replace(" 'wasm-unsafe-eval'", ""),
     "blocked WebAssembly, which Python runs on: the server or the embedding page must allow "
     "'wasm-unsafe-eval' in script-src."),
    ("fallback", lambda p: p.replace(" 'wasm-unsafe-eval'", ""),
     "blocked WebAssembly, which Python runs on: the server or the embedding page must allow "
     "'wasm-unsafe-eval' in script-src."),
    ("pyscript", lambda p: p.replace("worker-src blob:", "worker-src 'none'"),
     "blocked the worker that runs Python (a blob: URL): the server or the embedding page must "
     "allow blob: in worker-src."),
    ("fallback", lambda p: p.replace("worker-src 'self'", "worker-src 'none'"),
     "blocked the worker that runs Python (%sboot/fallback-worker.js): the server or the "
     "embedding page must allow 'self' in worker-src."),
]


@pytest.mark.parametrize("host, stricter, words", STRICTER,
                         ids=["pyscript-no-wasm", "fallback-no-wasm", "pyscript-no-worker",
                              "fallback-no-worker"])
def test_a_stricter_policy_is_named_in_the_alert(page, sites, served, host, stricter, words):
    sites.url(host)  # built
    policy = stricter(site_policy(host))
    assert policy != site_policy(host)
    url = served(site_folder(host), policy)
    page.goto(url + "index.html")
    page.wait_for_function("() => document.documentElement.dataset.bootFailed === 'true'",
                           timeout=120000)
    text = page.locator("#alert").inner_text()
    said = "The page's Content-Security-Policy " + (words % url if "%s" in words else words)
    # WebAssembly refused is found before anything starts, and may be a browser too old to know
    # 'wasm-unsafe-eval': the alert says so after the directive.
    assert text == said or (host_blocks_wasm(words) and text.startswith(said + " (A browser "
                                                                         "older than ")), text
    assert page.evaluate("document.documentElement.dataset.ready") == "false"


def host_blocks_wasm(words):
    return "'wasm-unsafe-eval'" in words


OUTER = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A course page</title>
</head><body><h1>Week 3: the classification head</h1>
<iframe sandbox="%s" src="%s" width="900" height="700" title="The explorer"></iframe>
</body></html>"""


def embed(page, page_log, served, tmp_path, site_url, sandbox):
    """Open a course page, served from another origin, that embeds the explorer."""
    (tmp_path / "course.html").write_text(
        OUTER % (sandbox, site_url + "index.html?embed=1"), encoding="utf-8")
    outer = served(str(tmp_path), None)
    page_log.other_origins.append(outer)
    page.goto(outer + "course.html", wait_until="commit")
    return page.frame_locator("iframe")


@pytest.mark.fresh_page  # the page is another site's, embedding the explorer
@pytest.mark.hosts("pyscript", "fallback")
def test_a_sandboxed_iframe_says_what_it_must_allow(page, page_log, served, tmp_path, site_url):
    frame = embed(page, page_log, served, tmp_path, site_url, "allow-scripts")
    alert = frame.locator("#alert")
    alert.wait_for(state="visible", timeout=10000)
    # at once: before the runtime (Pyodide, its WebAssembly, its worker) was asked for
    runtime = frame.locator("html").evaluate(
        "() => performance.getEntriesByType('resource').map((e) => e.name)"
        ".filter((n) => /pyodide|\\.wasm|-worker\\.m?js/.test(n))")
    text = alert.inner_text()
    assert "sandboxed iframe without allow-same-origin" in text, text
    assert 'sandbox="allow-scripts allow-same-origin"' in text, text
    assert runtime == [], runtime
    assert frame.locator("html").get_attribute("data-boot-failed") == "true"


@pytest.mark.fresh_page  # the page is another site's, embedding the explorer
def test_a_sandboxed_iframe_that_allows_its_origin_runs(page, page_log, served, tmp_path,
                                                        site_url):
    frame = embed(page, page_log, served, tmp_path, site_url,
                     "allow-scripts allow-same-origin")
    frame.locator("html[data-ready='true']").wait_for(state="attached", timeout=120000)
    before = int(frame.locator("html").get_attribute("data-renders"))
    frame.get_by_label("cls[0,1]", exact=True).fill("4.5")
    frame.locator("html:not([data-renders='%d'])" % before).wait_for(state="attached")
    cls = [row[:] for row in WORKED_CLS]
    cls[0][1] = 4.5
    z = frame.locator("#heatmap-logits").evaluate("el => el.data[0].z.map(r => Array.from(r))")
    np.testing.assert_allclose(z, reference_head(cls, WORKED_W_HEAD), atol=1e-12)
    assert frame.locator("#alert").inner_text() == ""
