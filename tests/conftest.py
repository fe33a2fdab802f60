"""How the suite is shared between pytest-xdist's workers (pyproject.toml: `-n 2 --dist loadgroup`).

A worker runs one group at a time, whole, in collection order:
- "cpython": every test outside tests/browser (NumPy, the session, the build, the docs);
- "engines": tests/browser/test_engines.py (its Firefox, WebKit and Chromium sessions), and
  test_page_drawing.py, whose 50 digits drawn with the mouse take about two minutes: with them
  this group and the CPython tests take about as long as the rest of the Chromium suite;
- "chromium": the other browser tests, on Playwright's Chromium (one context and reused page per
  host, tests/browser/conftest.py).
xdist hands the groups out largest first, so on two workers the Chromium suite runs beside the
CPython tests and then the engines: at most two browser runs at once, as these 2-CPU machines
allow. Both browser groups build the sites they test once per run (tests/browser/conftest.py).
"""
import os

import pytest

BROWSER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser")
WITH_THE_ENGINES = ("test_engines.py", "test_page_drawing.py")


def group_of(path):
    """The xdist group of a test file (an absolute path)."""
    path = os.path.abspath(str(path))
    if not path.startswith(BROWSER_DIR + os.sep):
        return "cpython"
    return "engines" if os.path.basename(path) in WITH_THE_ENGINES else "chromium"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the test ids
def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(item.path)))
