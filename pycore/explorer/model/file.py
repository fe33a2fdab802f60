"""A lecturer's own model, from a file: which arrays it holds, every check before its data is
read, and the state it becomes; and the state written back as an ``.npz``.

Recognised names (docs/own-model.md):

* ``.npz``: ``W_head`` (D, C), ``cls`` (B, D) or ``encoder_output`` (B, N+1, D), and optionally
  ``labels`` (B,), ``class_names`` (C,), the real head's ``ln_gamma``, ``ln_beta`` (D,),
  ``b_head`` (C,) and ``ln_eps`` (a number), and ``hidden_cls`` (L+1, B, D): the CLS row of the
  embedded tokens and of each block's output, taken with the CLS vectors, for the head at every
  depth (a logit lens);
* ``.safetensors``: the same names, or timm's (``head.weight`` (C, D), ``head.bias``,
  ``norm.weight``, ``norm.bias``) or Hugging Face ViT's (``classifier.weight`` (C, D),
  ``classifier.bias``, ``vit.layernorm.weight``, ``vit.layernorm.bias``); PyTorch's (C, D)
  weights are transposed to the (D, C) the page teaches;
* ``.npy``: one matrix, for the grid that has focus (``target``).

Floating-point data of any width (float16, bfloat16, float32, float64) is read as float64.
"""
import io

import numpy as np

from ...vit.checks import describe_nonfinite
from ..errors import StateError
from ..state.explorer_state import (ExplorerState, check_size, dims_text, has_real_head,
                                    hidden_cls_of)
from .file_parts import FILE_MAX, READ_MAX, NeedBytes, Source
from .npy_npz import npy_entries, npz_entries
from .safetensors_file import safetensors_entries

EXTENSIONS = (".npz", ".safetensors", ".npy")
EPS = {"npz": 1e-6, "timm": 1e-6, "hf": 1e-12}  # each library's LayerNorm epsilon for ViT
# name in the file -> (role, transposed: stored as PyTorch's (C, D), library)
NAMES = {
    "head.weight": ("W_head", True, "timm"), "head.bias": ("b_head", False, "timm"),
    "norm.weight": ("ln_gamma", False, "timm"), "norm.bias": ("ln_beta", False, "timm"),
    "classifier.weight": ("W_head", True, "hf"), "classifier.bias": ("b_head", False, "hf"),
    "vit.layernorm.weight": ("ln_gamma", False, "hf"),
    "vit.layernorm.bias": ("ln_beta", False, "hf"),
}
ROLES = ("W_head", "cls", "encoder_output", "labels", "class_names", "ln_gamma", "ln_beta",
         "b_head", "ln_eps", "hidden_cls")
for _role in ROLES:
    NAMES[_role] = (_role, False, "npz")
SHAPES = {"W_head": "(D, C)", "cls": "(B, D)", "encoder_output": "(B, N+1, D)", "labels": "(B,)",
          "class_names": "(C,)", "ln_gamma": "(D,)", "ln_beta": "(D,)", "b_head": "(C,)",
          "ln_eps": "() (one number)", "hidden_cls": "(L+1, B, D)"}
RANKS = {"W_head": 2, "cls": 2, "encoder_output": 3, "labels": 1, "class_names": 1,
         "ln_gamma": 1, "ln_beta": 1, "b_head": 1, "ln_eps": 0, "hidden_cls": 3}
DEPTHS_MAX = 65  # hidden_cls's L+1 at most: a ViT-H/14 has 32 blocks, ViT-22B 48
EXPECTED = ("W_head (D, C) with cls (B, D) or encoder_output (B, N+1, D), as in docs/own-model.md; "
            "or timm's head.weight or Hugging Face's classifier.weight (C, D)")
NAME_CHARS = 60
"""A class name is shown in at most this many characters (:func:`short_name`, in the page's text,
tables and selects); the page keeps the whole name for its hover and the name's title."""
NAME_KEPT_CHARS = 300
"""A class name is kept in at most this many characters (ImageNet-21k's longest has about 200)."""
INPUT_KEYS = ("cls", "encoder_output")


def short_name(name, limit=NAME_CHARS):
    """A class name of at most ``limit`` characters: a longer one cut after its last whole word
    (or comma-separated part) that fits, with an ellipsis.

    Examples
    --------
    >>> short_name("German shepherd, German shepherd dog, German police dog, alsatian")
    'German shepherd, German shepherd dog, German police dog\u2026'
    >>> short_name("x" * 70) == "x" * 59 + "\u2026"
    True
    """
    if len(name) <= limit:
        return name
    cut = name[:limit - 1]
    for sep in (", ", " "):
        at = cut.rfind(sep)
        if at >= limit // 2:
            return cut[:at].rstrip(" ,;") + "\u2026"
    return cut + "\u2026"


def file_kind(name, size):
    """The file's format from its name, refused by its size before anything is read."""
    kind = next((ext[1:] for ext in EXTENSIONS if str(name).lower().endswith(ext)), None)
    if kind is None:
        raise StateError("%s: the page reads .npz, .safetensors or .npy files" % named(name),
                         key="file")
    if size == 0:
        raise StateError("%s: the file is empty (0 bytes): nothing to read" % named(name),
                         key="file")
    if size > FILE_MAX:
        raise StateError("%s is %s MB, over the limit of %d MB: nothing was read (the page needs "
                         "only the head; docs/own-model.md writes it alone)"
                         % (named(name), "{:,.0f}".format(size / 2.0 ** 20), FILE_MAX >> 20),
                         key="file")
    return kind


def named(name):
    name = str(name)
    return repr(name if len(name) <= 60 else name[:60] + "...")


def _dtype_problem(role, entry):
    dtype = entry.dtype
    kind = "f" if isinstance(dtype, str) else dtype.kind
    if role == "class_names":
        return None if kind in "US" else "text (strings)"
    if role == "labels":
        return None if kind in "iu" else "whole numbers (an integer dtype)"
    if kind == "f":
        return None
    word = {"i": "integer", "u": "unsigned integer", "b": "boolean", "c": "complex"}.get(kind, "")
    return "floating-point numbers (float16, bfloat16, float32 or float64), not %s%s" % (
        word + " " if word else "", entry.dtype_text())


def _found(entries, where):
    """{role: (entry, transposed, library)}; refuses a role named twice (in words naming the
    file, ``where``)."""
    found = {}
    for entry in entries:
        spec = NAMES.get(entry.name)
        if spec is None:
            continue
        if spec[0] in found:
            raise StateError("%s: both %r and %r are %s: keep one" % (
                where, found[spec[0]][0].name, entry.name, spec[0]), key="file")
        found[spec[0]] = (entry,) + spec[1:]
    return found


def _shape(found, role):
    entry, transposed = found[role][:2]
    return entry.shape[::-1] if transposed else entry.shape


def _check_before_reading(found, state, where):
    """Every dtype, rank and size, and how the arrays fit together, from the headers alone."""
    for role, (entry, transposed, lib) in found.items():
        problem = _dtype_problem(role, entry)
        if problem:
            raise StateError("%s: %s is %s; expected %s" % (where, entry.name, entry.dtype_text(),
                                                          problem), key="file")
        if len(entry.shape) != RANKS[role]:
            raise StateError("%s: %s has shape %s; expected %s %s" % (
                where, entry.name, dims_text(entry.shape) or "()", role, SHAPES[role]), key="file")
    for key in ("W_head",) + INPUT_KEYS:
        if key in found:
            try:
                check_size(key, _shape(found, key))
            except StateError as err:
                raise StateError("%s: %s %s: %s; nothing was read of it" % (
                    where, key, dims_text(_shape(found, key)), err), key="file") from None
    if "cls" in found and "encoder_output" in found:
        raise StateError("%s: holds both cls and encoder_output; keep one" % where, key="file")
    W = _shape(found, "W_head") if "W_head" in found else state.W_head.shape
    inputs = next((k for k in INPUT_KEYS if k in found), None)
    B = _shape(found, inputs)[0] if inputs else state.B
    D, C = W
    if inputs and "W_head" not in found and _shape(found, inputs)[-1] != D:
        raise StateError(
            "%s: %s has D = %d features, but the W_head shown has D = %d (%s): load the model's "
            "head first (or a file with both)" % (where, inputs, _shape(found, inputs)[-1], D,
                                                  dims_text(W)), key="file")
    sizes = {"ln_gamma": D, "ln_beta": D, "b_head": C, "class_names": C, "labels": B}
    for role, size in sizes.items():
        if role in found and _shape(found, role) != (size,):
            raise StateError("%s: %s has shape %s; expected (%d,) to match W_head %s%s" % (
                where, found[role][0].name, dims_text(_shape(found, role)), size, dims_text(W),
                " and %d samples" % B if role == "labels" else ""), key="file")
    if "hidden_cls" in found:
        _check_depths(_shape(found, "hidden_cls"), inputs, B, D, where)
    other = _shape(found, inputs) if inputs else state.inputs.shape
    if D != other[-1] and C == other[-1] and (inputs or "W_head" in found):
        raise StateError("%s: W_head %s looks transposed: the head needs (D, C) with D = %d to "
                         "match %s %s (PyTorch stores a Linear layer's weight as (C, D): save "
                         "its .T)" % (where, dims_text(W), other[-1],
                                      inputs or state.input_key, dims_text(other)), key="file")
    if inputs and "W_head" in found and other[-1] != D:
        raise StateError("%s: W_head %s has D = %d rows but %s %s has D = %d features"
                         % (where, dims_text(W), D, inputs, dims_text(other), other[-1]),
                         key="file")


def _check_depths(shape, inputs, B, D, where):
    """hidden_cls (L+1, B, D) must come with the CLS vectors it was taken with, and fit them."""
    if not inputs:
        raise StateError("%s: hidden_cls needs the CLS vectors it was taken with: cls or "
                         "encoder_output in the same file" % where, key="file")
    if not (2 <= shape[0] <= DEPTHS_MAX and shape[1:] == (B, D)):
        raise StateError("%s: hidden_cls has shape %s; expected (L+1, B, D) = (L+1, %d, %d) with "
                         "L+1 from 2 to %d (the embedded tokens' CLS row and each block's)"
                         % (where, dims_text(shape), B, D, DEPTHS_MAX), key="file")


def _as_float(arr, name, where):
    out = np.array(arr, dtype=np.float64, order="C")
    if name == "ln_eps" and not (np.isfinite(out) and out > 0):
        # LayerNorm divides by sqrt(var + eps): with eps <= 0 a CLS vector of variance at most
        # -eps (all features equal, say) gives NaN or inf; NaN gives NaN everywhere, and inf
        # turns every input into beta
        raise StateError("%s: ln_eps is %s; expected a positive number (the LayerNorm epsilon, "
                         "such as 1e-6)" % (where, format(float(out), ".6g")), key="file")
    bad, message = describe_nonfinite(out, name)
    if bad is not None:
        raise StateError("%s: %s" % (where, message), key="file", index=bad)
    return out


def read_model(name, size, parts, state, target=None):
    """The arrays of a model file, by role, every check done (a refusal says what was found
    and what was expected, naming the file).

    Parameters
    ----------
    name : str
        The file's name (its extension says the format).
    size : int
        Its size in bytes.
    parts : list of (int, bytes)
        The byte ranges of it read so far.
    state : ExplorerState
        The state shown (a file with only the head, or only inputs, completes it).
    target : {"W_head", "cls", "encoder_output"}, optional
        Where a ``.npy``'s one matrix goes.

    Returns
    -------
    (dict, str)
        ``{role: array}`` (floats as float64, transposed to the page's layout; labels as int;
        class names as str) and the library its names follow ("npz", "timm" or "hf").

    Raises
    ------
    NeedBytes
        When the ranges it names must be read first.
    StateError
        For a file the page cannot use.
    """
    kind = file_kind(name, size)
    if sum(len(data) for _, data in parts) > READ_MAX:
        raise StateError("%s: more than %d MB were sent" % (named(name), READ_MAX >> 20),
                         key="file")
    source, where = Source(named(name), size, parts), named(name)
    if kind == "npy":
        if target not in ("W_head",) + INPUT_KEYS:
            raise StateError("%s: a .npy holds one matrix: click a cell of the grid it is for "
                             "(CLS vectors or W_head), then load it" % where, key="file")
        entries = npy_entries(source, target)
    elif kind == "npz":
        entries = npz_entries(source, lambda n: n in NAMES)
    else:
        entries = safetensors_entries(source)
    found = _found(entries, where)
    if "W_head" not in found and not any(k in found for k in INPUT_KEYS):
        names = [e.name for e in entries][:8]
        raise StateError("%s: found %s; expected %s" % (
            where, ", ".join(repr(n[:40]) for n in names) + (" and %d more" % (len(entries) - 8)
                                                            if len(entries) > 8 else "")
            if names else "no arrays", EXPECTED), key="file")
    _check_before_reading(found, state, where)
    ranges = [r for entry, _, _ in found.values() for r in entry.ranges]
    if sum(n for _, n in ranges) > READ_MAX:
        raise StateError("%s: its arrays hold more than %d MB: nothing was read of them"
                         % (where, READ_MAX >> 20), key="file")
    source.require(ranges)
    arrays, libs = {}, set()
    for role, (entry, transposed, lib) in found.items():
        libs.add(lib)
        arr = entry.load()
        if role == "class_names":
            arrays[role] = [short_name((v.decode("utf-8", "replace") if isinstance(v, bytes)
                                        else str(v)).strip(), NAME_KEPT_CHARS)
                            for v in arr.tolist()]
        elif role == "labels":
            arrays[role] = arr.astype(np.int64)
        else:
            arrays[role] = _as_float(arr.T if transposed else arr, role, where)
    lib = "timm" if "timm" in libs else "hf" if "hf" in libs else "npz"
    return arrays, lib


def model_state(state, arrays, lib, name):
    """The state a file's arrays make, and one line saying what was loaded.

    A file with only the head keeps the inputs shown when they have its D; otherwise the inputs
    become seeded random placeholders (said in the line) until a file with the CLS vectors comes.
    A file with only inputs keeps the head shown (and its real head's extras).
    """
    notes = []
    W = arrays.get("W_head", state.W_head)
    inputs_key = next((k for k in INPUT_KEYS if k in arrays), None)
    if inputs_key:
        inputs = arrays[inputs_key]
    elif state.inputs.shape[-1] == W.shape[0]:
        inputs_key, inputs = state.input_key, state.inputs
    else:
        inputs_key = "cls"
        inputs = np.random.RandomState(0).standard_normal((state.B, W.shape[0]))
        notes.append("The file has no CLS vectors, so %d seeded random ones of D = %d stand in: "
                     "load yours next (.npz with cls, or .npy into the CLS grid)."
                     % (state.B, W.shape[0]))
    model = state.model if "W_head" not in arrays else None
    extras = [r for r in ("ln_gamma", "ln_beta", "b_head", "class_names") if r in arrays]
    if "W_head" in arrays and extras:
        model = {"file": name, "library": lib, "eps": float(arrays.get("ln_eps", EPS[lib])),
                 "ln_gamma": arrays.get("ln_gamma"), "ln_beta": arrays.get("ln_beta"),
                 "b_head": arrays.get("b_head"), "class_names": arrays.get("class_names")}
    # the CLS rows at every depth belong to the inputs they came with: new inputs bring theirs
    # (or none); a head alone keeps those of the inputs it keeps
    depths = arrays.get("hidden_cls") if inputs_key in arrays else (
        (state.model or {}).get("hidden_cls") if inputs is state.inputs else None)
    if depths is not None or model is not None:
        model = dict(model or {"file": name, "library": lib,
                               "eps": float(arrays.get("ln_eps", EPS[lib])), "ln_gamma": None,
                               "ln_beta": None, "b_head": None, "class_names": None},
                     hidden_cls=depths)
    labels = arrays.get("labels")
    if labels is None and inputs.shape[0] == state.B and W.shape[1] == state.C:
        labels = state.labels
    if has_real_head(model) and "W_head" in arrays:
        notes.append("The pipeline shows its own head (LayerNorm with its \u03b3/\u03b2, its "
                     "bias); the problem's head, without them, is one click away.")
    options = {"variant": state.options.get("variant") if model is state.model else None}
    new = ExplorerState(W, **{inputs_key: inputs}, options=options, copy=False,
                        labels=None if labels is None else [int(v) for v in labels],
                        model=model)
    loaded = ", ".join("%s %s" % (r, "(%s)" % dims_text(np.shape(a)) if r != "class_names"
                                  else "(%d names)" % len(a))
                       for r, a in arrays.items())
    words = {"timm": " (timm's names)", "hf": " (Hugging Face's names)", "npz": ""}[lib]
    return new, " ".join(["Loaded from %s%s: %s." % (name, words, loaded)] + notes)


def state_npz(state):
    """The state as ``.npz`` bytes (NumPy's own writer, no pickles): W_head, the inputs, the
    labels, and the model file's extras; :func:`read_model` reads it back bit for bit."""
    arrays = {"W_head": state.W_head, state.input_key: state.inputs,
              "labels": np.array(state.labels, dtype=np.int64)}
    model = state.model or {}
    for role in ("ln_gamma", "ln_beta", "b_head"):
        if model.get(role) is not None:
            arrays[role] = model[role]
    if model.get("class_names") is not None:
        arrays["class_names"] = np.array(model["class_names"], dtype=str)
    if model:
        arrays["ln_eps"] = np.array(model["eps"])
    depths = hidden_cls_of(state)
    if depths is not None:
        arrays["hidden_cls"] = depths
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


__all__ = ["read_model", "model_state", "state_npz", "file_kind", "NeedBytes"]
