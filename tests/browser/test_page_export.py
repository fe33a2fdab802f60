"""Exports behave one way (issue 47, item 7): each toolbar export is a download under its own
file name that says what it holds, the text ones also copy (a real clipboard write, read back
here; where the browser refuses it, a selection's copy, and failing that the text shown to copy
by hand), and Copy link never copies a link too long to share without being asked: it says how
long it is and why, and offers the state as a file. Every number is checked against the head
written out in tests/reference.py. (Firefox and WebKit: tests/browser/test_one_file.py.)"""
import contextlib
import csv
import io
import json
import re

import numpy as np
import pytest

from pycore.explorer import decode_fragment
from pycore.explorer.shared import LINK_SHARE_MAX
from reference import WORKED_CLS, WORKED_W_HEAD, reference_head

from .pagekit import act, download, edit, open_explorer, page_fragment, renders

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

# The toolbar's downloads: button, file name, and words its description and the page's
# confirmation use for what the file holds.
EXPORTS = [("#export-numpy", "vit_head.py", "prints these 2 \u00d7 3 logits"),
           ("#export-csv", "logits.csv", "the 2 \u00d7 3 logits, a header"),
           ("#export-json", "vit-head-state.json", "as JSON, every number in full"),
           ("#export-npz", "vit-head-state.npz", "as NumPy arrays, bit for bit")]

# A browser that refuses the clipboard (an iframe without the permission, plain http).
REFUSE_CLIPBOARD = """
Object.defineProperty(navigator, 'clipboard', { value: {
  writeText: () => Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError')),
}});
"""


def edited():
    """The worked example with cls[1,0] = 2.25, and its logits written out (reference.py)."""
    cls = [row[:] for row in WORKED_CLS]
    cls[1][0] = 2.25
    return cls, np.array(reference_head(cls, WORKED_W_HEAD))


def toast(page, starts):
    """The toast's text once it starts with `starts` (a polite status: said when idle)."""
    page.wait_for_function("s => document.getElementById('toast').textContent.startsWith(s)",
                           arg=starts)
    return page.inner_text("#toast")


def run_code(code):
    namespace = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(compile(code, "<exported>", "exec"), namespace)  # noqa: S102 - the page's own export
    assert printed.getvalue().strip()
    return namespace


def csv_logits(text):
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["sample", "class_0", "class_1", "class_2"]
    assert [r[0] for r in rows[1:]] == ["0", "1"]
    return np.array([[float(x) for x in r[1:]] for r in rows[1:]])


def paste_back(page):
    """What the system clipboard holds, read as a person's Ctrl+V into a text area would."""
    page.evaluate("""() => { const a = document.createElement('textarea');
        a.id = '__clipboard'; document.body.append(a); a.focus(); }""")
    page.keyboard.press("Control+V")
    return page.evaluate("""() => { const a = document.getElementById('__clipboard');
        const text = a.value; a.remove(); return text; }""")


def test_every_export_is_a_download_named_and_said(page, site_url):
    open_explorer(page, site_url)
    edit(page, "cls[1,0]", "2.25")
    cls, logits = edited()
    assert page.get_attribute("#toast", "role") == "status"
    assert page.get_by_role("group", name="Download").locator("button").count() == 6  # 4 + 2
    got = {}
    for button, name, words in EXPORTS:
        assert page.get_attribute(button, "title").startswith(name + ": "), button  # what it holds
        filename, got[name] = download(page, lambda: page.click(button))
        assert filename == name
        said = toast(page, "Downloaded %s (" % name)
        size = re.match(r"Downloaded \S+ \((\d+ bytes|[\d.]+ kB)\): ", said).group(1)
        assert (size == "%d bytes" % len(got[name]) if "bytes" in size
                else abs(float(size[:-3]) * 1000 - len(got[name])) <= 50), (size, len(got[name]))
        assert words in said, said
    assert page.locator("#export-dialog").get_attribute("open") is None  # no dialog on the way

    code = got["vit_head.py"].decode("utf-8")
    np.testing.assert_allclose(run_code(code)["logits"], logits, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(csv_logits(got["logits.csv"].decode("utf-8")), logits,
                               rtol=1e-12, atol=1e-12)
    state = json.loads(got["vit-head-state.json"].decode("utf-8"))
    assert state["cls"] == cls and state["W_head"] == WORKED_W_HEAD
    with np.load(io.BytesIO(got["vit-head-state.npz"]), allow_pickle=False) as f:
        assert f["cls"].tolist() == cls and f["W_head"].tolist() == WORKED_W_HEAD
        assert f["cls"].dtype == np.float64 and f["labels"].tolist() == [0, 0]


def test_copy_writes_the_text_to_the_clipboard_and_says_so(page, site_url, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_explorer(page, site_url)
    edit(page, "cls[1,0]", "2.25")
    _, logits = edited()
    page.evaluate("navigator.clipboard.writeText('before')")
    page.get_by_role("button", name="Copy the NumPy code").click()
    said = toast(page, "Copied the NumPy code (")
    code = page.evaluate("navigator.clipboard.readText()")
    assert "(%s characters): a Python script that rebuilds" % format(len(code), ",") in said, said
    np.testing.assert_allclose(run_code(code)["logits"], logits, rtol=1e-12, atol=1e-12)
    page.get_by_role("button", name="Copy the logits as CSV").click()
    said = toast(page, "Copied the logits as CSV (")
    text = page.evaluate("navigator.clipboard.readText()")
    assert "(%d characters)" % len(text) in said
    np.testing.assert_allclose(csv_logits(text), logits, rtol=1e-12, atol=1e-12)


def test_a_link_too_long_to_share_is_not_copied_unless_asked(page, site_url, context):
    """The fine-tuning panel's 60 digits make a link of about 43,000 characters: Copy link
    copies nothing, changes nothing, says how long it is and why, and offers the state as
    .npz (every number of the link's state, bit for bit) and JSON; asked, it copies it anyway."""
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_explorer(page, site_url)
    page.wait_for_function("() => !document.getElementById('ft-load-digits').disabled", timeout=30000)
    act(page, lambda: page.click("#ft-load-digits"))
    page.wait_for_function("() => document.querySelectorAll('#ft-labels input').length === 60"
                           " && document.documentElement.dataset.linkPending === 'false'")
    address = page.evaluate("location.href")
    assert len(address) > 20 * LINK_SHARE_MAX
    state = decode_fragment(page_fragment(page))
    assert state.cls.shape == (60, 32)
    page.evaluate("navigator.clipboard.writeText('left alone')")
    before = renders(page)
    page.click("#copy-link")
    page.wait_for_selector("#export-dialog[open]")
    assert page.inner_text("#export-title") == "This link is %s characters long" % format(
        len(address), ",")
    message = page.inner_text("#export-message")
    assert message.startswith("Nothing was copied: email, chat and course platforms")
    assert "longer than about 2,000 characters" in message and "State as .npz" in message
    assert page.get_attribute("#export-dialog", "aria-describedby") == "export-message"
    assert page.evaluate("document.activeElement.id") == "export-as-npz"
    assert page.locator("#export-text").is_hidden()
    assert page.evaluate("navigator.clipboard.readText()") == "left alone"
    assert renders(page) == before and page.evaluate("location.href") == address
    # the state as a file instead: the link's numbers, bit for bit
    name, data = download(page, lambda: page.click("#export-as-npz"))
    assert name == "vit-head-state.npz" and page.locator("#export-dialog[open]").count() == 0
    with np.load(io.BytesIO(data), allow_pickle=False) as f:
        assert f["cls"].tobytes() == state.cls.tobytes()
        assert f["W_head"].tobytes() == state.W_head.tobytes()
        assert f["labels"].tolist() == list(state.labels)
    toast(page, "Downloaded vit-head-state.npz (")
    # asked, it copies the link all the same, and says how long it is
    page.click("#copy-link")
    page.wait_for_selector("#export-dialog[open]")
    page.click("#export-copy")
    said = toast(page, "Link copied (%s characters)" % format(len(address), ","))
    assert "it may arrive cut short" in said
    assert page.evaluate("navigator.clipboard.readText()") == address
    assert renders(page) == before and page.evaluate("location.href") == address


@pytest.mark.fresh_page  # its init script refuses the clipboard from the first script on
def test_a_copy_the_browser_refuses_is_copied_from_a_selection_or_shown_to_copy_by_hand(
        page, site_url, context):
    """With the clipboard API refusing (an iframe without the permission; plain http has
    none), Copy copies a selection, as Ctrl+C would; where that is refused too, the text is
    shown selected in the dialog, which downloads it as its export would."""
    context.grant_permissions(["clipboard-read", "clipboard-write"])  # Ctrl+V reads it back
    page.add_init_script(REFUSE_CLIPBOARD)
    open_explorer(page, site_url)
    _, logits = edited()
    edit(page, "cls[1,0]", "2.25")
    page.click("#export-csv-copy")
    toast(page, "Copied the logits as CSV (")
    np.testing.assert_allclose(csv_logits(paste_back(page)), logits, rtol=1e-12, atol=1e-12)
    # the selection refused too: shown, selected, to copy by hand, and downloaded as itself
    page.evaluate("() => { document.execCommand = () => false; }")
    page.click("#export-numpy-copy")
    page.wait_for_selector("#export-dialog[open]")
    toast(page, "The browser refused to copy")
    assert page.inner_text("#export-title") == "Copy the NumPy code by hand"
    assert "press Ctrl+C" in page.inner_text("#export-message")
    shown = page.evaluate("""() => { const a = document.getElementById('export-text');
        return [a.value, a.selectionStart, a.selectionEnd, document.activeElement === a]; }""")
    assert shown[1:] == [0, len(shown[0]), True]
    np.testing.assert_allclose(run_code(shown[0])["logits"], logits, rtol=1e-12, atol=1e-12)
    assert page.locator("#export-as-npz").is_hidden() and page.locator("#export-copy").is_hidden()
    assert download(page, lambda: page.click("#export-download")) == (
        "vit_head.py", shown[0].encode("utf-8"))
    assert page.locator("#export-dialog[open]").count() == 0
    assert page.locator("#export-text").input_value() == ""  # the closed dialog let it go
    # a link the same way
    page.click("#copy-link")
    page.wait_for_selector("#export-dialog[open]")
    assert page.inner_text("#export-title") == "Copy this link by hand"
    assert page.locator("#export-text").input_value() == page.evaluate("location.href")
    assert download(page, lambda: page.click("#export-download"))[0] == "link.txt"
