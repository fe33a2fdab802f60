"""The protocol is written once in Python (pycore/explorer/protocol.py) and declared again in
JSDoc for the page (web/js/protocol.js): the two must name the same requests, fields and keys."""
import os
import re

from pycore.explorer import protocol, sections
from pycore.explorer.session import Session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def typedefs():
    """{typedef name: {property names}} of web/js/protocol.js."""
    with open(os.path.join(ROOT, "web", "js", "protocol.js"), encoding="utf-8") as f:
        text = f.read()
    out = {}
    for block in re.findall(r"/\*\*(.*?)\*/", text, re.S):
        name = re.search(r"@typedef\s+\{[^}]*\}\s+(\w+)", block)
        if name:
            props = re.findall(r"@property\s+\{.*?\}\s+\[?(\w+)", block)
            out[name.group(1)] = set(props)
    return out


def test_the_request_fields_are_the_same_on_both_sides():
    fields = {"op"} | {f for op in protocol.REQUESTS.values() for f in op}
    assert typedefs()["Request"] == fields
    with open(os.path.join(ROOT, "web", "js", "protocol.js"), encoding="utf-8") as f:
        ops = re.search(r'@property \{("load"[^}]*)\} op', f.read()).group(1)
    assert set(re.findall(r'"(\w+)"', ops)) == set(protocol.REQUESTS)


def test_the_answer_keys_are_the_same_on_both_sides():
    assert typedefs()["Answer"] == set(protocol.ENVELOPE)
    assert set(protocol.ANSWER) == set(protocol.ENVELOPE) | section_keys()


def section_keys():
    """The answer keys the registered sections write (pycore/explorer/sections.py)."""
    return {key for section in sections.SECTIONS for key in section.keys}


def components():
    """{answer key: [file, ...]}: the page's components (web/js/components.js), by the key each
    is registered under, and the files that register one."""
    found = {}
    folder = os.path.join(ROOT, "web", "js")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".js"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                for key in re.findall(r'\bcomponent\(\s*"(\w+)"', f.read()):
                    found.setdefault(key, []).append(name)
    return found


def test_every_section_of_the_answer_has_one_component_on_the_page():
    """Each key a section writes is drawn by a component registered under it (the sizes,
    "shape", by two: the editors' and the linked highlights'), and no component waits for a
    key Python never sends."""
    found = components()
    assert set(found) - set(protocol.ANSWER) == set()
    assert section_keys() - set(found) == set()
    assert {key: files for key, files in found.items() if len(files) > 1} == {
        "shape": ["app.js", "linked.js"]}
    assert found["digit"] == ["digits.js"]


def test_sections_are_named_once_and_build_only_their_keys():
    names = [section.name for section in sections.SECTIONS]
    assert len(names) == len(set(names))
    keys = [key for section in sections.SECTIONS for key in section.keys]
    assert len(keys) == len(set(keys)) and not set(keys) & set(protocol.ENVELOPE)
    s = Session()
    s.handle({"op": "load", "fragment": ""})
    for section in sections.SECTIONS:  # each alone: what it writes beyond the envelope
        answer = {"ok": True, "error": None, "heatmaps": {}, "hide": []}
        section.build(sections.Context(s, answer))
        written = set(answer) - {"ok", "error", "heatmaps", "hide", "grids"}
        assert written <= set(section.keys), section.name
        assert bool(answer["heatmaps"]) == section.name.startswith("heatmap-"), section.name


def test_the_heatmap_spec_is_the_same_on_both_sides():
    assert typedefs()["HeatmapSpec"] == set(protocol.HEATMAP)


def test_every_op_has_a_handler_and_every_handler_an_op():
    handlers = {name[3:] for name in dir(Session) if name.startswith("op_")}
    assert handlers == set(protocol.REQUESTS)


def test_a_request_with_a_field_outside_the_protocol_is_refused():
    answer = Session().handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "1",
                               "colour": "red"})
    assert answer["ok"] is False and "colour" in answer["error"]["message"]


def test_answers_to_each_op_keep_to_the_protocol():
    s = Session()
    for request in ({"op": "load", "fragment": ""},
                    {"op": "edit", "key": "cls", "index": [0, 0], "text": "3"},
                    {"op": "edit", "key": "cls", "index": [0, 0], "text": "x", "commit": True},
                    {"op": "paste", "key": "W_head", "index": [0, 0], "text": "1\t2"},
                    {"op": "resize", "B": 3, "D": 4, "C": 3},
                    {"op": "mode", "mode": "encoder"},
                    {"op": "option", "name": "pitfall", "value": "bias"},
                    {"op": "option", "name": "variant", "value": "gap"},
                    {"op": "option", "name": "sample", "value": 1},
                    {"op": "preset", "name": "random", "seed": 2},
                    {"op": "export", "format": "csv"}, {"op": "steps"}, {"op": "link"},
                    {"op": "fly"}):
        protocol.check_answer(s.handle(request))
