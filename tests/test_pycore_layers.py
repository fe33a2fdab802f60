"""pycore's structure: the math loads alone, no import cycle anywhere, every import goes down the
layers of tests/import_graph.py, and docs/architecture.md shows those layers and the graph as
they are. (tests/test_pycore_meta.py checks the layers file by file.)"""

import subprocess
import sys

import pytest

import import_graph
from import_graph import ROOT

MATH_IMPORTS = [
    "import pycore",
    "import pycore.vit",
    "from pycore import classification_head, cross_entropy, head_backward",
    "import pycore.vit.training, pycore.vit.tiny.model, pycore.vit.mistakes, pycore.vit.variants",
]


@pytest.mark.parametrize("statement", MATH_IMPORTS)
def test_importing_the_math_loads_nothing_of_the_explorer(statement):
    """In a fresh interpreter, so that no other test has loaded the explorer already."""
    code = ("import sys\n%s\nprint(' '.join(sorted(m for m in sys.modules "
            "if m == 'pycore' or m.startswith('pycore.'))))" % statement)
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
    assert "pycore.vit.head" in out  # the statement did load the math
    assert not [m for m in out if m.startswith("pycore.explorer")], out


def test_pycore_has_no_import_cycle():
    found = import_graph.cycles(import_graph.graph())
    assert not found, "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in found)


def test_every_import_goes_down_the_layers():
    bad = import_graph.upward_imports(import_graph.graph())
    assert not bad, "\n".join("%s (%s) imports %s (%s)" % b for b in bad)


def test_every_module_is_in_exactly_one_layer():
    named = [("pycore." + n) if n else "pycore" for _, _, names in import_graph.LAYERS
             for n in names]
    assert len(named) == len(set(named)), "a module is in two layers"
    assert set(named) == set(import_graph.modules()), (
        "in no layer: %s; not a module: %s" % (sorted(set(import_graph.modules()) - set(named)),
                                               sorted(set(named) - set(import_graph.modules()))))


def test_the_graph_counts_function_level_and_relative_imports():
    """Edges the source makes only inside functions, or with ``from . import``."""
    edges = import_graph.graph()
    assert "pycore.selfcheck" in edges["pycore.explorer.session"]        # inside a method
    assert "pycore.explorer.comparisons.registry" in edges["pycore.explorer.state.explorer_state"]  # inside a function
    assert "pycore.explorer.panels.sections" in edges["pycore.explorer.session"]  # from . import sections
    assert "pycore.vit.head" in edges["pycore.explorer.comparisons.registry"]     # from ..vit.head import
    assert "pycore.explorer" not in edges["pycore.explorer.state.explorer_state"]      # parents are not edges


def test_cycles_are_found_and_named():
    toy = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["e2"], "e2": ["e"]}
    assert sorted(import_graph.cycles(toy)) == [["a", "b", "c"], ["e", "e2"]]
    assert import_graph.cycles({"a": ["b"], "b": []}) == []


def test_docs_show_the_layers_and_the_import_graph_as_they_are():
    now = import_graph.docs_block_now()
    assert now is not None, "docs/architecture.md lacks the layers block"
    assert now == import_graph.docs_block(), (
        "docs/architecture.md's layers or import graph are out of date: run "
        "python3 tests/import_graph.py --write-docs")
