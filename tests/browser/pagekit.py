"""What a test does to the explorer page, in the words of the page's interface (docs/interface.md):
read a heatmap's data[0].z, type into a labelled cell, wait for the next render cycle.
Waits are on the page's own signals (data-ready, data-renders, aria-invalid), never on sleeps.
"""
import json
from urllib.parse import quote

import numpy as np
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

BOOT_TIMEOUT_MS = 120000  # a cold boot here takes ~8 s; slow CI machines get ample room


def state_fragment(state):
    """`#state=` + what JavaScript's encodeURIComponent(JSON.stringify(state)) would give."""
    return "#state=" + quote(json.dumps(state, separators=(",", ":")), safe="-_.!~*'()")


def heatmap_z(page, element_id):
    """The matrix a heatmap shows, as a NumPy array (rows as Plotly holds them)."""
    z = page.evaluate(
        """id => {
            const el = document.getElementById(id);
            return el && el.data && el.data.length ? el.data[0].z.map(r => Array.from(r)) : null;
        }""", element_id)
    return None if z is None else np.array(z, dtype=float)


def renders(page):
    return int(page.evaluate("document.documentElement.dataset.renders || '0'"))


def wait_render_after(page, count, timeout=30000):
    page.wait_for_function(
        "n => Number(document.documentElement.dataset.renders || 0) > n", arg=count, timeout=timeout)


def edit(page, label, text):
    """Type `text` into the cell labelled `label` and wait until the page has redrawn."""
    before = renders(page)
    page.get_by_label(label, exact=True).fill(text)
    wait_render_after(page, before)


def act(page, action):
    """Run `action()` (a click, a select) and wait for the render cycle it causes."""
    before = renders(page)
    action()
    wait_render_after(page, before)


def alert_text(page):
    box = page.locator("#alert")
    return box.inner_text() if box.is_visible() else ""


def page_fragment(page):
    return page.evaluate("location.hash")


def logits_table(page):
    """The numeric logits table as text rows (without the row headers)."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('#logits-table tbody tr'))
                 .map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.textContent))""")


def _alerts(page):
    return page.evaluate(
        "() => Array.from(document.querySelectorAll('[role=alert]'))"
        ".map(e => e.textContent.trim()).filter(Boolean).join(' | ')")


def wait_ready(page, timeout=BOOT_TIMEOUT_MS):
    """Wait until the page says it is interactive; fail with its alert if it could not start."""
    try:
        page.wait_for_function(
            """() => document.documentElement.dataset.ready === 'true'
                     || document.documentElement.dataset.bootFailed === 'true'""",
            timeout=timeout)
    except PlaywrightTimeoutError:
        status = page.evaluate("(document.getElementById('boot-status') || {}).textContent")
        pytest.fail("the page did not become ready in %d s; status: %r; alert: %s"
                    % (timeout // 1000, status, _alerts(page) or "(none)"), pytrace=False)
    if page.evaluate("document.documentElement.dataset.ready") != "true":
        pytest.fail("the page could not start; its alert says: %s" % (_alerts(page) or "(nothing)"),
                    pytrace=False)
    return page


def open_explorer(page, base_url, fragment="", query=""):
    """Navigate to the explorer and wait for its readiness signal (or fail on a boot alert)."""
    page.goto(base_url.rstrip("/") + "/index.html" + query + fragment)
    return wait_ready(page)
