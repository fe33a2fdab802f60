"""Fixtures for the Playwright tests of the built site (the page's tests and the hosts' tests).

- Each site variant this machine can build is built ONCE per session with build.py, into
  build/test-<variant>/ (never dist/), and served on 127.0.0.1 at a random port.
- One browser per session (pytest-playwright's `browser`), launched as docs/hosts.md says:
  Playwright's own Chromium when installed, else the system's Chromium, with fixed flags.
- A fresh page per test (pytest-playwright's `page`).

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
import shutil
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)  # buildtools (and pycore, if not installed)

from buildtools.browser import CHROMIUM_FLAGS, SYSTEM_CHROMIUMS  # noqa: E402
from buildtools.serve import serve_in_thread  # noqa: E402

from .pagekit import wait_ready  # noqa: E402  (one copy, shared with the page tests)

try:
    import fcntl  # two test sessions at once must not build the same folder together
except ImportError:  # Windows: no lock, builds are still atomic
    fcntl = None

# The flags the system Chromium is launched with (docs/hosts.md): without the network ones it
# keeps trying to reach Google's services, which these machines refuse.

# The site variants: build.py arguments, and whether a machine that cannot build it skips.
# The PyScript host needs Pyodide's NumPy wheel: downloaded from Pyodide's CDN, found in the
# cache, or taken from the folder VIT_HEAD_MIRROR names (build.py's --mirror; .ci/run sets it).
VARIANTS = {
    "pyscript": (["--runtime", "pyscript"], False),
    "fallback": (["--runtime", "fallback"], False),
    "pyscript-without-numpy": (["--runtime", "pyscript", "--without-numpy"], False),
    # PyScript, Pyodide and NumPy from the public CDNs; its test routes them to the pinned files.
    "cdn": (["--runtime", "cdn"], False),
}


def find_chromium(playwright):
    """None to use Playwright's own Chromium, else the path of a system Chromium."""
    try:
        own = playwright.chromium.executable_path
    except Exception:
        own = None
    if own and os.path.exists(own):
        return None
    for path in SYSTEM_CHROMIUMS + [shutil.which("chromium") or ""]:
        if path and os.path.exists(path):
            return path
    pytest.fail("No Chromium for the browser tests: neither Playwright's (`playwright install "
                "chromium`) nor the system's (`apt-get install chromium`) is installed",
                pytrace=False)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, playwright):
    args = dict(browser_type_launch_args)
    args["args"] = list(args.get("args") or []) + CHROMIUM_FLAGS
    path = find_chromium(playwright)
    if path:
        args["executable_path"] = path
    return args


class Sites:
    """Builds each variant at most once per session and serves it; remembers failures."""

    def __init__(self):
        self.urls, self.errors, self.servers, self.info = {}, {}, [], {}

    def url(self, variant):
        if variant not in self.urls and variant not in self.errors:
            self._build(variant)
        if variant in self.errors:
            optional, message = self.errors[variant]
            if optional:
                pytest.skip(message)
            pytest.fail(message, pytrace=False)
        return self.urls[variant]

    def _build(self, variant):
        args, optional = VARIANTS[variant]
        out = os.path.join(ROOT, "build", "test-" + variant)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        cmd = [sys.executable, os.path.join(ROOT, "build.py"), "--out", out] + args
        start = time.monotonic()
        with open(out + ".lock", "w") as lock:
            if fcntl:
                fcntl.flock(lock, fcntl.LOCK_EX)
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True)
        sys.stderr.write("\n[built %s in %.1f s]\n" % (variant, time.monotonic() - start))
        if done.returncode != 0:
            self.errors[variant] = (optional, "`%s` failed:\n%s" % (
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
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.on("request", lambda request: self.requests.append(request.url))

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
    return PageLog(page)


@pytest.fixture(name="wait_ready")
def wait_ready_fixture():
    return wait_ready


@pytest.fixture
def assert_page_clean(page_log, site_url):
    """Fails a test whose page logged an error or a traceback, or left the site's origin."""
    yield
    page_log.assert_clean(site_url)
