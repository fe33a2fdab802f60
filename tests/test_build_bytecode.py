"""buildtools/assembly/bytecode.py where it cannot compile: the build goes on, without .pyc, and says why.
(Where it can, tests/browser/test_hosts.py checks the page imports every module from them.)"""
import shutil

from buildtools.assembly import bytecode

FILES = [{"url": "pycore/__init__.py", "path": "pycore/__init__.py"},
         {"url": "pycore/vit/tiny/weights.npz", "path": "pycore/vit/tiny/weights.npz",
          "binary": True}]


def test_without_node_nothing_is_compiled_and_the_build_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(bytecode.shutil, "which", lambda name: None)
    said = []
    assert bytecode.compile_site(str(tmp_path), FILES, str(tmp_path), log=said.append) == bytecode.NOTHING
    assert said == ["bytecode: Node.js not found; the page's Python compiles its modules as it boots"]


def test_a_runtime_that_fails_is_named_and_nothing_is_compiled(tmp_path):
    assert shutil.which("node"), "Node.js is needed to run a broken runtime (the build needs it too)"
    (tmp_path / "pycore").mkdir()
    (tmp_path / "pycore" / "__init__.py").write_text("x = 1\n")
    (tmp_path / "pyodide").mkdir()
    (tmp_path / "pyodide" / "pyodide.mjs").write_text(
        'export async function loadPyodide() { throw new Error("no runtime here"); }\n')
    said = []
    assert bytecode.compile_site(str(tmp_path), FILES, str(tmp_path / "pyodide"),
                                 log=said.append) == bytecode.NOTHING
    assert len(said) == 1 and "not compiled" in said[0] and "no runtime here" in said[0], said
    assert not (tmp_path / "pycore" / "__pycache__").exists()
