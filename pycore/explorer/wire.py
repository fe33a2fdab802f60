"""Requests and answers as the page sends and reads them: JSON text in, JSON text out, and the
answer to a refused request.

A request's text is parsed in time linear in its length and refused, like any bad request,
when it is not JSON or holds a number longer than any float64 needs; an answer is strict JSON.
pycore/explorer/session.py answers the parsed requests.
"""
import json
import traceback

from .errors import _LONG_INT_BITS, StateError
from .state.explorer_state import shown
from .state.link import json_loads


MESSAGE_MAX = 1000
"""No error message is longer: each quotes at most about QUOTE_CHARS (state.py) of what was
sent, and this holds even for one that would quote more."""


def error_info(err):
    """An answer's ``error``: ``{message, key, index}`` of a StateError (or any error whose
    message is meant for people), the message cut at :data:`MESSAGE_MAX` characters."""
    index = getattr(err, "index", None)
    message, key = str(err), getattr(err, "key", None)
    if len(message) > MESSAGE_MAX:
        message = message[:MESSAGE_MAX - 3] + "..."
    if key is not None and not (isinstance(key, str) and len(key) <= 40):
        key = None   # keys are the explorer's own short names, never text that was sent
    return {"message": message, "key": key,
            "index": list(index) if index is not None else None}


def refuse_long_numbers(request):
    """Refuse a request holding a whole number longer than ~300 digits, anywhere in it, before it
    reaches code that would format it (Python 3.11+ refuses to spell out ints past 4,300 digits;
    3.8 takes time quadratic in their length): no size, index, seed or value needs one.

    Raises
    ------
    StateError
        Naming the field and how long the number is.

    Examples
    --------
    >>> refuse_long_numbers({"op": "resize", "B": 10 ** 500})
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: The request's B holds a whole number of about 501 ...
    """
    for field, value in request.items():
        todo = [value]
        while todo:  # iterative: nested lists as deep as they come cannot exhaust the stack
            v = todo.pop()
            if isinstance(v, (list, tuple)):
                todo.extend(v)
            elif isinstance(v, dict):
                todo.extend(v.values())
            elif isinstance(v, int) and v.bit_length() > _LONG_INT_BITS:
                raise StateError("The request's %s holds %s: far too large." % (field, shown(v)))


def parse_request(text):
    """A request's JSON text as an object, in time linear in its length.

    Raises
    ------
    StateError
        Text that is not JSON (naming where it stops being JSON), nested too deeply, or
        holding a number longer than :data:`~pycore.explorer.state.link.NUMBER_MAX_CHARS`
        characters (Python 3.11+ refuses ints past 4,300 digits; 3.8 takes quadratic time).

    Examples
    --------
    >>> parse_request('{"op": "equations"}')
    {'op': 'equations'}
    >>> parse_request('{"op": "equations"')
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: The request is not JSON: Expecting ',' delimiter: line 1 ...
    """
    if not isinstance(text, str):
        raise StateError("A request must be JSON text; got %s." % shown(text))
    try:
        return json_loads(text, "The request")
    except StateError:
        raise
    except ValueError as exc:  # json.JSONDecodeError: its message names a place, not the text
        raise StateError("The request is not JSON: %s." % str(exc)[:120]) from None


def answer_json(answer):
    """The JSON text of an answer, as the bridge sends it: strict JSON (no NaN or infinity).

    Every section puts what float64 cannot hold as null or as words where it is made, so this
    is a safety net: should a value still be non-finite, it is sent as null (the answer's
    ``ok`` stays true, for the state did change) rather than the request answered as failed
    after changing the state, and the slip is printed for the console.

    Examples
    --------
    >>> answer_json({"ok": True, "value": 1.5})
    '{"ok": true, "value": 1.5}'
    """
    try:
        return json.dumps(answer, allow_nan=False)
    except ValueError:
        traceback.print_exc()
        return json.dumps(_finite(answer), allow_nan=False)


def _finite(value):
    """`value` with every non-finite float (as JSON would hold it) replaced by None."""
    if isinstance(value, float):
        return value if value - value == 0 else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def refused(err):
    """The answer to a refused request: nothing changed."""
    return {"ok": False, "error": error_info(err)}


def fragment_of(request):
    """A load's or reset's link fragment, checked before anything is changed."""
    fragment = request.get("fragment") or ""
    if not isinstance(fragment, str):
        raise StateError("The link's fragment must be text; got %s." % shown(fragment))
    return fragment


def equations_wanted(request):
    """A request's "equations" (an edit's, a paste's, an option's, a digit's, a train's): "later"
    (the page's equations are out of view) or its equations now."""
    return "later" if request.get("equations") == "later" else True
