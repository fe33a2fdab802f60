"""The "Fine-tune the head" panel's Play and loss chart, used as a person uses them: Play writes
the link once it pauses, is said at a calm rate, goes on through a setting and stops when the run
converges; the chart reads out any step by pointer and by keys. Expected numbers: training
written out in NumPy (tests/browser/finetunekit.py)."""
import re

import numpy as np
import pytest

from pycore.explorer import decode_fragment

from .pagekit import heatmap_z, open_explorer, page_fragment
from .finetunekit import sgd, idle, run_steps, curve, labels_shown, step, load_means

# The tests share their host's page (tests/browser/conftest.py): what a test left in the panel,
# in Python (a run, its settings, the held-out digits) and in the page (Play, marks, messages),
# is let go by the page's own reset, which the last test of test_page_finetune.py checks.
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


def test_play_writes_the_link_once_it_pauses(page, site_url):
    """While Play runs the address bar keeps the link it had (spelling the state out and writing
    it at every step was most of a step's time on the page); once Play pauses, the link is the
    trained head's: decoded, its W_head is the one the heatmap shows, not the one before."""
    open_explorer(page, site_url)
    before = page_fragment(page)
    W_before = decode_fragment(before).W_head
    page.evaluate("""() => { window.__hashes = new Set();
        window.__watch = setInterval(() => window.__hashes.add(location.hash), 5); }""")
    page.click("#ft-play")
    page.wait_for_function("() => Number(document.getElementById('finetune').dataset.runSteps) >= 10",
                           timeout=60000)
    page.click("#ft-play")  # Pause
    idle(page)
    hashes = page.evaluate("() => { clearInterval(window.__watch); return Array.from(window.__hashes); }")
    assert hashes == [before], "the address bar changed while Play ran"
    page.wait_for_function("() => document.documentElement.dataset.linkPending === 'false'"
                           " && location.hash !== %r" % before, timeout=30000)
    shown = decode_fragment(page_fragment(page))
    np.testing.assert_array_equal(shown.W_head, heatmap_z(page, "heatmap-w"))
    assert not np.array_equal(shown.W_head, W_before)


def test_play_and_step_are_said_at_a_calm_rate(page, site_url):
    """The panel's status is said in its one live region (#ft-said) after the panel's own
    actions: a Step once; Play at most once every 5 s while it runs, and once where it stops
    (once 22 messages of about 300 characters in 2.5 s)."""
    open_explorer(page, site_url)
    # (an earlier test's observers on this reused page, test_page_keyboard's, disconnected first:
    # they push into window.__said too)
    page.evaluate("""() => { for (const o of window.__sayers || []) o.disconnect();
        window.__said = [];
        window.__sayers = Array.from(document.querySelectorAll('#finetune [aria-live], #finetune [role=status]'), (el) => {
            const o = new MutationObserver(() => window.__said.push([el.id, el.textContent, performance.now()]));
            o.observe(el, { childList: true, characterData: true, subtree: true });
            return o;
        }); }""")
    page.click("#ft-step")
    page.wait_for_function("() => window.__said.length === 1", timeout=30000)
    page.click("#ft-play")
    page.wait_for_timeout(6000)
    page.click("#ft-play")  # Pause
    idle(page)
    # where it stopped is said once the page has drawn nothing for a second (js/page/announce.js)
    page.wait_for_function("""() => document.getElementById('ft-said').textContent ===
        document.getElementById('ft-status').textContent""", timeout=10000)
    said = page.evaluate("() => window.__said")
    assert {region for region, _, _ in said} == {"ft-said"}, said
    steps = int(page.evaluate("document.getElementById('finetune').dataset.runSteps"))
    assert steps > 20, steps
    during = said[1:-1]  # between the Step's and the pause's
    assert len(during) <= 2, said  # 6 s of Play: at most at its start and 5 s later
    assert all(b[2] - a[2] >= 4900 for a, b in zip(said[1:], said[2:-1])), said
    assert said[-1][1] == page.inner_text("#ft-status")  # where it stopped


def test_play_keeps_going_through_a_setting_and_stops_when_converged(page, site_url):
    """A new optimizer during Play starts a new run with its own learning rate and Play goes
    on, rather than stopping and resetting unannounced; Play stops by itself once the
    run has converged, and says so; the step axis has whole-number ticks."""
    open_explorer(page, site_url)
    load_means(page)
    page.click("#ft-play")
    page.wait_for_function("() => Number(document.getElementById('finetune').dataset.runSteps) >= 5")
    page.select_option("#ft-optimizer", "adam")
    page.wait_for_function("() => document.getElementById('ft-status').textContent.includes('usual learning rate')")
    assert page.locator("#ft-lr").input_value() == "0.01"
    assert "ended when the setting changed" in page.locator("#ft-status").inner_text()
    # Play went on, on a new run, until that run converged
    page.wait_for_function("""() => { const s = document.getElementById('finetune').dataset;
        return s.playing === 'false' && s.busy === 'false'; }""", timeout=120000)
    status = page.locator("#ft-status").inner_text()
    # what the rule measured (the fall against the start), and that the loss still falls
    assert "Play stopped at step %d: every sample is classified right" % run_steps(page) in status
    assert "under 1% of where it started" in status and "still falling, by" in status, status
    losses = curve(page)[1]
    assert 20 < run_steps(page) < 300 and len(losses) == run_steps(page) + 1
    # the converged run's own numbers: every sample right, the last 20 steps flat
    assert losses[-21] - losses[-1] < 0.01 * losses[0]
    assert page.locator("#ft-labels [data-right=false]").count() == 0
    ticks = page.evaluate("""() => Array.from(document.querySelectorAll('#loss-curve .xtick text'),
        t => t.textContent)""")
    assert ticks and all(re.fullmatch(r"\d+", t.replace(",", "")) for t in ticks), ticks
    # in dark mode the charts' grid is the page's dark --line (#3a4150), their text its ink
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("""() => ['loss-curve', 'compare-curves'].every(id => {
        const grid = document.querySelectorAll('#' + id + ' .chart-grid');
        return grid.length > 4 && [...grid].every(g => getComputedStyle(g).stroke === 'rgb(58, 65, 80)')
            && getComputedStyle(document.querySelector('#' + id + ' .xtick text')).fill
               === getComputedStyle(document.body).color; })""", timeout=10000)
    page.emulate_media(color_scheme="light")


def test_the_loss_chart_reads_out_any_step_by_pointer_and_by_keys(page, site_url):
    """Over the loss chart the pointer reads out the step under it; the chart takes focus, and
    End, Left and Home read the last step, the one before and step 0: each readout gives that
    step's loss and accuracy as trained here in NumPy (4 significant digits), and a screen
    reader hears the first and last loss."""
    open_explorer(page, site_url)
    load_means(page)
    step(page, 6)
    h_cls, y = heatmap_z(page, "heatmap-cls"), labels_shown(page)
    losses, _ = sgd(h_cls, y, np.zeros((64, 10)), 0.1, 6)

    def readout():
        text = page.locator("#loss-curve .chart-readout").inner_text()
        m = re.fullmatch(r"step (\d+): loss \(cross-entropy\) ([\d.e+-]+), accuracy \(%\) ([\d.]+)", text)
        assert m, text
        return int(m.group(1)), float(m.group(2))

    svg = page.locator("#loss-curve svg.chart-plot")
    svg.focus()
    for key, at in [("End", 6), ("ArrowLeft", 5), ("ArrowLeft", 4), ("Home", 0), ("ArrowRight", 1)]:
        page.keyboard.press(key)
        k, loss = readout()
        assert k == at and loss == pytest.approx(losses[at], rel=1e-3), key
    # arrow keys move its readout: an application whose readout is said as it changes
    assert (svg.get_attribute("role"), svg.get_attribute("aria-roledescription")) == ("application", "chart")
    assert page.locator("#loss-curve .chart-readout").get_attribute("aria-live") == "polite"
    label = svg.get_attribute("aria-label")
    assert "%.4g at step 0" % losses[0] in label and "%.4g at step 6" % losses[6] in label, label
    page.keyboard.press("Tab")  # leaving the chart takes its readout away
    assert page.locator("#loss-curve .chart-readout").inner_text() == ""
    # the pointer at step 3's place on the step axis (between the ticks of steps 2 and 4)
    ticks = {t["text"]: t["x"] for t in page.evaluate("""() => Array.from(
        document.querySelectorAll('#loss-curve .xtick text'), t => {
            const b = t.getBoundingClientRect(); return { text: t.textContent, x: b.x + b.width / 2 }; })""")}
    plot = svg.bounding_box()
    page.mouse.move((ticks["2"] + ticks["4"]) / 2, plot["y"] + plot["height"] / 3)
    k, loss = readout()
    assert k == 3 and loss == pytest.approx(losses[3], rel=1e-3)
