"""Model files as the tests write them, and the page's way of reading one, for the model-file
tests (tests/test_model_file*.py): a session is sent the byte ranges it asks for, as
web/js/page/modelfile.js does, from bytes written here with NumPy, the `safetensors` package or the
format's spec."""
import base64
import io
import json
import struct

import numpy as np


PROBE = 65536 + 22  # the first and last bytes the page sends with its first request


def open_file(session, name, data, target=None, size=None, rounds=40):
    """(final answer, the byte ranges asked for) of loading `data` as web/js/page/modelfile.js does:
    the first request with the file's first and last PROBE bytes, then one request per range
    the last answer asks for."""
    size = len(data) if size is None else size
    request = {"op": "open_file", "name": name, "size": size, "first": True,
               "parts": [[o, base64.b64encode(data[o:e]).decode()] for o, e in
                         ((0, min(PROBE, len(data))), (max(PROBE, len(data) - PROBE), len(data)))
                         if e > o]}
    if target:
        request["target"] = target
    asked = []
    for _ in range(rounds):
        answer = session.handle_json(json.dumps(request))
        if not answer["ok"] or answer["file"]["need"] is None or rounds == 1:
            return answer, asked
        offset, length = answer["file"]["need"][0]
        asked.append((offset, length))
        request = {"op": "open_file", "name": name, "size": size,
                   "parts": [[offset, base64.b64encode(data[offset:offset + length]).decode()]]}
    raise AssertionError("still asking after %d rounds" % rounds)


def npz_bytes(compressed=False, **arrays):
    out = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(out, **arrays)
    return out.getvalue()


def npy_bytes(arr, allow_pickle=False):
    out = io.BytesIO()
    np.save(out, arr, allow_pickle=allow_pickle)
    return out.getvalue()


def safetensors_by_spec(tensors):
    """A .safetensors file written from the format's spec (8-byte little-endian header length,
    the JSON header, the raw little-endian data): `tensors` {name: (dtype code, shape, bytes)}.
    Used for bfloat16, which NumPy (and so safetensors.numpy) cannot write."""
    header, blobs, offset = {}, [], 0
    for name, (code, shape, raw) in tensors.items():
        header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def bf16_values(rng, shape):
    """float32 values that bfloat16 holds exactly (their low 16 bits zero) and their bf16 bits."""
    bits = (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    exact = (bits.astype(np.uint32) << 16).view(np.float32)
    return exact, bits.astype("<u2").tobytes()


def real_head(cls, W, gamma, beta, b, eps):
    """The model's own head, written out here: gamma * (h - mean) / sqrt(var + eps) + beta,
    times W, plus b."""
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    return (gamma * (cls - mu) / np.sqrt(var + eps) + beta) @ W + b


def page_head(cls, W):
    mu = cls.mean(axis=1, keepdims=True)
    var = ((cls - mu) ** 2).mean(axis=1, keepdims=True)
    return ((cls - mu) / np.sqrt(var + 1e-6)) @ W


def session_with_a_model(W, cls):
    """A session that has loaded a model file (W_head, cls and a bias of ones): a refusal after
    it must leave that model as it was."""
    from pycore.explorer.session import Session
    s = Session()
    answer, _ = open_file(s, "good.npz", npz_bytes(W_head=W, cls=cls, b_head=np.ones(W.shape[1])))
    assert answer["ok"], answer["error"]
    return s
