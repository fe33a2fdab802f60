"""The explorer shows every stage of the head, with the numbers the head written out in plain
Python computes (tests/reference.py)."""
import numpy as np
import pytest

from pycore.explorer import default_state, preset, state_from_json, state_to_json
from reference import WORKED_LOGITS, layer_norm_rows, reference_head

from .conftest import PageLog
from .pagekit import (alert_text, edit, heatmap_z, load_link, logits_table, open_explorer,
                      page_fragment, state_fragment)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

# The worked example, rounded to 4 decimals (docs/math.md).


def expected(state):
    """h_cls (the CLS rows: position 0 of the encoder output), h_hat and the logits."""
    h_cls = state.encoder_output[:, 0, :] if state.mode == "encoder" else state.cls
    return (np.array(h_cls, dtype=float), np.array(layer_norm_rows(h_cls)),
            np.array(reference_head(h_cls, state.W_head)))


def assert_stages(page, state):
    h_cls, h_hat, logits = expected(state)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-cls"), h_cls, rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-normalized"), h_hat, rtol=0, atol=1e-12)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-w"), state.W_head, rtol=0, atol=0)
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), logits, rtol=1e-12, atol=1e-12)


def test_default_page_shows_the_worked_example(page, site_url):
    open_explorer(page, site_url)
    assert_stages(page, default_state())
    np.testing.assert_allclose(heatmap_z(page, "heatmap-logits"), WORKED_LOGITS, atol=5e-5)
    assert logits_table(page) == [["0.8854", "-1.3914", "1.5811"], ["0.2000", "-0.1000", "-1.4000"]]
    # The predicted class of each sample is marked, in the table and on the heatmap.
    assert page.locator("#logits-table td.predicted").all_inner_texts() == ["1.5811", "0.2000"]
    shapes = page.evaluate("document.getElementById('heatmap-logits').layout.shapes"
                           ".filter(s => s.name === 'mark').map(s => [s.y0 + 0.5, s.x0 + 0.5])")
    assert shapes == [[0, 2], [1, 0]]
    assert alert_text(page) == ""
    stats = page.locator("#stats tbody tr").first.inner_text()
    assert "1.0000" in stats and "2.5000" in stats  # mean and population variance of [2,-1,0,3]
    assert page_fragment(page).startswith("#state=")
    assert "Python" in page.locator("#host-info").inner_text()


def colour_key(page, element_id):
    """The texts of the colour key under a heatmap: [low, middle, high]."""
    return page.locator("#%s + .colour-key > span" % element_id).all_inner_texts()


def test_each_heatmap_has_a_colour_key_with_its_range(page, site_url):
    open_explorer(page, site_url)
    h_cls, _, logits = expected(default_state())
    # symmetric about zero, out to the largest magnitude the matrix holds
    for element_id, values in (("heatmap-cls", h_cls), ("heatmap-logits", logits)):
        top = "%.3f" % np.abs(values).max()
        assert colour_key(page, element_id) == ["-" + top, "0", top]
    assert colour_key(page, "heatmap-probs") == ["0", "0.5", "1"]
    assert page.locator("#heatmap-logits + .colour-key").is_visible()
    # Plotly's own colour bar is not drawn as well
    assert page.locator("#heatmap-logits .colorbar").count() == 0
    # an edit that changes the range changes the key
    edit(page, "cls[0,0]", "20")
    top = "%.3f" % np.abs(heatmap_z(page, "heatmap-cls")).max()
    assert top == "20.000" and colour_key(page, "heatmap-cls") == ["-20.000", "0", "20.000"]


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_state_in_the_url_with_cls(page, site_url):
    state = state_from_json({"cls": [[0.5, -1, 2], [3, 3, -3], [1, 0, 0]],
                             "W_head": [[1, -1], [0.25, 2], [-3, 0.5]]})
    open_explorer(page, site_url, state_fragment(state_to_json(state)))
    assert_stages(page, state)
    assert alert_text(page) == ""


def test_state_in_the_url_with_encoder_output(page, site_url):
    state = preset("encoder")
    open_explorer(page, site_url, state_fragment(state_to_json(state)))
    assert_stages(page, state)
    z = heatmap_z(page, "heatmap-encoder")
    B, tokens, D = state.encoder_output.shape
    np.testing.assert_array_equal(z, state.encoder_output.reshape(B * tokens, D))
    # Position 0 of every sample is highlighted as the CLS token.
    cls_rows = page.locator("#grid-input .cell.is-cls")
    assert cls_rows.count() > 0
    labels = cls_rows.evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
    assert all(label.split("[")[1].split(",")[1] == "0" for label in labels)


UNUSABLE_LINKS = [
    ("#state=%7Bbroken", "JSON"),
    (state_fragment({"cls": [[1, 2, 3]], "W_head": [[1], [2]]}), "W_head"),
    ("#state=" + "%7B%22cls%22%3A%5B%5B1%2CNaN%5D%5D%2C%22W_head%22%3A%5B%5B1%5D%2C%5B2%5D%5D%7D", "cls"),
    (state_fragment({"W_head": [[1]]}), "cls"),
]


@pytest.mark.hosts("pyscript", "fallback")  # the fallback host too
def test_unusable_url_state_gives_the_default_with_a_reason(page, site_url, context):
    """The first link opens a new page (the boot reads it), the others are pasted into the
    address bar of the page already open (its hashchange handler reads them)."""
    for k, (fragment, words) in enumerate(UNUSABLE_LINKS):
        if k == 0:
            shown = context.new_page()
            log = PageLog(shown)
            open_explorer(shown, site_url, fragment)
        else:
            shown = page
            load_link(page, fragment)
        message = alert_text(shown)
        assert "worked example" in message and words in message, (fragment, message)
        np.testing.assert_allclose(heatmap_z(shown, "heatmap-logits"), WORKED_LOGITS, atol=5e-5,
                                   err_msg=fragment)
        if k == 0:
            log.close()
            log.assert_clean(site_url)
            shown.close()
            open_explorer(page, site_url)


def test_text_from_a_url_is_never_html(page, site_url):
    evil = '<img src=x onerror="document.title=\'pwned\'">'
    open_explorer(page, site_url, state_fragment({"cls": [[evil]], "W_head": [[1]]}))
    assert evil[:8] in alert_text(page) or "cls" in alert_text(page)
    assert page.locator("#alert img").count() == 0
    assert page.title() != "pwned"
