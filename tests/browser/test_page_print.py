"""Handouts (issue 47): the page printed by Chromium on A4 and on Letter, portrait, read as
paper. Each PDF page is drawn by pdf.js and its text extracted (tests/browser/pdf_pages.py):
nothing runs into the side margins (no figure or table past its column or the page), every
panel shown is printed, top to bottom in the page's order, with the walk-through's current step
as a block in its place and not over page 1's title, on a sensible number of pages; after
printing, the figures are drawn at their screen widths again. Firefox prints the same page in
tests/browser/test_engines.py, and WebKit, whose driver cannot print, is laid out for paper
there."""
import pytest

from .pagekit import act, open_explorer
from .pdf_pages import BACK_ON_SCREEN, PIPELINE_TITLES, PRINT_LAYOUT, PdfReader, handout_problems

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
    # the equations are typeset once they have been in view (js/panels.js)
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
