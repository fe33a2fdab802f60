"""The docs the page links to (docs/*.txt in the site) read right in the browser when a plain
static server sends them without a charset (README's advice: ``python3 -m http.server``)."""
import functools
import http.server
import os
import threading

import pytest

pytestmark = [pytest.mark.browser]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_the_docs_read_in_utf_8_from_a_plain_static_server(sites, browser):
    sites.url("pyscript")  # builds it
    folder = os.path.join(ROOT, "build", "test-pyscript")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = browser.new_page()
    try:
        base = "http://127.0.0.1:%d/" % server.server_address[1]
        for name, words in (("math", ["ε = 1e-6", "γ", "β", "⊙"]),
                            ("tiny-vit", ["×", "γ/β", "ℓ"]), ("training", ["∂"])):
            response = page.goto(base + "docs/%s.txt" % name)
            assert "charset" not in response.headers.get("content-type", "")  # the server says none
            text = page.inner_text("body")
            assert "Î" not in text and "â€" not in text, name
            for w in words:
                assert w in text, (name, w)
    finally:
        page.close()
        server.shutdown()
        server.server_close()
