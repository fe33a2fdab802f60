"""The teaching panels: step by step, softmax, the mistakes and the other heads. The mistakes'
outputs are written out here from their definitions (docs/math.md) with the head in plain Python
(tests/reference.py); the other heads, whose parameters are drawn by pycore's seeded recipe, are
compared with pycore run in CPython on the same state."""
import math

import numpy as np
import pytest
from playwright.sync_api import expect

from pycore.explorer.comparisons.registry import MODEL_ONLY, PAGE_ONLY, of_kind, run
from pycore.explorer import default_state, preset, state_to_json
from reference import reference_head


def _softmax(row):
    top = max(row)
    e = [math.exp(v - top) for v in row]
    return [v / math.fsum(e) for v in e]


def mistake_output(state, key):
    """What each mistake outputs, from its definition: the last token's row instead of the CLS
    row; softmax applied inside the head; LayerNorm skipped (None for the transposed W_head,
    which is refused)."""
    z = state.encoder_output
    cls, W = z[:, 0, :], state.W_head
    if key == "last_position":
        return np.array(reference_head(z[:, -1, :], W))
    if key == "softmax_inside":
        return np.array([_softmax(row) for row in reference_head(cls, W)])
    if key == "no_layernorm":
        return np.array([[math.fsum(float(h[d]) * float(W[d][c]) for d in range(len(h)))
                          for c in range(W.shape[1])] for h in cls])
    return None

from .pagekit import act, edit, heatmap_z, open_explorer, set_viewport, state_fragment

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]


def test_steps_show_one_logit_as_a_sum_of_products(page, site_url):
    open_explorer(page, site_url)
    steps = page.locator("#step-list")
    # Out of view, the equations are typeset when the browser is idle: wait for them.
    expect(steps).to_contain_text("0.8854")  # logit of sample 0, class 0, as in the worked example
    act(page, lambda: page.select_option("#step-sample", "1"))
    act(page, lambda: page.select_option("#step-class", "2"))
    expect(steps).to_contain_text("1.4000")
    text = steps.inner_text()
    assert "-1.4000" in text or "\u22121.4000" in text
    # Equations are typeset (KaTeX, vendored), not raw TeX.
    assert page.locator("#step-list .katex").count() >= 4
    assert "\\frac" not in text


def test_steps_follow_edits_made_while_they_were_out_of_view(page, site_url):
    set_viewport(page, {"width": 1280, "height": 720})
    open_explorer(page, site_url)
    steps = page.locator("#step-list")
    expect(steps).to_contain_text("0.8854")
    assert not page.evaluate("""() => { const r = document.getElementById('step-list')
        .getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; }""")
    edit(page, "cls[0,0]", "4")
    state = default_state()
    state.cls[0, 0] = 4.0
    logit = reference_head(state.cls, state.W_head)[0][0]
    steps.scroll_into_view_if_needed()
    # h_cls of sample 0 and the logit of class 0, as the equations print them
    expect(steps).to_contain_text("4.0000")
    expect(steps).to_contain_text("%.4f" % logit)


def test_steps_follow_a_mistake_chosen_while_they_were_out_of_view(page, site_url):
    """"Position -1" switches the input to the encoder output, which changes the first equation;
    chosen while the equations are out of view, it leaves them for later (docs/protocol.md), and
    they show the new input once they scroll into view."""
    set_viewport(page, {"width": 1280, "height": 720})
    open_explorer(page, site_url)
    steps = page.locator("#step-list")
    expect(steps).to_contain_text("0.8854")
    page.locator("#mistake").scroll_into_view_if_needed()
    assert not page.evaluate("""() => { const r = document.getElementById('step-list')
        .getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0; }""")
    act(page, lambda: page.select_option("#mistake", "last_position"))
    steps.scroll_into_view_if_needed()
    expect(steps).to_contain_text("z_L[0, 0, :]")  # the TeX KaTeX keeps beside what it shows
    expect(steps).to_contain_text("0.8854")  # position 0 holds the CLS vectors: the same logit


def test_softmax_panel_says_it_is_not_the_head(page, site_url):
    open_explorer(page, site_url)
    assert "not part of the head" in page.locator("#softmax h2").inner_text()
    probs = heatmap_z(page, "heatmap-probs")
    np.testing.assert_allclose(probs.sum(axis=1), [1, 1], atol=1e-12)
    assert np.argmax(probs[0]) == 2 and np.argmax(probs[1]) == 0


def test_each_mistake_beside_the_correct_head(page, site_url):
    state = preset("encoder")  # with patch tokens, position -1 differs from position 0
    open_explorer(page, site_url, state_fragment(state_to_json(state)))
    keys = [c.key for c in of_kind("mistake")]
    assert len(keys) == 4  # real ViTs' gamma/beta and bias are among the other heads
    for key in keys:  # one after the other, on the same inputs
        act(page, lambda: page.select_option("#mistake", key))
        explanation = page.locator("#mistake-explanation").inner_text()
        assert len(explanation) > 40, key
        output = mistake_output(state, key)
        if output is None:  # W_head transposed, (C, D): refused, saying both shapes
            error = page.locator("#mistake-error").inner_text()
            assert "(%d, %d)" % state.W_head.shape[::-1] in error, (key, error)
            assert heatmap_z(page, "heatmap-mistake") is None, key
        else:
            np.testing.assert_allclose(heatmap_z(page, "heatmap-mistake"), output, atol=1e-12,
                                       err_msg=key)
            correct = heatmap_z(page, "heatmap-mistake-correct")
            np.testing.assert_allclose(heatmap_z(page, "heatmap-mistake-diff"), output - correct,
                                       atol=1e-12, err_msg=key)


def test_transposed_w_head_shows_the_error_message(page, site_url):
    open_explorer(page, site_url)
    act(page, lambda: page.select_option("#mistake", "transposed"))
    message = page.locator("#mistake-error").inner_text()
    assert "(3, 4)" in message and page.locator("#mistake-error").is_visible()


def test_each_variant_on_the_same_inputs(page, site_url):
    state = preset("encoder")
    open_explorer(page, site_url, state_fragment(state_to_json(state)))
    # every head the menu offers without a model file (the model's own head needs one:
    # tests/browser/test_page_model_file.py)
    keys = [c.key for c in of_kind("variant") if c.key not in MODEL_ONLY + PAGE_ONLY]
    assert keys[:2] == ["affine", "bias"]  # real ViTs' gamma/beta and bias, first
    offered = page.eval_on_selector_all("#variant option", "os => os.map(o => o.textContent)")
    assert "Real ViTs: LayerNorm with \u03b3 and \u03b2" in offered
    assert "Real ViTs: a bias in the head" in offered
    mistakes = page.eval_on_selector_all("#mistake option", "os => os.map(o => o.textContent)")
    assert not any("\u03b3" in m or "bias" in m or "gamma" in m for m in mistakes), mistakes
    for key in keys:
        act(page, lambda: page.select_option("#variant", key))
        output, error = run(state, key)
        assert error is None, key
        np.testing.assert_allclose(heatmap_z(page, "heatmap-variant"), output, rtol=1e-9,
                                   atol=1e-12, err_msg=key)
        assert page.locator("#variant-explanation").inner_text(), key


def test_gap_switches_to_the_encoder_output(page, site_url):
    open_explorer(page, site_url)
    act(page, lambda: page.select_option("#variant", "gap"))
    assert page.locator("#mode").input_value() == "encoder"
    assert "full encoder output" in page.locator("#variant-notice").inner_text()
    z = heatmap_z(page, "heatmap-encoder").reshape(2, 5, 4)
    state = default_state()
    pooled = z[:, 1:, :].mean(axis=1)
    h_hat = (pooled - pooled.mean(1, keepdims=True)) / np.sqrt(pooled.var(1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-variant"), h_hat @ state.W_head, atol=1e-12)


def test_comparison_plots_sit_side_by_side(page, site_url):
    set_viewport(page, {"width": 1280, "height": 900})
    open_explorer(page, site_url)
    act(page, lambda: page.select_option("#mistake", "no_layernorm"))
    boxes = [page.locator("#%s .main-svg" % element_id).first.bounding_box()
             for element_id in ("heatmap-mistake-correct", "heatmap-mistake", "heatmap-mistake-diff")]
    for left, right in zip(boxes, boxes[1:]):
        assert left["x"] + left["width"] <= right["x"] + 1, "comparison plots overlap: %r" % boxes


def test_a_comparison_at_1000_classes_reads_as_top_classes(page, site_url):
    """At C = 1000 the mistaken head's heatmap is a barcode: the panel lists each sample's five
    largest outputs, which must be those of the heatmap it shows (ranked here, ties to the lower
    class as argmax breaks them)."""
    open_explorer(page, site_url)
    page.select_option("#preset", "vit-b16")
    act(page, lambda: page.click("#load-preset"))
    act(page, lambda: page.select_option("#mistake", "softmax_inside"))
    shown = heatmap_z(page, "heatmap-mistake")
    rows = page.evaluate("""() => [...document.querySelectorAll('#mistake-top-k tbody tr')].map(
        tr => [...tr.querySelectorAll('td')].map(td => td.textContent))""")
    assert page.locator("#mistake-top-k").is_visible() and len(rows) == shown.shape[0]
    for b, cells in enumerate(rows):
        want = sorted(range(shown.shape[1]), key=lambda c: (-shown[b, c], c))[:5]
        assert [int(text.split(":")[0].split()[1]) for text in cells] == want
        assert [float(text.rsplit(":", 1)[1]) for text in cells] == \
            [float("%.4f" % shown[b, c]) for c in want]
