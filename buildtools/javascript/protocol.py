"""web/js/protocol.js: the protocol's JSDoc typedefs, written from Python, never by hand.

pycore/explorer/protocol.py names the requests and the answers; pycore/explorer/protocol_types.py
gives each name its JavaScript type. This writes the two as the typedefs the page's scripts
refer to (``import("./protocol.js").HeatmapSpec``); tests/test_protocol.py checks that the
committed file is what this writes. It also writes docs/protocol.md's table of the keys the
answer's sections write, from the text each Section gives them. After changing either module or
a Section's keys:

    python3 -m buildtools.javascript.protocol        # rewrites web/js/protocol.js and that table

It also writes the panels' element ids into pycore/explorer/shared.py (which the build turns into
js/shared.js without importing NumPy) and docs/interface.md's table of the panels, both from the
sections' declarations. It imports pycore (and so NumPy), which build.py never does: what it
writes is committed, not built.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILE = os.path.join("web", "js", "protocol.js")
DOCS = os.path.join("docs", "protocol.md")
DOCS_BEGIN = "<!-- answer sections: written by python3 -m buildtools.javascript.protocol -->"
DOCS_END = "<!-- /answer sections -->"
SHARED = os.path.join("pycore", "explorer", "shared.py")
SHARED_BEGIN = ("# ---- written by python3 -m buildtools.javascript.protocol from "
                "panels/sections.py ----")
SHARED_END = "# ---- end of what buildtools/javascript/protocol.py writes ----"
PANELS_DOC = os.path.join("docs", "interface.md")
PANELS_BEGIN = "<!-- panels: written by python3 -m buildtools.javascript.protocol -->"
PANELS_END = "<!-- /panels -->"
HEADER = """\
// The conversation between the page and Python, on the JavaScript side. Written by
// `python3 -m buildtools.javascript.protocol` from pycore/explorer/protocol.py (the names) and
// pycore/explorer/protocol_types.py (their types): change those, not this file.
// docs/protocol.md tells the story. (Types only: this file exports nothing.)
"""


def module_text():
    """The text of web/js/protocol.js."""
    from pycore.explorer import protocol, protocol_types
    ops = "|".join('"%s"' % op for op in protocol.REQUESTS)
    out = [HEADER]
    for name, doc, props in protocol_types.TYPEDEFS:
        lines = ["/**"] + ([" * " + doc] if doc else []) + [" * @typedef {Object} " + name]
        for prop, optional, js_type, what in props:
            js_type = ops if js_type == "OPS" else js_type
            lines.append((" * @property {%s} %s %s" % (
                js_type, "[%s]" % prop if optional else prop, what)).rstrip())
        out.append("\n".join(lines + [" */"]) + "\n")
    out.append("export {};\n")
    return "\n".join(out)


def answer_keys_table():
    """The rows of docs/protocol.md's table of the answer sections' keys: one per key, in the
    order the sections are built, each with what its Section (pycore/explorer/panels/sections.py)
    says it holds."""
    from pycore.explorer.panels import sections
    rows = ["| key | holds |", "|---|---|"]
    for section in sections.SECTIONS:
        for key, (_type, held) in section.keys.items():
            rows.append("| `%s` | %s |" % (key, held.replace("|", "\\|")))
    return "\n".join(rows) + "\n"


def shared_block():
    """pycore/explorer/shared.py's panel ids, as Python assignments: each section's panel
    (sections.SECTIONS) and which of them may wait, for the page's scripts (js/shared.js)."""
    from pycore.explorer.panels import sections
    lines = ["PANEL_IDS = {"]
    lines += ['    "%s": "%s",' % (name, panel) for name, panel in sections.PANEL_IDS.items()]
    lines += ["}", '"""Each answer section that is a panel of its own, and that panel\'s '
              'element id\n'
              "(web/index.html), as its Section in pycore/explorer/panels/sections.py declares "
              "it.\"\"\"",
              "", "DEFERRABLE = ("]
    lines += ['    "%s",' % name for name in sections.DEFERRABLE]
    lines += [")", '"""The sections a request may leave for later while their panels are out of '
              "view (its\n``later``): the page brings them up to date when one scrolls into "
              "view\n(web/js/page/offscreen.js).\"\"\""]
    return "\n".join(lines) + "\n"


def panels_table():
    """docs/interface.md's table of the panels: each section's element id, whether it may wait,
    and what its answer key holds (from sections.SECTIONS)."""
    from pycore.explorer.panels import sections
    rows = ["| element id | answer section | waits while out of view | holds |",
            "|---|---|---|---|"]
    for section in sections.SECTIONS:
        if section.panel:
            held = "; ".join(h for _t, h in section.keys.values())
            rows.append("| `#%s` | `%s` | %s | %s |" % (
                section.panel, section.name, "yes" if section.waits else "no",
                held.replace("|", "\\|")))
    return "\n".join(rows) + "\n"


def between(text, begin, end, block):
    """``text`` with what stands between the lines ``begin`` and ``end`` replaced by ``block``."""
    start = text.index(begin) + len(begin)
    return text[:start] + "\n" + block + text[text.index(end):]


def shared_text(text):
    """pycore/explorer/shared.py's `text` with its generated block written anew."""
    return between(text, SHARED_BEGIN, SHARED_END, shared_block())


def panels_doc_text(text):
    """docs/interface.md's `text` with its table of the panels written anew."""
    return between(text, PANELS_BEGIN, PANELS_END, panels_table())


def docs_text(text):
    """docs/protocol.md's `text` with its generated block (between DOCS_BEGIN and DOCS_END)
    written anew."""
    start = text.index(DOCS_BEGIN) + len(DOCS_BEGIN)
    return text[:start] + "\n" + answer_keys_table() + text[text.index(DOCS_END):]


def main():
    sys.path.insert(0, ROOT)
    with open(os.path.join(ROOT, FILE), "w", encoding="utf-8") as f:
        f.write(module_text())
    print("wrote %s" % FILE)
    for name, rewrite, what in ((DOCS, docs_text, "table of the sections' answer keys"),
                                (SHARED, shared_text, "panel ids"),
                                (PANELS_DOC, panels_doc_text, "table of the panels")):
        path = os.path.join(ROOT, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(rewrite(text))
        print("wrote %s's %s" % (name, what))


if __name__ == "__main__":
    main()
