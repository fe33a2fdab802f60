"""benchmarks/page_bench.py serves the sites it measures with the project's server: every file of
the site carries the site's Content-Security-Policy, as a visitor's browser gets it; the floors
(the benchmark's own pages, from memory) carry none; a file the site serves gzipped is there under
its plain name for the floors' plain Pyodide."""
import gzip
import json
import os
import subprocess
import sys
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from page import site as page_site  # noqa: E402

POLICY = "default-src 'none'; script-src 'self'"


def get(url):
    with urllib.request.urlopen(url) as r:
        return r.read(), r.headers


def test_the_site_is_served_with_its_policy_and_the_floors_without(tmp_path):
    (tmp_path / "build-info.json").write_text(json.dumps({"content_security_policy": POLICY}))
    (tmp_path / "index.html").write_text("<p>explorer</p>")
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "shared.js").write_text("export const X = 1;\n")
    (tmp_path / "big.wasm.gz").write_bytes(gzip.compress(b"\0asm"))
    server, base = page_site.start_server(tmp_path, {"/floor.html": "<p>floor</p>"})
    try:
        for path in ("index.html", "js/shared.js"):
            _, headers = get(base + path)
            assert headers["Content-Security-Policy"] == POLICY, path
            assert headers["X-Content-Type-Options"] == "nosniff"
        assert get(base + "js/shared.js")[1]["Content-Type"].startswith("text/javascript")
        body, headers = get(base + "floor.html")
        assert body == b"<p>floor</p>" and headers["Content-Security-Policy"] is None
        # the site's file again on the same server, after a floor: its policy is back
        assert get(base + "index.html")[1]["Content-Security-Policy"] == POLICY
        body, headers = get(base + "big.wasm")
        assert body == b"\0asm" and headers["Content-Type"] == "application/wasm"
    finally:
        server.shutdown()
        server.server_close()


def test_page_bench_states_its_command_line():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "page_bench.py"),
                           "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--skip-scrub" in done.stdout, done.stderr
