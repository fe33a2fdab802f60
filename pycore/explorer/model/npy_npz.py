""".npy and .npz model files, read from their headers first: the npy header (a flat scanner of
its dict, then NumPy's dtype), the zip's central directory (the standard library's ``zipfile``,
which also streams an ``.npz`` member's decompression in bounded pieces).
"""
import re
import struct
import zipfile
import zlib

import numpy as np

from .file_parts import (ARRAY_MAX, LISTED_MAX, PROBE, READ_MAX, Entry, NeedBytes, checked_count,
                         dims, refuse)

MEMBER_MAX = ARRAY_MAX * 8 + 4096
"""The most bytes an .npz member may inflate to: the largest array in float64, and its header."""
DIRECTORY_MAX = 2 ** 19
"""The largest zip central directory read: Python's zipfile makes an object of each entry, so an
archive listing a hundred thousand is refused from its end record, before any is made."""
COMPRESSION_NAMES = {12: "bzip2", 14: "LZMA", 93: "Zstandard", 9: "Deflate64"}

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
        refuse(source, "%s is %s" % (name, kind))
    version = (start[6], start[7])
    if version not in ((1, 0), (2, 0), (3, 0)):
        refuse(source, "%s has a damaged npy header (npy format version %d.%d is unknown)"
                % ((name,) + version))
    width = 2 if version == (1, 0) else 4
    raw = fp.read(width)
    length = int.from_bytes(raw, "little") if len(raw) == width else -1
    if not 0 <= length <= NPY_HEADER_MAX:
        refuse(source, "%s has a damaged npy header (%s)" % (
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
        refuse(source, "%s has a damaged npy header (%s)" % (name, str(exc)[:120]))
    if dtype.hasobject or dtype.kind == "V":
        refuse(source, "%s holds Python objects (dtype %s), which NumPy stores as a pickle that "
                        "could run code: refused, never loaded" % (name, dtype))
    shape = fields["shape"]
    nbytes = checked_count(source, name, shape) * dtype.itemsize
    if nbytes > MEMBER_MAX:
        refuse(source, "%s holds %s bytes (%s of %s), over the limit of %s: nothing was read of "
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
    count = checked_count(source, name, shape)
    data = _read_exact(fp, count * dtype.itemsize)
    if len(data) < count * dtype.itemsize:
        refuse(source, "%s is truncated: its header says %s %s (%s bytes), only %s bytes follow"
                        % (name, dims(shape), dtype,
                           "{:,}".format(count * dtype.itemsize), "{:,}".format(len(data))))
    if exact_end and fp.read(1):
        refuse(source, "%s holds more bytes than its header's shape %s says (a damaged or "
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
    nbytes = checked_count(source, "the file", shape) * dtype.itemsize

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
        refuse(source, "is not an .npz (a zip archive): it does not start with 'PK'")
    _check_directory(source)
    try:
        archive = zipfile.ZipFile(source)
        infos = archive.infolist()
    except NeedBytes:
        raise
    except (zipfile.BadZipFile, ValueError, EOFError, OSError, NotImplementedError) as exc:
        refuse(source, "is not a readable zip archive (%s): truncated or damaged" % exc)
    wanted_infos, listed, total, ranges, seen = [], [], 0, [], set()
    for info in infos:
        if info.filename in seen:
            refuse(source, "holds %s twice (a damaged or crafted archive)" % info.filename[:60])
        seen.add(info.filename)
        name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        if not wanted(name):
            listed.append(Entry(name, (), None, None))
            continue
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            refuse(source, "%s is compressed with %s: the page reads members stored or deflated, "
                            "as np.savez and np.savez_compressed write them" % (
                                info.filename, COMPRESSION_NAMES.get(
                                    info.compress_type, "method %d" % info.compress_type)))
        if info.flag_bits & 1:
            refuse(source, "%s is encrypted: the page reads unencrypted archives" % info.filename)
        total += info.compress_size
        if info.file_size > MEMBER_MAX or total > READ_MAX:
            refuse(source, "%s would decompress to %s bytes, over the limit of %s: nothing was "
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
        refuse(source, "lists %s members; the page reads archives of at most %s"
                % ("65,535 or more" if members == 0xFFFF else "{:,}".format(members),
                   "{:,}".format(LISTED_MAX)))
    if size > DIRECTORY_MAX:
        refuse(source, "has a zip directory of %s bytes; the page reads at most %s (a damaged "
                        "or crafted archive)" % ("{:,}".format(size), "{:,}".format(DIRECTORY_MAX)))


def _member_entry(source, archive, info, name):
    def open_member():
        try:
            return archive.open(info)
        except NeedBytes:
            raise
        except (zipfile.BadZipFile, NotImplementedError, ValueError, RuntimeError, OSError) as exc:
            refuse(source, "%s cannot be read from the archive (%s)" % (info.filename, exc))
    try:
        with open_member() as fp:
            shape, fortran, dtype = _npy_header(source, fp, info.filename)
            nbytes = checked_count(source, info.filename, shape) * dtype.itemsize
            if fp.tell() + nbytes != info.file_size:
                refuse(source, "%s's header says %s of %s (%s bytes), but the archive says it "
                                "holds %s bytes (a damaged or crafted file)"
                        % (info.filename, dims(shape), dtype, "{:,}".format(nbytes),
                           "{:,}".format(info.file_size - fp.tell())))
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
        refuse(source, "%s is damaged (%s)" % (info.filename, exc))

    def load():
        try:
            with open_member() as fp:  # ZipExtFile: inflates at most what each read asks for
                _npy_header(source, fp, info.filename)
                return _npy_data(source, fp, info.filename, shape, fortran, dtype)
        except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:  # bad CRC, cut data
            refuse(source, "%s is damaged (%s)" % (info.filename, exc))
    return Entry(name, shape, dtype, load)
