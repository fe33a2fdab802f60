"""The state in the page's URL: ``#state=<encodeURIComponent(JSON.stringify(state))>``.

Python writes the link, so it must write the very bytes the page's JavaScript would:

* JSON text as ``JSON.stringify`` writes it (compact). Python's ``json.dumps`` differs in
  numbers only: JavaScript writes ``2`` (not ``2.0``), ``1e-7`` (not ``1e-07``), ``0.00001``
  (not ``1e-05``), ``1e+21`` but ``100000000000000000000`` for 1e20, and ``0`` for -0;
* percent-encoding as ``encodeURIComponent`` does it.

Reading a link (:func:`decode_fragment`) accepts what any page, or a person, may have written,
in time linear in its length and bounded: a fragment longer than :data:`LINK_MAX` is refused
before it is read, and so is a number spelled with more than :data:`NUMBER_MAX_CHARS`
characters (Python 3.8 turns any digit string into an int, in time quadratic in its length).
"""

import json
import math
import re

import numpy as np

from ..errors import StateError
from ..shared import LINK_MAX
from .as_json import state_from_json, state_to_json
from .cells import CELL_MAX_CHARS

NUMBER_MAX_CHARS = CELL_MAX_CHARS
"""The longest number a link's JSON may spell: no float64 needs more than ~30 characters."""
NESTING_MAX = 32
"""The deepest JSON the page reads (a state, a request, a safetensors header nest 3 to 5 deep).
Python's JSON reader recurses once per level: in the browser, a few thousand levels overflow
WebAssembly's stack and kill the runtime, so deeper text is refused before it is parsed."""
VALUES_MAX = 65536
"""The most values the JSON the page reads may hold (its commas outside strings): a request
holds at most a few thousand (the digits preset's 2,000 held-out digits, two values each), a
link of LINK_MAX characters fewer than 50,000, a safetensors header about six a tensor. Each value
costs Python a call and an object, so a request of a million numbers is refused before it is
parsed, in milliseconds rather than seconds."""
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_STRING_OR_BRACKET = re.compile(_STRING.pattern + r'|[\[\]{}]')

# ---- JSON text, as JavaScript writes it ------------------------------------------------------

def _float_list(values):
    # json.dumps writes each float with repr, at C speed. Only exponents ("1e-07") and
    # whole numbers ("2.0", "-0.0") differ from JavaScript; those few are rewritten.
    text = json.dumps(values, separators=(",", ":"), allow_nan=False)
    if "e" not in text and ".0," not in text and not text.endswith(".0]"):
        return text
    parts = text[1:-1].split(",")
    return "[" + ",".join([js_number(float(p)) if ("e" in p or p.endswith(".0")) else p
                           for p in parts]) + "]"


def js_number(x):
    """Format a finite number as ECMAScript's ``Number.prototype.toString`` does.

    Both languages print the shortest digit string that reads back as the same double;
    only the layout differs (ECMA-262, Number::toString: fixed notation for decimal
    exponents -7 < n <= 21, exponent notation otherwise).

    Parameters
    ----------
    x : int or float
        Finite.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For NaN or infinity (JSON cannot carry them).

    Examples
    --------
    >>> [js_number(v) for v in (2.0, -0.0, 0.1, 1e-7, 1.5e-5, 1e20, 1e21, 123.456)]
    ['2', '0', '0.1', '1e-7', '0.000015', '100000000000000000000', '1e+21', '123.456']
    """
    if isinstance(x, int) and not isinstance(x, bool):
        x = float(x)
    x = float(x)
    if not math.isfinite(x):
        raise ValueError("JSON cannot carry {!r}".format(x))
    if x == 0.0:
        return "0"
    sign = "-" if x < 0 else ""
    text = repr(abs(x))
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # value = 0.<digits> * 10**n
    n = len(whole) + (int(exp) if exp else 0)
    if whole == "0":
        stripped = frac.lstrip("0")
        n = -(len(frac) - len(stripped)) + (int(exp) if exp else 0)
        digits = stripped
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        e_text = ("+" if e >= 0 else "-") + str(abs(e))
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + e_text
    return sign + body


def _dump(value, out):
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, (int, float)):
        out.append(js_number(value) if isinstance(value, float) else str(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, (list, tuple)):
        if value and all(type(v) is float for v in value):
            out.append(_float_list(value))
            return
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _dump(item, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if i:
                out.append(",")
            out.append(json.dumps(str(key), ensure_ascii=False))
            out.append(":")
            _dump(item, out)
        out.append("}")
    else:
        raise TypeError("cannot write {} as JSON".format(type(value).__name__))


def js_json(value):
    """Compact JSON text, byte for byte as ``JSON.stringify(value)`` in JavaScript.

    Handles None, bools, ints, finite floats, strings, lists/tuples and dicts with
    string keys (kept in insertion order, as JavaScript keeps an object's string keys).

    Examples
    --------
    >>> js_json({"W_head": [[0.5, 2.0]], "options": {"mistake": None}})
    '{"W_head":[[0.5,2]],"options":{"mistake":null}}'
    """
    out = []
    _dump(value, out)
    return "".join(out)


# ---- the link ------------------------------------------------------------------------------

URI_COMPONENT_SAFE = "-_.!~*'()"
"""With letters and digits, the characters ``encodeURIComponent`` leaves as they are."""

_ASCII_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                        + URI_COMPONENT_SAFE)
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")


def encode_uri_component(text):
    """Percent-encode ``text`` exactly as JavaScript's ``encodeURIComponent``.

    Letters, digits and ``- _ . ! ~ * ' ( )`` stay; every other character becomes the
    ``%XX`` escapes of its UTF-8 bytes, in upper-case hex.

    Examples
    --------
    >>> encode_uri_component('{"a": "é/1"}')
    '%7B%22a%22%3A%20%22%C3%A9%2F1%22%7D'
    """
    if text.isascii():          # the usual case: a few str.replace passes at C speed
        for ch in sorted(set(text) - _ASCII_SAFE, key=lambda c: c != "%"):   # "%" first
            text = text.replace(ch, "%{:02X}".format(ord(ch)))
        return text
    return "".join(ch if ch in _ASCII_SAFE
                   else "".join("%{:02X}".format(b) for b in ch.encode("utf-8"))
                   for ch in text)


def decode_uri_component(text):
    """The text :func:`encode_uri_component` encoded: ``%XX`` escapes are UTF-8 bytes.

    Not urllib.parse.unquote: importing urllib.parse (and the ipaddress module it pulls in)
    took about a tenth of a second of the page's boot in Pyodide.

    Raises
    ------
    ValueError
        A ``%`` not followed by two hex digits.
    UnicodeError
        Bytes that are not UTF-8 once decoded (or text that cannot be encoded as UTF-8).

    Examples
    --------
    >>> decode_uri_component('%7B%22a%22%3A%20%22%C3%A9%2F1%22%7D')
    '{"a": "é/1"}'
    """
    if "%" not in text:
        return text
    first, *rest = text.split("%")
    out = bytearray(first.encode("utf-8"))
    for part in rest:
        if len(part) < 2 or not _HEX2.match(part):
            raise ValueError("'%' must be followed by two hex digits")
        out.append(int(part[:2], 16))
        out += part[2:].encode("utf-8")
    return out.decode("utf-8")


def encode_fragment(state):
    """``"state=" + encodeURIComponent(JSON.stringify(state_to_json(state)))``.

    The JSON text is byte-identical to JavaScript's (see the module docstring) and
    the percent-encoding leaves exactly ``A-Z a-z 0-9 - _ . ! ~ * ' ( )`` unescaped and
    encodes everything else as UTF-8 bytes ``%XX`` (upper-case hex), as
    ``encodeURIComponent`` does.

    Examples
    --------
    >>> from pycore.explorer.state.explorer_state import ExplorerState
    >>> encode_fragment(ExplorerState([[0.5], [-1.0]], cls=[[2.0, 0.0]]))
    'state=%7B%22W_head%22%3A%5B%5B0.5%5D%2C%5B-1%5D%5D%2C%22cls%22%3A%5B%5B2%2C0%5D%5D%7D'
    """
    return "state=" + encode_uri_component(js_json(state_to_json(state)))


def decode_fragment(fragment):
    """Read a state from a URL fragment.

    Accepts ``"#state=..."``, ``"state=..."`` or the encoded JSON alone; other
    ``&``-separated parameters are ignored.

    Raises
    ------
    StateError
        The only exception: a fragment longer than :data:`LINK_MAX`, a number longer than
        :data:`NUMBER_MAX_CHARS`, no state in the fragment, bad percent-encoding, bytes that
        are not UTF-8, text that is not JSON, or any problem of
        :func:`~pycore.state_json.state_from_json`.

    Examples
    --------
    >>> decode_fragment("#state=%7B%22W_head%22%3A%5B%5B1%5D%5D%2C%22cls%22%3A"
    ...                 "%5B%5B2%5D%5D%7D").W_head
    array([[1.]])
    """
    if not isinstance(fragment, str):
        raise StateError("the link's fragment must be text; got {}".format(
            type(fragment).__name__))
    text = fragment.strip()
    if text.startswith("#"):
        text = text[1:]
    if len(text) > LINK_MAX:
        raise StateError("the link is {:,} characters long, longer than any link this page "
                         "writes ({:,} at most)".format(len(text), LINK_MAX))
    encoded = None
    for part in text.split("&"):
        if part.startswith("state="):
            encoded = part[len("state="):]
            break
    if encoded is None:
        if text.startswith("%7B") or text.startswith("%7b") or text.startswith("{"):
            encoded = text
        else:
            raise StateError("the link has no state= in its fragment")
    bad = _BAD_PERCENT.search(encoded)
    if bad is not None:
        raise StateError("the link's state has bad percent-encoding at character {}: '%' "
                         "must be followed by two hex digits".format(bad.start()))
    try:
        decoded = decode_uri_component(encoded)
    except UnicodeError:
        raise StateError("the link's state is not UTF-8 text once percent-decoded") from None
    try:
        obj = json_loads(decoded, "the link's state")
    except StateError:
        raise
    except ValueError as exc:
        raise StateError("the link's state is not valid JSON ({})".format(
            str(exc)[:120])) from None
    return state_from_json(obj)


def _number(text, convert, what):
    if len(text) > NUMBER_MAX_CHARS:
        raise StateError("{} holds a number {:,} characters long ({}...): no float64 needs more "
                         "than about 30".format(what, len(text), text[:20]))
    return convert(text)


def check_nesting(text, what="the JSON text", limit=NESTING_MAX):
    """Refuse JSON text whose arrays and objects nest deeper than ``limit``, before any
    recursive parser sees it; linear in ``len(text)``, brackets inside strings not counted.

    Parameters
    ----------
    text : str
        JSON text (well-formed or not: only its brackets outside strings are counted).
    what : str, optional
        What the text is, for the message.
    limit : int, optional

    Raises
    ------
    StateError
        Naming the depth reached and the limit.

    Examples
    --------
    >>> check_nesting('{"a": [[1], "]]]]"]}')
    >>> check_nesting('[' * 40 + ']' * 40, "the link's state")
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: the link's state nests arrays or objects 40 deep; the ...
    """
    if text.count("[") + text.count("{") <= limit:
        return
    brackets = "".join(m for m in _STRING_OR_BRACKET.findall(text) if len(m) == 1)
    if not brackets:
        return
    steps = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    depth = int(np.cumsum(np.where((steps == 91) | (steps == 123), 1, -1)).max())
    if depth > limit:
        raise StateError("{} nests arrays or objects {:,} deep; the page reads JSON at most {} "
                         "deep".format(what, depth, limit))


def check_values(text, what="the JSON text", limit=VALUES_MAX):
    """Refuse JSON text holding more than ``limit`` values in its arrays and objects (counted
    by their commas outside strings), before it is parsed; linear in ``len(text)``.

    Raises
    ------
    StateError
        Naming about how many values the text holds and the limit.

    Examples
    --------
    >>> check_values('[1, 2, ",,,,"]', limit=3)
    >>> check_values('[' + '0,' * 9 + '0]', "The request", limit=3)
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: The request holds about 10 values; the page reads JSON ...
    """
    if text.count(",") < limit:
        return
    values = _STRING.sub('""', text).count(",") + 1
    if values > limit:
        raise StateError("{} holds about {:,} values; the page reads JSON of at most {:,}".format(
            what, values, limit))


def json_loads(text, what="the JSON text", values_max=VALUES_MAX):
    """``json.loads(text)`` in time linear in ``len(text)``: numbers longer than
    :data:`NUMBER_MAX_CHARS` are refused as they are met, before Python turns their digits into
    an int (quadratic in their length on Python 3.8, refused past 4,300 digits on 3.11+), and
    text nested deeper than :data:`NESTING_MAX` or holding more than :data:`VALUES_MAX` values
    before it is parsed (:func:`check_nesting`, :func:`check_values`).

    Parameters
    ----------
    text : str
        JSON text.
    what : str, optional
        What the text is, for the message: ``"the link's state"``.
    values_max : int, optional
        The most values the text may hold (:func:`check_values`).

    Returns
    -------
    object
        What ``json.loads`` returns.

    Raises
    ------
    StateError
        For a number longer than :data:`NUMBER_MAX_CHARS` (its message quotes its first 20
        characters), text nested too deeply, or holding more than :data:`VALUES_MAX` values.
    ValueError
        For text that is not JSON (``json.JSONDecodeError``).

    Examples
    --------
    >>> json_loads('[1, 2.5]')
    [1, 2.5]
    >>> json_loads('[' + '9' * 500 + ']', "the link's state")
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: the link's state holds a number 500 characters long ...
    """
    # the cheaper scan first: a long flat text is refused by it
    check_values(text, what, values_max)
    check_nesting(text, what)
    return json.loads(text, parse_int=lambda t: _number(t, int, what),
                      parse_float=lambda t: _number(t, float, what))
