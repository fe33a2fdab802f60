"""Values the page's JavaScript and Python share are defined once, in pycore/explorer/shared.py.

The build writes them into the site as js/shared.js (buildtools/javascript/shared.py); these tests run
that module under Node.js against Python's values, and look for copies left in web/ and pycore/.
"""
import ast
import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from buildtools.assembly import hosts
from buildtools.javascript import shared as shared_js
from pycore.explorer import shared
from pycore.explorer.state import presets
from pycore.explorer.panels import sections

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE_SCRIPTS = sorted(glob.glob(os.path.join(ROOT, "web", "js", "**", "*.js"), recursive=True) +
                      glob.glob(os.path.join(ROOT, "web", "boot", "*.js")) +
                      glob.glob(os.path.join(ROOT, "web", "boot", "*.mjs")))
# A panel's id written out in an element lookup: $("stats"), getElementById('walk')
PANEL_LOOKUP = re.compile(r'(?:\$|getElementById)\(\s*["\'`](%s)["\'`]\s*\)'
                          % "|".join(re.escape(i) for i in shared.PANEL_IDS.values()))
# A selector that starts at a panel: "#digit .pad", `#top-k-table` is another element's id
PANEL_SELECTOR = re.compile(r'["\'`]#(%s)(?![\w-])' % "|".join(
    re.escape(i) for i in shared.PANEL_IDS.values()))
# A string that is a panel's id and no section's or request's name: "mistakes", 'top-k'
_NAMES = {s.name for s in sections.SECTIONS} | set(__import__(
    "pycore.explorer.protocol", fromlist=["REQUESTS"]).REQUESTS)
PANEL_STRING = re.compile(r'["\'`](%s)["\'`]' % "|".join(
    re.escape(i) for i in shared.PANEL_IDS.values() if i not in _NAMES))
EXPORTED = {name: value for name, value in vars(shared).items()
            if not name.startswith("_") and not callable(value)
            and not isinstance(value, type(os))}


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def run_module(tmp_path, script):
    """Run `script` (an ES module importing ./shared.js) under Node.js; its JSON output."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("Node.js is needed to run the generated js/shared.js (the build needs it too)")
    (tmp_path / "shared.js").write_text(shared_js.module_text(ROOT), encoding="utf-8")
    (tmp_path / "probe.mjs").write_text(script, encoding="utf-8")
    done = subprocess.run([node, str(tmp_path / "probe.mjs")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_generated_module_holds_every_value_of_shared_py(tmp_path):
    got = run_module(tmp_path, 'import * as shared from "./shared.js";\n'
                               'console.log(JSON.stringify(shared));\n')
    assert set(EXPORTED) == {"LINK_MAX", "LINK_SHARE_MAX", "MAX_RUN_STEPS", "HEATMAP_IDS",
                             "PANEL_IDS", "DEFERRABLE", "PRESETS", "DEFAULT_PRESET",
                             "FINETUNE_PRESET",
                             "DIGITS_PRESET"}
    assert {k: v for k, v in got.items()} == json.loads(json.dumps(EXPORTED))


def test_the_generated_helpers_compute_what_python_does(tmp_path):
    cases = [(b, t, n1) for n1 in (1, 2, 5, 197, 257) for b in (0, 1, 3, 63)
             for t in sorted({0, 1, n1 - 1}) if t < n1]
    got = run_module(tmp_path, 'import { encoderRow, encoderPosition } from "./shared.js";\n'
                               'const cases = %s;\n'
                               'console.log(JSON.stringify(cases.map(([b, t, n]) => '
                               '[encoderRow(b, t, n), encoderPosition(encoderRow(b, t, n), n)])));\n'
                               % json.dumps(cases))
    for (b, t, n1), (row, position) in zip(cases, got):
        assert row == shared.encoder_row(b, t, n1) == b * n1 + t  # z_L.reshape(B * (N+1), D)
        assert tuple(position) == shared.encoder_position(row, n1) == (b, t)


def test_the_translation_keeps_python_precedence(tmp_path):
    source = "def f(a, b, c):\n    return a - (b - c) * (a + b) // c % 7, (a - b) - c, a - (b - c)\n"
    js = shared_js.to_js_function(source)
    # b >= c: the left operand of % is never negative, where JavaScript's % and Python's agree
    args = [(a, b, c) for a in (0, 3, 10) for b in (1, 4, 6) for c in (1, 2, 5) if b >= c]
    (tmp_path / "f.mjs").write_text(js + "\nconsole.log(JSON.stringify(%s.map((x) => f(...x))));\n"
                                    % json.dumps(args))
    node = shutil.which("node") or pytest.fail("Node.js is needed")
    done = subprocess.run([node, str(tmp_path / "f.mjs")], capture_output=True, text=True,
                          timeout=60)
    scope = {}
    exec(source, scope)
    assert json.loads(done.stdout) == [list(scope["f"](*x)) for x in args]


def test_shared_py_imports_nothing():
    tree = ast.parse(read("pycore", "explorer", "shared.py"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_python_takes_the_values_from_shared_py():
    from pycore.explorer.finetune import panel as finetune
    from pycore.explorer.finetune import digits as finetune_digits
    from pycore.explorer.state import link
    assert link.LINK_MAX is shared.LINK_MAX
    assert finetune.MAX_RUN_STEPS is shared.MAX_RUN_STEPS
    assert presets.PRESETS is shared.PRESETS
    assert shared.DEFAULT_PRESET == presets.PRESETS[0]
    assert shared.FINETUNE_PRESET in shared.PRESETS
    assert finetune_digits.PRESET is shared.DIGITS_PRESET


def _code_strings(path):
    """The string literals of a Python file's code, its docstrings left out."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            docs.add(id(node.value))  # attribute docstrings
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs]


def test_no_copy_of_a_heatmap_id_outside_shared_py():
    ids = set(shared.HEATMAP_IDS.values())
    for path in glob.glob(os.path.join(ROOT, "pycore", "explorer", "**", "*.py"), recursive=True):
        if path.endswith("shared.py"):
            continue
        assert not ids & set(_code_strings(path)), path
    for path in PAGE_SCRIPTS:
        text = open(path, encoding="utf-8").read()
        found = [i for i in ids if re.search(r"[\"'`#]%s\b(?!-)" % re.escape(i), text)]
        assert not found, (path, found)


def test_no_page_script_keeps_its_own_copy_of_a_shared_value():
    for path in PAGE_SCRIPTS:
        text = open(path, encoding="utf-8").read()
        name = os.path.relpath(path, ROOT)
        assert not re.search(r"\b(100000|100001)\b", text), name  # LINK_MAX
        assert not re.search(r"[<>]=?\s*2(000|e3|_000)\b", text), name  # LINK_SHARE_MAX
        assert not re.search(r"\bMAX_RUN_STEPS\s*=", text), name
        assert hosts.PYTHON_DIR not in text, name
        # the encoder's stacked row b*(N+1)+t, or its inverse, written out again
        assert not re.search(r"([%*]\s*(shape\.)?N1\b)|(floor\([^)]*/\s*(shape\.)?N1\b)", text), name
        assert not re.search(r"name:\s*\"%s\"" % shared.DEFAULT_PRESET, text), name


def test_python_dir_is_written_once():
    found = []
    for pattern in ("buildtools/**/*.py", "buildtools/**/*.mjs", "web/py/*.py", "pycore/**/*.py"):
        for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
            if hosts.PYTHON_DIR in open(path, encoding="utf-8").read():
                found.append(os.path.relpath(path, ROOT))
    assert found == [os.path.join("buildtools", "assembly", "hosts.py")]


def test_the_page_has_one_element_per_heatmap_id_and_panel_id():
    html = read("web", "index.html")
    for element_id in list(shared.HEATMAP_IDS.values()) + list(shared.PANEL_IDS.values()):
        assert html.count('id="%s"' % element_id) == 1, element_id


def test_the_panel_ids_are_the_sections_declarations():
    """shared.py's panel ids are written from the sections (python3 -m buildtools.javascript.protocol):
    each panel declared once, in its Section."""
    from buildtools.javascript import protocol as protocol_js
    text = read("pycore", "explorer", "shared.py")
    assert text == protocol_js.shared_text(text), \
        "pycore/explorer/shared.py's panel ids are out of date: run python3 -m buildtools.javascript.protocol"
    assert shared.PANEL_IDS == {s.name: s.panel for s in sections.SECTIONS if s.panel}
    assert shared.DEFERRABLE == tuple(s.name for s in sections.SECTIONS if s.waits)
    assert set(shared.DEFERRABLE) <= set(shared.PANEL_IDS)


def test_the_preset_menu_offers_python_presets_with_their_sizes():
    html = read("web", "index.html")
    menu = re.search(r'<select id="preset">(.*?)</select>', html, re.S).group(1)
    options = dict(re.findall(r'<option value="([\w-]+)"[^>]*>([^<]*)</option>', menu))
    page_only = {"file", "link", "digit"}  # a model file, the link opened, a drawn digit
    assert set(options) - page_only <= set(shared.PRESETS)
    assert list(options)[0] == shared.DEFAULT_PRESET
    for name, label in options.items():
        if name in page_only:
            continue
        state = presets.preset(name)
        sizes = {"B": state.B, "D": state.D, "C": state.C, "N+1": state.N + 1 if state.N is not None else None}
        for key, value in re.findall(r"(N\+1|\b[BDC])=(\d+)", label):
            assert sizes[key] == int(value), (name, label)


def test_the_page_names_presets_by_the_shared_constants():
    """A "preset" request names its preset by a shared.js constant (or the menu's value), never
    by a literal of its own."""
    asked = []
    for path in PAGE_SCRIPTS:
        text = open(path, encoding="utf-8").read()
        for name in re.findall(r'op:\s*"preset",\s*name:\s*([^,}]+)', text):
            asked.append(name.strip())
            assert not name.strip()[:1] in "\"'`", (path, name)
    assert {"FINETUNE_PRESET", "DIGITS_PRESET"} <= set(asked)


def test_panel_ids_are_not_written_out_in_page_scripts():
    """A panel's element id reaches the page's scripts only through shared.js's PANEL_IDS:
    no element lookup names one, no selector starts with one ("#top-k ..."), and no string
    is one, where the id is not also the name of a request or a section ("mistakes" passed
    on to a lookup; "stats", "walk" and "finetune" are also names of requests and sections)."""
    for path in PAGE_SCRIPTS:
        code = without_comments(open(path, encoding="utf-8").read())
        found = PANEL_LOOKUP.findall(code) + PANEL_SELECTOR.findall(code) + \
            PANEL_STRING.findall(code)
        assert not found, (os.path.relpath(path, ROOT), found)


def without_comments(code):
    """JavaScript without its // and /* */ comments (a comment may name a panel's element)."""
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    return re.sub(r"(?m)(^|[^:\\\"'`])//.*$", r"\1", code)


def test_the_panel_id_check_catches_a_literal():
    """The pattern above is not vacuous: it sees each form it promises to refuse."""
    for text in ('$("digit")', "document.getElementById('stats')", '$(`top-k`)'):
        assert PANEL_LOOKUP.search(text), text
    for text in ('$("digit-pad")', '{ op: "stats" }', '$(PANEL_IDS.walk)'):
        assert not PANEL_LOOKUP.search(text), text
    for text in ('querySelector("#digit .pad")', "'#walk'"):
        assert PANEL_SELECTOR.search(text), text
    for text in ('"#top-k-table"', '"#walkthrough"'):
        assert not PANEL_SELECTOR.search(text), text
    for text in ('comparison("mistake", "mistakes")', "el.id === 'logits-table'"):
        assert PANEL_STRING.search(text), text
    for text in ('{ op: "stats" }', 'component("prediction", x)', '"mistakes-note"'):
        assert not PANEL_STRING.search(text), text
    assert without_comments('a = 1; // the "mistakes" panel\nb = "x"; /* #walk */') == \
        'a = 1; \nb = "x"; '



def test_the_size_fields_allow_what_python_allows():
    """The sizes' fields (web/index.html's max) are Python's limits; Python checks them again."""
    from pycore.explorer.state.explorer_state import LIMITS
    html = read("web", "index.html")
    for name, limit in LIMITS.items():
        field = re.search(r'<input id="dim-%s"[^>]*>' % name, html).group(0)
        assert 'min="1"' in field and 'max="%d"' % limit in field, field
