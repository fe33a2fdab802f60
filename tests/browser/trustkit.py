"""What the tests of a page a teacher can trust share (test_page_trust.py, test_page_fit.py,
test_page_keyboard.py): the worked example, the head written out in NumPy, typing into a cell
key by key, waiting for the renders to settle, loading a preset."""
import time

import numpy as np

from reference import WORKED_CLS, WORKED_W_HEAD

from .pagekit import act, renders


CLS, W = np.array(WORKED_CLS), np.array(WORKED_W_HEAD)  # the worked example (docs/math.md)


def head(cls, w):
    """LayerNorm without gamma/beta (population variance, eps 1e-6 inside the root), times W."""
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    return (cls - mu) / np.sqrt(var + 1e-6) @ w


def cell(page, label):
    return page.get_by_label(label, exact=True)


def type_keys(page, label, text):
    """Click a cell and type `text` key by key (the cell selects its text on focus)."""
    box = cell(page, label)
    box.click()
    box.press_sequentially(text, delay=30)
    return box


def settle(page, quiet_ms=400):
    """Wait until the page has had no new render for quiet_ms (typing may cause several)."""
    last, since = renders(page), time.monotonic()
    while time.monotonic() - since < quiet_ms / 1000.0:
        time.sleep(0.05)
        now = renders(page)
        if now != last:
            last, since = now, time.monotonic()


def load_preset(page, name):
    page.select_option("#preset", name)
    act(page, lambda: page.locator("#load-preset").click())
