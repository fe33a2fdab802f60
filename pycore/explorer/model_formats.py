"""Reading arrays out of a model file the page has only partly read: ``.npy``, ``.npz`` and
``.safetensors``, each checked before its data is read.

The page never hands Python a whole file. It reads the byte ranges Python asks for
(:class:`NeedBytes`) and asks again with them; :class:`Source` is what has arrived so far, a
read-only file object over those parts. So a 170 MB model file costs the few MB of its head, and
every size, shape and dtype is checked from the file's headers before its data is asked for: the
npy header (NumPy's own reader, ``numpy.lib.format``), the zip's central directory (the standard
library's ``zipfile``, which also streams an ``.npz`` member's decompression in bounded pieces),
the safetensors header (8 bytes of little-endian length, then JSON naming each tensor's dtype,
shape and byte offsets in the data that follows).

Nothing here unpickles: an array of Python objects (NumPy pickles those) is refused from its header.
"""
import re
import struct
import zipfile
import zlib

import numpy as np

from .errors import StateError
from .link import json_loads

FILE_MAX = 300 * 2 ** 20
"""Larger files are refused before any of their bytes are read (a whole f32 ViT-B checkpoint is
330 MB; the page needs only its head, a few MB)."""
ARRAY_MAX = 2 ** 21
"""The most numbers one array may hold: the largest input the state allows
(state.INPUT_ELEMENTS_MAX); each role has its own, smaller limit besides (model_file.py)."""
READ_MAX = 32 * 2 ** 20
"""The most bytes Python asks the page for in all: the largest state's arrays in float64 (a
1024 x 1000 W_head and 2,097,152 inputs, 24 MB) fit in it."""
MEMBER_MAX = ARRAY_MAX * 8 + 4096
"""The most bytes an .npz member may inflate to: the largest array in float64, and its header."""
HEADER_MAX = 16 * 2 ** 20
"""The largest safetensors header read (a whole ViT-L checkpoint's is under 100 kB)."""
LISTED_MAX = 4096
"""The most arrays a model file may list: an .npz's members, a safetensors file's tensors (a whole
ViT-L checkpoint has under 400). Each listed array costs Python objects and a check; a file
listing a hundred thousand is refused before they are made."""
DIRECTORY_MAX = 2 ** 19
"""The largest zip central directory read: Python's zipfile makes an object of each entry, so an
archive listing a hundred thousand is refused from its end record, before any is made."""
COMPRESSION_NAMES = {12: "bzip2", 14: "LZMA", 93: "Zstandard", 9: "Deflate64"}
PROBE = 65536 + 22  # the first and last bytes read first: headers, and a zip's end records

SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "bf16",
                      "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
                      "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?",
                      "C64": "<c8", "C128": "<c16"}


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
    pycore.explorer.model_formats.NeedBytes: need 1 byte range(s)
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


def _refuse(source, what):
    raise StateError("%s: %s" % (source.name, what), key="file")


def dims(shape):
    """``2 \u00d7 3``: a shape in words, each size cut to 20 digits (a crafted header's sizes
    may run to thousands)."""
    return " \u00d7 ".join(text if len(text) <= 20 else text[:17] + "..."
                           for text in (str(n) for n in shape)) or "()"


def _checked_count(source, name, shape):
    """How many numbers ``shape`` holds, refused past :data:`ARRAY_MAX` without multiplying
    out a crafted header's huge sizes."""
    count = 0 if 0 in shape else 1
    for n in shape:
        count *= int(n)
        if count > ARRAY_MAX:
            total = "{:,}".format(np.prod([int(n) for n in shape], dtype=object)) if sum(
                len(str(n)) for n in shape) <= 40 else "more than %s" % "{:,}".format(ARRAY_MAX)
            _refuse(source, "%s holds %s = %s numbers, over the limit of %s for one array; "
                            "nothing was read of it" % (name, dims(shape), total,
                                                        "{:,}".format(ARRAY_MAX)))
    return count


NPY_HEADER_MAX = 65536
"""The longest npy header read (NumPy writes under 200 bytes; its own reader allows 10,000)."""
_NPY_TOKEN = re.compile(r"\s*(?:'([^'\\]{0,64})'|\"([^\"\\]{0,64})\"|(True|False)|(\d+)L?|"
                        r"([{}():,]))")


def _npy_dict(text):
    """The npy header's dict ``{'descr': str, 'fortran_order': bool, 'shape': (int, ...)}``, read
    by a flat scanner instead of NumPy's ``ast.literal_eval``, whose recursion a crafted header
    (thousands of ``-`` or brackets) turns into a stack overflow that kills the browser's runtime.

    Raises ValueError naming what it met, for anything but those three keys with those types
    (a structured dtype's list descr included: the page reads plain numbers and text).

    Examples
    --------
    >>> _npy_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }")
    {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}
    """
    tokens, pos, text = [], 0, text.rstrip(" \n\x00")
    while pos < len(text):
        m = _NPY_TOKEN.match(text, pos)
        if m is None:
            raise ValueError("unexpected %r at character %d" % (text[pos:pos + 12], pos))
        s1, s2, flag, digits, punct = m.groups()
        if digits and len(digits) > 18:
            raise ValueError("a size %d digits long" % len(digits))
        tokens.append(("s", s1 if s1 is not None else s2) if s1 is not None or s2 is not None
                      else ("b", flag == "True") if flag else ("i", int(digits)) if digits
                      else ("p", punct))
        pos = m.end()
        if len(tokens) > 80:
            raise ValueError("over 80 items: not a header NumPy writes")
    it, out = iter(tokens + [("end", None)]), {}

    def expect(kind, value=None):
        tok = next(it)
        if tok[0] != kind or (value is not None and tok[1] != value):
            raise ValueError("expected %s, found %s" % (value or kind, tok[1]))
        return tok[1]
    expect("p", "{")
    tok = next(it)
    while tok != ("p", "}"):
        if tok[0] != "s" or tok[1] not in ("descr", "fortran_order", "shape"):
            raise ValueError("unexpected key %r" % (tok[1],))
        key = tok[1]
        expect("p", ":")
        if key == "descr":
            out[key] = expect("s")
        elif key == "fortran_order":
            out[key] = expect("b")
        else:
            expect("p", "(")
            dims, tok = [], next(it)
            while tok != ("p", ")"):
                if tok[0] != "i":
                    raise ValueError("shape holds %r, not a whole number" % (tok[1],))
                dims.append(tok[1])
                tok = next(it)
                if tok == ("p", ","):
                    tok = next(it)
                elif tok != ("p", ")"):
                    raise ValueError("shape is not a tuple of whole numbers")
            out[key] = tuple(dims)
        tok = next(it)
        if tok == ("p", ","):
            tok = next(it)
        elif tok != ("p", "}"):
            raise ValueError("expected , or } after %s" % key)
    expect("end")
    if len(out) != 3:
        raise ValueError("keys %s missing" % ", ".join(sorted({"descr", "fortran_order",
                                                               "shape"} - set(out))))
    return out


def _npy_header(source, fp, name):
    """(shape, fortran_order, dtype) of the npy stream at ``fp``'s position; its byte count
    checked against :data:`MEMBER_MAX` before any of it is read."""
    start = fp.read(8)
    if start[:1] == b"\x80" or start[:6] != b"\x93NUMPY" or len(start) < 8:
        kind = ("a Python pickle, which could run code when loaded: refused, never loaded"
                if start[:1] == b"\x80" else "cut short: %d bytes, and an npy file starts "
                "with 10 bytes of magic, version and header length" % len(start)
                if len(start) < 8 else "not a NumPy array (its first bytes are %r, "
                "expected the npy magic b'\\x93NUMPY')" % start[:8])
        _refuse(source, "%s is %s" % (name, kind))
    version = (start[6], start[7])
    if version not in ((1, 0), (2, 0), (3, 0)):
        _refuse(source, "%s has a damaged npy header (npy format version %d.%d is unknown)"
                % ((name,) + version))
    width = 2 if version == (1, 0) else 4
    raw = fp.read(width)
    length = int.from_bytes(raw, "little") if len(raw) == width else -1
    if not 0 <= length <= NPY_HEADER_MAX:
        _refuse(source, "%s has a damaged npy header (%s)" % (
            name, "cut short" if length < 0 else "it claims %s bytes; at most %s" % (
                "{:,}".format(length), "{:,}".format(NPY_HEADER_MAX))))
    header = fp.read(length)
    try:
        if len(header) < length:
            raise ValueError("cut short: %d of %d bytes" % (len(header), length))
        fields = _npy_dict(header.decode("utf-8" if version == (3, 0) else "latin-1"))
        dtype = np.dtype(fields["descr"])
    except NeedBytes:
        raise
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        _refuse(source, "%s has a damaged npy header (%s)" % (name, str(exc)[:120]))
    if dtype.hasobject or dtype.kind == "V":
        _refuse(source, "%s holds Python objects (dtype %s), which NumPy stores as a pickle that "
                        "could run code: refused, never loaded" % (name, dtype))
    shape = fields["shape"]
    nbytes = _checked_count(source, name, shape) * dtype.itemsize
    if nbytes > MEMBER_MAX:
        _refuse(source, "%s holds %s bytes (%s of %s), over the limit of %s: nothing was read of "
                        "it" % (name, "{:,}".format(nbytes), dims(shape), dtype,
                                "{:,}".format(MEMBER_MAX)))
    return shape, fields["fortran_order"], dtype


def _read_exact(fp, n, chunk=2 ** 20):
    """``n`` bytes (fewer at the end) read in pieces of at most ``chunk``: a zip member's
    ``read(n)`` inflates as much as ``n`` asks before any check could stop it."""
    parts, left = [], n
    while left > 0:
        data = fp.read(min(chunk, left))
        if not data:
            break
        parts.append(data)
        left -= len(data)
    return b"".join(parts)


def _npy_data(source, fp, name, shape, fortran, dtype, exact_end=True):
    count = _checked_count(source, name, shape)
    data = _read_exact(fp, count * dtype.itemsize)
    if len(data) < count * dtype.itemsize:
        _refuse(source, "%s is truncated: its header says %s %s (%s bytes), only %s bytes follow"
                        % (name, dims(shape), dtype,
                           "{:,}".format(count * dtype.itemsize), "{:,}".format(len(data))))
    if exact_end and fp.read(1):
        _refuse(source, "%s holds more bytes than its header's shape %s says (a damaged or "
                        "crafted file)" % (name, tuple(shape)))
    arr = np.frombuffer(data, dtype=dtype, count=count)
    return arr.reshape(shape, order="F" if fortran else "C")


def npy_entries(source, name):
    """The one array of an ``.npy`` file, named ``name`` (the matrix it is for)."""
    source.require([(0, PROBE)])
    source.seek(0)
    # the array is the whole file: its messages say "the file" (the refusal names it first)
    shape, fortran, dtype = _npy_header(source, source, "the file")
    start = source.tell()
    nbytes = _checked_count(source, "the file", shape) * dtype.itemsize

    def load():
        source.seek(start)
        return _npy_data(source, source, "the file", shape, fortran, dtype)
    return [Entry(name, shape, dtype, load, [(start, nbytes)])]


def npz_entries(source, wanted):
    """The arrays of an ``.npz`` (a zip of ``.npy`` members) whose names ``wanted(name)`` accepts:
    their members are asked for whole (checked against the limits by their declared size first),
    their npy headers read; the others are listed by name, never read."""
    source.require([(0, PROBE), (max(0, source.size - PROBE), PROBE)])
    if source.read_at(0, 2) != b"PK":
        _refuse(source, "is not an .npz (a zip archive): it does not start with 'PK'")
    _check_directory(source)
    try:
        archive = zipfile.ZipFile(source)
        infos = archive.infolist()
    except NeedBytes:
        raise
    except (zipfile.BadZipFile, ValueError, EOFError, OSError, NotImplementedError) as exc:
        _refuse(source, "is not a readable zip archive (%s): truncated or damaged" % exc)
    wanted_infos, listed, total, ranges, seen = [], [], 0, [], set()
    for info in infos:
        if info.filename in seen:
            _refuse(source, "holds %s twice (a damaged or crafted archive)" % info.filename[:60])
        seen.add(info.filename)
        name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        if not wanted(name):
            listed.append(Entry(name, (), None, None))
            continue
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            _refuse(source, "%s is compressed with %s: the page reads members stored or deflated, "
                            "as np.savez and np.savez_compressed write them" % (
                                info.filename, COMPRESSION_NAMES.get(info.compress_type,
                                                                     "method %d" % info.compress_type)))
        if info.flag_bits & 1:
            _refuse(source, "%s is encrypted: the page reads unencrypted archives" % info.filename)
        total += info.compress_size
        if info.file_size > MEMBER_MAX or total > READ_MAX:
            _refuse(source, "%s would decompress to %s bytes, over the limit of %s: nothing was "
                            "read of it" % (info.filename, "{:,}".format(info.file_size),
                                            "{:,}".format(MEMBER_MAX)) if total <= READ_MAX else
                    "its arrays hold more than %d MB: nothing was read of them" % (READ_MAX >> 20))
        slack = 30 + len(info.filename.encode("utf-8")) + len(info.extra) + 1024
        ranges.append((info.header_offset, info.compress_size + slack))
        wanted_infos.append((info, name))
    source.require(ranges)  # every member wanted, in one round
    return [_member_entry(source, archive, info, name) for info, name in wanted_infos] + listed


def _check_directory(source):
    """Refuse a zip whose end record lists more than :data:`LISTED_MAX` members or a central
    directory over :data:`DIRECTORY_MAX` bytes (the record is within the last PROBE bytes, which
    the page sends first). A record not found is left to zipfile, which names the problem."""
    start = max(0, source.size - PROBE)
    tail = source.read_at(start, source.size - start)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return
    members, size = struct.unpack("<HI", tail[at + 10:at + 16])
    if members == 0xFFFF or members > LISTED_MAX:  # 0xFFFF: a ZIP64 count, 65,535 or more
        _refuse(source, "lists %s members; the page reads archives of at most %s"
                % ("65,535 or more" if members == 0xFFFF else "{:,}".format(members),
                   "{:,}".format(LISTED_MAX)))
    if size > DIRECTORY_MAX:
        _refuse(source, "has a zip directory of %s bytes; the page reads at most %s (a damaged "
                        "or crafted archive)" % ("{:,}".format(size), "{:,}".format(DIRECTORY_MAX)))


def _member_entry(source, archive, info, name):
    def open_member():
        try:
            return archive.open(info)
        except NeedBytes:
            raise
        except (zipfile.BadZipFile, NotImplementedError, ValueError, RuntimeError, OSError) as exc:
            _refuse(source, "%s cannot be read from the archive (%s)" % (info.filename, exc))
    try:
        with open_member() as fp:
            shape, fortran, dtype = _npy_header(source, fp, info.filename)
            nbytes = _checked_count(source, info.filename, shape) * dtype.itemsize
            if fp.tell() + nbytes != info.file_size:
                _refuse(source, "%s's header says %s of %s (%s bytes), but the archive says it "
                                "holds %s bytes (a damaged or crafted file)"
                        % (info.filename, dims(shape), dtype, "{:,}".format(nbytes),
                           "{:,}".format(info.file_size - fp.tell())))
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
        _refuse(source, "%s is damaged (%s)" % (info.filename, exc))

    def load():
        try:
            with open_member() as fp:  # ZipExtFile: inflates at most what each read asks for
                _npy_header(source, fp, info.filename)
                return _npy_data(source, fp, info.filename, shape, fortran, dtype)
        except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:  # bad CRC, cut data
            _refuse(source, "%s is damaged (%s)" % (info.filename, exc))
    return Entry(name, shape, dtype, load)


def safetensors_entries(source):
    """The tensors of a ``.safetensors`` file, every offset in its header checked against the
    file before any data is read."""
    source.require([(0, PROBE)])
    if source.size < 8:
        _refuse(source, "is %d bytes long: a safetensors file starts with an 8-byte header "
                        "length" % source.size)
    n = int(np.frombuffer(source.read_at(0, 8), dtype="<u8")[0])
    if n > HEADER_MAX or 8 + n > source.size:
        _refuse(source, "its header claims %s bytes, but %s: truncated, or not a safetensors "
                        "file" % ("{:,}".format(n), "the limit is %s" % "{:,}".format(HEADER_MAX)
                                  if n > HEADER_MAX else "the file has only %s after the length"
                                  % "{:,}".format(source.size - 8)))
    source.require([(8, n)])
    try:
        header = json_loads(source.read_at(8, n).decode("utf-8"), "its header",
                            values_max=8 * LISTED_MAX)  # a tensor's entry holds 4 to 8
    except StateError as err:
        _refuse(source, str(err))
    except (UnicodeDecodeError, ValueError) as exc:
        _refuse(source, "its header is not JSON (%s): truncated, or not a safetensors file"
                        % str(exc)[:80])
    if not isinstance(header, dict):
        _refuse(source, "its header is not a JSON object of tensors")
    if len(header) > LISTED_MAX + 1:  # and its __metadata__
        _refuse(source, "its header lists %s tensors; the page reads files of at most %s"
                % ("{:,}".format(len(header)), "{:,}".format(LISTED_MAX)))
    base, data_len, entries = 8 + n, source.size - 8 - n, []
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        entries.append(_tensor_entry(source, name, spec, base, data_len))
    return entries


def _tensor_entry(source, name, spec, base, data_len):
    where = "tensor %r" % name[:60]
    if not (isinstance(spec, dict) and isinstance(spec.get("shape"), list)
            and isinstance(spec.get("data_offsets"), list) and len(spec["data_offsets"]) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                    for v in spec["shape"] + spec["data_offsets"])):
        _refuse(source, "%s's header entry is not {dtype, shape, data_offsets} with whole "
                        "numbers" % where)
    code = spec.get("dtype")
    if not isinstance(code, str) or code not in SAFETENSORS_DTYPES:
        _refuse(source, "%s has dtype %r, which the page cannot read (F16, BF16, F32 or F64)"
                        % (where, str(code)[:20]))
    dtype = "bf16" if code == "BF16" else np.dtype(SAFETENSORS_DTYPES[code])
    shape, (begin, end) = spec["shape"], spec["data_offsets"]
    count = _checked_count(source, where, shape)
    nbytes = count * (2 if isinstance(dtype, str) else dtype.itemsize)
    if begin > end or end > data_len or end - begin != nbytes:
        _refuse(source, "%s's data_offsets [%d, %d] do not fit: %s %s takes %s bytes, and the "
                        "file has %s bytes of data (a header that lies about offsets, or a "
                        "truncated file)" % (where, begin, end, code,
                                             list(shape), "{:,}".format(nbytes),
                                             "{:,}".format(data_len)))

    def load():
        raw = source.read_at(base + begin, nbytes)
        if isinstance(dtype, str):  # bfloat16, the top half of a float32: widened by hand
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            return bits.view(np.float32).reshape(shape)
        return np.frombuffer(raw, dtype=dtype).reshape(shape)
    return Entry(name, shape, dtype, load, [(base + begin, nbytes)])
