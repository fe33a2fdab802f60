"""The repository's shape (docs/architecture.md, "Packages by concept"): no hand-written file past
MAX_LINES lines, and no product folder with more than MAX_MODULES modules.

Files: every file git keeps, or would keep (untracked but not ignored), whose name ends in one of
EXTENSIONS, except those a tool writes whole (GENERATED), the vendored ones (none are kept: the
build copies third-party files from its cache into dist/, which git ignores, as it does every
other file build.py writes) and tests/fixtures/ (data made by its script, read as they are).

Folders: pycore/, web/js/, web/boot/, buildtools/ and benchmarks/ and every folder below them
(PRODUCT). A module is a .py, .js or .mjs file directly in the folder; a package's __init__.py is
not counted. tests/ and tests/browser/ are left out on purpose: they are pytest's flat test
folders. pytest finds test files by name anywhere, but this suite's machinery reads them by folder
and name: tests/conftest.py puts each file into an xdist group by its base name and orders the
engines' scenarios by it, tests/browser/conftest.py's fixtures hold for the files beside it, and
the helpers (pinned.py, pagekit.py...) are imported by name from the test folders on sys.path. A
file's concept is in its name (test_build_*, test_page_*, test_engines_*), which `pytest -k` and
the groups select by; the line rule holds for them all the same.
"""
import os
import subprocess
from collections import Counter

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 500
MAX_MODULES = 14
EXTENSIONS = (".py", ".js", ".mjs", ".css", ".html", ".md", ".sh")
MODULES = (".py", ".js", ".mjs")
PRODUCT = ("pycore/", "web/js/", "web/boot/", "buildtools/", "benchmarks/")
# Written whole by a tool, never by hand: the protocol's typedefs (python3 -m
# buildtools.javascript.protocol, from pycore/explorer/protocol.py and protocol_types.py).
GENERATED = frozenset({"web/js/protocol.js"})
LEFT_OUT = ("tests/fixtures/",)


def kept_files(root=ROOT):
    """The paths (from `root`, with /) of the files git keeps or would keep."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                             cwd=root, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.fail("git is needed to list the repository's files")
    return sorted(p for p in set(out.splitlines()) if os.path.isfile(os.path.join(root, p)))


def hand_written(paths):
    return [p for p in paths if p.endswith(EXTENSIONS) and p not in GENERATED
            and not p.startswith(LEFT_OUT)]


def long_files(root=ROOT, paths=None):
    """[(path, lines)] of the hand-written files past MAX_LINES lines."""
    found = []
    for path in hand_written(kept_files(root) if paths is None else paths):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            found.append((path, lines))
    return found


def module_counts(paths):
    """{folder: its modules} of the product folders among `paths`."""
    counts = Counter()
    for path in paths:
        folder, name = os.path.split(path)
        if (path.startswith(PRODUCT) and name.endswith(MODULES) and name != "__init__.py"):
            counts[folder] += 1
    return counts


def crowded_folders(root=ROOT, paths=None):
    """[(folder, modules)] of the product folders with more than MAX_MODULES modules."""
    counts = module_counts(kept_files(root) if paths is None else paths)
    return sorted((folder, n) for folder, n in counts.items() if n > MAX_MODULES)


def test_no_hand_written_file_is_past_500_lines():
    assert long_files() == [], (
        "split these by concept (docs/architecture.md, \"Packages by concept\")")


def test_no_product_folder_holds_more_than_14_modules():
    assert crowded_folders() == [], (
        "make a package per concept (docs/architecture.md, \"Packages by concept\")")


def test_the_checks_see_a_long_file_and_a_crowded_folder(tmp_path):
    (tmp_path / "long.md").write_text("x\n" * (MAX_LINES + 1))
    (tmp_path / "short.js").write_text("x\n" * MAX_LINES)
    (tmp_path / "long.txt").write_text("x\n" * (MAX_LINES + 1))  # not a hand-written kind
    assert long_files(str(tmp_path), ["long.md", "short.js", "long.txt"]) == [
        ("long.md", MAX_LINES + 1)]
    crowded = ["web/js/m%d.js" % i for i in range(MAX_MODULES + 1)]
    assert crowded_folders(paths=crowded) == [("web/js", MAX_MODULES + 1)]
    assert crowded_folders(paths=crowded[1:]) == []
    # a package's __init__.py, a data file, and the test folders are not counted
    inits = ["pycore/p/__init__.py", "pycore/p/weights.npz"] + [
        "pycore/p/m%d.py" % i for i in range(MAX_MODULES)]
    assert crowded_folders(paths=inits) == []
    assert crowded_folders(paths=["tests/test_%d.py" % i for i in range(40)]) == []
    assert GENERATED and all(p in kept_files() for p in GENERATED)  # no stale exception
