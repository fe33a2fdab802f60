"""pycore's import graph, read from the source with ``ast``, and the layers it must respect.

Every ``import`` and ``from ... import`` counts, at module level or inside a function (a
function-level import is still a dependency, only a later one); relative imports are resolved
against the importing file's package. ``from . import panels`` is an edge to
``pycore.explorer.panels.head``; ``from .state import shown`` an edge to ``pycore.explorer.state.explorer_state``.
The parent packages Python initializes on the way (``pycore``, ``pycore.explorer``) are not
edges: a module depends on what it names.

:data:`LAYERS` lists pycore's modules bottom up. A module may import modules of its own layer
or of a lower one, never of a higher one, and the graph has no cycle (tests/test_pycore_layers.py
checks both; docs/architecture.md, "Layers", shows the output of this file)::

    python3 tests/import_graph.py                # the layers, then each module and its imports
    python3 tests/import_graph.py --write-docs   # the same into docs/architecture.md
"""

import ast
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pycore"

# (layer, what it is, its modules), bottom up. Names are relative to ``pycore.`` ("" is pycore).
LAYERS = (
    ("math", "the head, its loss, gradients and training, the tiny ViT; NumPy and the standard "
             "library only (import pycore loads this layer alone)",
     ("", "vit", "vit.checks", "vit.scalars", "vit.softmax", "vit.head", "vit.trace",
      "vit.readout", "vit.mistakes", "vit.variants", "vit.loss", "vit.backward",
      "vit.optimizers", "vit.training", "vit.tiny", "vit.tiny.layers", "vit.tiny.params",
      "vit.tiny.model")),
    ("state", "the explorer's state and every check on the way into it",
     ("explorer.state", "explorer.comparisons", "explorer.model", "explorer.digits",
      "explorer.finetune", "explorer.export", "explorer.panels", "explorer.errors", "explorer.shared", "explorer.state.cells", "explorer.comparisons.registry",
      "explorer.digits.images", "explorer.state.recipes", "explorer.state.finetuning", "explorer.state.explorer_state")),
    ("state io", "ways to make, change, save and load a state, and to train on it",
     ("explorer.state.presets", "explorer.state.editing", "explorer.state.as_json", "explorer.state.link",
      "explorer.state.link_answer", "explorer.wire",
      "explorer.export.files", "explorer.model.file_parts", "explorer.model.npy_npz",
      "explorer.model.safetensors_file", "explorer.model.file",
      "explorer.model.transfer", "explorer.digits.mode", "explorer.finetune.digits",
      "explorer.finetune.memory", "explorer.export.memory", "explorer.finetune.run",
      "explorer.finetune.code", "explorer")),
    ("trace", "the state's trace, kept current edit by edit, and what is read off it",
     ("explorer.panels.readouts", "explorer.panels.colour_range", "explorer.computed")),
    ("answers", "what each panel shows, and the answer's sections that hold it",
     ("explorer.model.class_names", "explorer.panels.heatmap", "explorer.panels.tex", "explorer.panels.head",
      "explorer.comparisons.panel", "explorer.panels.walkthrough", "explorer.finetune.panel",
      "explorer.finetune.section", "explorer.panels.snapshot", "explorer.panels.sections")),
    ("requests", "the answer to each request of the page, and the self-check it can ask for",
     ("explorer.protocol", "explorer.protocol_types", "explorer.session", "selfcheck")),
)


def module_name(path):
    """``pycore/explorer/state/explorer_state.py`` -> ``pycore.explorer.state.explorer_state``; a package's __init__ is the
    package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules():
    """Every module of pycore, by dotted name, with its file."""
    return dict((module_name(p), p) for p in sorted(PACKAGE.rglob("*.py")))


def imports_of(path, known):
    """The pycore modules (names in ``known``) that the file at ``path`` imports, anywhere in
    it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in known:  # import a.b.c names a.b.c
                    target = target.rpartition(".")[0]
                if target:
                    found.add(target)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            submodules = [source + "." + a.name for a in node.names
                          if source + "." + a.name in known]
            found.update(submodules)
            if source in known and len(submodules) < len(node.names):
                found.add(source)  # a name defined in the module itself
    found.discard(name)
    return found


def graph():
    """``{module: sorted list of the pycore modules it imports}`` for every pycore module."""
    known = modules()
    return dict((name, sorted(imports_of(path, known))) for name, path in known.items())


def cycles(edges):
    """Each import cycle once, as a list of modules whose last imports the first.

    The strongly connected components of more than one module (Tarjan's algorithm), each
    shown as one cycle through it.
    """
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(set(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [_cycle_in(edges, component) for component in components]


def _cycle_in(edges, component):
    """One cycle through the first (sorted) module of a strongly connected component: a
    breadth-first search back to it inside the component."""
    start = min(component)
    parents, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in edges.get(v, ()):
                if w == start:
                    path = [v]
                    while parents[path[-1]] is not None:
                        path.append(parents[path[-1]])
                    return path[::-1]
                if w in component and w not in parents:
                    parents[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(component)


def layer_of():
    """``{module: (layer number, layer name)}`` from :data:`LAYERS`."""
    out = {}
    for number, (layer, _, names, ) in enumerate(LAYERS):
        for name in names:
            out["pycore" + ("." + name if name else "")] = (number, layer)
    return out


def upward_imports(edges):
    """The imports that go up the layers: (importer, its layer, imported, its layer)."""
    layers = layer_of()
    bad = []
    for a in sorted(edges):
        for b in edges[a]:
            if a in layers and b in layers and layers[b][0] > layers[a][0]:
                bad.append((a, layers[a][1], b, layers[b][1]))
    return bad


def _short(name):
    return name[len("pycore."):] if name.startswith("pycore.") else name


WIDTH = 96


def layers_text():
    """The layers, bottom up, as docs/architecture.md shows them."""
    lines = []
    for number, (layer, what, names) in enumerate(LAYERS):
        lines += textwrap.wrap("%d %s: %s" % (number, layer, what), WIDTH,
                               subsequent_indent="  ")
        lines += textwrap.wrap(", ".join(_short("pycore" + ("." + n if n else ""))
                                         for n in names), WIDTH,
                               initial_indent="    ", subsequent_indent="    ")
    return "\n".join(lines)


def graph_text(edges=None):
    """Each module (without the ``pycore.`` prefix) and what it imports, one per line."""
    edges = graph() if edges is None else edges
    width = max(len(_short(m)) for m in edges)
    lines = []
    for m in sorted(edges):
        head = "%-*s -> " % (width, _short(m))
        lines += textwrap.wrap(", ".join(_short(t) for t in edges[m]) or "-", WIDTH,
                               initial_indent=head, subsequent_indent=" " * len(head))
    return "\n".join(lines)


DOCS = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- layers: written by python3 tests/import_graph.py --write-docs -->"
END = "<!-- /layers -->"


def docs_block(edges=None):
    """What docs/architecture.md holds between :data:`BEGIN` and :data:`END`."""
    return "\n".join([BEGIN, "```", layers_text(), "```", "", "What each module imports:", "",
                      "```", graph_text(edges), "```", END])


def docs_block_now(text=None):
    """The block docs/architecture.md holds now (None when its markers are missing)."""
    text = DOCS.read_text(encoding="utf-8") if text is None else text
    start, end = text.find(BEGIN), text.find(END)
    return None if start < 0 or end < start else text[start:end + len(END)]


def write_docs():
    text = DOCS.read_text(encoding="utf-8")
    old = docs_block_now(text)
    if old is None:
        raise SystemExit("docs/architecture.md has no %s ... %s block" % (BEGIN, END))
    DOCS.write_text(text.replace(old, docs_block()), encoding="utf-8")


def main(argv):
    edges = graph()
    if "--write-docs" in argv:
        write_docs()
    else:
        print(layers_text())
        print()
        print(graph_text(edges))
    problems = ["cycle: " + " -> ".join(c + [c[0]]) for c in cycles(edges)]
    problems += ["%s (%s) imports %s (%s), a higher layer" % b for b in upward_imports(edges)]
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
