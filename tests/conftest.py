"""How the suite is shared between pytest-xdist's two workers (pyproject.toml:
`-n 2 --dist loadgroup`). The browser tests are in two groups, and a worker runs one group whole,
in collection order; the CPython tests are in no group, but for a few, and fill whichever
worker ends its group first:
- "chromium": the page's tests in Playwright's Chromium (one context and reused page per host,
  tests/browser/conftest.py), after the CPython tests in WITH_CHROMIUM (the type check, the
  session's limits, the incremental recompute: about 28 s, while the other worker builds the
  PyScript site, which takes most of 20 s);
- "engines": the tests that drive Firefox and WebKit too (test_engines*.py, test_one_file.py,
  test_docs_pages.py: each engine's page booted once per host, scenario_order), and the
  Chromium tests that boot pages of their own (test_hosts.py, test_host_failures.py);
- the other CPython tests (NumPy, the session, the build, the docs: about 60 s, in units of one
  test) after both groups have started: the worker that ends its group first runs most of them.
So at most two browser runs are ever at once, as these 2-CPU machines allow, and the two
workers end within seconds of each other when the groups are within a minute of each other
(`python3 -m pytest --durations=0` gives the figures: about 500 s of test time in each group).
Both groups build the sites they test once per run (tests/browser/conftest.py).
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
                    "test_engines_then_own_pages.py", "test_one_file.py", "test_docs_pages.py",
                    "test_hosts.py", "test_host_failures.py")
# Tests outside tests/browser that run first in "chromium" (see above).
WITH_CHROMIUM = ("test_types.py", "test_explorer_limits.py", "test_pycore_incremental.py")


def group_of(path):
    """The xdist group of a test file (an absolute path), or None: a CPython test that any
    worker may run."""
    name = os.path.basename(str(path))
    if in_browser(path):
        return "engines" if name in WITH_THE_ENGINES else "chromium"
    return "chromium" if name in WITH_CHROMIUM else None


def in_browser(path):
    return os.path.abspath(str(path)).startswith(BROWSER_DIR + os.sep)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(items):
    # Before every other implementation: the groups, which xdist reads into the test ids.
    for item in items:
        group = group_of(item.path)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    yield
    # After them all (pytest's own reordering by fixture too): in a group, its CPython tests
    # first (see above); then the engines' scenarios by the page they share (scenario_order).
    # A stable sort: the other browser tests keep their order. (xdist hands out the groups, the
    # largest units of work, before the tests in no group.)
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
