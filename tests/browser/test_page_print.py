"""Handouts (issue 47): the page printed by Chromium on A4 and on Letter, portrait, read as
paper. Each PDF page is drawn by pdf.js and its text extracted (tests/browser/pdf_pages.py):
nothing runs into the side margins (no figure or table past its column or the page), every
panel shown is printed, top to bottom in the page's order, with the walk-through's current step
as a block in its place and not over page 1's title, on a sensible number of pages; after
printing, the figures are drawn at their screen widths again. Firefox prints the same page in
tests/browser/test_engines.py, and WebKit, whose driver cannot print, is laid out for paper
there."""
import numpy as np
import pytest

from pycore.explorer import preset
from reference import reference_head

from .pagekit import act, open_explorer
from .pdf_pages import BACK_ON_SCREEN, PIPELINE_TITLES, PRINT_LAYOUT, PdfReader, handout_problems, places

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

@pytest.fixture(scope="module")
def reader(browser):
    found = PdfReader(browser)
    yield found
    found.close()


def test_handouts_on_a4_and_letter_with_the_drawing_comparisons_and_walk_through(page, site_url, reader):
    open_explorer(page, site_url)
    act(page, lambda: page.click("#digit-gallery button >> nth=0"))
    act(page, lambda: page.select_option("#mistake", "no_layernorm"))
    act(page, lambda: page.select_option("#variant", index=1))
    # the equations are typeset once they have been in view (js/panels/text.js)
    page.locator("#steps").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('#step-list .katex-display').length >= 3")
    act(page, lambda: page.click("#walk-start"))
    for _ in range(2):
        act(page, lambda: page.click("#walk-next"))
    step = page.locator("#walk-title").inner_text()
    assert step.startswith("Step 3 of "), step
    # in the page's order: the comparisons directly under the pipeline they compare
    titles = PIPELINE_TITLES + ["Mistakes: what a wrong head would output", "Other heads, on the same inputs",
                                "Draw a digit: a real ViT's CLS token, classified", "The head at every depth (a logit lens)",
                                "Walk through the head", step,
                                "Step by step, with the numbers of one sample", "Softmax probabilities", "Fine-tune the head"]
    title_px = float(page.evaluate("getComputedStyle(document.querySelector('h1')).fontSize")[:-2])
    # laid out for paper (the print rules made to apply on screen): every figure in its box
    assert page.evaluate(PRINT_LAYOUT) == []
    page.wait_for_function(BACK_ON_SCREEN)
    for paper in ("A4", "Letter"):
        pages = reader.pages(page.pdf(format=paper))
        assert handout_problems(pages, paper, titles, title_px) == [], paper
        page.wait_for_function(BACK_ON_SCREEN)
    act(page, lambda: page.click("#walk-start"))  # ends it


def test_each_stage_is_printed_whole_and_a_big_heads_top_classes_are_printed(page, site_url, reader):
    """A stage's title and its figure on one page (stage 3's title once ended page 1, its W_head
    on page 2); at ViT-B/16 size the top-k table's values, which are buttons on screen (a logit
    to pick) and were left out with the buttons, are printed: each sample's top class and its
    logit as NumPy computes them from the preset."""
    open_explorer(page, site_url)
    figures = {"Take the CLS token": "h_cls = z_L[:, 0, :]", "LayerNorm, per sample": "h_hat = LayerNorm(h_cls)",
               "Multiply by W_head": "W_head (D × C)", "Logits": "logits = h_hat @ W_head"}
    pages = reader.pages(page.pdf(format="A4"))
    for title, figure in figures.items():
        assert [p for p, _ in places(pages, title)][:1] == [p for p, _ in places(pages, figure)][:1], (
            title, places(pages, title), places(pages, figure))
    page.wait_for_function(BACK_ON_SCREEN)

    page.select_option("#preset", "vit-b16")
    act(page, lambda: page.click("#load-preset"))
    big = preset("vit-b16")
    logits = reference_head(big.cls.tolist(), big.W_head.tolist())
    pages = reader.pages(page.pdf(format="A4"))
    for b, row in enumerate(logits):
        top = int(np.argmax(row))
        assert places(pages, "class %d" % top) and places(pages, "%.4f" % row[top]), (b, top, row[top])
    page.wait_for_function(BACK_ON_SCREEN)
    act(page, lambda: page.click("#reset"))
