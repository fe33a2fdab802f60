"""pycore runs in Pyodide 0.17 (Python 3.8, NumPy 1.17.5) as well as in Python 3.14 with
NumPy 2.x: check the syntax of every file, the absence of newer NumPy APIs, the direction of
imports (every file's go to its own layer or a lower one), every docstring example, and that the
benchmark runs."""

import ast
import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

import import_graph

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "pycore").rglob("*.py"))
MODULES = [".".join(p.relative_to(ROOT).with_suffix("").parts).replace(".__init__", "")
           for p in FILES]


def _id(path):
    return str(path.relative_to(ROOT / "pycore"))


@pytest.mark.parametrize("path", FILES, ids=_id)
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


@pytest.mark.parametrize("path", FILES, ids=_id)
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
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(js|pyodide|ctypes|tracemalloc)\b", source,
                             re.M), path.name


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_each_file_imports_only_its_layer_and_below(path):
    """Every file of pycore, not only the math's: its imports (at module level or in a function)
    go to its own layer or a lower one (tests/import_graph.py, LAYERS). The math (pycore.vit and
    pycore's __init__) is the lowest layer, so it never imports the explorer."""
    known = import_graph.modules()
    layers = import_graph.layer_of()
    name = import_graph.module_name(path)
    assert name in layers, "%s is in no layer of tests/import_graph.py's LAYERS" % _id(path)
    number, layer = layers[name]
    above = sorted("%s (%s)" % (m, layers[m][1]) for m in import_graph.imports_of(path, known)
                   if layers.get(m, (number + 1,))[0] > number)
    assert not above, "%s (layer %s) imports %s" % (_id(path), layer, ", ".join(above))
    if number == 0:
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import)\s+(pycore\.)?\.*explorer", source, re.M), \
            "%s is the math and imports the explorer" % _id(path)


def test_build_and_benchmark_code_is_not_in_the_shipped_package():
    """Everything under pycore/ is downloaded by the page; build-time and benchmark code is not."""
    for path in FILES:
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+(argparse|subprocess|buildtools|benchmarks)\b",
                             source, re.M), _id(path)


def _load_bench():
    import importlib.util
    spec = importlib.util.spec_from_file_location("pycore_bench",
                                                  str(ROOT / "benchmarks" / "pycore_bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("clock", ["wall", "thread"])
def test_bench_runs_small_and_prints_targets(clock):
    bench = _load_bench()
    out = io.StringIO()
    with redirect_stdout(out):
        code = bench.main(["--B", "2", "--N", "3", "--D", "16", "--C", "5", "--rounds", "5",
                           "--clock", clock, "--strict"])
    text = out.getvalue()
    assert "BLAS:" in text and "threads used by BLAS" in text
    # each target line's verdict is its own comparison (at this size the call's fixed costs
    # dominate, so either verdict may come), and --strict fails exactly when one is FAIL
    verdicts = re.findall(r"([\d.]+)x?\s+target <= ([\d.]+)\s+(PASS|FAIL)$", text, re.M)
    assert len(verdicts) == 3, text
    for value, target, verdict in verdicts:
        if float(value) != float(target):  # the printed value is rounded: equal says nothing
            assert verdict == ("PASS" if float(value) < float(target) else "FAIL"), text
    assert code == (1 if any(v == "FAIL" for _, _, v in verdicts) else 0)


@pytest.mark.parametrize("name", MODULES + ["buildtools.assembly.first_view"])
def test_docstring_examples_run(name):
    """Every module's examples, collected from the file tree (none can be left out)."""
    import doctest
    import importlib
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
