"""How the suite is shared between pytest-xdist's two workers (pyproject.toml:
`-n 2 --dist loadgroup`): each test file is in one of two groups, and a worker runs one group
whole, in collection order. The groups are balanced by time, not by kind:
- "chromium": the page's tests in Playwright's Chromium (one context and reused page per host,
  tests/browser/conftest.py), and the CPython tests in WITH_CHROMIUM (the type check, the
  session's limits, the incremental recompute: about 28 s);
- "engines": the tests that drive Firefox and WebKit too (test_engines*.py, test_one_file.py,
  test_docs_pages.py) and every other test outside tests/browser (NumPy, the session, the
  build, the docs).
Balanced with --durations=0 on a fresh clone: about 570 s of test time in "engines" (each
engine's page booted once per host: scenario_order) and 566 s in "chromium".
So at most two browser runs are ever at once, as these 2-CPU machines allow, and the two
workers end within about a minute of each other. Both groups build the sites they test once per
run (tests/browser/conftest.py). A file that moves between groups moves seconds of CI time:
`python3 -m pytest --durations=0` gives the figures to balance them by.
"""
import os

import pytest
from hypothesis import settings

from browser.engines import ENGINES, HOSTS  # tests/ is on sys.path: the root conftest's folder

# In CI (.ci/run runs with CI=true) the property tests draw the same examples every run: a
# landing is decided by the code, not by the examples one run happened to draw. Runs elsewhere
# keep drawing new ones, which is how the flaky tolerances are found.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

BROWSER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser")
WITH_THE_ENGINES = ("test_engines.py", "test_engines_access.py", "test_engines_figures.py",
                    "test_engines_keyboard.py", "test_engines_panels.py",
                    "test_engines_then_own_pages.py", "test_one_file.py", "test_docs_pages.py")
# Tests outside tests/browser that run beside the Chromium page tests (see above).
WITH_CHROMIUM = ("test_types.py", "test_explorer_limits.py", "test_pycore_incremental.py")


def group_of(path):
    """The xdist group of a test file (an absolute path)."""
    name = os.path.basename(str(path))
    if in_browser(path):
        return "engines" if name in WITH_THE_ENGINES else "chromium"
    return "chromium" if name in WITH_CHROMIUM else "engines"


def in_browser(path):
    return os.path.abspath(str(path)).startswith(BROWSER_DIR + os.sep)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(items):
    # Before every other implementation: the groups, which xdist reads into the test ids.
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(item.path)))
    yield
    # After them all (pytest's own reordering by fixture too): the CPython tests first, so that
    # while the other worker builds the sites (the PyScript one takes most of a minute) this
    # one has work that needs no site; then the engines' scenarios by the page they share
    # (scenario_order). A stable sort: the other browser tests keep their order.
    items.sort(key=lambda item: (in_browser(item.path), scenario_order(item)))


def scenario_order(item):
    """Where a test runs among the engines' scenarios (tests/browser/engines/app.py): each
    engine's and host's together, as the page they share boots once; the boot test first (what
    it checks is that page's boot), the scenarios that leave it for pages of their own last
    (test_engines_then_own_pages.py: the next engine's page boots anyway). Tests without that
    page (Chromium's Playwright pages, the one file, the docs) after them, in their order."""
    params = item.callspec.params if hasattr(item, "callspec") else {}
    if "app" not in getattr(item, "fixturenames", ()) or "engine_name" not in params:
        return (len(ENGINES), 0, 0)
    rank = (0 if item.originalname.startswith("test_boots_")
            else 2 if os.path.basename(str(item.path)) == "test_engines_then_own_pages.py" else 1)
    return (ENGINES.index(params["engine_name"]), HOSTS.index(params["engine_host"]), rank)
