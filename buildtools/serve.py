"""A static file server for a built site, with the MIME types Pyodide needs.

Python's http.server guesses types from the platform's tables, which differ between machines;
Pyodide needs application/wasm (streaming compilation) and JavaScript modules need a JavaScript
type, so the types that matter here are set explicitly. Unlike http.server, it never lists a
folder (a folder without index.html is a 404: a site's layout is not the visitor's business),
and it tells browsers not to guess types (X-Content-Type-Options: nosniff).

It sends the site's Content-Security-Policy as a header, the one the build wrote into
build-info.json and index.html (buildtools/assembly/csp.py): as a header it also covers the fallback
host's worker, which a <meta> in the page does not reach.
"""
import functools
import http.server
import json
import os
import sys
import threading

# The site's own policy, read from its build-info.json (see SiteHandler.policy).
SITE_POLICY = object()
_read = {}  # build-info.json's path -> ((mtime, size), its policy)


def site_policy(directory):
    """The Content-Security-Policy that the build in `directory` wrote into its build-info.json.

    Read again when the file changes, so that `build.py --serve`, whose server is bound before
    the build, sends the new build's policy.

    Parameters
    ----------
    directory : str
        A built site.

    Returns
    -------
    str or None
        None when the folder has no build-info.json or it names no policy.

    Examples
    --------
    >>> site_policy("/no/such/site") is None
    True
    """
    path = os.path.join(directory, "build-info.json")
    try:
        stat = os.stat(path)
    except OSError:
        return None
    version = (stat.st_mtime_ns, stat.st_size)
    known = _read.get(path)
    if known and known[0] == version:
        return known[1]
    try:
        with open(path, encoding="utf-8") as f:
            policy = json.load(f).get("content_security_policy")
    except (OSError, ValueError, AttributeError):
        policy = None
    policy = policy if isinstance(policy, str) else None
    _read[path] = (version, policy)
    return policy


MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".data": "application/octet-stream",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".py": "text/x-python; charset=utf-8",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES)
    quiet = False
    policy = SITE_POLICY  # or a policy of one's own (a test's stricter one), or None: no header

    def end_headers(self):
        # Always revalidate: after a rebuild the browser must not mix old and new files.
        self.send_header("Cache-Control", "no-cache")
        # The types above are the truth: a browser must not run a file as another type.
        self.send_header("X-Content-Type-Options", "nosniff")
        policy = site_policy(self.directory) if self.policy is SITE_POLICY else self.policy
        if policy:
            self.send_header("Content-Security-Policy", policy)
        super().end_headers()

    def send_head(self):
        # A folder is served only through its index.html (http.server would list it, and first
        # redirect /folder to /folder/, which also tells that it exists).
        path = self.translate_path(self.path)
        if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "index.html")):
            self.send_error(404, "File not found")
            return None
        return super().send_head()

    def list_directory(self, path):
        # Never reached through send_head above; kept closed for any other caller.
        self.send_error(404, "File not found")
        return None

    def log_message(self, format, *args):
        if not self.quiet:
            super().log_message(format, *args)


class SiteServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A browser that leaves a page mid-download (a closed tab, a test's page) resets the
        # connection: normal for a web server, not worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def make_server(directory, host="127.0.0.1", port=0, quiet=False, policy=SITE_POLICY):
    """A threaded server for `directory` (port 0 picks a free port); not started yet.

    `policy`: the Content-Security-Policy header it sends; by default the site's own (from its
    build-info.json), None for none.
    """
    handler = functools.partial(
        type("Handler", (SiteHandler,), {"quiet": quiet, "policy": policy}), directory=directory)
    server = SiteServer((host, port), handler)
    return server


def serve_in_thread(directory, host="127.0.0.1", port=0, policy=SITE_POLICY):
    """Start a quiet server in a daemon thread; returns (server, base_url). Used by the tests."""
    server = make_server(directory, host, port, quiet=True, policy=policy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, "http://%s:%d/" % (host, server.server_address[1])
