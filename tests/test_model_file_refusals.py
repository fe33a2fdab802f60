"""Every bad model file is refused in words that name the file, what was found and what was
expected, and changes nothing (state, link, exports); none stalls Python or makes it hold much
memory, however large it claims to be."""
import io
import json
import pickle
import struct
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest

from model_files import npy_bytes, npz_bytes, open_file, safetensors_by_spec, session_with_a_model
from pycore.explorer.session import Session

RNG = np.random.RandomState(7)
W, CLS = RNG.standard_normal((8, 5)), RNG.standard_normal((3, 8))


def npy_header(shape, descr="<f8"):
    """An npy 1.0 header alone, declaring `shape` (no data: what a crafted file claims)."""
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, tuple(shape))
    text += " " * (-(10 + len(text) + 1) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1")


def zip_of(members, lie_size=None):
    """A zip whose members are written raw-deflated here; `lie_size` replaces every declared
    uncompressed size (a zip bomb claims little and inflates to much)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    raw = out.getvalue()
    if lie_size is not None:
        raw = in_every_header(raw, ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)),
                              struct.pack("<I", lie_size))
    return raw


def in_every_header(raw, places, value):
    """`raw` (a zip) with `value` written at offset `at` of every local and central header,
    `places` naming each header's signature and that offset."""
    raw = bytearray(raw)
    for sig, at in places:
        i = raw.find(sig)
        while i >= 0:
            raw[i + at:i + at + len(value)] = value
            i = raw.find(sig, i + 4)
    return bytes(raw)


def safetensors_lying(offsets):
    header = json.dumps({"head.weight": {"dtype": "F32", "shape": [5, 8], "data_offsets": offsets}})
    return struct.pack("<Q", len(header)) + header.encode() + b"\0" * 160


BOMB = b"\0" * (40 * 2 ** 20)  # 40 MB of zeros: 40 kB deflated


class Cases(dict):
    """name -> (file name, bytes, ...). Bytes given as a function are made when the case is
    first read: every test process imports this module, and the largest cases take about a
    second to write."""

    def __getitem__(self, name):
        value = dict.__getitem__(self, name)
        if callable(value[1]):
            value = (value[0], value[1]()) + value[2:]
            dict.__setitem__(self, name, value)
        return value

    def unmade(self, name):
        """The case as written: its bytes may still be a function."""
        return dict.__getitem__(self, name)

    def values(self):
        return [self[name] for name in self]

    def items(self):
        return [(name, self[name]) for name in self]


CASES = Cases({
    # name: (file name, bytes, target, words the message must hold)
    "no usable names": ("m.npz", npz_bytes(weights=W, x=CLS), None,
                        ["'weights', 'x'", "expected W_head (D, C)"]),
    "W_head 1-D": ("m.npz", npz_bytes(W_head=W[0], cls=CLS), None,
                   ["W_head has shape 5", "expected W_head (D, C)"]),
    "W_head transposed": ("m.npz", npz_bytes(W_head=W.T, cls=CLS), None,
                          ["W_head 5 \u00d7 8 looks transposed", "(C, D)"]),
    "D differs": ("m.npz", npz_bytes(W_head=W[:6], cls=CLS), None,
                  ["W_head 6 \u00d7 5 has D = 6 rows", "cls 3 \u00d7 8 has D = 8"]),
    "gamma too short": ("m.npz", npz_bytes(W_head=W, cls=CLS, ln_gamma=np.ones(7)), None,
                        ["ln_gamma has shape 7", "expected (8,)"]),
    "NaN": ("m.npz", npz_bytes(W_head=np.where(np.arange(40).reshape(8, 5) == 13, np.nan, W),
                               cls=CLS), None, ["W_head[2,3] is NaN"]),
    "inf": ("w.npy", npy_bytes(np.full((4, 3), np.inf)), "W_head", ["W_head[0,0] is inf"]),
    "integers": ("m.npz", npz_bytes(W_head=np.ones((8, 5), np.int64), cls=CLS), None,
                 ["W_head is int64", "floating-point", "not integer"]),
    "complex": ("m.npz", npz_bytes(W_head=W + 1j, cls=CLS), None, ["complex128", "not complex"]),
    "safetensors ints": ("m.safetensors", safetensors_by_spec(
        {"head.weight": ("I32", (5, 8), b"\0" * 160)}), None, ["head.weight is int32"]),
    "object array (a pickle)": ("m.npz", npz_bytes(W_head=np.array([{"x": 1}], dtype=object),
                                                   cls=CLS) if False else None, None, []),
    "pickle as .npy": ("w.npy", pickle.dumps(W), "W_head", ["is a Python pickle", "never loaded"]),
    "too many numbers (npy header)": ("w.npy", npy_header((3000, 1000)) + b"\0" * 64, "W_head",
                                      ["3000 \u00d7 1000 = 3,000,000 numbers", "nothing was read"]),
    "over the W_head limit": ("w.npy", npy_header((1025, 1000)) + b"\0" * 64, "W_head",
                              ["D = 1025 is over the limit of 1024"]),
    "zip bomb, honest size": ("m.npz", lambda: zip_of({"W_head.npy": npy_header((4, 3)) + BOMB}), None,
                              ["W_head.npy would decompress to 41,943,", "bytes, over the limit"]),
    "zip bomb, lying size": ("m.npz", lambda: zip_of({"W_head.npy": npy_header((8, 5)) + BOMB,
                                                      "cls.npy": npy_bytes(CLS)}, lie_size=448), None,
                             ["W_head.npy is damaged", "CRC"]),
    "truncated npz": ("m.npz", npz_bytes(W_head=W, cls=CLS)[:700], None,
                      ["not a readable zip archive"]),
    "truncated npy": ("w.npy", npy_bytes(W)[:200], "W_head",
                      ["is truncated: its header says 8 \u00d7 5 float64 (320 bytes)"]),
    "corrupt deflate": ("m.npz", None, None, ["W_head.npy is damaged"]),
    "not a zip": ("m.npz", b"hello world" * 10, None, ["does not start with 'PK'"]),
    "safetensors offsets past the end": ("m.safetensors", safetensors_lying([0, 1600]), None,
                                         ["data_offsets [0, 1600] do not fit", "160 bytes of data"]),
    "safetensors offsets mismatch": ("m.safetensors", safetensors_lying([8, 168]), None,
                                     ["data_offsets [8, 168] do not fit"]),
    "safetensors header too long": ("m.safetensors", struct.pack("<Q", 10 ** 9) + b"{}", None,
                                    ["header claims 1,000,000,000 bytes"]),
    "safetensors header not JSON": ("m.safetensors", struct.pack("<Q", 4) + b"{{{{", None,
                                    ["header is not JSON"]),
    "a role named twice": ("m.npz", npz_bytes(W_head=W, cls=CLS, **{"head.weight": W.T}), None,
                           ["both 'W_head' and 'head.weight' are W_head", "keep one"]),
    "labels out of range": ("m.npz", npz_bytes(W_head=W, cls=CLS, labels=np.array([0, 1, 7])),
                            None, ["labels[2] = 7 is out of range", "C = 5 classes"]),
    "an image": ("photo.png", b"\x89PNG" + b"\0" * 100, None, ["reads .npz, .safetensors or .npy"]),
    "a .npy with no grid": ("w.npy", npy_bytes(W), None, ["click a cell of the grid"]),
})


def zip_with(members, method=zipfile.ZIP_DEFLATED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def zip_repeating(name, data, times):
    """A zip holding one member `times` times (the standard library writes it, warning)."""
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
            for _ in range(times):
                z.writestr(name, data)
    return out.getvalue()


def version_needed(raw, version):
    """`raw` with every member's "version needed to extract" set to `version` (a newer zip
    format than the standard library reads)."""
    return in_every_header(raw, ((b"PK\x03\x04", 4), (b"PK\x01\x02", 6)),
                           struct.pack("<H", version))


def safetensors_header(header, data=b"\0" * 160):
    text = header if isinstance(header, str) else json.dumps(header)
    return struct.pack("<Q", len(text)) + text.encode() + data


NPY_V2_HUGE = b"\x93NUMPY\x02\x00" + struct.pack("<I", 0x7FFFFFF0) + b"{" + b" " * 500
MINUS_HEADER = ("{'descr': '<f8', 'fortran_order': False, 'shape': (%s1, 5), }"
                % ("-" * 3000)).encode()
CASES.update({
    # crafted to kill the browser's runtime (its stack) or fill its memory before any check
    "npy header of 3,000 minus signs": (
        "w.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(MINUS_HEADER)) + MINUS_HEADER,
        "W_head", ["the file has a damaged npy header (unexpected '---"]),
    "safetensors header nested 2,000 deep": (
        "m.safetensors", safetensors_header('{"__metadata__": %s}' % ("[" * 2000 + "]" * 2000)),
        None, ["its header nests arrays or objects 2,001 deep; the page reads JSON at most 32"]),
    "npz member's npy v2 header claims 2 GB": (
        "m.npz", zip_with({"W_head.npy": NPY_V2_HUGE, "cls.npy": npy_bytes(CLS)}), None,
        ["W_head.npy has a damaged npy header (it claims 2,147,483,632 bytes; at most 65,536)"]),
    "class_names of 2 GB strings": (
        "m.npz", zip_with({"W_head.npy": npy_bytes(W), "cls.npy": npy_bytes(CLS),
                           "class_names.npy": npy_header((5,), "|S2147483647") + b"x" * 64}),
        None, ["class_names.npy holds 10,737,418,235 bytes (5 of |S2147483647), over the limit"]),
    "npz member's header disagrees with its size": (
        "m.npz", zip_with({"W_head.npy": npy_header((8, 5)) + b"\0" * 8, "cls.npy": npy_bytes(CLS)}),
        None, ["W_head.npy's header says 8 \u00d7 5 of float64 (320 bytes), but the archive says "
               "it holds 8 bytes"]),
    "bzip2 member (a bz2 bomb)": (
        "m.npz", lambda: zip_with({"W_head.npy": npy_header((8, 5)) + BOMB, "cls.npy": npy_bytes(CLS)},
                                  zipfile.ZIP_BZIP2), None,
        ["W_head.npy is compressed with bzip2: the page reads members stored or deflated"]),
    "LZMA member": (
        "m.npz", zip_with({"W_head.npy": npy_bytes(W), "cls.npy": npy_bytes(CLS)},
                          zipfile.ZIP_LZMA), None, ["W_head.npy is compressed with LZMA"]),
    "zip version 10.9 needed": (
        "m.npz", version_needed(npz_bytes(W_head=W, cls=CLS), 109), None,
        ["is not a readable zip archive (zip file version 10.9)"]),
    "the same member 2,000 times": (
        "m.npz", lambda: zip_repeating("W_head.npy", npy_bytes(W), 2000), None,
        ["holds W_head.npy twice"]),
    # the reader's own exceptions, once internal errors
    "empty .npz": ("m.npz", b"", None, ["the file is empty (0 bytes): nothing to read"]),
    "7-byte .npy": ("w.npy", b"\x93NUMPY\x01", "W_head",
                    ["the file is cut short: 7 bytes, and an npy file starts with 10 bytes"]),
    "safetensors dtype a list": (
        "m.safetensors", safetensors_header(
            {"head.weight": {"dtype": ["F64"], "shape": [5, 8], "data_offsets": [0, 320]}}),
        None, ["tensor 'head.weight' has dtype \"['F64']\", which the page cannot read"]),
    "safetensors shape of 300-digit numbers": (
        "m.safetensors", safetensors_header('{"head.weight": {"dtype": "F32", "shape": [%s, %s], '
                                            '"data_offsets": [0, 160]}}' % ("9" * 300, "9" * 300)),
        None, ["holds 99999999999999999... \u00d7 99999999999999999... = more than 2,097,152 "
               "numbers, over the limit"]),
    "npy shape of 300-digit numbers": (
        "w.npy", npy_header(("9" * 300,)).replace(b"('9", b"( 9").replace(b"9',", b"9, "), "W_head",
        ["the file has a damaged npy header (a size 300 digits long)"]),
})


def end_record_says(raw, members=None, directory=None):
    """`raw` (a zip) with its end record claiming `members` members and a central directory of
    `directory` bytes (a crafted archive's end record need not agree with its directory)."""
    raw = bytearray(raw)
    at = raw.rfind(b"PK\x05\x06")
    if members is not None:
        raw[at + 8:at + 12] = struct.pack("<HH", members, members)
    if directory is not None:
        raw[at + 12:at + 16] = struct.pack("<I", directory)
    return bytes(raw)


CASES.update({
    # archives and headers listing more arrays than any model has: refused before Python makes
    # an object for each
    "an npz of 5,000 members": (
        "m.npz", lambda: zip_of(dict({"W_head.npy": npy_bytes(W)}, **{"m%d.npy" % i: b"" for i in range(4999)})),
        None, ["lists 5,000 members; the page reads archives of at most 4,096"]),
    "an end record claiming 65,535 members (ZIP64)": (
        "m.npz", end_record_says(npz_bytes(W_head=W, cls=CLS), members=0xFFFF), None,
        ["lists 65,535 or more members; the page reads archives of at most 4,096"]),
    "a directory of 600 kB behind an end record claiming 2 members": (
        "m.npz", lambda: end_record_says(zip_of({"m%d" % i: b"" for i in range(12000)}), members=2), None,
        ["has a zip directory of 6", "bytes; the page reads at most 524,288"]),
    "safetensors of 5,000 tensors": (
        "m.safetensors", safetensors_header(
            {"t%d" % i: {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
             for i in range(5000)}, data=b"\0" * 20000),
        None, ["its header lists 5,000 tensors; the page reads files of at most 4,096"]),
    "safetensors header of 100,000 numbers": (
        "m.safetensors", safetensors_header('{"__metadata__": [%s]}' % ",".join(["0"] * 100000)),
        None, ["its header holds about 100,000 values; the page reads JSON of at most 32,768"]),
})


# LayerNorm's epsilon: a negative, zero or non-finite one makes the model's own head NaN
for _eps, _text in ((-1e-6, "-1e-06"), (0.0, "0"), (np.nan, "nan"), (np.inf, "inf")):
    CASES["ln_eps %s" % _text] = (
        "m.npz", npz_bytes(W_head=W, cls=CLS, b_head=np.ones(5), ln_eps=np.array(_eps)), None,
        ["ln_eps is %s; expected a positive number" % _text])


def corrupt_npz():
    raw = bytearray(npz_bytes(compressed=True, W_head=RNG.standard_normal((64, 64)), cls=CLS))
    i = raw.find(b"W_head.npy") + 200
    raw[i:i + 50] = b"\xff" * 50
    return bytes(raw)


CASES["corrupt deflate"] = ("m.npz", corrupt_npz(), None, ["W_head.npy is damaged"])
buf = io.BytesIO()
np.save(buf, np.array([{"x": 1}, None], dtype=object), allow_pickle=True)
CASES["object array (a pickle)"] = ("m.npz", zip_of({"W_head.npy": buf.getvalue()}), None,
                                    ["holds Python objects", "never loaded"])


@pytest.fixture(scope="module")
def loaded():
    """A session holding a loaded model, and what it shows."""
    return session_with_a_model(W, CLS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_file_is_refused_in_words_and_changes_nothing(loaded, case):
    name, data, target, words = CASES[case]
    s = loaded
    before = (s.state.W_head.copy(), s.state.inputs.copy(), s.state.model,
              s.handle({"op": "export", "format": "npz"})["export"]["text"])
    tracemalloc.start()
    answer, asked = open_file(s, name, data, target=target)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert answer["ok"] is False, case
    message = answer["error"]["message"]
    # the file named once, first, as the page quotes a file's name (not as a JSON value)
    assert message.startswith(repr(name) + ": ") and message.count(name) == 1, message
    for w in words:
        assert w in message, message
    assert "Internal error" not in message
    np.testing.assert_array_equal(s.state.W_head, before[0])
    np.testing.assert_array_equal(s.state.inputs, before[1])
    assert s.state.model is before[2]
    assert s.handle({"op": "export", "format": "npz"})["export"]["text"] == before[3]
    assert peak < 40 * 2 ** 20, peak  # its time: benchmarks/refusal_bench.py
    assert sum(n for _, n in asked) < 2 ** 20 or "bomb" in case, "read more than its headers"


def test_a_file_over_300_mb_is_refused_before_any_byte_is_read():
    s = Session()
    answer, asked = open_file(s, "vit_large.safetensors", b"", size=301 * 2 ** 20)
    assert not answer["ok"] and asked == []
    assert "301 MB, over the limit of 300 MB: nothing was read" in answer["error"]["message"]


def test_an_honest_zip_bomb_is_refused_before_its_member_is_asked_for():
    data = CASES["zip bomb, honest size"][1]
    answer, asked = open_file(Session(), "m.npz", data)
    assert not answer["ok"]
    member = data.index(b"PK\x03\x04")
    assert all(o + n <= member + 30 or o >= len(data) - 70000 for o, n in asked if n) or \
        sum(n for _, n in asked) <= 2 * (65536 + 22)


def test_parts_that_are_not_base64_past_the_end_or_too_big_are_refused():
    s = Session()
    bad = {"op": "open_file", "name": "m.npz", "size": 10, "first": True, "parts": [[0, "!!"]]}
    assert "not base64" in s.handle(bad)["error"]["message"]
    bad["parts"] = [[8, "AAAAAA=="]]
    assert "ends past its size" in s.handle(bad)["error"]["message"]
    bad.update(size=2 ** 24, parts=[[0, "A" * (6 * 2 ** 20)]])
    assert "over 4 MB: send at most 4 MB a request" in s.handle(bad)["error"]["message"]


def test_a_reading_is_let_go_by_any_other_action_and_by_another_file():
    data = npz_bytes(W_head=RNG.standard_normal((300, 200)), cls=RNG.standard_normal((2, 300)))
    s = Session()
    first = open_file(s, "m.npz", data, rounds=1)
    assert first[0]["ok"] and first[0]["file"]["need"]  # still reading
    s.handle({"op": "equations"})
    offset, length = first[0]["file"]["need"][0]
    more = {"op": "open_file", "name": "m.npz", "size": len(data),
            "parts": [[offset, __import__("base64").b64encode(data[offset:offset + length]).decode()]]}
    answer = s.handle(more)
    assert not answer["ok"] and "not the file being read" in answer["error"]["message"]
    assert open_file(s, "m.npz", data)[0]["ok"]  # from its first request: read whole


def test_the_largest_file_a_state_allows_loads_in_short_requests_of_bounded_memory():
    """A 1024 x 1000 W_head beside a 32 x 64 x 1024 encoder output, float64 (24 MB): sent 4 MB a
    request, none holding the file's text at once (how long each holds Python:
    benchmarks/refusal_bench.py)."""
    data = npz_bytes(W_head=RNG.standard_normal((1024, 1000)),
                     encoder_output=RNG.standard_normal((32, 64, 1024)))
    s = Session()
    handle, peaks = s.handle_json, []

    def measured(text):
        tracemalloc.start()
        try:
            return handle(text)
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
    s.handle_json = measured
    answer, asked = open_file(s, "largest.npz", data)
    assert answer["ok"], answer["error"]
    assert s.state.encoder_output.shape == (32, 64, 1024) and len(peaks) >= 7
    assert max(n for _, n in asked) <= 4 * 2 ** 20
    assert max(peaks) < 100 * 2 ** 20, peaks
