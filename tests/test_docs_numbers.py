"""The numbers the docs state about the page are the code's: each is read out of the doc's own
sentence and compared with the constant (or the markup) it describes, so a doc that keeps an old
figure after the code changes fails here."""
import os
import re
from html.parser import HTMLParser

import pytest

from pycore.explorer import shared
from pycore.explorer.finetune import memory as training_memory, panel as finetune

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def text(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return re.sub(r"\s+", " ", f.read())  # a sentence may wrap anywhere


def js_constant(path, name):
    found = re.search(r"\bconst %s = ([0-9.]+);" % name, text("web", "js", path))
    assert found, "web/js/%s defines no %s" % (path, name)
    return float(found.group(1))


def stated(doc, pattern):
    """Every number the doc states where `pattern` (a regex with one group) matches."""
    words = {"four": "4"}
    found = [float(words.get(n, n).replace(",", "")) for n in re.findall(pattern, text("docs", doc))]
    assert found, "docs/%s no longer says %r" % (doc, pattern)
    return found


class _Ahead(HTMLParser):
    """The .plot elements inside the .compare blocks of the mistakes' and variants' sections:
    the comparisons' figures the page makes ahead (web/js/app.js, figuresAhead)."""

    def __init__(self, sections):
        super().__init__()
        self.sections, self.stack, self.plots = sections, [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        self.stack.append((tag, a.get("id"), classes))
        in_section = any(i in self.sections for _, i, _ in self.stack)
        in_compare = any("compare" in c for _, _, c in self.stack[:-1])
        if in_section and in_compare and "plot" in classes:
            self.plots.append(a.get("id"))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break


def figures_ahead():
    parser = _Ahead({shared.PANEL_IDS["mistake"], shared.PANEL_IDS["variant"]})
    with open(os.path.join(ROOT, "web", "index.html"), encoding="utf-8") as f:
        parser.feed(f.read())
    assert parser.plots, "no comparison figures found in web/index.html"
    return len(parser.plots) + 2  # and the encoder output and dW_head


@pytest.mark.parametrize("doc, pattern, want", [
    ("interface.md", r'"\d+ of (\d+)" once the page is ready', lambda: js_constant("runtime/warmup.js", "PRACTICE")),
    ("interface.md", r'then "\d+ of (\d+)" and so on', lambda: js_constant("runtime/warmup.js", "PRACTICE")),
    ("interface.md", r'"Figures made ahead"\): "\d+ of (\d+)"', figures_ahead),
    ("interface.md", r"after ([0-9.]+) s the page reloads itself",
     lambda: js_constant("runtime/restart.js", "RESTART_AFTER_MS") / 1000),
    ("interface.md", r"at most (\d) decimals, trailing zeros dropped", lambda: 4),
    ("interface.md", r"at most (\d+) characters; scientific", lambda: js_constant("page/numbers.js", "MAX_CHARS")),
    ("interface.md", r"([0-9,]+) characters \(`LINK_SHARE_MAX`", lambda: shared.LINK_SHARE_MAX),
    ("interface.md", r"([0-9,]+) characters \(the whole address; `LINK_SHARE_MAX`\)",
     lambda: shared.LINK_SHARE_MAX),
    ("interface.md", r"(\d+) MB \(`MEMORY_MB`\)", lambda: training_memory.MEMORY_MB),
    ("interface.md", r"about ([0-9.]+) times slower \(`PAGE_SLOWER`\)", lambda: finetune.PAGE_SLOWER),
    ("interface.md", r"about ([0-9.]+) s of work in the page\*\* \(`REQUEST_WORK_MS`\)",
     lambda: finetune.REQUEST_WORK_MS / 1000),
    ("math.md", r"shows at most (\w+) decimals, in a cell and in a heatmap's hover", lambda: 4),
])
def test_a_number_the_docs_state_is_the_codes(doc, pattern, want):
    found = stated(doc, pattern)
    assert found == [pytest.approx(want())] * len(found), (doc, pattern)


def test_the_short_form_keeps_at_most_four_decimals():
    """The 4 the docs state (above) is page/numbers.js's: Math.min(4, ...) decimals."""
    assert "Math.min(4, MAX_CHARS - whole - 1)" in text("web", "js", "page", "numbers.js")


def test_a_changed_number_would_be_caught():
    assert figures_ahead() == 7 and js_constant("runtime/warmup.js", "PRACTICE") == 48
    with pytest.raises(AssertionError):
        stated("interface.md", r'"\d+ of (\d+)" once the page is ready (nowhere)')
