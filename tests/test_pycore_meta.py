"""pycore runs in Pyodide 0.17 (Python 3.8, NumPy 1.17.5) as well as in Python 3.14 with
NumPy 2.x: check the syntax of every file, the absence of newer NumPy APIs, and that the
benchmark script runs."""

import ast
import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "pycore").glob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_parses_as_python_3_8(path):
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(3, 8))


# Names that NumPy 1.17 lacks or that changed meaning, and 3.9+ conveniences.
FORBIDDEN = [r"default_rng", r"\bnp\.random\.Generator",
             r"\bnp\.(array|asarray)\([^()]*copy=False",       # means "never copy" in NumPy 2
             r"\bnp\.[\w.]+\([^()]*\bwhere=",                  # ufunc/reduction where= (1.17+)
             r"\.removeprefix\(", r"\.removesuffix\(", r"\bmath\.lcm\b", r"\bnp\.bool\b",
             r"\bnp\.trapezoid\b", r"\bnp\.concat\(", r"\bnp\.astype\(", r"\bnp\.vecdot\b",
             r"\bnp\.isdtype\b", r"\bnp\.unique_values\b", r"\bnp\.matrix_transpose\b",
             r"\bnp\.permute_dims\b", r"\bnp\.cumulative_sum\b", r"\bnp\.long\b"]


@pytest.mark.parametrize("path", [p for p in FILES if p.name != "bench.py"],
                         ids=lambda p: p.name)
def test_uses_only_the_numpy_1_17_api(path):
    source = path.read_text(encoding="utf-8")
    for pattern in FORBIDDEN:
        assert not re.search(pattern, source), "{} uses {}".format(path.name, pattern)


def test_no_runtime_annotations_with_builtin_generics():
    for path in FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AnnAssign, ast.arg)):
                annotation = getattr(node, "annotation", None) or getattr(node, "returns", None)
                if isinstance(annotation, ast.Subscript):
                    name = getattr(annotation.value, "id", "")
                    assert name not in ("list", "dict", "tuple", "set", "type"), path.name


def test_browser_safe_modules_import_no_browser_or_os_specific_modules():
    for path in FILES:
        if path.name == "bench.py":
            continue
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(js|pyodide|ctypes|tracemalloc)\b", source,
                             re.M), path.name


@pytest.mark.parametrize("clock", ["wall", "thread"])
def test_bench_runs_small_and_prints_targets(clock):
    from pycore import bench
    out = io.StringIO()
    with redirect_stdout(out):
        code = bench.main(["--B", "2", "--N", "3", "--D", "16", "--C", "5", "--rounds", "5",
                           "--clock", clock])
    text = out.getvalue()
    assert code == 0
    assert "BLAS:" in text and "threads used by BLAS" in text
    assert text.count("target <=") == 3 and ("PASS" in text or "FAIL" in text)


MY_MODULES = ["cells", "checks", "editing", "errors", "export", "fragment", "head", "json_text",
              "limits", "pitfalls", "presets", "recipes", "softmax", "state", "state_json",
              "state_object", "trace", "variants", "view", "session", "comparisons"]


@pytest.mark.parametrize("name", MY_MODULES)
def test_docstring_examples_run(name):
    import doctest
    import importlib
    module = importlib.import_module("pycore." + name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
