"""Play at the largest sizes: its first request only starts the run (the heads' start and a
step do not fit together in a request's 0.2 s of work: pycore.explorer.finetune.panel.steps_that_fit),
and the page goes on with the steps from there."""
import json

import pytest

from .pagekit import alert_text, open_explorer

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

B, D, C = 64, 1024, 1000
LINK = "#state=" + json.dumps({
    "W_head": {"preset": "random", "seed": 1, "shape": [D, C], "scale": 0.02},
    "cls": {"preset": "random", "seed": 2, "shape": [B, D], "scale": 1.0},
    "labels": [b % C for b in range(B)]}, separators=(",", ":"))


def test_play_goes_on_from_a_first_request_that_only_starts_the_run(page, site_url):
    open_explorer(page, site_url, LINK)
    page.evaluate("""() => { window.__taken = [];
        const status = document.getElementById('ft-status');
        new MutationObserver(() => window.__taken.push(status.textContent))
            .observe(status, {childList: true, characterData: true, subtree: true}); }""")
    page.click("#ft-play")
    page.wait_for_function(
        "() => Number(document.getElementById('finetune').dataset.runSteps) >= 2", timeout=120000)
    page.click("#ft-play")  # Pause
    page.wait_for_function("""() => { const s = document.getElementById('finetune').dataset;
        return s.busy === 'false' && s.playing === 'false'; }""", timeout=60000)
    shown = page.evaluate("() => window.__taken")
    assert any(text.startswith("Step 0 of this run") for text in shown), shown  # started, no step
    steps = int(page.evaluate("document.getElementById('finetune').dataset.runSteps"))
    y = page.evaluate("() => Array.from(document.getElementById('loss-curve').data[0].y)")
    assert len(y) == steps + 1 and steps >= 2
    assert y[-1] < y[0]
    assert alert_text(page) == ""
