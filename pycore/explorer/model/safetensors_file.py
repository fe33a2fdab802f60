""".safetensors model files: 8 bytes of little-endian length, then a JSON header naming each
tensor's dtype, shape and byte offsets in the data that follows; every offset is checked against
the file before any data is read.
"""
import numpy as np

from ..errors import StateError
from ..state.link import json_loads
from .file_parts import LISTED_MAX, PROBE, Entry, checked_count, refuse

HEADER_MAX = 16 * 2 ** 20
"""The largest safetensors header read (a whole ViT-L checkpoint's is under 100 kB)."""
SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "bf16",
                      "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
                      "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?",
                      "C64": "<c8", "C128": "<c16"}


def safetensors_entries(source):
    """The tensors of a ``.safetensors`` file, every offset in its header checked against the
    file before any data is read."""
    source.require([(0, PROBE)])
    if source.size < 8:
        refuse(source, "is %d bytes long: a safetensors file starts with an 8-byte header "
                        "length" % source.size)
    n = int(np.frombuffer(source.read_at(0, 8), dtype="<u8")[0])
    if n > HEADER_MAX or 8 + n > source.size:
        refuse(source, "its header claims %s bytes, but %s: truncated, or not a safetensors "
                        "file" % ("{:,}".format(n), "the limit is %s" % "{:,}".format(HEADER_MAX)
                                  if n > HEADER_MAX else "the file has only %s after the length"
                                  % "{:,}".format(source.size - 8)))
    source.require([(8, n)])
    try:
        header = json_loads(source.read_at(8, n).decode("utf-8"), "its header",
                            values_max=8 * LISTED_MAX)  # a tensor's entry holds 4 to 8
    except StateError as err:
        refuse(source, str(err))
    except (UnicodeDecodeError, ValueError) as exc:
        refuse(source, "its header is not JSON (%s): truncated, or not a safetensors file"
                        % str(exc)[:80])
    if not isinstance(header, dict):
        refuse(source, "its header is not a JSON object of tensors")
    if len(header) > LISTED_MAX + 1:  # and its __metadata__
        refuse(source, "its header lists %s tensors; the page reads files of at most %s"
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
        refuse(source, "%s's header entry is not {dtype, shape, data_offsets} with whole "
                        "numbers" % where)
    code = spec.get("dtype")
    if not isinstance(code, str) or code not in SAFETENSORS_DTYPES:
        refuse(source, "%s has dtype %r, which the page cannot read (F16, BF16, F32 or F64)"
                        % (where, str(code)[:20]))
    dtype = "bf16" if code == "BF16" else np.dtype(SAFETENSORS_DTYPES[code])
    shape, (begin, end) = spec["shape"], spec["data_offsets"]
    count = checked_count(source, where, shape)
    nbytes = count * (2 if isinstance(dtype, str) else dtype.itemsize)
    if begin > end or end > data_len or end - begin != nbytes:
        refuse(source, "%s's data_offsets [%d, %d] do not fit: %s %s takes %s bytes, and the "
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
