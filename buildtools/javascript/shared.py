"""js/shared.js: the values and helpers pycore/explorer/shared.py gives the page, as an ES module.

The site's scripts import it (``import { LINK_MAX } from "./shared.js"``); it is written by
every build and never kept under web/, so the page cannot hold a value Python has changed.
shared.py imports nothing: it is read here without importing pycore (and so NumPy), its
constants by running it alone, its functions by translating their one ``return`` expression,
which may use names, numbers, ``+ - * // %`` and a tuple (an array in JavaScript).

Examples
--------
>>> print(to_js_function("def row(b, t, tokens):\\n    return b * tokens + t\\n"))
export function row(b, t, tokens) {
  return b * tokens + t;
}
>>> print(to_js_function("def pos(row, n):\\n    return row // n, row % n\\n"))
export function pos(row, n) {
  return [Math.floor(row / n), row % n];
}
"""
import ast
import json
import os
import runpy

from ..errors import BuildError

SOURCE = os.path.join("pycore", "explorer", "shared.py")
FILE_NAME = "js/shared.js"
HEADER = ("// Written by build.py from pycore/explorer/shared.py "
          "(buildtools/javascript/shared.py): change the values there.\n")
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Mod: "%"}


def _camel(name):
    """encoder_row -> encoderRow: the page's names for functions."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _precedence(node):
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.FloorDiv):
        return 1 if isinstance(node.op, (ast.Add, ast.Sub)) else 2
    return 3  # a name, a number, Math.floor(...), an array


def _expr(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return repr(node.value)
    if isinstance(node, ast.Tuple):
        return "[" + ", ".join(_expr(e) for e in node.elts) + "]"
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.FloorDiv):
            return "Math.floor(%s / %s)" % (_operand(node.left, 2), _operand(node.right, 3))
        if type(node.op) in _OPS:
            own = _precedence(node)
            return "%s %s %s" % (_operand(node.left, own), _OPS[type(node.op)],
                                 _operand(node.right, own + 1))
    raise BuildError("pycore/explorer/shared.py: %s cannot be written in JavaScript here"
                     % ast.dump(node), "use names, numbers, + - * // % and tuples only")


def _operand(node, least):
    """`node` as an operand that binds at least as tightly as `least` (else in parentheses)."""
    text = _expr(node)
    return text if _precedence(node) >= least else "(%s)" % text


def to_js_function(source):
    """The JavaScript of the one function in `source`, whose body is a docstring and a return."""
    fn = ast.parse(source).body[0]
    body = [s for s in fn.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not isinstance(fn, ast.FunctionDef) or len(body) != 1 or \
            not isinstance(body[0], ast.Return):
        raise BuildError("pycore/explorer/shared.py: %s is not a function of one return"
                         % getattr(fn, "name", "?"), "keep its functions to one expression")
    args = ", ".join(a.arg for a in fn.args.args)
    return "export function %s(%s) {\n  return %s;\n}" % (_camel(fn.name), args,
                                                         _expr(body[0].value))


def _doc(text):
    lines = " ".join(text.split())
    return "/** %s */\n" % lines.replace("*/", "* /")


def module_text(root):
    """The text of js/shared.js for the checkout at `root`."""
    path = os.path.join(root, SOURCE)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree)):
        raise BuildError("pycore/explorer/shared.py imports a module", "keep it import-free: "
                         "the build reads it without NumPy")
    values = runpy.run_path(path)
    out = [HEADER]
    body = tree.body
    for i, node in enumerate(body):
        following = body[i + 1] if i + 1 < len(body) else None
        doc = (following.value.value if isinstance(following, ast.Expr)
               and isinstance(following.value, ast.Constant)
               and isinstance(following.value.value, str) else None)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) \
                and not node.targets[0].id.startswith("_"):
            name = node.targets[0].id
            value = json.dumps(values[name], ensure_ascii=False)
            if isinstance(values[name], (dict, list, tuple)):
                value = "Object.freeze(%s)" % value
            out.append("\n" + (_doc(doc) if doc else "") +
                       "export const %s = %s;\n" % (name, value))
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            fn_doc = ast.get_docstring(node)
            out.append("\n" + (_doc(fn_doc) if fn_doc else "") +
                       to_js_function(ast.get_source_segment(source, node)) + "\n")
    return "".join(out)


def write(root, site):
    """Write js/shared.js into the site folder `site`."""
    text = module_text(root)
    with open(os.path.join(site, *FILE_NAME.split("/")), "w", encoding="utf-8") as f:
        f.write(text)
    return text
