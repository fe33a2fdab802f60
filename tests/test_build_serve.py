"""The static server of `build.py --serve` (and of the browser tests): a real server in a thread,
asked with urllib. It never lists a folder, tells browsers not to guess types, and otherwise
serves as before: its MIME types, no-cache, a folder's index.html.
"""
import json
import urllib.error
import urllib.request

import pytest

from buildtools import serve


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return tmp_path_factory.mktemp("parent") / "site"


@pytest.fixture(scope="module")
def served(site):
    """One server for the module (stopping one takes up to half a second)."""
    tmp_path = site
    tmp_path.mkdir()
    (tmp_path / "index.html").write_text("<p>home</p>")
    (tmp_path / "vendor" / "pyodide").mkdir(parents=True)
    (tmp_path / "vendor" / "pyodide" / "pyodide.asm.wasm").write_bytes(b"\0asm")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.html").write_text("<p>docs</p>")
    server, base = serve.serve_in_thread(str(tmp_path))
    yield base
    server.shutdown()
    server.server_close()


def get(url):
    """(status, headers, body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers, err.read()


@pytest.mark.parametrize("path", ["vendor/", "vendor", "vendor/pyodide/", "vendor/pyodide"])
def test_a_folder_without_index_html_is_not_listed(served, path):
    status, headers, body = get(served + path)
    assert status == 404
    assert b"pyodide" not in body and b"Directory listing" not in body
    assert headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize("path", ["", "docs/", "docs"])
def test_a_folder_with_index_html_serves_it(served, path):
    status, headers, body = get(served + path)
    assert status == 200 and body in (b"<p>home</p>", b"<p>docs</p>")
    assert headers["Content-Type"].startswith("text/html")


def test_every_answer_says_nosniff_and_no_cache(served):
    for path in ("", "vendor/pyodide/pyodide.asm.wasm", "missing.js"):
        status, headers, _ = get(served + path)
        assert headers["X-Content-Type-Options"] == "nosniff", path
        if status == 200:
            assert headers["Cache-Control"] == "no-cache", path
    status, headers, body = get(served + "vendor/pyodide/pyodide.asm.wasm")
    assert (status, headers["Content-Type"], body) == (200, "application/wasm", b"\0asm")


def test_a_path_out_of_the_folder_is_not_served(served, site):
    (site.parent / "secret.txt").write_text("secret")
    status, _, body = get(served + "../secret.txt")
    assert status == 404 and b"secret" not in body


def test_the_site_policy_is_sent_as_a_header_and_follows_a_rebuild(tmp_path):
    (tmp_path / "index.html").write_text("<p>home</p>")
    info = tmp_path / "build-info.json"
    server, base = serve.serve_in_thread(str(tmp_path))
    try:
        assert get(base)[1]["Content-Security-Policy"] is None      # no build-info.json yet
        info.write_text(json.dumps({"content_security_policy": "default-src 'none'"}))
        assert get(base)[1]["Content-Security-Policy"] == "default-src 'none'"
        info.write_text(json.dumps({"content_security_policy": "default-src 'self'; img-src data:"}))
        for path in ("", "missing.js"):
            assert get(base + path)[1]["Content-Security-Policy"] == "default-src 'self'; img-src data:"
    finally:
        server.shutdown()
        server.server_close()
    server, base = serve.serve_in_thread(str(tmp_path), policy="script-src 'none'")
    try:  # a test's own, stricter policy
        assert get(base)[1]["Content-Security-Policy"] == "script-src 'none'"
    finally:
        server.shutdown()
        server.server_close()
