"""A model file crossing from the page to Python: 4 MB of it a request, in base64, its parts
kept by the session between requests until :func:`~pycore.explorer.model.file.read_model` has
every range it asked for (docs/protocol.md, ``open_file``).

One request never carries a whole file: decoding 4 MB takes tens of milliseconds, so even the
largest file a state allows (24 MB) never holds Python for long, nor its whole text at once.
"""
import base64
import binascii
import io
import zlib

import numpy as np

from ..errors import StateError
from ..state.explorer_state import whole_number
from .file import NeedBytes, named, read_model
from .file_parts import PROBE, READ_MAX

CHUNK = 4 * 2 ** 20
"""The most bytes of a file one request carries."""


class Reading(object):
    """A model file the page is sending, across requests: the parts that have come, and the
    ranges asked for and not yet sent (``outstanding``, at most :data:`CHUNK` bytes each).

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> out = io.BytesIO(); np.save(out, np.ones((300, 100))); data = out.getvalue()
    >>> r = Reading("w.npy", len(data), "W_head")
    >>> start = len(data) - 300 * 100 * 8   # where the numbers begin, after the npy header
    >>> r.add([(0, data[:PROBE])]); r.step(default_state()), r.outstanding == [(start, 240000)]
    (None, True)
    >>> r.add([(start, data[start:])]); sorted(r.step(default_state())[0])
    ['W_head']
    """

    def __init__(self, name, size, target):
        self.name, self.size, self.target = name, size, target
        self.parts, self.outstanding, self.received = [], [], 0

    def add(self, parts):
        """Keep decoded ``[(offset, bytes)]`` parts, within :data:`READ_MAX` in all."""
        for offset, data in parts:
            self.received += len(data)
            if self.received > READ_MAX + 2 * PROBE:
                raise StateError("%s: more than %d MB were sent" % (named(self.name),
                                                                   READ_MAX >> 20), key="file")
            self.parts.append((offset, data))
            if (offset, len(data)) in self.outstanding:
                self.outstanding.remove((offset, len(data)))

    def step(self, state):
        """``(arrays, library)`` once the file is read (:func:`read_model`); None while ranges
        are outstanding, or newly asked for by the file's headers."""
        if self.outstanding:
            return None
        try:
            return read_model(self.name, self.size, self.parts, state, self.target)
        except NeedBytes as need:
            self.outstanding = [(o + i, min(CHUNK, n - i)) for o, n in need.ranges
                                for i in range(0, n, CHUNK)]
            if not self.outstanding:  # bytes past the end: a file cut short
                raise StateError("%s ends before the bytes its headers point to: truncated "
                                 "or damaged" % named(self.name), key="file") from None
            return None
        except StateError:
            raise
        except (ValueError, TypeError, IndexError, KeyError, OverflowError, ArithmeticError,
                NotImplementedError, UnicodeError, EOFError, OSError, RecursionError,
                MemoryError, SyntaxError, AttributeError, zlib.error) as exc:
            # every reader's own checks come first; what a crafted file still trips in NumPy
            # or the standard library is a refusal naming the file, never an internal error
            raise StateError("%s cannot be read: %s (%s)" % (
                named(self.name), type(exc).__name__, str(exc)[:120]), key="file") from None


def decode_parts(parts, size):
    """A request's ``parts``, ``[[offset, base64 text], ...]``, as ``[(offset, bytes)]``."""
    if parts is None:
        return []
    if not isinstance(parts, list) or len(parts) > 4:
        raise StateError("parts must be a list of at most 4 [offset, base64] pairs.", key="file")
    out = []
    for part in parts:
        if not (isinstance(part, list) and len(part) == 2 and isinstance(part[1], str)):
            raise StateError("Each of parts must be [offset, base64 text].", key="file")
        offset = whole_number(part[0], "parts offset", 0, size, key="file")
        if len(part[1]) > (CHUNK + 2) // 3 * 4:
            raise StateError("A part of the file is over %d MB: send at most %d MB a request."
                             % (CHUNK >> 20, CHUNK >> 20), key="file")
        try:
            data = base64.b64decode(part[1].encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            raise StateError("A part of the file is not base64 text.", key="file") from None
        if offset + len(data) > size:
            raise StateError("A part of the file ends past its size (%d bytes)." % size, key="file")
        out.append((offset, data))
    return out
