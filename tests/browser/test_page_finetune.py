"""The "Fine-tune the head" panel, used as a person uses it: load a data set, type labels key by
key, press Step and Play, share the link, export the run.

What the page shows (the loss curve's data[0].y, the heatmaps' z, the panel's text, the URL) is
checked against training written out in plain NumPy from the formulas (LayerNorm without
gamma/beta, logits = h_hat @ W_head, softmax cross-entropy, the SGD update;
tests/browser/finetunekit.py), on the CLS rows and labels the page itself shows; nothing of pycore computes the expected numbers.
Play and the loss chart: test_page_finetune_play.py.
"""
import math
import re

import numpy as np
import pytest

from buildtools.data import digits as wheel_digits
from reference_vit import ShippedViT

from . import pagekit
from .engines.kit import curve_drawn
from .pagekit import download, heatmap_z, open_explorer, page_fragment, state_fragment
from .finetunekit import (WORKED_CLS, WORKED_W, layer_norm, softmax, loss_of, sgd, idle, run_steps,
                          curve, labels_shown, click_and_wait, step, play_until, type_label,
                          load_means)

# The tests share their host's page (tests/browser/conftest.py): what a test left in the panel,
# in Python (a run, its settings, the held-out digits) and in the page (Play, marks, messages),
# is let go by the page's own reset, which the last test of test_page_finetune.py checks.
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


# ---- the tests -----------------------------------------------------------------------------

@pytest.mark.hosts("pyscript", "fallback")
def test_step_and_play_train_the_head_exactly_as_sgd_written_here(page, site_url):
    open_explorer(page, site_url)
    load_means(page)
    h_cls, y = heatmap_z(page, "heatmap-cls"), labels_shown(page)
    assert h_cls.shape == (60, 64) and sorted(set(y)) == list(range(10))
    assert not heatmap_z(page, "heatmap-w").any()                   # the paper's start
    step(page, 3)
    expected, W = sgd(h_cls, y, np.zeros((64, 10)), 0.1, 3)
    assert expected[0] == pytest.approx(math.log(10), abs=1e-12)     # every logit 0: log C
    _, shown = curve(page)
    np.testing.assert_allclose(shown, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-w"), W, rtol=1e-9, atol=1e-12)

    # what the page held out of date while Play ran (this page is shared: the watch ends below)
    page.evaluate("""() => { const seen = window.__playDeferred = new Set();
        window.__playWatch = new MutationObserver(() => seen.add(document.documentElement.dataset.deferred));
        window.__playWatch.observe(document.documentElement, { attributeFilter: ['data-deferred'] }); }""")
    play_until(page, 20)
    n = run_steps(page)
    expected, W = sgd(h_cls, y, np.zeros((64, 10)), 0.1, n)
    traces, shown = curve(page)
    np.testing.assert_allclose(shown, expected, rtol=1e-9, atol=1e-12)
    assert shown[-1] < 0.6 * shown[0] and all(b < a for a, b in zip(shown, shown[1:]))
    # the curve on screen passes through every step's loss, within two pixels
    drawn, per_pixel = curve_drawn(page)
    np.testing.assert_allclose(drawn[:, 0], np.arange(n + 1), atol=0.05 * n / 10 + 0.2)
    np.testing.assert_allclose(drawn[:, 1], expected, atol=2 * per_pixel)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-w"), W, rtol=1e-9, atol=1e-12)
    logits = layer_norm(h_cls) @ W
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), logits, rtol=1e-9, atol=1e-12)
    # the logits table, out of view while Play ran, was left for its pause, then brought
    deferred = page.evaluate("() => { window.__playWatch.disconnect(); return Array.from(window.__playDeferred); }")
    assert any("logits_table" in d.split() for d in deferred), deferred
    page.wait_for_function("() => document.documentElement.dataset.deferred === ''", timeout=10000)
    table = page.evaluate("""() => Array.from(document.querySelectorAll('#logits-table tbody tr'),
        r => Array.from(r.cells).slice(1).map(c => c.textContent.replace('\u2212', '-')))""")
    np.testing.assert_allclose(np.array(table, float), logits, atol=5.1e-5)
    delta = softmax(logits)
    delta[np.arange(60), y] -= 1.0
    np.testing.assert_allclose(heatmap_z(page, "heatmap-dw"), layer_norm(h_cls).T @ delta / 60,
                               rtol=1e-8, atol=1e-12)
    right = int(np.sum(np.argmax(logits, axis=1) == y))
    status = page.locator("#ft-status").inner_text()
    assert "Step %d of this run" % n in status and "(%d of 60)" % right in status
    assert "loss %.4f" % expected[-1] in status
    assert traces["accuracy (%)"][-1] == pytest.approx(100.0 * right / 60)

    # the run as NumPy code, downloaded, reproduces the same losses in CPython; said with what
    # it holds, and its Copy copies the same script
    name, data = download(page, lambda: page.click("#ft-export"))
    code = data.decode("utf-8")
    assert name == "vit_head_training.py"
    page.wait_for_function("""() => document.getElementById('toast').textContent.startsWith(
        'Downloaded vit_head_training.py (')""")
    assert "replays the run's %d steps with NumPy alone" % n in page.inner_text("#toast")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("#ft-export-copy")
    page.wait_for_function("""() => document.getElementById('toast').textContent.startsWith(
        "Copied the run's NumPy code (")""")
    assert page.evaluate("navigator.clipboard.readText()") == code
    namespace = {}
    exec(compile(code.replace("print(losses)", ""), "exported", "exec"), namespace)
    np.testing.assert_allclose(namespace["losses"], shown, rtol=1e-12, atol=1e-14)


def test_the_side_by_side_curves_show_the_orderings_the_text_claims(page, site_url):
    open_explorer(page, site_url)
    load_means(page)
    play_until(page, 50)
    traces, _ = curve(page, "compare-curves")
    assert list(traces) == ["correct head", "softmax inside the head", "no LayerNorm",
                            "with bias"]
    n = run_steps(page)
    assert all(len(y) == n + 1 for y in traces.values())
    h_cls, y = heatmap_z(page, "heatmap-cls"), labels_shown(page)
    np.testing.assert_allclose(traces["correct head"], sgd(h_cls, y, np.zeros((64, 10)), 0.1, n)[0],
                               rtol=1e-9)
    reading = page.locator("#ft-reading").inner_text()
    correct = traces["correct head"][-1]
    assert reading.startswith("After %d steps (SGD, lr 0.1): correct head %.3g" % (n, correct))
    claims = dict(re.findall(r"(softmax inside the head|no LayerNorm|with bias): [^(]*\((higher|lower|"
                             r"about the same)", reading))
    assert set(claims) == {"softmax inside the head", "no LayerNorm", "with bias"}
    for name, claim in claims.items():
        last = traces[name][-1]
        assert "%s: %.3g vs %.3g" % (name, last, correct) in reading
        if claim == "higher":
            assert last > correct * 1.02
        elif claim == "lower":
            assert last < correct * 0.98
        else:
            assert abs(last - correct) <= max(0.02 * max(last, correct), 5e-4)
    # what the math predicts at lr 0.1 with SGD: the second softmax slows the head down
    assert claims["softmax inside the head"] == "higher"
    assert "flattens the softmax-inside head's gradient" in page.locator("#ft-why").inner_text()


def test_a_label_typed_key_by_key_changes_the_run_and_the_link_carries_the_trained_head(
        page, site_url, context):
    open_explorer(page, site_url)            # the worked example: B = 2, C = 3, labels 0, 0
    assert labels_shown(page) == [0, 0]
    page.select_option("#ft-start", "zero")
    idle(page)
    assert "log C = log 3 = %.4f" % math.log(3) in page.locator("#ft-start-note").inner_text()
    box = type_label(page, 0, "2")
    box.press("Tab")
    idle(page)
    type_label(page, 1, "1").press("Tab")
    idle(page)
    assert labels_shown(page) == [2, 1]
    status = page.locator("#ft-status").inner_text()
    # before any step the panel reads the loss the run will start from: W_head = 0, every
    # logit 0, so log C, and every sample read as class 0 (not the W_head shown: the
    # first Step would seem to make the loss jump)
    assert "from W_head = 0 · loss %.4f · accuracy 0.0 %% (0 of 2)" % math.log(3) in status
    step(page, 4)                            # a run from zero, as the start says
    expected, W = sgd(WORKED_CLS, [2, 1], np.zeros((4, 3)), 0.1, 4)
    _, shown = curve(page)
    np.testing.assert_allclose(shown, expected, rtol=1e-9, atol=1e-12)

    trained = heatmap_z(page, "heatmap-w")
    np.testing.assert_allclose(trained, W, rtol=1e-12, atol=1e-15)
    fragment = page_fragment(page)
    fresh = context.new_page()
    try:
        open_explorer(fresh, site_url, fragment)
        np.testing.assert_array_equal(heatmap_z(fresh, "heatmap-w"), trained)   # bit for bit
        np.testing.assert_allclose(heatmap_z(fresh, "heatmap-logits"),
                                   layer_norm(np.array(WORKED_CLS)) @ W, rtol=1e-12, atol=1e-14)
        assert labels_shown(fresh) == [2, 1]
        assert fresh.locator("#ft-start").input_value() == "zero"
    finally:
        fresh.close()


def test_the_start_note_is_true_of_the_start_selected(page, site_url):
    """The note beside "Start from" says where a run's loss curve begins, for the start chosen:
    at the loss of the W_head shown by default, at exactly log C only from zero."""
    open_explorer(page, site_url)            # the worked example: labels 0, 0, start "current"
    idle(page)
    note = page.locator("#ft-start-note")
    shown_loss = loss_of(layer_norm(np.array(WORKED_CLS)), np.array(WORKED_W), [0, 0])
    assert "loss %.4f" % shown_loss in page.locator("#ft-status").inner_text()
    assert page.locator("#ft-start").input_value() == "current"
    text = note.inner_text()
    assert text.startswith("A run starts from the W_head shown"), text
    assert "every logit is 0" not in text and "not log C" in text, text
    step(page)
    assert curve(page)[1][0] == pytest.approx(shown_loss, abs=1e-12)   # not log 3

    page.select_option("#ft-start", "zero")
    idle(page)
    text = note.inner_text()
    assert text.startswith("A run starts from W_head = 0"), text
    assert "every logit is 0" in text and "exactly log C = log 3 = %.4f" % math.log(3) in text
    step(page)
    assert curve(page)[1][0] == pytest.approx(math.log(3), abs=1e-12)

    page.select_option("#ft-start", "current")
    idle(page)
    assert note.inner_text().startswith("A run starts from the W_head shown")


def test_refused_inputs_change_nothing_and_say_where(page, site_url):
    open_explorer(page, site_url, state_fragment({"W_head": WORKED_W, "cls": WORKED_CLS,
                                                  "labels": [2, 0]}))
    idle(page)
    status, fragment = page.locator("#ft-status").inner_text(), page_fragment(page)
    box = type_label(page, 1, "7")
    page.wait_for_function("() => document.querySelector('#ft-labels input[data-b=\"1\"]')"
                           ".getAttribute('aria-invalid') === 'true'")
    idle(page)
    message = page.locator("#ft-error").inner_text()
    assert "labels[1] = 7 is out of range: a class index from 0 to 2" in message
    assert page.locator("#ft-status").inner_text() == status and page_fragment(page) == fragment
    box.press("Tab")                         # left with a bad label: the one in effect again
    idle(page)
    assert labels_shown(page) == [2, 0] and page_fragment(page) == fragment

    lr = page.locator("#ft-lr")
    lr.fill("")
    lr.press_sequentially("abc")
    lr.press("Enter")
    idle(page)
    assert "train.lr" in page.locator("#ft-error").inner_text()
    assert "it stays 0.1" in page.locator("#alert").inner_text()
    assert lr.input_value() == "0.1" and lr.get_attribute("aria-invalid") == "true"
    assert page_fragment(page) == fragment
    step(page)                               # still lr 0.1, from the W_head shown
    expected, _ = sgd(WORKED_CLS, [2, 0], WORKED_W, 0.1, 1)
    np.testing.assert_allclose(curve(page)[1], expected, rtol=1e-9)
    click_and_wait(page, "#ft-reset")         # back to the W_head the run started from
    np.testing.assert_array_equal(heatmap_z(page, "heatmap-w"), np.array(WORKED_W))
    assert curve(page)[1] == [] and page_fragment(page) == fragment


def test_the_real_vit_features_preset_reports_held_out_accuracy(page, site_url):
    open_explorer(page, site_url)
    page.wait_for_function("() => !document.getElementById('ft-load-digits').disabled", timeout=30000)
    click_and_wait(page, "#ft-load-digits")
    page.wait_for_function("() => document.querySelectorAll('#ft-labels input').length === 60")
    h_cls, y = heatmap_z(page, "heatmap-cls"), labels_shown(page)
    assert h_cls.shape == (60, 32) and [y.count(d) for d in range(10)] == [6] * 10
    assert page.locator("#ft-start").input_value() == "zero"
    assert page.locator("#ft-lr").input_value() == "0.5"
    step(page, 5)
    expected, W = sgd(h_cls, y, np.zeros((32, 10)), 0.5, 5)
    np.testing.assert_allclose(curve(page)[1], expected, rtol=1e-9, atol=1e-12)
    # the held-out digits: read out of the pinned wheel here, encoded by the tiny ViT
    images, labels = wheel_digits.load_digits()
    model = ShippedViT()
    test = np.array(model.test_indices)
    held = layer_norm(model.features(images[test].astype(float)))
    right = int(np.sum(np.argmax(held @ W, axis=1) == labels[test]))
    text = page.locator("#ft-held-out").inner_text()
    assert "(%d of %d)" % (right, len(test)) in text and right > 0.9 * len(test)
    traces, _ = curve(page)
    assert traces["held-out accuracy (%)"][-1] == pytest.approx(100.0 * right / len(test))
    # the probe at every depth, as bars: chance at depth 0, the digit readable at the last
    assert page.locator("#ft-probes").is_visible()
    bars = page.eval_on_selector_all("#ft-probe-bars li", """items => items.map(li => [
        li.querySelector('.top-name').textContent, li.querySelector('.top-p').textContent,
        parseFloat(li.querySelector('.top-bar > span').style.width)])""")
    assert [b[0] for b in bars] == ["\u2113 = %d" % d for d in range(model.L + 1)]
    shares = [float(p.rstrip(" %")) for _, p, _ in bars]
    assert shares[0] <= 25 and shares[-1] >= 90 and [w for *_, w in bars] == pytest.approx(
        shares, abs=0.51)
    assert "same learned vector for every digit" in page.inner_text("#ft-probes-text")


@pytest.mark.parametrize("how", ["Reset", "a pasted link"])
def test_reset_and_a_pasted_link_let_go_of_everything_the_panel_kept(
        page, site_url, host_pages, site_host, how):
    """The toolbar's Reset, and a link pasted into the address bar, start a new session: what
    the panel kept in Python (the preset's held-out digits, a run, its optimizer and learning
    rate) and in the page (Play, a refused setting's mark and message, the selected logit)
    is gone, and the page reads as it did when freshly booted."""
    open_explorer(page, site_url)
    page.wait_for_function("() => !document.getElementById('ft-load-digits').disabled", timeout=30000)
    click_and_wait(page, "#ft-load-digits")
    page.wait_for_function("() => document.querySelectorAll('#ft-labels input').length === 60")
    page.select_option("#ft-optimizer", "adam")
    idle(page)
    lr = page.locator("#ft-lr")
    lr.fill("abc")
    lr.press("Enter")
    idle(page)
    assert lr.get_attribute("aria-invalid") == "true" and page.locator("#ft-error").is_visible()
    page.focus("#heatmap-logits")
    page.keyboard.press("Enter")             # the logit [0, 0] selected (js/panels/linked.js)
    page.wait_for_function("() => document.documentElement.dataset.linkedLogit === '0,0'")
    page.click("#ft-play")
    page.wait_for_function("() => Number(document.getElementById('finetune').dataset.runSteps) >= 2",
                           timeout=60000)
    assert page.locator("#ft-held-out").is_visible()

    if how == "Reset":
        page.click("#reset")
    else:
        page.evaluate("link => { location.hash = link; }", pagekit.worked_link())
    # the reset's answer drawn (Play's last answers came before it) and its link written
    page.wait_for_function("""link => { const s = document.getElementById('finetune').dataset;
        return s.busy === 'false' && s.playing === 'false' && s.runSteps === '0'
            && document.querySelectorAll('#ft-labels input').length === 2
            && location.hash === link; }""", arg=pagekit.DEFAULT_LINK, timeout=60000)
    fresh = host_pages.fresh[site_host]
    shown = pagekit.fingerprint(page)
    for own in ("scrolled", "focus"):         # where the person scrolled to, and clicked
        shown[own] = fresh[own]
    if how != "Reset":                        # the Example menu says where the state came from
        assert ["preset", "link"] in shown["selects"]
        shown["selects"] = [item if item[0] != "preset" else ["preset", "worked"]
                            for item in shown["selects"]]
    assert not pagekit.fingerprint_diff(shown, fresh)
    assert not page.locator("#ft-held-out").is_visible()
    assert page.locator("#ft-optimizer").input_value() == "sgd"
    step(page)                                # SGD at lr 0.1 from the worked example's W_head
    expected, _ = sgd(WORKED_CLS, [0, 0], WORKED_W, 0.1, 1)
    np.testing.assert_allclose(curve(page)[1], expected, rtol=1e-9)
