"""What a person types or pastes into the matrix grids, and how numbers are shown.

* :func:`parse_cell` -- one cell's text to a finite float, or a short specific message;
* :func:`parse_block` -- a pasted block (spreadsheet TSV, CSV, whitespace, or a NumPy/
  Python literal) to rows of floats;
* :func:`format_number` -- a float for display.

Errors are :class:`~pycore.explorer.errors.StateError`.
"""

import math
import re

from ..errors import StateError

_INF = float("inf")
# Written so that a regular-expression engine never backtracks more than once per character:
# the digits before the point are matched by one group only (the point itself separates them
# from the fraction), so refusing "1111...x" takes linear time, not quadratic.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]*,[0-9]+\Z")
_MANTISSA_SO_FAR = re.compile(r"[0-9]*\.?[0-9]*\Z")
_MINUS_SIGNS = ("\u2212",)            # MINUS SIGN, as typed on some keyboards and in prose
CELL_MAX_CHARS = 400
"""Longer cell texts are refused before any parsing (no float64 needs more than ~30 digits;
this leaves room for spaces and long zero-padded fractions)."""


def _shown(text, limit=24):
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _normalized(text):
    s = text.strip()
    for sign in _MINUS_SIGNS:
        s = s.replace(sign, "-")
    return s


def could_become_number(text):
    """Whether ``text`` is not a number yet but could become one as the person types on:
    ``""``, ``"-"``, ``"."``, ``"1e"``, ``"-2.5e-"``. The page does not call such a text an
    error until the cell is left.

    Examples
    --------
    >>> [could_become_number(t) for t in ("-", ".", "1e", "1e-", "", "3", "abc", "1e999")]
    [True, True, True, True, True, False, False, False]
    """
    s = _normalized(text) if isinstance(text, str) else None
    if s is None or len(s) > CELL_MAX_CHARS or _NUMBER.match(s):
        return False
    if s[:1] in "+-":
        s = s[1:]
    mantissa, e, exponent = s.lower().partition("e")
    if not _MANTISSA_SO_FAR.match(mantissa):
        return False
    if not e:
        return True  # "", ".", "12." and the like
    return any(c.isdigit() for c in mantissa) and exponent in ("", "+", "-")


def _cell_problem(text):
    """Return (value, None) for a good cell, or (None, message)."""
    if len(text) > CELL_MAX_CHARS:
        return None, "{} is {:,} characters long: too long for a number".format(
            _shown(text.strip()), len(text))
    s = _normalized(text)
    if not s:
        return None, "empty: type a number"
    if _NUMBER.match(s):
        value = float(s)
        if math.isinf(value):
            return None, "{} is too large (float64 ends near 1.8e308)".format(_shown(s))
        return value, None
    word = s.lstrip("+-").lower()
    if word == "nan":
        return None, "NaN is not allowed: type a finite number"
    if word in ("inf", "infinity", "\u221e"):
        return None, "infinity is not allowed: type a finite number"
    if _DECIMAL_COMMA.match(s):
        return None, "use a dot for decimals: {} not {}".format(s.replace(",", "."), s)
    if could_become_number(s):
        return None, "{} is not a number yet".format(_shown(s))
    if re.match(r"[+-]{2,}", s):
        return None, "{} has more than one sign: write one, e.g. -3".format(_shown(s))
    if len(s.split()) > 1:
        return None, "{} holds several values: one number per cell".format(_shown(s))
    return None, "{} is not a number".format(_shown(s))


def parse_cell(text, where=None):
    """Parse what a person typed into one cell.

    Accepts an optional sign (ASCII ``-``/``+`` or the Unicode minus U+2212), digits
    with an optional decimal point, and an optional exponent; surrounding spaces are
    ignored. A Python int or float (not bool) is accepted as it is, if finite.

    Parameters
    ----------
    text : str
        The cell's text, e.g. ``"-2.5"``, ``" 3 "``, ``"1e-3"``, ``"\u22122"``.
    where : str, optional
        Where the cell is, e.g. ``"cls[0,2]"``; it starts the error message.

    Returns
    -------
    float
        A finite number.

    Raises
    ------
    StateError
        With a short message: empty text, not a number (``abc``), NaN, infinity, too
        large (``1e400``), a decimal comma (``1,5``), two signs (``--3``), several
        values in one cell.

    Examples
    --------
    >>> parse_cell(" 3 "), parse_cell("\u22122.5"), parse_cell("1e-3")
    (3.0, -2.5, 0.001)
    >>> parse_cell("1,5", where="cls[0,2]")
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: cls[0,2]: use a dot for decimals: 1.5 not 1,5
    """
    prefix = "{}: ".format(where) if where else ""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise StateError("{}expected the text of a number, got {}".format(
            prefix, type(text).__name__))
    if not isinstance(text, str):
        try:
            value = float(text)
        except OverflowError:
            value = math.inf
        if math.isfinite(value):
            return value
        raise StateError("{}{} is not a finite number".format(prefix, _shown(repr(text))))
    value, problem = _cell_problem(text)
    if problem is not None:
        raise StateError(prefix + problem)
    return value


def format_number(x, decimals=4, trim=False):
    """Format a number for display.

    Fixed-point with ``decimals`` digits (``0.2000``), so columns of a table line up;
    ASCII minus; never ``-0.0000`` (a value that rounds to zero shows as ``0.0000``);
    magnitudes of 1e6 and more in exponent form (``1.2346e+06``); NaN and infinities as
    ``NaN``, ``inf``, ``-inf``. With ``trim=True`` trailing zeros and a bare dot are
    removed (``2.0000`` -> ``2``, ``0.2500`` -> ``0.25``), which suits editable cells.
    Everything this returns that is finite is accepted back by :func:`parse_cell`.

    Parameters
    ----------
    x : float
        Any real number (Python or NumPy scalar).
    decimals : int, optional
    trim : bool, optional

    Returns
    -------
    str

    Examples
    --------
    >>> format_number(0.2), format_number(-1e-9), format_number(1234567.0)
    ('0.2000', '0.0000', '1.2346e+06')
    >>> format_number(2.0, trim=True), format_number(-0.25, trim=True)
    ('2', '-0.25')
    """
    x = float(x)
    decimals = int(decimals) if decimals > 0 else 0
    # Tables and equations format dozens of numbers per edit, in a browser's Python that is ~10x
    # slower than CPython: the common case comes first, with %-formatting (the fastest).
    if not -1e6 < x < 1e6:  # also NaN and the infinities, for which every comparison fails
        if x != x:
            return "NaN"
        if x in (_INF, -_INF):
            return "inf" if x > 0 else "-inf"
        mantissa, exponent = ("%.*e" % (decimals, x)).split("e")
        if trim and "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return mantissa + "e" + exponent
    text = "%.*f" % (decimals, x)
    if text[0] == "-" and not text.strip("-0."):
        text = text[1:]
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
        if text in ("", "-"):
            text = "0"
    return text


# ---- pasted blocks ------------------------------------------------------------------

_ARRAY_CALL = re.compile(r"(?:(?:np|numpy)\s*\.\s*)?(?:array|asarray)\s*\((.*)\)\s*;?\s*\Z",
                         re.S)
_DTYPE_ARG = re.compile(r",\s*dtype\s*=\s*[\w.'\"]+\s*\Z")


def _split_literal_row(content, row):
    content = content.strip()
    if not content:
        return []
    if "," in content:
        cells = [c.strip() for c in content.split(",")]
        if len(cells) > 1 and cells[-1] == "":       # a trailing comma, as Python allows
            cells = cells[:-1]
        return cells
    return content.split()


_BRACKET = re.compile(r"[\[\]]")


def _literal_rows(s, fit=None):
    """Rows of cell texts from ``[[1, 2], [3, 4]]`` or ``[1, 2, 3]`` (NumPy str() too)."""
    m = _ARRAY_CALL.match(s)
    if m:
        s = _DTYPE_ARG.sub("", m.group(1).strip()).strip()
    if not (s.startswith("[") and s.endswith("]")):
        raise StateError("the block looks like a list but does not start with [ and end "
                         "with ]")
    inner = s[1:-1]
    if "[" not in inner and "]" not in inner:
        rows = [_split_literal_row(inner, 0)]
        if fit is not None:
            _check_fit(1, len(rows[0]), fit)
        return rows
    if fit is not None:
        first = inner.find("]")
        _check_fit(inner.count("["), len(_split_literal_row(inner[inner.find("[") + 1:first], 0))
                   if 0 <= inner.find("[") < first else 0, fit)
    rows, start, between, end = [], None, [], 0
    for m in _BRACKET.finditer(inner):  # only the brackets are visited, not every character
        i = m.start()
        if m.group() == "[":
            if start is not None:
                raise StateError("the block is deeper than rows of numbers: only 2-D blocks "
                                 "can be pasted")
            between.append(inner[end:i])
            start = i + 1
        else:
            if start is None:
                raise StateError("the block has an unmatched ]")
            rows.append(_split_literal_row(inner[start:i], len(rows)))
            start, end = None, i + 1
    if start is not None:
        raise StateError("the block has an unmatched [")
    between.append(inner[end:])
    stray = "".join(between).replace(",", " ").split()
    if stray:
        raise StateError("the block mixes rows and loose values ({}): write every row in "
                         "[ ]".format(_shown(" ".join(stray))))
    return rows


def _delimiter(body):
    for delimiter in ("\t", ";", ","):
        if delimiter in body:
            return delimiter
    return None  # numbers separated by spaces


def _table_rows(text, fit=None):
    if fit is not None:  # a block too tall is refused before it is split into lines
        body = text.strip()
        rows = body.count("\n") + 1
        if rows > fit[0]:
            raise BlockTooLarge((rows, len(body[:body.find("\n")].split(_delimiter(body)))), fit)
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    last = next((i for i in range(len(lines) - 1, first - 1, -1) if lines[i].strip()), first)
    lines = lines[first:last + 1]  # blank lines around the block dropped in one slice
    delimiter = _delimiter("\n".join(lines))
    if fit is not None and lines:
        _check_fit(len(lines), len(lines[0].split(delimiter)), fit)
    rows = []
    for r, line in enumerate(lines):
        if not line.strip():
            raise StateError("row {} of the pasted block is empty".format(r + 1), index=(r,))
        if delimiter is None:
            cells = line.split()
        else:
            cells = [c.strip() for c in line.split(delimiter)]
            cells = [c[1:-1] if len(c) >= 2 and c[0] == c[-1] == '"' else c for c in cells]
        rows.append(cells)
    return rows


class BlockTooLarge(StateError):
    """A pasted block larger than where it goes, found before its cells were parsed:
    ``shape`` is (rows, columns of its first row)."""

    def __init__(self, shape, fit):
        StateError.__init__(self, "the pasted block is {:,} \u00d7 {:,} but only {} \u00d7 {} "
                                  "cells fit".format(shape[0], shape[1], fit[0], fit[1]))
        self.shape = shape


def _check_fit(rows, cols, fit):
    """Refuse a block of ``rows`` rows whose first row has ``cols`` cells before any cell is
    parsed, when it is larger than ``fit`` (rows, columns): a 10 MB block pasted into a small
    grid is refused at once."""
    if rows > fit[0] or cols > fit[1]:
        raise BlockTooLarge((rows, cols), fit)


def parse_block(text, fit=None):
    """Parse a pasted block of numbers into rows.

    Understands, in this order:

    * a NumPy or Python literal: ``[[1, 2], [3, 4]]``, ``np.array([[1,2],[3,4]])``,
      ``array([[1., 2.], [3., 4.]])``, NumPy's printed form ``[[1. 2.]\\n [3. 4.]]``,
      or a single row ``[1, 2, 3]``;
    * a spreadsheet copy (tab-separated), CSV (``;`` or ``,``), or numbers separated by
      spaces, one row per line.

    Leading and trailing blank lines are ignored; each cell goes through
    :func:`parse_cell`.

    Parameters
    ----------
    text : str
    fit : (int, int), optional
        The most rows and columns that fit where the block goes: a block with more rows, or a
        first row wider, is refused before its cells are parsed (:class:`BlockTooLarge`).

    Returns
    -------
    list of list of float
        Rectangular: every row has the same length.

    Raises
    ------
    StateError
        For an empty block; a ragged block (naming the row, its count and the expected
        count); a bad cell (naming its 1-based row and column, with ``index`` the
        0-based (row, column) in the block); malformed brackets.

    Examples
    --------
    >>> parse_block("1\\t2\\n3\\t4\\n")
    [[1.0, 2.0], [3.0, 4.0]]
    >>> parse_block("np.array([[1, 2], [3, 4]])")
    [[1.0, 2.0], [3.0, 4.0]]
    >>> parse_block("1 2\\n3")
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: row 2 has 1 value but row 1 has 2: a pasted block must be ...
    """
    if not isinstance(text, str):
        raise StateError("expected pasted text, got {}".format(type(text).__name__))
    s = text.strip()
    if not s:
        raise StateError("nothing to paste: the block is empty")
    if s.startswith("[") or _ARRAY_CALL.match(s):
        rows = _literal_rows(s, fit)
    else:
        rows = _table_rows(text, fit)
    if not rows or not rows[0]:
        raise StateError("nothing to paste: the block has no numbers")
    expected = len(rows[0])
    for r, row in enumerate(rows):
        if len(row) != expected:
            raise StateError("row {} has {} value{} but row 1 has {}: a pasted block must be "
                             "rectangular".format(r + 1, len(row), "" if len(row) == 1 else "s",
                                                  expected), index=(r,))
    out = []
    for r, row in enumerate(rows):
        values = []
        for c, cell in enumerate(row):
            value, problem = _cell_problem(cell)
            if problem is not None:
                raise StateError("row {}, column {}: {}".format(r + 1, c + 1, problem),
                                 index=(r, c))
            values.append(value)
        out.append(values)
    return out
