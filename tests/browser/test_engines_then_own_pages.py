"""The page in three engines on both hosts (test_engines.py says how): the scenarios that boot
a page of their own (in dark mode, in a cross-origin iframe, under stricter policies). This file
is collected after the other test_engines*.py files, so these run last for each engine and host:
they leave the shared page (which `app` boots again if a scenario runs after them)."""
import os

import numpy as np
import pytest

from buildtools.serve import serve_in_thread, site_policy

from .engines import ENGINES, HOSTS, EngineError, axe, launch
from .engines.app import (CLS, FALLBACK_IN_CHROMIUM, ROOT, W, head, layout_settled, settle_layout,
                          violation)
from .engines.kit import (alerts, contrast, edit, heatmap_z, luminance, rgb,
                          state_fragment, wait_ready)

pytestmark = [pytest.mark.browser]


# ---- scenarios that boot a page of their own (last: they leave the shared one) --------------

EVAL_DURING_BOOT = """() => { try { eval("1"); } catch (e) { window.__evalRefused = true; }
    const root = document.documentElement;
    return root.dataset.ready === 'true' || root.dataset.bootFailed === 'true'; }"""


@pytest.fixture
def course_site(tmp_path, reporting_sites, engine_host):
    """A course's page on another origin (another port) with the explorer in an 800 x 600 iframe."""
    src = reporting_sites.url(engine_host) + "index.html?embed=1"
    (tmp_path / "course.html").write_text(
        '<!doctype html><link rel="icon" href="data:,"><title>Course</title>'
        '<iframe id="f" src="%s" width="800" height="600" title="ViT head explorer"></iframe>' % src)
    server, url = serve_in_thread(str(tmp_path), policy=None)
    yield url + "course.html"
    server.shutdown()
    server.server_close()


# What a person reads in dark mode: text on its background, each pair as the page shows it.
DARK_PAIRS = r"""() => {
    const colours = (el) => { const s = getComputedStyle(el); return [s.color, s.backgroundColor]; };
    const page = getComputedStyle(document.body).backgroundColor;
    const on = (sel) => { const el = document.querySelector(sel); const [ink, back] = colours(el);
                          return [sel, ink, /rgba\(.*, 0\)$|transparent/.test(back) ? page : back]; };
    return [on('body'), on('[aria-label="cls[0,1]"]'), on('[aria-label="W_head[0,0]"]'),
            on('#preset'), on('#load-preset'), on('#stats td'),
            ['heatmap-logits ink', document.getElementById('heatmap-logits').layout.font.color, page]];
}"""


def test_dark_mode_is_legible_and_laid_out(engine_name, reporting_sites, request):
    """The system in dark mode, a new browser of each engine (its form controls may follow the
    system's theme): dark paper; the text, the grids' cells, the menus, the buttons, the tables
    and the figures' ink legible on what is behind each (WCAG AA, 4.5:1); nothing cut off or
    overlapping; a link's logits exact. On the PyScript host: the colours are the page's own."""
    playwright = request.getfixturevalue("playwright") if engine_name == "chromium" else None
    try:
        engine = launch(engine_name, playwright, dark=True)
    except EngineError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        rng = np.random.RandomState(11)
        cls, w = np.round(rng.standard_normal((2, 4)), 3), np.round(rng.standard_normal((4, 3)), 3)
        engine.goto(reporting_sites.url("pyscript") + "index.html" +
                    state_fragment({"cls": cls.tolist(), "W_head": w.tolist()}))
        wait_ready(engine)
        engine.wait_for("() => !!(document.getElementById('heatmap-logits').layout || {}).font")
        settle_layout(engine)
        assert engine.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches")
        pairs = engine.evaluate(DARK_PAIRS)
        assert luminance(rgb(pairs[0][2])) < 0.05, pairs[0]
        ratios = [(what, ink, back, round(contrast(rgb(ink), rgb(back)), 2))
                  for what, ink, back in pairs]
        low = [pair for pair in ratios if pair[3] < 4.5]
        assert low == [], low
        assert layout_settled(engine) == []
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, w)[1], rtol=0, atol=1e-12)
        # and every WCAG A/AA rule of axe-core (docs/accessibility-checks.md)
        dark = axe.check(engine, axe.source(), "dark mode, a link's state")
        assert axe.violations([dark]) == {}, axe.report(dark)
        assert engine.console_errors() == []
    finally:
        engine.goto("about:blank")
        engine.close()


@FALLBACK_IN_CHROMIUM  # the boot's CSP handling is one kit for both hosts (js/host.js)
def test_in_a_cross_origin_iframe_a_foreign_csp_violation_does_not_stop_the_boot(app, course_site):
    """The explorer boots in an 800 x 600 iframe of another site while something else in its
    document (an extension, an automation tool) calls eval() again and again; each call is
    refused (no 'unsafe-eval') and is a violation the page did not cause. It must boot, and an
    edit inside the frame must show NumPy's logits. (One boot checks both: each is a cold boot.)
    On the PyScript host, axe-core's WCAG A/AA rules then run in the frame: the embed view."""
    engine = app.engine
    reports = len(app.reports)
    engine.goto(course_site)  # its load: the frame's document has loaded, Python is starting
    engine.enter_frame("#f")
    try:
        engine.wait_for(EVAL_DURING_BOOT, timeout=120, every_ms=50)
        wait_ready(engine, timeout=5)
        edit(engine, "cls[0,0]", "1", then="Tab")
        cls = CLS.copy()
        cls[0, 0] = 1
        np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1],
                                   atol=1e-12)
        assert engine.evaluate("() => innerWidth") == 800
        assert engine.evaluate("() => window.__evalRefused === true"), "eval() was not refused"
        found = [r.get("csp-report", r) for r in app.reports[reports:]]
        assert [violation(r) for r in found if r.get("blocked-uri") != "eval"] == []
        app.assert_axe_clean("the embed view (?embed=1), an edit made, in an 800 x 600 cross-origin iframe")
    finally:
        engine.leave_frame()


# A policy stricter than the site's own, as a server or an embedding page may send: what each
# engine refuses, and what the alert must say.
STRICTER = {
    # Firefox refuses the module worker's own imports (boot/*.mjs), Chromium and WebKit nothing
    # more than the policy names: all must name worker-src and 'self' or boot.
    "worker-src without 'self'": (
        lambda p, host: p.replace("worker-src blob: 'self'", "worker-src blob:") if host == "pyscript"
        else p.replace("worker-src 'self'", "worker-src 'none'"),
        "must allow 'self' in worker-src."),
    "no 'wasm-unsafe-eval'": (
        lambda p, host: p.replace(" 'wasm-unsafe-eval'", ""),
        "must allow 'wasm-unsafe-eval' in script-src."),
}


# In Chromium, test_csp.py::test_a_stricter_policy_is_named_in_the_alert refuses WebAssembly on
# both hosts, and the fallback's worker, as here: Chromium runs the PyScript host's worker case.
STRICTER_WHERE = [("chromium", "pyscript", "worker-src without 'self'")] + [
    (name, host, case) for name in ENGINES if name != "chromium" for host in HOSTS for case in STRICTER]


@pytest.mark.parametrize("engine_name, engine_host, case", STRICTER_WHERE,
                         indirect=["engine_name", "engine_host"])
def test_a_stricter_policy_is_named_in_the_alert_or_the_page_boots(app, case, engine_host):
    """The page boots, or its alert names the directive and the source to allow: never the
    "files may be incomplete" of a download that failed."""
    stricter, words = STRICTER[case]
    folder = os.path.join(ROOT, "build", "test-" + engine_host)
    policy = stricter(site_policy(folder), engine_host)
    assert policy != site_policy(folder)
    server, base = serve_in_thread(folder, policy=policy)
    engine = app.engine
    try:
        engine.goto(base + "index.html", wait="commit")
        # (just after the commit the new document may not have its <html> element yet)
        engine.wait_for("() => { const root = document.documentElement; return !!root && "
                        "(root.dataset.ready === 'true' || root.dataset.bootFailed === 'true'); }",
                        timeout=120)
        if engine.evaluate("() => document.documentElement.dataset.ready") == "true":
            # this engine does not need what the policy took away (Chromium and WebKit check a
            # module worker's imports against script-src, which allows 'self')
            assert case == "worker-src without 'self'" and engine.name != "firefox", engine.name
            return
        # A module worker refused by worker-src (Firefox) fails without a word on why: the page
        # asks the policy itself before it says the boot failed (boot/pyscript.js), so the
        # alert is right from the moment the failure is shown, never "files may be incomplete"
        text = alerts(engine)
        assert text.startswith("The page's Content-Security-Policy blocked ") and words in text, text
        assert "incomplete" not in text, text
    finally:
        # leave the page first: a download still in flight (the page's own check of the NumPy
        # wheel) would be cut by the server's shutdown, an error in the next test's console
        engine.goto("about:blank")
        server.shutdown()
        server.server_close()
