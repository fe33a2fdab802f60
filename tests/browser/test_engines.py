"""The page in three engines (Chromium, Firefox, WebKit) on both hosts (PyScript, fallback):
the same scenarios, written once against tests/browser/engines/, input by real key and pointer
events. What the page SHOWS is checked against NumPy written out here. A scenario whose checks
Chromium's own suite makes (Playwright's page tests) runs in Firefox and WebKit, and names its
Chromium twin (engines/app.py: PAGE, BEYOND_CHROMIUM, HOSTS_BEYOND_CHROMIUM).

One page is booted per engine and host (tests/browser/engines/app.py; the fixtures in
tests/browser/conftest.py) and the scenarios of test_engines*.py run on it in order, each
starting from a `#state=` link to the worked example (kit.load_state); only the scenarios about
booting (test_engines_then_own_pages.py) boot a page of their own, last. Each site is served
with its own policy plus a report-uri, so that a CSP violation anywhere (the page, its workers,
in any engine) reaches this server. This file: the boot, a link, typing, pasting, scrubbing and
the walk-through.
"""
import json

import numpy as np
import pytest

from .engines.app import BEYOND_CHROMIUM, CLS, HOSTS_BEYOND_CHROMIUM, PAGE, W, head
from .engines.kit import (alerts, active_label, cell, edit, heatmap_z, load_state, renders,
                          wait_render_after)

pytestmark = [pytest.mark.browser]


# ---- scenarios on the booted page -----------------------------------------------------------

@HOSTS_BEYOND_CHROMIUM  # Chromium's fallback: test_hosts.py::test_host_boots_and_computes_the_worked_example
def test_boots_to_ready_without_console_errors_or_csp_violations(app, engine_host):
    engine = app.start(fresh=True)  # a boot of its own: what it reports is the boot's alone
    assert engine.evaluate("() => document.documentElement.dataset.ready") == "true"
    if engine_host == "pyscript":  # NumPy's libraries compiled while Python started (wheel-libraries.mjs)
        said = engine.evaluate("() => document.documentElement.dataset.earlyLibraries")
        used, compiled = map(int, said.split(" of "))
        assert 1 <= used <= compiled, said
    assert alerts(engine) == ""
    app.assert_axe_clean("the worked example, as booted")
    app.errors_seen, app.reports_seen = 0, app.reports_at_boot  # all since the navigation
    app.assert_clean()


@BEYOND_CHROMIUM  # Chromium's: test_page_view.py::test_state_in_the_url_with_cls, both hosts
def test_a_state_link_shows_exactly_numpys_logits(app):
    engine = app.start()
    rng = np.random.RandomState(7)
    cls, w = np.round(rng.standard_normal((3, 5)), 3), np.round(rng.standard_normal((5, 4)), 3)
    load_state(engine, {"cls": cls.tolist(), "W_head": w.tolist()})
    h_hat, logits = head(cls, w)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-normalized"), h_hat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), logits, rtol=0, atol=1e-12)
    app.assert_clean()


@HOSTS_BEYOND_CHROMIUM  # Chromium's fallback: test_page_share.py::test_a_page_opened_from_a_link_nested_1900_deep_boots_and_says_why
def test_a_link_nested_1900_deep_is_refused_and_the_page_keeps_answering(app):
    """An 11 KB link of 1,900 nested arrays once overflowed the WebAssembly stack in Python's JSON
    reader: the runtime died, and no edit was answered again. Now it is refused in words."""
    engine = app.start()
    before = renders(engine)
    engine.evaluate("(f) => { location.hash = f; }", "state=" + "%5B" * 1900 + "%5D" * 1900)
    wait_render_after(engine, before)
    said = alerts(engine)
    assert "nests arrays or objects 1,900 deep; the page reads JSON at most 32 deep" in said, said
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, W)[1], atol=1e-12)
    edit(engine, "cls[1,2]", "0.5")  # and edits are answered (the next scenario loads a link)
    cls = CLS.copy()
    cls[1, 2] = 0.5
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    app.assert_clean()


@BEYOND_CHROMIUM  # Chromium's: test_page_edit.py::test_editing_a_cls_cell_recomputes_every_stage, both hosts
def test_click_a_cls_cell_and_type_key_by_key(app):
    engine = app.start()
    edit(engine, "cls[0,1]", "4.5", then="Tab")
    cls = CLS.copy()
    cls[0, 1] = 4.5
    h_hat, logits = head(cls, W)
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-cls"), cls)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-normalized"), h_hat, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), logits, atol=1e-12)
    app.assert_clean()


# The scenarios below the first four exercise the page's own JavaScript (the grid's keys, paste,
# scrubbing, the walk-through), the same on both hosts: they run under the PyScript host. Firefox
# and WebKit boot both hosts, load a link, refuse the deep link (its WebAssembly stack is the
# engine's) and answer an edit typed key by key on both; Chromium's suite does so in Chromium.

@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_browsers.py::test_enter_in_the_bottom_row_ends_the_entry_there
def test_click_a_w_head_cell_and_type_then_the_bottom_row_with_enter(app):
    engine = app.start()
    w = W.copy()
    edit(engine, "W_head[2,1]", "-0.25", then="Tab")
    w[2, 1] = -0.25
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    edit(engine, "W_head[3,2]", "1.5", then="Enter")  # Enter on the last row: it stays there
    w[3, 2] = 1.5
    assert active_label(engine) == "W_head[3,2]"
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-w"), w)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, w)[1], atol=1e-12)
    app.assert_clean()


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_edit.py::test_paste_a_block_at_the_focused_cell
def test_paste_a_block_at_the_focused_cell(app):
    engine = app.start()
    engine.click(cell("cls[0,1]"))
    before = renders(engine)
    engine.paste("9\t8\n7\t6")
    wait_render_after(engine, before)
    cls = CLS.copy()
    cls[0:2, 1:3] = [[9, 8], [7, 6]]
    np.testing.assert_array_equal(heatmap_z(engine, "heatmap-cls"), cls)
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    assert active_label(engine) == "cls[0,1]"
    assert engine.evaluate("(s) => document.querySelector(s).value", cell("cls[0,1]")) == "9"
    app.assert_clean()


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_edit.py::test_keyboard_only_editing
def test_escape_takes_a_typed_entry_back(app):
    engine = app.start()
    engine.click(cell("W_head[1,2]"))
    engine.type_keys("25")  # valid all the way: previewed while typing
    engine.wait_for("() => document.getElementById('heatmap-w').data[0].z[1][2] === 25")
    engine.press("Escape")
    engine.wait_for("() => document.getElementById('heatmap-w').data[0].z[1][2] === -0.5")
    assert engine.evaluate("(s) => document.querySelector(s).value", cell("W_head[1,2]")) == "-0.5"
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(CLS, W)[1], atol=1e-12)
    app.assert_clean()


@PAGE  # in Chromium too: the finger on the handle is scrubbed here alone
def test_scrub_a_number_with_keys_then_a_finger_on_its_handle(app):
    engine = app.start()
    z = "() => document.getElementById('heatmap-cls').data[0].z[0][1]"
    engine.click(cell("cls[0,1]"))
    for _ in range(3):
        engine.press("Alt+ArrowUp")  # 0.1 a step: -1 -> -0.7
    engine.wait_for(z + " === -0.7")
    cls = CLS.copy()
    cls[0, 1] = -0.7
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    assert engine.evaluate("(s) => document.querySelector(s).value", cell("cls[0,1]")) == "-0.7"
    engine.press("Escape")  # back to the number before the steps
    engine.wait_for(z + " === -1")
    # a finger drags the focused cell's handle to the right: the number grows, 0.01 a pixel
    engine.drag("#grid-input .scrub-handle", [(0.5, 0.5), (1.5, 0.5), (2.5, 0.5), (3.5, 0.5)], kind="touch")
    engine.wait_for("() => document.documentElement.dataset.linkPending === 'false' && " + z[6:] + " > -0.9")
    value = heatmap_z(engine, "heatmap-cls")[0, 1]
    assert -0.9 < value < -0.2, value
    assert engine.evaluate("(s) => document.querySelector(s).value", cell("cls[0,1]")) == repr(float(value)).rstrip("0").rstrip(".")
    cls[0, 1] = value
    np.testing.assert_allclose(heatmap_z(engine, "heatmap-logits"), head(cls, W)[1], atol=1e-12)
    # the link follows once the scrub pauses
    assert json.loads(engine.evaluate(
        "() => decodeURIComponent(new URLSearchParams(location.hash.slice(1)).get('state'))"))["cls"][0][1] == value
    app.assert_clean()


@PAGE
@BEYOND_CHROMIUM  # Chromium's: test_page_edit.py::test_keyboard_only_editing
def test_tab_leaves_the_grid_as_one_stop(app):
    engine = app.start()
    engine.click(cell("cls[0,2]"))
    engine.press("Tab")
    assert engine.evaluate(
        "() => !document.getElementById('grid-input').contains(document.activeElement)")
    engine.press("Shift+Tab")  # back to the cell it left
    assert active_label(engine) == "cls[0,2]"
    app.assert_clean()


def walk_math(engine):
    text = engine.evaluate("() => document.querySelector('#walk-math .katex-html').textContent")
    return "".join(ch for ch in text.replace("\u2212", "-") if not ch.isspace() and ch != "\u200b")


@PAGE  # in Chromium too: axe-core at step 5
def test_the_walk_through_steps(app):
    engine = app.start()
    mu = CLS.mean(axis=1)
    var = ((CLS - mu[:, None]) ** 2).mean(axis=1)
    h_hat, logits = head(CLS, W)
    before = renders(engine)
    engine.click("#walk-start")
    wait_render_after(engine, before)
    engine.wait_for("() => document.activeElement.id === 'walk-next'")
    title = "() => document.getElementById('walk-title').textContent"
    assert engine.evaluate(title) == "Step 1 of 7: the CLS token of sample 0"
    shown = []
    for _ in range(3):  # the mean, the variance, normalize: by the arrow key
        before = renders(engine)
        engine.press("ArrowRight")
        wait_render_after(engine, before)
        shown.append(walk_math(engine))
    assert shown[0].endswith("%.4f" % mu[0]) and shown[1].endswith("%.4f" % var[0])
    assert all(("%.4f" % v) in shown[2] for v in h_hat[0])
    before = renders(engine)
    engine.click("#walk-next")  # and by the button: one dot product, the predicted class
    wait_render_after(engine, before)
    c = int(np.argmax(logits[0]))
    assert engine.evaluate(title) == "Step 5 of 7: one dot product: sample 0, class %d" % c
    assert walk_math(engine).endswith("%.4f" % (h_hat[0] @ W[:, c]))
    app.assert_axe_clean("the walk-through at step 5 of 7")
    app.assert_clean()
