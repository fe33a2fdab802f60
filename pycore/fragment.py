"""The state in the page's URL: ``#state=<encodeURIComponent(JSON.stringify(state))>``."""

import json
import re
from urllib.parse import quote, unquote

from .errors import StateError
from .json_text import js_json
from .state_json import state_from_json, state_to_json

URI_COMPONENT_SAFE = "-_.!~*'()"
"""With letters and digits, the characters ``encodeURIComponent`` leaves as they are."""

_ASCII_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                        + URI_COMPONENT_SAFE)
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


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
    return quote(text, safe=URI_COMPONENT_SAFE)


def encode_fragment(state):
    """``"state=" + encodeURIComponent(JSON.stringify(state_to_json(state)))``.

    The JSON text is byte-identical to JavaScript's (see :mod:`pycore.json_text`) and
    the percent-encoding leaves exactly ``A-Z a-z 0-9 - _ . ! ~ * ' ( )`` unescaped and
    encodes everything else as UTF-8 bytes ``%XX`` (upper-case hex), as
    ``encodeURIComponent`` does.

    Examples
    --------
    >>> from pycore.state_object import ExplorerState
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
        The only exception: no state in the fragment, bad percent-encoding, bytes that
        are not UTF-8, text that is not JSON, or any problem of
        :func:`~pycore.state_json.state_from_json`.

    Examples
    --------
    >>> decode_fragment("#state=%7B%22W_head%22%3A%5B%5B1%5D%5D%2C%22cls%22%3A%5B%5B2%5D%5D%7D").W_head
    array([[1.]])
    """
    if not isinstance(fragment, str):
        raise StateError("the link's fragment must be text; got {}".format(
            type(fragment).__name__))
    text = fragment.strip()
    if text.startswith("#"):
        text = text[1:]
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
        decoded = unquote(encoded, errors="strict")
    except UnicodeDecodeError:
        raise StateError("the link's state is not UTF-8 text once percent-decoded") from None
    try:
        obj = json.loads(decoded)
    except RecursionError:
        raise StateError("the link's state is not usable JSON: nested too deeply") from None
    except ValueError as exc:
        raise StateError("the link's state is not valid JSON ({})".format(
            str(exc)[:120])) from None
    return state_from_json(obj)
