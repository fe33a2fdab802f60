"""The docs stay true to the repository: every module is in docs/architecture.md's tree, every
file a doc names exists (or is one the build writes), and docs/protocol.md names every request
and answer key of pycore/explorer/protocol.py."""
import glob
import os
import re
import subprocess

import pytest

from buildtools.data import class_names, page_digits
from buildtools.assembly import docs_html, hosts, site
from buildtools.onefile import page as onefile
from buildtools.javascript import plotly_bundle, shared as shared_js
from pycore.explorer import protocol

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) + [
    os.path.join(ROOT, "README.md"), os.path.join(ROOT, "web", "README.md")]

# Files the build writes into the site (dist/), not kept in the repository.
BUILT = {"default-view.json", "py-files.json", "build-info.json", "pyscript.json",
         page_digits.FILE_NAME, class_names.FILE_NAME, onefile.FILE_NAME,
         plotly_bundle.FILE_NAME, shared_js.FILE_NAME, site.STDLIB_BYTECODE, hosts.PYTHON_ZIP}
# The docs' pages the build writes: docs/<name>.html of each docs/<name>.md.
DOC_PAGES = {docs_html.page_name(os.path.basename(p)) for p in DOCS if "/docs/" in p}
# Third-party files the docs name, as their packages ship them (artifacts.json pins them), and
# the product names that end like a file.
THIRD_PARTY = {"core.js", "pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "pyodide.js",
               "pyodide-lock.json", "package.json", "katex.min.js", "katex.min.css",
               "Node.js", "Plotly.js", "KaTeX.js", "Pyodide.js", "plotly-cartesian.min.js",
               "THIRD-PARTY-LICENSES.txt", "python_stdlib.zip"}
# Files of the reader's own in the docs' examples (a model file, its script, the exports the
# page downloads, a course site's folder).
EXAMPLES = {"my_vit.npz", "write_vit.py", "vit-head-state.npz", "vit-head-state.json",
            "vit_head.py", "vit_head_training.py", "vit-head/index.html"}
PATH = re.compile(r"(?<![\w./:~@-])((?:[\w.-]+/)*[\w.-]+\.(?:py|js|mjs|md|json|html|css|toml|npz|"
                  r"txt|sh|wasm|whl|zip))(?![\w/-])")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def repository_files():
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.fail("git is needed to list the repository's files")
    return set(out)


def unknown_paths(doc, text, files):
    """The file paths `text` (the doc at `doc`) names that are neither in the repository nor
    written by the build, nor third-party or example files."""
    names = {os.path.basename(f) for f in files}
    here = os.path.relpath(os.path.dirname(doc), ROOT)
    bad = []
    for path in sorted(set(PATH.findall(text))):
        if path.startswith("../"):
            path = os.path.normpath(os.path.join(here, path))
        if path in EXAMPLES or os.path.basename(path) in THIRD_PARTY:
            continue
        site = path[len("dist/"):] if path.startswith("dist/") else path
        if site in BUILT or os.path.basename(site) in BUILT or site.startswith("vendor/"):
            continue
        if re.fullmatch(r"docs/[\w-]+\.html", site) and site[len("docs/"):] in DOC_PAGES:
            continue  # a doc's page in the site (buildtools/assembly/docs_html.py)
        if "/" in path:  # from the root, from the doc's folder, or a site path from web/
            if not any(os.path.normpath(os.path.join(base, path)) in files
                       for base in ("", here, "web")):
                bad.append(path)
        elif path not in names:  # a bare name: some file of the repository
            bad.append(path)
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_file_a_doc_names_exists(doc):
    assert unknown_paths(doc, read(doc), repository_files()) == []


def test_a_doc_naming_a_missing_file_is_caught():
    files = repository_files()
    doc = os.path.join(ROOT, "web", "README.md")
    assert unknown_paths(doc, "py/main.py runs `pycore/vit/nothing.py` and gone.js",
                         files) == ["gone.js", "py/main.py", "pycore/vit/nothing.py"]
    assert unknown_paths(doc, "js/host.js, py/worker.py, pycore/vit/head.py, dist/js/shared.js",
                         files) == []
    assert unknown_paths(doc, "docs/math.html, dist/docs/index.html, docs/gone.html",
                         files) == ["docs/gone.html"]


def tree():
    """The code block of docs/architecture.md that draws the repository's tree."""
    text = read(os.path.join(ROOT, "docs", "architecture.md"))
    return re.search(r"```\n(pycore/.*?)```", text, re.S).group(1)


def tree_entries(block, folder):
    """The names listed under `folder` ("pycore/vit/") in the tree block: the first word of each
    line indented under the folder's own line."""
    parts = folder.strip("/").split("/")
    names, stack = set(), []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = (len(line) - len(line.lstrip())) // 2
        word = line.split()[0]
        stack[indent:] = [word.rstrip("/")]
        if stack[:-1] == parts:
            names.add(word)
    return names


def web_js(block):
    """The part of the tree block under web/js/ (its folders' names are also pycore's: digits/)."""
    return re.search(r"^  js/ .*?(?=^  \S)", block, re.M | re.S).group(0)


def test_every_module_is_in_the_architecture_tree():
    block = tree()
    missing = []
    for package in ("pycore", "pycore/vit", "pycore/explorer"):
        listed = tree_entries(block, package)
        for path in glob.glob(os.path.join(ROOT, package, "*.py")):
            name = os.path.basename(path)[:-3]
            if name != "__init__" and name not in listed:
                missing.append("%s/%s" % (package, name))
    listed = tree_entries(block, "web/js")
    for path in glob.glob(os.path.join(ROOT, "web", "js", "*.js")):
        if os.path.basename(path) not in listed:
            missing.append("web/js/" + os.path.basename(path))
    # web/js's folders by concept (heatmap/, figure/...): each one's entry names its modules
    for folder in sorted(glob.glob(os.path.join(ROOT, "web", "js", "*", ""))):
        name = os.path.basename(os.path.dirname(folder))
        if name + "/" not in listed:
            missing.append("web/js/%s/" % name)
            continue
        entry = re.search(r"^    %s/ .*\n(?: {6,}.*\n)*" % re.escape(name), web_js(block),
                          re.M).group(0)
        for path in glob.glob(os.path.join(folder, "*.js")):
            if not re.search(r"(?<![\w/-])%s\b" % re.escape(os.path.basename(path)), entry):
                missing.append(os.path.relpath(path, ROOT))
    # web/boot/'s line and the lines that continue it (indented past the names' column)
    boot = re.search(r"^  boot/.*\n(?: {6,}.*\n)*", block, re.M).group(0)
    for path in glob.glob(os.path.join(ROOT, "web", "boot", "*")):
        if not re.search(r"\b%s\b" % re.escape(os.path.basename(path)), boot):
            missing.append("web/boot/" + os.path.basename(path))
    assert missing == []


def test_every_module_of_a_subpackage_is_named_in_its_tree_entry():
    """pycore's packages by concept (``explorer/state/``, ``vit/tiny/``...): each one's entry names
    every module the folder holds, in the entry's words."""
    lines = tree().split("\n")
    missing = []
    for folder in sorted(glob.glob(os.path.join(ROOT, "pycore", "*", "*", ""))):
        package = os.path.basename(os.path.dirname(folder))
        if package == "__pycache__":
            continue
        start = [i for i, line in enumerate(lines) if line.startswith("    %s/ " % package)]
        assert start, "the tree has no entry for %s" % os.path.relpath(folder, ROOT)
        entry = [lines[start[0]]]
        for line in lines[start[0] + 1:]:
            if len(line) - len(line.lstrip()) <= 4:
                break
            entry.append(line)
        words = set(re.findall(r"[\w]+", " ".join(entry)))
        for path in glob.glob(os.path.join(folder, "*.py")):
            name = os.path.basename(path)[:-3]
            if name != "__init__" and name not in words:
                missing.append(os.path.relpath(path, ROOT))
    assert missing == []


def test_the_tree_lists_no_module_that_is_gone():
    block = tree()
    gone = []
    for package in ("pycore/vit", "pycore/explorer"):
        for name in tree_entries(block, package):
            path = os.path.join(ROOT, package, name)
            if not (os.path.isdir(path) if name.endswith("/") else os.path.isfile(path + ".py")):
                gone.append("%s/%s" % (package, name))
    for name in tree_entries(block, "web/js"):
        path = os.path.join(ROOT, "web", "js", name)
        if not (os.path.isdir(path) if name.endswith("/") else os.path.isfile(path)):
            gone.append("web/js/" + name)
    # the modules each web/js folder's entry names
    for folder in [n for n in tree_entries(block, "web/js") if n.endswith("/")]:
        entry = re.search(r"^    %s .*\n(?: {6,}.*\n)*" % re.escape(folder), web_js(block),
                          re.M).group(0)
        for name in re.findall(r"(?<![\w/.-])([\w-]+\.js)\b", entry):
            if not os.path.isfile(os.path.join(ROOT, "web", "js", folder, name)):
                gone.append("web/js/%s%s" % (folder, name))
    assert gone == []


def test_the_tree_reader_sees_a_missing_module():
    block = "pycore/   x\n  vit/   y\n    head   z\n  explorer/  w\n    state   v\n"
    assert tree_entries(block, "pycore/vit") == {"head"}
    assert tree_entries(block, "pycore/explorer") == {"state"}
    assert tree_entries(block, "pycore") == {"vit/", "explorer/"}


def test_protocol_md_names_every_request_and_answer_key():
    text = read(os.path.join(ROOT, "docs", "protocol.md"))
    requests = text[text.index("## Requests"):text.index("## Answers")]
    answers = text[text.index("## Answers"):]
    listed_ops = set(re.findall(r"^\| `(\w+)` \|", requests, re.M))
    assert listed_ops == set(protocol.REQUESTS)
    for op, fields in protocol.REQUESTS.items():
        row = re.search(r"^\| `%s` \|([^|]*)\|" % op, requests, re.M).group(1)
        assert set(re.findall(r"`(\w+)`", row)) == set(fields), op
    keys = set()
    for cell in re.findall(r"^\| ((?:`\w+`(?:, )?)+) \|", answers, re.M):
        keys |= set(re.findall(r"`(\w+)`", cell))
    assert keys | {"ok", "error"} == set(protocol.ANSWER)
