"""The one error type of the explorer-state layer.

Everything that turns user input (typed cells, pasted blocks, JSON, URL fragments,
resizes) into an :class:`~pycore.explorer.state.ExplorerState` raises :class:`StateError` and
nothing else, so the page needs a single ``except`` to show a message.
"""


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
