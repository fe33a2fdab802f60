"""Exports: runnable NumPy code, the logits as CSV, the state as pretty JSON; and what each
export's file holds, in words (:func:`about`)."""

import numpy as np

from ..state.as_json import COMPACT_MIN, state_to_json
from ..state.explorer_state import dims_text, real_head
from ..state.link import js_json
from ..state.recipes import sparse_recipe

_HEAD_CODE = '''

def layer_norm(x, eps=1e-6):
    """(x - mean) / sqrt(var + eps) over the last axis; population variance, no gamma/beta."""
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def classification_head(encoder_output, W_head):
    """ViT's fine-tuning head: the CLS token (position 0), LayerNorm, then W_head.
    Returns raw logits: no bias, no softmax, no activation."""
    h_cls = encoder_output[:, 0, :]
    return layer_norm(h_cls) @ W_head

'''


def _literal(arr, indent="    "):
    if arr.ndim == 1:
        return "[" + ", ".join(repr(float(v)) for v in arr) + "]"
    inner = (",\n" + indent).join(_literal(a, indent + " ") for a in arr)
    return "[" + inner + "]"


def code_recipe(arr, recipe):
    """The recipe the NumPy code regenerates ``arr`` from (``recipe``, or the sparse one of a
    mostly-zero matrix), or None when the code spells its numbers out: small matrices, dense
    ones, and the tiny ViT's (so the code runs without pycore)."""
    if arr.size > COMPACT_MIN and recipe is None and np.count_nonzero(arr) * 4 <= arr.size:
        recipe = sparse_recipe(arr)
    if arr.size <= COMPACT_MIN or recipe is None or recipe.preset == "tiny-vit":
        return None
    return recipe


def _matrix_code(name, arr, recipe):
    recipe = code_recipe(arr, recipe)
    if recipe is None:
        return "{} = np.array({})\n".format(name, _literal(arr, " " * (len(name) + 13)))
    lines = []
    shape = tuple(recipe.shape)
    if recipe.preset == "zeros":
        lines.append("{} = np.zeros({})".format(name, shape))
    else:
        lines.append("{} = np.random.RandomState({}).standard_normal({}) * {!r}".format(
            name, recipe.seed, shape, recipe.scale))
        if recipe.decimals is not None:
            lines.append("{0} = np.round({0}, {1}) + 0.0".format(name, recipe.decimals))
    if recipe.size != recipe.shape or recipe.keep != recipe.shape:
        lines.append("_generated = {}".format(name))
        lines.append("{} = np.zeros({})".format(name, tuple(recipe.size)))
        if all(recipe.keep):
            region = ", ".join(":{}".format(k) for k in recipe.keep)
            lines.append("{0}[{1}] = _generated[{1}]".format(name, region))
    for index, value in recipe.edits.items():
        lines.append("{}[{}] = {!r}".format(name, ", ".join(str(i) for i in index), value))
    return "\n".join(lines) + "\n"


def numpy_code(state):
    """A runnable Python snippet that reproduces the state's logits with plain NumPy.

    It holds ``import numpy as np``, the arrays as literals at full precision (``repr``)
    or, for big generated matrices, the ``RandomState`` line that regenerates them plus
    the edited cells, the head defined inline (LayerNorm eps 1e-6), and
    ``print(logits)``.

    Parameters
    ----------
    state : ExplorerState

    Returns
    -------
    str

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> ns = {}
    >>> exec(numpy_code(default_state()).replace("print(logits)", ""), ns)
    >>> ns["logits"].round(4).tolist()
    [[0.8854, -1.3914, 1.5811], [0.2, -0.1, -1.4]]
    """
    parts = ["# The ViT classification head, exported from the explorer.\n",
             "import numpy as np\n\n"]
    parts.append(_matrix_code("W_head", state.W_head, state.generated.get("W_head")))
    key = state.input_key
    parts.append(_matrix_code(key, state.inputs, state.generated.get(key)))
    parts.append(_HEAD_CODE)
    if key == "cls":
        parts.append("encoder_output = cls[:, None, :]   # the CLS rows as 1-token sequences\n")
    real = real_head(state)
    if real is None:
        parts.append("logits = classification_head(encoder_output, W_head)\n")
    else:  # the model file's own head, as the pipeline shows it
        D, C = state.W_head.shape
        gamma = np.ones(D) if real.gamma is None else real.gamma
        beta = np.zeros(D) if real.beta is None else real.beta
        bias = np.zeros(C) if real.b_head is None else real.b_head
        parts.append("\n# The model file's own head: LayerNorm with its eps, gamma and beta, "
                     "then W_head and its bias\n")
        for name, value in (("gamma", gamma), ("beta", beta), ("b_head", bias)):
            parts.append("%s = np.array(%s)\n" % (name, repr([float(v) for v in value])))
        parts.append("eps = %r\n" % float(real.eps))
        parts.append("h_cls = encoder_output[:, 0, :]\n"
                     "y = layer_norm(h_cls, eps) * gamma + beta\n"
                     "logits = y @ W_head + b_head\n")
    parts.append("print(logits)\n")
    return "".join(parts)


def logits_csv(logits):
    """The logits as CSV: header ``sample,class_0,...``, one row per sample, every value
    at full precision (``repr``, so it reads back as the same float64).

    Examples
    --------
    >>> print(logits_csv(np.array([[0.5, -1.25]])), end="")
    sample,class_0,class_1
    0,0.5,-1.25
    """
    logits = np.asarray(logits, dtype=np.float64)
    lines = ["sample," + ",".join("class_{}".format(c) for c in range(logits.shape[1]))]
    for b, row in enumerate(logits):
        lines.append(",".join([str(b)] + [repr(float(v)) for v in row]))
    return "\n".join(lines) + "\n"


def _pretty(value, indent, out):
    """Append ``value``'s pretty JSON to ``out`` in pieces (joined once, by the caller)."""
    pad = "  " * (indent + 1)
    if isinstance(value, dict) and value:
        out.append("{\n")
        for i, (k, v) in enumerate(value.items()):
            out.append("{}{}{}: ".format(",\n" if i else "", pad, js_json(str(k))))
            _pretty(v, indent + 1, out)
        out.append("\n" + "  " * indent + "}")
    elif isinstance(value, np.ndarray) and value.ndim == 1:
        out.append(js_json(value.tolist()))   # one row's Python floats at a time
    elif (isinstance(value, np.ndarray) and len(value)) or (
            isinstance(value, list) and value
            and all(isinstance(v, (list, dict)) for v in value)):
        out.append("[\n")
        for i, v in enumerate(value):
            out.append(",\n" + pad if i else pad)
            _pretty(v, indent + 1, out)
        out.append("\n" + "  " * indent + "]")
    else:
        out.append(js_json(value.tolist() if isinstance(value, np.ndarray) else value))


def state_json_text(state):
    """The state as pretty JSON text (one matrix row per line), readable by
    :func:`~pycore.state_json.state_from_json` after ``json.loads``.

    A matrix written out in numbers is spelled row by row from the array, and the pieces are
    joined once: the text is held at most twice, never as nested lists of Python floats
    (docs/interface.md, "Limits").

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> print(state_json_text(default_state()).splitlines()[1])
      "W_head": [
    """
    obj = state_to_json(state)
    for key in ("W_head", state.input_key):
        if isinstance(obj[key], list):   # numbers, not a recipe
            obj[key] = state.matrix(key)
    out = []
    _pretty(obj, 0, out)
    out.append("\n")
    return "".join(out)


MODEL_EXTRAS = {"ln_gamma": "\u03b3", "ln_beta": "\u03b2", "b_head": "bias",
                "class_names": "class names", "hidden_cls": "CLS rows at every depth"}
"""A model file's arrays beside W_head and the inputs, as the words below name them."""


def model_extras(state):
    """The names of the model file's extras the state holds (γ, β, bias, class names):
    what the .npz keeps and the JSON leaves out."""
    model = state.model or {}
    return [word for role, word in MODEL_EXTRAS.items() if model.get(role) is not None]


def _inputs_words(state):
    what = "the CLS vectors" if state.input_key == "cls" else "the encoder output"
    return "%s (%s)" % (what, dims_text(state.inputs.shape))


def about(state, fmt, run=None):
    """What an export's file holds, in words: the page says it when the file is saved or its
    text copied ("Downloaded vit_head.py (1.4 kB): a Python script that ...").

    Parameters
    ----------
    state : ExplorerState
    fmt : str
        "json", "numpy", "csv", "npz", or "training" (with ``run``, a finetune_run.Run).

    Examples
    --------
    >>> from pycore.explorer.state.presets import default_state
    >>> about(default_state(), "csv")
    'the 2 \u00d7 3 logits, a header and then one row per sample, one column per class, every ...'
    >>> about(default_state(), "numpy").endswith("prints these 2 \u00d7 3 logits")
    True
    """
    B, C = state.B, state.C
    w = "W_head (%s)" % dims_text(state.W_head.shape)
    inputs = _inputs_words(state)
    extras = model_extras(state)
    if fmt == "json":
        text = "%s, %s and the page's settings as JSON, every number in full" % (w, inputs)
        if extras:
            text += (" (not the model file's %s: \u201cState as .npz\u201d keeps them)"
                     % ", ".join(extras))
        return text
    if fmt == "numpy":
        head = (" (the model file's own: LayerNorm with its \u03b3 and \u03b2, then its bias)"
                if real_head(state) is not None else "")
        return ("a Python script that rebuilds %s and %s, computes the head%s with NumPy alone "
                "and prints these %d \u00d7 %d logits" % (w, inputs, head, B, C))
    if fmt == "csv":
        return ("the %d \u00d7 %d logits, a header and then one row per sample, one column per "
                "class, every number in full" % (B, C))
    if fmt == "npz":
        kept = [w, inputs, "the labels"] + (["the model file's %s" % ", ".join(extras)]
                                            if extras else [])
        return ("%s and %s as NumPy arrays, bit for bit; \u201cYour model\u2026\u201d opens "
                "it again" % (", ".join(kept[:-1]), kept[-1]))
    if fmt == "training":
        return ("a Python script that replays the run's %d step%s with NumPy alone and prints "
                "its losses" % (run.steps, "" if run.steps == 1 else "s"))
    raise ValueError("no export %r" % (fmt,))
