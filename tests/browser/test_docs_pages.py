"""The docs the page links to (docs/<name>.html in the site, buildtools/assembly/docs_html.py) read right
in Chromium, Firefox and WebKit when a plain static server sends them without a charset
(README's advice: ``python3 -m http.server``): the text the browser shows has every character of
the .md source (ε, γ, ≈, ...), none read as Latin-1 ("Îµ"). The one file's docs, opened from
disk, are tested with its boot (test_one_file.py)."""
import functools
import html
import http.server
import os
import re
import threading
import urllib.request
from collections import Counter

import pytest

from .engines import ENGINES

pytestmark = [pytest.mark.browser]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The docs web/index.html links to, and words of each a misread charset would mangle.
LINKED = {"math": ["ε = 1e-6", "scale γ", "shift β", "h_hat ≈ [0.633", "γ ⊙ h_hat + β"],
          "tiny-vit": ["8×8", "without γ/β (ε = 1e-6)", "ℓ = 0"],
          "training": ["∂loss/∂z = (p - Y) / B", "Σ_b"],
          "own-model": ["γ/β"]}
# The text of a page's <main>, its list of sections aside, with the white space of the source.
MAIN_TEXT = """() => { const main = document.querySelector('main').cloneNode(true);
    for (const nav of main.querySelectorAll('nav')) nav.remove();
    return [document.characterSet, main.textContent,
            document.querySelector('.doc-back').href, document.title]; }"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def plain_server(sites):
    """The PyScript build served by Python's own http.server: .html as "text/html", no charset."""
    sites.url("pyscript")  # builds it
    folder = os.path.join(ROOT, "build", "test-pyscript")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "http://127.0.0.1:%d/" % server.server_address[1]
    server.shutdown()
    server.server_close()


def non_ascii(text):
    return Counter(c for c in text if ord(c) > 127)


@pytest.mark.parametrize("engine_name", ENGINES)
def test_the_docs_read_in_utf_8_from_a_plain_static_server(engines, engine_name, plain_server):
    with urllib.request.urlopen(plain_server + "docs/math.html") as response:
        assert response.headers["Content-Type"] == "text/html"  # the server names no charset
    engine = engines.get(engine_name)
    for name, words in LINKED.items():
        engine.goto(plain_server + "docs/%s.html" % name)
        charset, text, back, title = engine.evaluate(MAIN_TEXT)
        assert charset == "UTF-8", (engine_name, name)
        assert "Î" not in text and "â€" not in text, (engine_name, name)
        with open(os.path.join(ROOT, "docs", name + ".md"), encoding="utf-8") as f:
            source = re.sub(r"<!--.*?-->", "", f.read(), flags=re.S)
        # every character outside ASCII, as often as the source has it
        assert non_ascii(text) == non_ascii(source), (engine_name, name)
        flat = " ".join(text.split())
        for w in words:
            assert w in flat, (engine_name, name, w)
        assert back == plain_server + "index.html"
        assert title.startswith(html.unescape(source.splitlines()[0][2:]))
    assert engine.console_errors() == []
