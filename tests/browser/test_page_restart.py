"""A runtime that stops (web/js/runtime/restart.js): a call that fails across the crossing, as every call
does once Pyodide has had a fatal error, is said in words; the page reloads itself at the last
valid link, so the state shown before the stop is shown again by a new runtime; a second stop
soon after is only said (no reload loop). Killed at the crossing the page sees: on the PyScript
host the bridge's call rejects (an init script wraps it); in the one file the worker's reply
fails as a dead Pyodide makes it fail (its answers throw, and the worker posts the error)."""
import os
import shutil

import numpy as np
import pytest

from reference import reference_head
from .pagekit import alert_text, heatmap_z, on_bridge, page_fragment, wait_ready

pytestmark = [pytest.mark.browser]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEATH = "RuntimeError: Pyodide already fatally failed and can no longer be used."

KILLABLE = on_bridge("""const call = bridge.call.bind(bridge);
      bridge.call = (request) => window.__dead ? Promise.reject(new Error(%r)) : call(request);"""
                     % DEATH)

# In the one file's worker: every answer from now on throws, as a dead runtime's do.
KILL_WORKER = """(death) => {
    const reply = self.vitWorker.reply;
    self.vitWorker.reply = (answers, m) => reply(Object.assign({}, answers, {
        answer: () => { throw new Error(death); } }), m);
}"""


def type_into(page, label, text):
    """Click a cell, type `text` key by key and press Enter, as a person does."""
    cell = page.get_by_label(label, exact=True)
    cell.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def shown_state(page):
    """The CLS rows and W_head the editors hold (from their cells' text)."""
    return page.evaluate("""() => {
        const grid = (prefix) => {
            const cells = Array.from(document.querySelectorAll(`[aria-label^="${prefix}["]`));
            const at = (el) => el.getAttribute('aria-label').slice(prefix.length + 1, -1).split(',').map(Number);
            const rows = 1 + Math.max(...cells.map((el) => at(el)[0]));
            const cols = 1 + Math.max(...cells.map((el) => at(el)[1]));
            const m = Array.from({ length: rows }, () => new Array(cols).fill(NaN));
            for (const el of cells) { const [i, j] = at(el); m[i][j] = Number(el.value); }
            return m;
        };
        return { cls: grid('cls'), W_head: grid('W_head') };
    }""")


def stop_and_recover(page, kill, again):
    """Edit a cell (a valid state, written into the link), stop the runtime with kill(), edit
    again: the stop is said, the page reloads at the first edit's link and shows that state,
    computed anew; (`again`) a second stop is said and the page stays."""
    type_into(page, "cls[0,0]", "2.5")
    # the edit's own link written (the page had the worked example's before it)
    page.wait_for_function("() => decodeURIComponent(location.hash).includes('[[2.5,-1,0,3]') && "
                           "document.documentElement.dataset.linkPending !== 'true'")
    link = page_fragment(page)
    kill()
    type_into(page, "cls[0,1]", "-1")
    page.wait_for_function("() => document.documentElement.dataset.pythonStopped === 'restarting'")
    said = alert_text(page)
    assert said.startswith("Python stopped working (%s)" % DEATH), said
    assert "last valid state" in said
    assert page_fragment(page) == link            # the refused edit changed no link
    # the reload: a new runtime, the same state
    page.wait_for_function("() => !document.documentElement.dataset.pythonStopped", timeout=30000)
    wait_ready(page)
    assert page_fragment(page) == link
    page.wait_for_function("() => /Python had stopped working, and was started again with the last "
                           "valid state/.test(document.body.textContent)")
    shown = shown_state(page)
    cls, w = np.array(shown["cls"]), np.array(shown["W_head"])
    assert cls[0, 0] == 2.5 and not np.isnan(cls).any() and not np.isnan(w).any()
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), reference_head(cls, w),
                               atol=1e-9)
    assert alert_text(page) == ""
    if not again:
        return
    # a second stop within a minute of the restart: said, and no reload
    page.evaluate("() => { window.__sameWindow = true; }")
    kill()
    type_into(page, "cls[0,1]", "-1")
    page.wait_for_function("() => document.documentElement.dataset.pythonStopped === 'stopped'")
    assert alert_text(page).startswith("Python stopped again (%s). Reload the page" % DEATH)
    page.wait_for_timeout(2000)  # past the reload's delay (1.2 s)
    assert page.evaluate("() => window.__sameWindow === true")
    assert page_fragment(page) == link


@pytest.mark.fresh_page  # its init script can stop the runtime
def test_a_stopped_runtime_is_said_and_restarted_at_the_last_valid_state(page, site_url):
    page.add_init_script(KILLABLE)
    page.goto(site_url + "index.html")
    wait_ready(page)
    stop_and_recover(page, lambda: page.evaluate("() => { window.__dead = true; }"), again=True)


@pytest.mark.fresh_context
def test_the_one_files_worker_that_stops_answering_is_restarted(page, sites, tmp_path):
    sites.url("pyscript")  # builds it
    path = tmp_path / "vit-head-explorer.html"
    shutil.copy(os.path.join(ROOT, "build", "test-pyscript", path.name), path)
    page.goto(path.as_uri())
    wait_ready(page)

    def kill():
        (worker,) = page.workers
        worker.evaluate(KILL_WORKER, DEATH)
    stop_and_recover(page, kill, again=False)  # the second stop is the page's, tested above
