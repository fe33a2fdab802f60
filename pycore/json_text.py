"""JSON text exactly as JavaScript's ``JSON.stringify`` writes it (compact).

The page puts ``encodeURIComponent(JSON.stringify(state))`` in the URL; writing the
same bytes from Python means a link made by either side is identical. The differences
from Python's ``json.dumps`` are in numbers: JavaScript writes ``2`` (not ``2.0``),
``1e-7`` (not ``1e-07``), ``0.00001`` (not ``1e-05``), ``1e+21`` but
``100000000000000000000`` for 1e20, and ``0`` for -0.
"""

import json
import math



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
    >>> js_json({"W_head": [[0.5, 2.0]], "options": {"pitfall": None}})
    '{"W_head":[[0.5,2]],"options":{"pitfall":null}}'
    """
    out = []
    _dump(value, out)
    return "".join(out)
