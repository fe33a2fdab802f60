"""A model file the page has only partly read, and what every format's reader shares.

The page never hands Python a whole file. It reads the byte ranges Python asks for
(:class:`NeedBytes`) and asks again with them; :class:`Source` is what has arrived so far, a
read-only file object over those parts. So a 170 MB model file costs the few MB of its head, and
every size, shape and dtype is checked from the file's headers before its data is asked for.
Each format's reader (npy_npz.py, safetensors_file.py) lists a file's arrays as :class:`Entry`
objects and refuses, with :func:`refuse`, what breaks the limits below.

Nothing here unpickles: an array of Python objects (NumPy pickles those) is refused from its header.
"""
import numpy as np

from ..errors import StateError

FILE_MAX = 300 * 2 ** 20
"""Larger files are refused before any of their bytes are read (a whole f32 ViT-B checkpoint is
330 MB; the page needs only its head, a few MB)."""
ARRAY_MAX = 2 ** 21
"""The most numbers one array may hold: the largest input the state allows
(state.INPUT_ELEMENTS_MAX); each role has its own, smaller limit besides (model_file.py)."""
READ_MAX = 32 * 2 ** 20
"""The most bytes Python asks the page for in all: the largest state's arrays in float64 (a
1024 x 1000 W_head and 2,097,152 inputs, 24 MB) fit in it."""
LISTED_MAX = 4096
"""The most arrays a model file may list: an .npz's members, a safetensors file's tensors (a whole
ViT-L checkpoint has under 400). Each listed array costs Python objects and a check; a file
listing a hundred thousand is refused before they are made."""
PROBE = 65536 + 22  # the first and last bytes read first: headers, and a zip's end records


class NeedBytes(Exception):
    """The parser needs these ``[(offset, length), ...]`` byte ranges of the file first."""

    def __init__(self, ranges):
        Exception.__init__(self, "need %d byte range(s)" % len(ranges))
        self.ranges = [(int(o), int(n)) for o, n in ranges]


class Source(object):
    """The parts of a file that have arrived, as a read-only, seekable file object.

    Parameters
    ----------
    name : str
        The file's name (for messages).
    size : int
        Its size in bytes.
    parts : list of (int, bytes)
        Byte ranges read from it: (offset, data).

    Examples
    --------
    >>> s = Source("a.npy", 10, [(0, b"0123"), (4, b"45"), (8, b"89")])
    >>> s.read_at(2, 4)
    b'2345'
    >>> s.read_at(5, 2)
    Traceback (most recent call last):
    ...
    pycore.explorer.model.file_parts.NeedBytes: need 1 byte range(s)
    """

    def __init__(self, name, size, parts):
        self.name, self.size, self._pos = name, int(size), 0
        merged = []  # (start, bytearray), sorted, adjacent or overlapping parts joined
        for offset, data in sorted(parts, key=lambda p: p[0]):
            if merged and offset <= merged[-1][0] + len(merged[-1][1]):
                start, buf = merged[-1]
                buf.extend(data[start + len(buf) - offset:])
            else:
                merged.append((offset, bytearray(data)))
        self._parts = [(start, bytes(buf)) for start, buf in merged]

    def _find(self, offset, length):
        end = min(offset + length, self.size)
        for start, data in self._parts:
            if start <= offset and end <= start + len(data):
                return data[offset - start:end - start]
        return None

    def has(self, offset, length):
        return self._find(offset, length) is not None

    def require(self, ranges):
        """Raise :class:`NeedBytes` with those of ``ranges`` not yet here (clipped to the file)."""
        for o, _ in ranges:
            self._before_start(o)
        missing = [(o, min(n, self.size - o)) for o, n in ranges
                   if o < self.size and not self.has(o, n)]
        if missing:
            raise NeedBytes(missing)

    def _before_start(self, offset):
        if offset < 0:  # a damaged directory or header points before the file's start
            raise StateError("%s: a header points to byte %d, before the file's start: damaged "
                             "or not the format its name says" % (self.name, offset), key="file")

    def read_at(self, offset, length):
        self._before_start(offset)
        data = self._find(offset, length)
        if data is None:
            if offset >= self.size or length <= 0:
                return b""
            raise NeedBytes([(offset, min(length, self.size - offset))])
        return data

    # the file-object side, for numpy.lib.format and zipfile
    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=0):
        self._pos = max(0, int(offset) + (0, self._pos, self.size)[whence])
        return self._pos

    def read(self, n=-1):
        n = self.size - self._pos if n is None or n < 0 else min(n, self.size - self._pos)
        data = self.read_at(self._pos, n) if n > 0 else b""
        self._pos += len(data)
        return data


class Entry(object):
    """One array of a file: its ``name``, ``shape``, ``dtype`` (a NumPy dtype, or the text "bf16",
    told apart by isinstance: NumPy 1.17 raises comparing a dtype with text it does not know), and
    ``load()``, which reads its data (raising :class:`NeedBytes` for bytes not yet here)."""

    def __init__(self, name, shape, dtype, load, ranges=()):
        self.name, self.shape, self.dtype, self._load = name, tuple(shape), dtype, load
        self.ranges = list(ranges)  # the bytes load() reads, when known up front

    @property
    def count(self):
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def dtype_text(self):
        return "bfloat16" if isinstance(self.dtype, str) else np.dtype(self.dtype).name

    def load(self):
        return self._load()


def refuse(source, what):
    """Raise the StateError that refuses ``source`` for ``what`` (its name comes first)."""
    raise StateError("%s: %s" % (source.name, what), key="file")


def dims(shape):
    """``2 \u00d7 3``: a shape in words, each size cut to 20 digits (a crafted header's sizes
    may run to thousands)."""
    return " \u00d7 ".join(text if len(text) <= 20 else text[:17] + "..."
                           for text in (str(n) for n in shape)) or "()"


def checked_count(source, name, shape):
    """How many numbers ``shape`` holds, refused past :data:`ARRAY_MAX` without multiplying
    out a crafted header's huge sizes."""
    count = 0 if 0 in shape else 1
    for n in shape:
        count *= int(n)
        if count > ARRAY_MAX:
            total = "{:,}".format(np.prod([int(n) for n in shape], dtype=object)) if sum(
                len(str(n)) for n in shape) <= 40 else "more than %s" % "{:,}".format(ARRAY_MAX)
            refuse(source, "%s holds %s = %s numbers, over the limit of %s for one array; "
                            "nothing was read of it" % (name, dims(shape), total,
                                                        "{:,}".format(ARRAY_MAX)))
    return count
