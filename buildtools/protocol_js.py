"""web/js/protocol.js: the protocol's JSDoc typedefs, written from Python, never by hand.

pycore/explorer/protocol.py names the requests and the answers; pycore/explorer/protocol_types.py
gives each name its JavaScript type. This writes the two as the typedefs the page's scripts
refer to (``import("./protocol.js").HeatmapSpec``); tests/test_protocol.py checks that the
committed file is what this writes. It also writes docs/protocol.md's table of the keys the
answer's sections write, from the text each Section gives them. After changing either module or
a Section's keys:

    python3 -m buildtools.protocol_js        # rewrites web/js/protocol.js and that table

It imports pycore (and so NumPy), which build.py never does: the file is committed, not built.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILE = os.path.join("web", "js", "protocol.js")
DOCS = os.path.join("docs", "protocol.md")
DOCS_BEGIN = "<!-- answer sections: written by python3 -m buildtools.protocol_js -->"
DOCS_END = "<!-- /answer sections -->"
HEADER = """\
// The conversation between the page and Python, on the JavaScript side. Written by
// `python3 -m buildtools.protocol_js` from pycore/explorer/protocol.py (the names) and
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
    order the sections are built, each with what its Section (pycore/explorer/sections.py) says
    it holds."""
    from pycore.explorer import sections
    rows = ["| key | holds |", "|---|---|"]
    for section in sections.SECTIONS:
        for key, (_type, held) in section.keys.items():
            rows.append("| `%s` | %s |" % (key, held.replace("|", "\\|")))
    return "\n".join(rows) + "\n"


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
    path = os.path.join(ROOT, DOCS)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(docs_text(text))
    print("wrote %s's table of the sections' answer keys" % DOCS)


if __name__ == "__main__":
    main()
