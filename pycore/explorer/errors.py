"""The one error type of the explorer-state layer, and how its messages quote what they refuse.

Everything that turns user input (typed cells, pasted blocks, JSON, URL fragments,
resizes) into an :class:`~pycore.explorer.state.explorer_state.ExplorerState` raises
:class:`StateError` and nothing else, so the page needs a single ``except`` to show a message.
"""

import numpy as np


class StateError(ValueError):
    """A user-facing problem with the explorer state.

    Parameters
    ----------
    message : str
        The full, human-readable message; ``str(err)`` returns it unchanged.
    key : str or None
        What the problem is about: ``"W_head"``, ``"cls"``, ``"encoder_output"``,
        ``"options"``, a dimension name (``"B"``, ``"N1"``, ``"D"``, ``"C"``), or None.
    index : tuple of int or None
        The 0-based index of the offending cell, when there is one.

    Examples
    --------
    >>> err = StateError("cls[0,2]: 'abc' is not a number", key="cls", index=(0, 2))
    >>> str(err), err.key, err.index
    ("cls[0,2]: 'abc' is not a number", 'cls', (0, 2))
    >>> isinstance(err, ValueError)
    True
    """

    def __init__(self, message, key=None, index=None):
        ValueError.__init__(self, message)
        self.message = str(message)
        self.key = key
        self.index = None if index is None else tuple(int(i) for i in index)

    def __str__(self):
        return self.message


_LONG_INT_BITS = 1000  # about 300 digits: more than any size, index or float64 needs


def shown(value, limit=20):
    """How a message quotes a value it refuses: short whatever it is (a long text is cut),
    with JSON's words (null, true, a list, an object), as people meet them in links.

    Examples
    --------
    >>> shown(None), shown(True), shown(2.5), shown("abc"), shown([1]), shown({})
    ('null', 'true', '2.5', "text 'abc'", 'a list', 'an object')
    >>> shown(10 ** 5000)
    'a whole number of about 5,001 digits'
    """
    if value is None:
        return "null"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return "text {!r}".format(value if len(value) <= limit else value[:limit] + "...")
    if isinstance(value, (int, float, np.integer, np.floating)):
        value = value if isinstance(value, (int, float)) else value.item()
        if isinstance(value, int) and value.bit_length() > _LONG_INT_BITS:
            # Not spelled out: Python 3.11+ refuses to, and 3.8 takes time quadratic in its length.
            return "a whole number of about {:,} digits".format(
                int(value.bit_length() * 0.30103) + 1)
        if isinstance(value, float) and not value - value == 0:  # NaN or an infinity
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        text = repr(value)
        return text if len(text) <= limit else text[:limit] + "..."
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "a {}".format(type(value).__name__)
