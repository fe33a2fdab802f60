"""The browser tests run every page under its Content-Security-Policy, which has no 'unsafe-eval'.
Playwright's wait_for_function compiles an expression string with eval in the page, and the
policy refuses it (EvalError) as soon as the first check is false: each predicate must be a
function ("() => ..."), which Playwright runs without eval."""
import ast
import re
from pathlib import Path

import pytest

BROWSER_TESTS = sorted((Path(__file__).resolve().parent / "browser").glob("*.py"))
A_FUNCTION = re.compile(r"\s*(async\b|function\b|\(|[A-Za-z_$][\w$]*\s*=>)")


def expression_predicates(path):
    """(line, text) of each wait_for_function whose predicate is an expression string."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "wait_for_function" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                and not A_FUNCTION.match(node.args[0].value)):
            found.append((node.lineno, node.args[0].value[:60]))
    return found


@pytest.mark.parametrize("path", BROWSER_TESTS, ids=lambda p: p.name)
def test_wait_for_function_is_given_a_function(path):
    assert expression_predicates(path) == [], "write these as \"() => ...\""


def test_the_check_finds_an_expression(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('page.wait_for_function("document.title")\n'
                      'page.wait_for_function("() => document.title")\n'
                      'page.wait_for_function("n => n > 1", arg=1)\n')
    assert expression_predicates(sample) == [(1, "document.title")]
