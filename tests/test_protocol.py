"""The protocol is written once in Python: pycore/explorer/protocol.py names the requests and
answers, pycore/explorer/protocol_types.py gives each its JavaScript type, and web/js/protocol.js
is written from the two (buildtools/javascript/protocol.py), as is docs/protocol.md's table of the
sections' answer keys. These tests check that the committed protocol.js and that table are what
they write, that the types name exactly the protocol's fields, and that the
session's answers hold values of those types."""
import glob
import json
import os
import re

import pytest

from buildtools.javascript import protocol as protocol_js
from pycore.explorer import protocol, protocol_types
from pycore.explorer.panels import sections
from pycore.explorer.session import Session
from protocol_check import check_answer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TYPEDEFS = {name: {prop: (optional, js_type) for prop, optional, js_type, _ in props}
            for name, _, props in protocol_types.TYPEDEFS}


def test_protocol_js_is_written_from_python():
    with open(os.path.join(ROOT, "web", "js", "protocol.js"), encoding="utf-8") as f:
        assert f.read() == protocol_js.module_text(), \
            "web/js/protocol.js is out of date: run python3 -m buildtools.javascript.protocol"


def test_protocol_md_shows_each_sections_keys_as_its_section_says():
    with open(os.path.join(ROOT, protocol_js.DOCS), encoding="utf-8") as f:
        text = f.read()
    assert text == protocol_js.docs_text(text), \
        "docs/protocol.md's table of the sections' keys is out of date: run " \
        "python3 -m buildtools.javascript.protocol"
    assert protocol_js.answer_keys_table() in text


def test_the_request_fields_are_the_protocols():
    fields = {"op"} | {f for op in protocol.REQUESTS.values() for f in op}
    assert set(TYPEDEFS["Request"]) == fields
    text = protocol_js.module_text()
    ops = re.search(r'@property \{("load"[^}]*)\} op', text).group(1)
    assert re.findall(r'"(\w+)"', ops) == list(protocol.REQUESTS)


def test_the_answer_is_its_envelope_and_its_sections_keys():
    assert set(protocol.ANSWER) == set(protocol.ENVELOPE) | section_keys()


def section_keys():
    """The answer keys the registered sections write (pycore/explorer/panels/sections.py)."""
    return {key for section in sections.SECTIONS for key in section.keys}


def components():
    """{answer key: [file, ...]}: the page's components (web/js/page/components.js), by the key each
    is registered under, and the files that register one."""
    found = {}
    folder = os.path.join(ROOT, "web", "js")
    paths = glob.glob(os.path.join(folder, "**", "*.js"), recursive=True)
    for name in sorted(os.path.relpath(p, folder).replace(os.sep, "/") for p in paths):
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
        "shape": ["app.js", "panels/linked.js"]}
    assert found["digit"] == ["digits/panel.js"]


def test_sections_are_named_once_and_build_only_their_keys():
    names = [section.name for section in sections.SECTIONS]
    assert len(names) == len(set(names))
    keys = [key for section in sections.SECTIONS for key in section.keys]
    assert len(keys) == len(set(keys)) and not set(keys) & set(protocol.ENVELOPE)
    for first in ({"op": "load", "fragment": ""},
                  {"op": "digit", "images": [[[0] * 4 + [16] + [0] * 3] * 8]}):
        s = Session()
        assert s.handle(first)["ok"]
        for section in sections.SECTIONS:  # each alone: what it writes beyond the envelope
            part = section.build(s.snapshot())
            written = set(part.answer or ())
            assert written <= set(section.keys), section.name
            if section.name.startswith("heatmap-"):  # draws its heatmap, or hides it
                assert part.heatmaps or section.name in (part.hide or ()), section.name
            else:
                assert not part.heatmaps, section.name


@pytest.mark.parametrize("typedef, names", [
    ("Answer", protocol.ANSWER), ("HeatmapSpec", protocol.HEATMAP),
    ("FineTune", protocol.FINETUNE)])
def test_the_typedefs_name_the_protocols_keys(typedef, names):
    assert set(TYPEDEFS[typedef]) == set(names)


# ---- the values of the answers against their JSDoc types ---------------------------------------

TOKEN = re.compile(r'\s*("[^"]*"|[A-Za-z_][\w]*|\[\]|[{}()<>\[\],:|?*])')


def parse(text):
    """A JSDoc type (the subset protocol_types.py uses) as a tree of tuples."""
    tokens = TOKEN.findall(text)
    assert "".join(tokens) == re.sub(r"\s+", "", text), "unreadable type %r" % text
    at = [0]

    def peek():
        return tokens[at[0]] if at[0] < len(tokens) else None

    def take(expected=None):
        token = tokens[at[0]]
        assert expected is None or token == expected, (text, expected, token)
        at[0] += 1
        return token

    def union():
        options = [postfix()]
        while peek() == "|":
            take()
            options.append(postfix())
        return options[0] if len(options) == 1 else ("union", options)

    def postfix():
        if peek() == "?":
            take()
            return ("nullable", postfix())
        node = primary()
        while peek() == "[]":
            take()
            node = ("array", node)
        return node

    def primary():
        token = take()
        if token == "(":
            node = union()
            take(")")
            return node
        if token == "{":
            fields = {}
            while peek() != "}":
                name = take()
                take(":")
                fields[name] = union()
                if peek() == ",":
                    take()
            take("}")
            return ("record", fields)
        if token == "[":
            items = [union()]
            while peek() == ",":
                take()
                items.append(union())
            take("]")
            return ("tuple", items)
        if token.startswith('"'):
            return ("literal", json.loads(token))
        if token in ("Array", "Object") and peek() == "<":
            take("<")
            args = [union()]
            while peek() == ",":
                take()
                args.append(union())
            take(">")
            return ("array", args[0]) if token == "Array" else ("map", args[-1])
        return ("name", token)

    node = union()
    assert peek() is None, (text, tokens[at[0]:])
    return node


MISSING = object()


def check(value, node, where):
    """Raise AssertionError unless `value` (from JSON) is of the type `node`."""
    kind, arg = node
    if kind == "union":
        errors = []
        for option in arg:
            try:
                return check(value, option, where)
            except AssertionError as err:
                errors.append(str(err))
        raise AssertionError("%s: none of %s" % (where, errors))
    if kind == "nullable":
        if value is not None:
            check(value, arg, where)
        return
    assert value is not MISSING or (kind, arg) == ("name", "undefined"), "%s: missing" % where
    if kind == "literal":
        assert value == arg, "%s: %r is not %r" % (where, value, arg)
    elif kind == "array":
        assert isinstance(value, list), "%s: %r is not an array" % (where, value)
        for i, item in enumerate(value):
            check(item, arg, "%s[%d]" % (where, i))
    elif kind == "tuple":
        assert isinstance(value, list) and len(value) == len(arg), "%s: %r" % (where, value)
        for i, (item, item_type) in enumerate(zip(value, arg)):
            check(item, item_type, "%s[%d]" % (where, i))
    elif kind == "map":
        assert isinstance(value, dict), "%s: %r is not an object" % (where, value)
        for key, item in value.items():
            check(item, arg, "%s.%s" % (where, key))
    elif kind == "record":
        check_fields(value, {k: (False, t) for k, t in arg.items()}, where)
    elif arg == "string":
        assert isinstance(value, str), "%s: %r is not a string" % (where, value)
    elif arg == "number":
        assert isinstance(value, (int, float)) and not isinstance(value, bool), \
            "%s: %r is not a number" % (where, value)
    elif arg == "boolean":
        assert isinstance(value, bool), "%s: %r is not a boolean" % (where, value)
    elif arg == "undefined":
        assert value is MISSING, "%s: %r is not undefined" % (where, value)
    elif arg != "*":
        check_fields(value, {k: (opt, parse(t)) for k, (opt, t) in TYPEDEFS[arg].items()},
                     "%s (%s)" % (where, arg))


def check_fields(value, fields, where):
    assert isinstance(value, dict), "%s: %r is not an object" % (where, value)
    extra = set(value) - set(fields)
    assert not extra, "%s: fields outside its type: %s" % (where, sorted(extra))
    for name, (optional, node) in fields.items():
        if name in value:
            check(value[name], node, "%s.%s" % (where, name))
        elif not optional:
            check(MISSING, node, "%s.%s" % (where, name))


def check_answer_types(answer):
    """`answer` (as JSON carries it) against the Answer typedef; its matrices are the bridge's."""
    check(json.loads(json.dumps(answer)), ("name", "Answer"), "answer")


def test_every_type_is_readable_and_names_known_typedefs():
    known = set(TYPEDEFS) | {"string", "number", "boolean", "undefined", "*", "Float64Array"}
    for name, props in TYPEDEFS.items():
        for prop, (_, js_type) in props.items():
            if js_type == "OPS":
                continue
            names = re.findall(r"\(\'name\', \'(\w+)\'\)", repr(parse(js_type)))
            assert set(names) <= known, (name, prop, js_type)


def test_the_type_check_finds_a_wrong_value():
    good = {"ok": True, "shape": {"mode": "cls", "B": 1, "D": 2, "C": 1, "N1": None}}
    check_answer_types(good)
    for bad in ({"ok": "yes"}, {"ok": True, "shape": {"mode": "cls", "B": "1", "D": 2, "C": 1,
                                                       "N1": None}},
                {"ok": True, "shape": {"mode": "cls", "B": 1, "D": 2, "C": 1}},
                {"ok": True, "link": {"fragment": None, "pending": False, "note": None, "x": 1}},
                {"ok": True, "top_k": {"k": 1, "caption": "", "header": [], "rows": [1]}}):
        with pytest.raises(AssertionError):
            check_answer_types(bad)


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
                    {"op": "option", "name": "mistake", "value": "bias"},
                    {"op": "option", "name": "variant", "value": "gap"},
                    {"op": "option", "name": "sample", "value": 1},
                    {"op": "preset", "name": "random", "seed": 2},
                    {"op": "export", "format": "csv"}, {"op": "equations"}, {"op": "link"},
                    {"op": "fly"},
                    # the sections the requests above leave out
                    {"op": "option", "name": "walk", "value": 3},
                    {"op": "contributions", "b": 0, "c": 1, "select": True},
                    {"op": "export", "format": "json"}, {"op": "export", "format": "npz"},
                    {"op": "preset", "name": "vit-b16", "seed": 0},
                    {"op": "option", "name": "top_k", "value": 3},
                    {"op": "option", "name": "mistake", "value": "softmax_inside"},
                    {"op": "preset", "name": "finetune", "seed": 0},
                    {"op": "label", "index": [0], "text": "2", "commit": True},
                    {"op": "train_set", "name": "optimizer", "value": "adam"},
                    {"op": "train", "n": 3}, {"op": "export", "format": "training"},
                    {"op": "train_reset"},
                    {"op": "digit", "images": [[[0] * 8] * 3 + [[16] * 8] * 2 + [[0] * 8] * 3]},
                    {"op": "option", "name": "walk", "value": 0}):
        answer = s.handle(request)
        check_answer(answer)
        check_answer_types(answer)
