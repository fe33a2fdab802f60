"""pycore checks itself in the interpreter it runs in.

The examples in pycore's docstrings are its core cases: the worked example's logits, LayerNorm's
edge rows, the link format, the mistakes, the gradients. CPython runs them in the tests; the page
runs them where it computes (Pyodide 0.17 with NumPy 1.17 on the fallback host, Pyodide 314 with
NumPy 2.4 on the PyScript host) when asked (the ``selfcheck`` request), so the branches written for
old and new NumPy are tested where they run (tests/browser/test_hosts.py asks both hosts).

This module imports every other one, so it sits above both subpackages.
"""
import doctest
import importlib
import io
import pkgutil
import sys

import numpy as np


def run_examples(package="pycore"):
    """Run every docstring example of every module under `package`, here and now.

    Parameters
    ----------
    package : str
        The package whose modules are checked (pycore by default).

    Returns
    -------
    dict
        ``{"python", "numpy", "modules", "attempted", "failed", "failures"}``: the interpreter's
        and NumPy's versions, how many modules, examples and failed examples, and for each
        failure ``{"module", "report"}`` (doctest's own report, cut to 2,000 characters).

    Examples
    --------
    >>> result = run_examples("pycore.vit")
    >>> result["attempted"] > 10, result["failed"]
    (True, 0)
    """
    root = importlib.import_module(package)
    names = [package] + [info.name for info in
                         pkgutil.walk_packages(root.__path__, package + ".")]
    finder = doctest.DocTestFinder()
    attempted = failed = 0
    failures = []
    for name in sorted(names):
        if name == __name__:
            continue  # its own example runs the others
        module = importlib.import_module(name)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        report = io.StringIO()
        for test in finder.find(module, name):
            runner.run(test, out=report.write)
        result = runner.summarize(verbose=False)
        attempted += result.attempted
        failed += result.failed
        if result.failed:
            failures.append({"module": name, "report": report.getvalue()[:2000]})
    return {"python": "%d.%d.%d" % sys.version_info[:3], "numpy": np.__version__,
            "modules": len(names) - (__name__ in names), "attempted": attempted,
            "failed": failed, "failures": failures}
