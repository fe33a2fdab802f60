"""Fixtures for the Playwright tests of the built site (the page's tests and the hosts' tests).

- Each site variant this machine can build is built ONCE per session with build.py, into
  build/test-<variant>/ (never dist/), and served on 127.0.0.1 at a random port.
- One browser per session (pytest-playwright's `browser`), launched as docs/hosts.md says:
  Playwright's own Chromium when installed, else the system's Chromium, with fixed flags.
- One browser context per host for the session (its HTTP cache and WebAssembly code cache stay
  warm), and in it one page that page tests reuse: a test that asks for `site_url` (or `site`)
  gets the host's booted page, reset to the worked example and checked to read as a fresh boot
  does (pagekit.reset_page); `context` is then that host's context (permissions granted in a test
  are cleared after it, pages it opened are closed). The page is reset as its test ends: a test
  that leaves it in a state the reset cannot undo errors in its teardown (a test cleans up what
  the page's own reset leaves alone, e.g. a grid scrolled away from its first cell). A page whose
  test failed or errored is replaced by a newly booted one.
- @pytest.mark.fresh_page: a new page in the host's context (warm caches), closed after the test:
  for tests whose page must have been opened for them (init scripts, routes, other origins, the
  boot's own signals). @pytest.mark.fresh_context, and every test that does not ask for
  `site_url`: pytest-playwright's own new context and page (a cold boot).

Fixtures for tests:
  site_url (or site)    base URL of the host the test runs on: the PyScript host, and the
                        fallback host too for tests marked @pytest.mark.hosts("pyscript", "fallback")
  sites                 sites.url("pyscript" | "fallback" | "pyscript-without-numpy")
  page_log              records console errors, page errors, tracebacks, off-origin requests
  wait_ready            wait_ready(page): until data-ready is "true"; fails with the alert's text
  assert_page_clean     fails the test if its page logged an error or left the origin
"""
import json
import os
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)  # buildtools (and pycore, if not installed)

from buildtools.browser import CHROMIUM_FLAGS  # noqa: E402
from buildtools.serve import serve_in_thread  # noqa: E402

from . import pagekit  # noqa: E402
from .engines import ENGINES, EngineError  # noqa: E402
from .engines.app import HOSTS, App, ReportingSites  # noqa: E402
from .engines.chromium import chromium_path  # noqa: E402
from .pagekit import wait_ready  # noqa: E402  (one copy, shared with the page tests)

try:
    import fcntl  # two test sessions at once must not build the same folder together
except ImportError:  # Windows: no lock, builds are still atomic
    fcntl = None

# The flags the system Chromium is launched with (docs/hosts.md): without the network ones it
# keeps trying to reach Google's services, which these machines refuse.

# The site variants' build.py arguments; a variant that cannot be built fails its tests.
# The PyScript host needs Pyodide's NumPy wheel: downloaded from Pyodide's CDN, found in the
# cache, or taken from the folder VIT_HEAD_MIRROR names (build.py's --mirror; .ci/run sets it).
VARIANTS = {
    "pyscript": ["--runtime", "pyscript"],
    "fallback": ["--runtime", "fallback"],
    "pyscript-without-numpy": ["--runtime", "pyscript", "--without-numpy"],
    # PyScript, Pyodide and NumPy from the public CDNs; its test routes them to the pinned files.
    "cdn": ["--runtime", "cdn"],
}


def find_chromium(playwright):
    """None to use Playwright's own Chromium, else the path of a system Chromium."""
    try:
        return chromium_path(playwright)
    except EngineError as missing:
        pytest.fail("No Chromium for the browser tests: %s" % missing, pytrace=False)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, playwright):
    args = dict(browser_type_launch_args)
    args["args"] = list(args.get("args") or []) + CHROMIUM_FLAGS
    path = find_chromium(playwright)
    if path:
        args["executable_path"] = path
    return args


# The run this process belongs to: the xdist workers of one `pytest` share it, and build a
# variant once between them (its lock file records the run that built it last).
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")


def _built_in(lock):
    lock.seek(0)
    return lock.read().strip()


def _mark_built(lock, run_id):
    lock.seek(0)
    lock.truncate()
    lock.write(run_id)
    lock.flush()


class Sites:
    """Builds each variant at most once per run (per session, or shared by the run's xdist
    workers) and serves it; remembers failures."""

    def __init__(self):
        self.urls, self.errors, self.servers, self.info = {}, {}, [], {}

    def url(self, variant):
        if variant not in self.urls and variant not in self.errors:
            self._build(variant)
        if variant in self.errors:
            pytest.fail(self.errors[variant], pytrace=False)
        return self.urls[variant]

    def _build(self, variant):
        args = VARIANTS[variant]
        out = os.path.join(ROOT, "build", "test-" + variant)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        cmd = [sys.executable, os.path.join(ROOT, "build.py"), "--out", out] + args
        start = time.monotonic()
        with open(out + ".lock", "a+") as lock:
            if fcntl:
                fcntl.flock(lock, fcntl.LOCK_EX)
            if RUN_ID and _built_in(lock) == RUN_ID and os.path.isdir(out):
                done = None  # another xdist worker of this run built it: serve the same files
            else:
                done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      universal_newlines=True)
                _mark_built(lock, RUN_ID if done.returncode == 0 else "")
        if done is None:
            sys.stderr.write("\n[%s: built by another worker of this run]\n" % variant)
        else:
            sys.stderr.write("\n[built %s in %.1f s]\n" % (variant, time.monotonic() - start))
        if done is not None and done.returncode != 0:
            self.errors[variant] = ("`%s` failed:\n%s" % (
                " ".join(["python", "build.py"] + cmd[2:]), done.stdout[-3000:]))
            return
        with open(os.path.join(out, "build-info.json"), encoding="utf-8") as f:
            self.info[variant] = json.load(f)
        server, url = serve_in_thread(out)
        self.servers.append(server)
        self.urls[variant] = url

    def close(self):
        for server in self.servers:
            server.shutdown()
            server.server_close()


@pytest.fixture(scope="session")
def sites():
    s = Sites()
    yield s
    s.close()


def pytest_generate_tests(metafunc):
    """Every page test runs on the PyScript host; those marked @pytest.mark.hosts("pyscript",
    "fallback") run on each host named."""
    if "site_host" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("hosts")
        metafunc.parametrize("site_host", marker.args if marker else ("pyscript",))


@pytest.fixture
def site_host():
    return "pyscript"


@pytest.fixture
def site_url(sites, site_host):
    """Base URL (ending in /) of the host this test runs on (the PyScript host by default)."""
    return sites.url(site_host)


@pytest.fixture
def site(site_url):
    """The same base URL, by a shorter name."""
    return site_url


class PageLog:
    """What a page said and asked for: console errors, page errors, tracebacks, requests."""

    def __init__(self, page):
        self.console_errors, self.page_errors, self.tracebacks, self.requests = [], [], [], []
        self.other_origins = []  # origins a test itself serves (an embedding page's)
        self.page = page
        self._listeners = [("console", self._console), ("pageerror", self._page_error),
                           ("request", self._request)]
        for event, listener in self._listeners:
            page.on(event, listener)

    def _page_error(self, error):
        self.page_errors.append(str(error))

    def _request(self, request):
        self.requests.append(request.url)

    def close(self):
        """Stop listening (a reused page outlives its test's log)."""
        for event, listener in self._listeners:
            try:
                self.page.remove_listener(event, listener)
            except Exception:
                pass  # the page is closed
        self._listeners = []

    def _console(self, message):
        if message.type == "error":
            where = (message.location or {}).get("url") or ""
            if where.endswith("/favicon.ico"):
                return  # the browser's own guess when a page declares no icon, not the page's
            self.console_errors.append(message.text + (" (%s)" % where if where else ""))
        if "Traceback (most recent call last)" in message.text:
            self.tracebacks.append(message.text)

    def off_origin(self, base_url):
        """Requests that left the site's origin (data: and blob: URLs stay in the page)."""
        origins = [urlsplit(base_url)[:2]] + [urlsplit(o)[:2] for o in self.other_origins]
        return [u for u in self.requests
                if not u.startswith(("data:", "blob:")) and urlsplit(u)[:2] not in origins]

    def problems(self, base_url):
        found = []
        for kind, items in (("console error", self.console_errors),
                            ("uncaught page error", self.page_errors),
                            ("Python traceback", self.tracebacks),
                            ("request off the site's origin", self.off_origin(base_url))):
            found += ["%s: %s" % (kind, item[:500]) for item in items]
        return found

    def assert_clean(self, base_url):
        problems = self.problems(base_url)
        assert not problems, "\n".join(problems)


@pytest.fixture
def page_log(page):
    log = PageLog(page)
    yield log
    log.close()


@pytest.fixture(name="wait_ready")
def wait_ready_fixture():
    return wait_ready


@pytest.fixture
def assert_page_clean(page_log, site_url):
    """Fails a test whose page logged an error or a traceback, or left the site's origin."""
    yield
    page_log.assert_clean(site_url)


# ---- one context per host, one reused page in it -----------------------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        item.vit_failed = True  # its reused page is not trusted afterwards


class HostPages:
    """Per host: a browser context for the session and the page tests reuse in it."""

    def __init__(self, browser, context_args):
        self.browser, self.context_args = browser, context_args
        self.contexts, self.pages, self.fresh = {}, {}, {}
        self.clean = set()  # hosts whose page was reset after its last test

    def context(self, host):
        if host not in self.contexts:
            self.contexts[host] = self.browser.new_context(**self.context_args)
        return self.contexts[host]

    def _boot(self, host, url):
        page = self.context(host).new_page()
        pagekit.open_explorer(page, url)
        page.wait_for_function("""() => document.getElementById('finetune').dataset.busy !== 'true'""")
        # The equations the first answer brought are set up once the page is idle (js/panels/text.js,
        # afterRender), their selects first: the page's fingerprint is taken after that, or it
        # would depend on how soon that came (a reset's equations are set up the same way).
        page.wait_for_function("() => document.getElementById('step-sample').options.length > 0",
                               timeout=30000)
        pagekit.SHARED[id(page)] = url
        return page

    def drop(self, host):
        self.clean.discard(host)
        page = self.pages.pop(host, None)
        if page is not None:
            pagekit.SHARED.pop(id(page), None)
            if not page.is_closed():
                page.close()

    def page(self, host, url):
        """The host's page as a fresh boot shows the worked example: the reused one (reset as
        its last test ended), or a newly booted one when there is none."""
        page = self.pages.get(host)
        if page is not None:
            self.clean.discard(host)
            return page
        page = self.pages[host] = self._boot(host, url)
        if host not in self.fresh:
            self.fresh[host] = pagekit.fingerprint(page)
        else:
            problems = pagekit.fingerprint_diff(pagekit.fingerprint(page), self.fresh[host])
            assert not problems, "a freshly booted page reads differently:\n  " + "\n  ".join(problems)
        return page

    def reset(self, host, url):
        """Reset the host's page as its test ends; raises ResetFailed (the page dropped) if the
        test left it where the reset cannot bring it back."""
        page = self.pages.get(host)
        if page is None:  # the test let it go (a restart, say): the next test boots one
            return
        try:
            if page.is_closed() or page.url.split("#")[0].split("?")[0] != url + "index.html" \
                    or page.evaluate("document.documentElement.dataset.ready") != "true":
                raise pagekit.ResetFailed("not the explorer, ready, any more: %s" % page.url)
            pagekit.reset_page(page, self.fresh[host])
        except Exception:
            self.drop(host)
            raise
        self.clean.add(host)

    def close(self):
        for context in self.contexts.values():
            context.close()


@pytest.fixture(scope="session")
def host_pages(browser, browser_context_args):
    pages = HostPages(browser, browser_context_args)
    yield pages
    pages.close()


def _reuse(request):
    """"page" (the host's reused page), "fresh" (a new page in the host's context) or None
    (pytest-playwright's new context and page)."""
    if "site_url" not in request.fixturenames or request.node.get_closest_marker("fresh_context"):
        return None
    return "fresh" if request.node.get_closest_marker("fresh_page") else "page"


@pytest.fixture
def context(request, new_context):
    if not _reuse(request):
        yield new_context()
        return
    pages = request.getfixturevalue("host_pages")
    ctx = pages.context(request.getfixturevalue("site_host"))
    yield ctx
    ctx.clear_permissions()
    keep = pages.pages.values()
    for other in ctx.pages:
        if other not in keep:
            other.close()


@pytest.fixture
def page(request, context):
    how = _reuse(request)
    if how != "page":
        yield context.new_page()  # closed with its context (the host's: by `context` above)
        return
    pages, host = request.getfixturevalue("host_pages"), request.getfixturevalue("site_host")
    url = request.getfixturevalue("site_url")
    shared = pages.page(host, url)
    yield shared
    if getattr(request.node, "vit_failed", False):
        pages.drop(host)
    else:
        pages.reset(host, url)  # an error here is this test's: it left the page changed


@pytest.fixture
def reset_page(request, page):
    """reset_page() -> the reused page, back to the worked example as a fresh boot shows it
    (pagekit.reset_page, checked): for a test that goes through several inputs on one page."""
    assert _reuse(request) == "page", "reset_page is for tests on their host's reused page"
    pages, host = request.getfixturevalue("host_pages"), request.getfixturevalue("site_host")
    return lambda: pagekit.reset_page(page, pages.fresh[host])


# ---- the engines of tests/browser/test_engines*.py (tests/browser/engines/) ----------------

class EngineSet:
    """One browser per engine for the whole session, started when a test first asks for it;
    one that cannot start fails every test that asks for it, saying what to install."""

    def __init__(self, playwright_getter):
        self.started, self.errors = {}, {}
        self._playwright = playwright_getter

    def get(self, name):
        from .engines import launch
        if name not in self.started and name not in self.errors:
            try:
                self.started[name] = launch(
                    name, self._playwright() if name == "chromium" else None)
            except EngineError as e:
                self.errors[name] = str(e)
            except Exception as e:  # a driver that would not start: say which and why
                self.errors[name] = "%s could not start: %s: %s" % (name, type(e).__name__, e)
        if name in self.errors:
            pytest.fail(self.errors[name], pytrace=False)
        return self.started[name]

    def close(self):
        for engine in self.started.values():
            try:
                engine.close()
            except Exception as e:  # one engine's failed close must not keep the others open
                sys.stderr.write("\n[closing %s: %s]\n" % (engine.name, e))


@pytest.fixture(scope="session")
def engines(request):
    """engines.get("chromium" | "firefox" | "webkit"): the session's browser of that engine."""
    found = EngineSet(lambda: request.getfixturevalue("playwright"))
    yield found
    found.close()


# The scenarios of test_engines*.py share one booted page per engine and host (engines/app.py):
# session-scoped, so pytest runs every file's scenarios for one engine and host together (in
# collection order) and the files split by concept cost no boot more than one file did.

@pytest.fixture(scope="session")
def reporting_sites(sites):
    found = ReportingSites(sites)
    yield found
    found.close()


@pytest.fixture(scope="session", params=ENGINES)
def engine_name(request):
    return request.param


@pytest.fixture(scope="session", params=HOSTS)
def engine_host(request):
    return request.param


@pytest.fixture(scope="session")
def booted_apps():
    """(engine name, host) -> its App: one booted page for every scenario of that engine and
    host, whichever parametrization named them (a test's own list of engines is, to pytest, a
    new instance of the session fixture: without this it booted the page again, 10 s in WebKit)."""
    return {}


@pytest.fixture
def app(booted_apps, engines, engine_name, engine_host, reporting_sites):
    key = (engine_name, engine_host)
    if key not in booted_apps:
        booted_apps[key] = App(engines.get(engine_name), reporting_sites.url(engine_host),
                               reporting_sites.reports, engine_host)
    return booted_apps[key]
