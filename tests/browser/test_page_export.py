"""The export dialog: Copy refused by the browser leaves the dialog as it is (its title, text and
Download), and Download saves the export shown, under its own file name."""
import pytest

from .pagekit import edit, open_explorer, page_fragment

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("assert_page_clean")]

# A browser that refuses the clipboard (an iframe without the permission, plain http).
REFUSE_CLIPBOARD = """
Object.defineProperty(navigator, 'clipboard', { value: {
  writeText: () => Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError')),
}});
"""


def dialog(page):
    return page.evaluate("""() => ({
        open: document.getElementById('export-dialog').open,
        title: document.getElementById('export-title').textContent,
        text: document.getElementById('export-text').value,
        download: !document.getElementById('export-download').hidden})""")


def open_export(page, button):
    page.click(button)
    page.wait_for_function("() => document.getElementById('export-dialog').open")
    return dialog(page)


def download(page):
    with page.expect_download() as info:
        page.click("#export-download")
    d = info.value
    with open(d.path(), encoding="utf-8") as f:
        return d.suggested_filename, f.read()


def test_download_saves_the_export_shown(page, site_url):
    open_explorer(page, site_url)
    edit(page, "cls[0,0]", "7")
    for button, filename in [("#export-json", "vit-head-state.json"), ("#export-numpy", "vit_head.py"),
                             ("#export-csv", "logits.csv")]:
        other = "#export-csv" if button != "#export-csv" else "#export-json"
        open_export(page, other)                 # another export first: Download must not keep it
        page.click("#export-close")
        shown = open_export(page, button)
        assert "7" in shown["text"] or button == "#export-csv", button
        assert download(page) == (filename, shown["text"]), button
        page.click("#export-close")


@pytest.mark.fresh_page  # its init script refuses the clipboard from the first script on
def test_a_refused_copy_leaves_each_dialog_as_it_was(page, site_url):
    """Copy refused by the browser, on one page booted so: an export's dialog stays as it was
    and downloads its text; then a link that could not be copied is shown, and its dialog stays
    the link's when Copy is refused again, and downloads as itself."""
    page.add_init_script(REFUSE_CLIPBOARD)
    open_explorer(page, site_url)
    refused = "() => document.getElementById('toast').textContent.includes('refused')"
    # an export
    shown = open_export(page, "#export-numpy")
    assert shown["title"] == "NumPy code that reproduces the logits" and shown["download"]
    page.click("#export-copy")
    page.wait_for_function(refused)
    assert dialog(page) == shown
    assert download(page) == ("vit_head.py", shown["text"])
    page.click("#export-close")
    page.wait_for_function("() => document.getElementById('toast').textContent === ''")
    # a link
    edit(page, "cls[0,0]", "7")
    page.click("#copy-link")
    page.wait_for_function("() => document.getElementById('export-dialog').open")
    shown = dialog(page)
    assert shown["title"] == "Copy this link" and shown["text"].endswith(page_fragment(page))
    page.click("#export-copy")              # refused again: the dialog stays the link's
    page.wait_for_function(refused)
    assert dialog(page) == shown
    assert download(page) == ("link.txt", shown["text"])
