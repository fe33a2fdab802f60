"""The explorer state to and from JSON: the format of the page's links (``#state=``, see
docs/interface.md) and of "State as JSON".

``{"W_head": M, "cls": M, "options": {...}}`` or the same with ``"encoder_output"``
instead of ``"cls"``. A matrix ``M`` is a nested list of numbers or, for big matrices,
the compact form of :mod:`pycore.explorer.state.recipes`. ``options`` holds only the options that
differ from :data:`~pycore.explorer.state.explorer_state.DEFAULT_OPTIONS`; unknown top-level keys
and unknown options are ignored (newer pages may add some), known ones are validated.

Fine-tuning adds two top-level keys, each written only when it differs from its default
(pycore/explorer/state/finetuning.py): ``labels`` (B class indices; absent: every sample 0) and
``train`` (the training settings that differ from their defaults).
"""

import math

import numpy as np

from ...vit.checks import describe_nonfinite
from ..digits.images import check_texts
from ..errors import StateError
from .explorer_state import (_DIMS, DEFAULT_OPTIONS, FORMER_MISTAKES, FORMER_OPTIONS, PATTERN,
                             ExplorerState, check_fit, check_limits, check_option, check_seed,
                             check_size, dims_text, quoted, shown)
from .finetuning import check_labels, labels_to_json, train_from_json, train_to_json
from .recipes import Recipe, sparse_recipe

COMPACT_MIN = 1024
"""Matrices with more elements than this are written in compact form when they came
from a preset (or are mostly zeros), so a ViT-B/16-sized link stays short."""

_NUMBER_TYPES = (int, float)


def _where(key, path):
    return "{}[{}]".format(key, ",".join(str(i) for i in path)) if path else key


def _is_number(v):
    return type(v) in _NUMBER_TYPES or (
        isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool))


def _bad_element(key, path, v):
    if isinstance(v, list):
        return StateError("{} is a list, but {} is {}-D ({})".format(
            _where(key, path), key, len(_DIMS[key]), PATTERN[key]), key=key, index=path)
    return StateError("{} is {}, not a number".format(_where(key, path), shown(v)),
                      key=key, index=path)


def _lists_to_array(value, key):
    dims = _DIMS[key]
    level, paths, shape = [value], [()], []
    for depth, dim in enumerate(dims):
        expected = None
        next_level, next_paths = [], []
        for node, path in zip(level, paths):
            if not isinstance(node, list):
                what = "a number" if _is_number(node) else shown(node)
                raise StateError("{} is {} where a list was expected: {} is {}-D ({})".format(
                    _where(key, path), what, key, len(dims), PATTERN[key]),
                    key=key, index=path or None)
            n = len(node)
            if expected is None:
                if n == 0:
                    raise StateError("{} is empty: {} must be at least 1 ({} is {})".format(
                        _where(key, path), dim.replace("N1", "N+1"), key, PATTERN[key]),
                        key=key, index=path or None)
                check_limits(**{dim: n})
                expected, first = n, path
            elif n != expected:
                raise StateError("{} has {} entries but {} has {}: {} must be rectangular "
                                 "({})".format(_where(key, path), n, _where(key, first),
                                               expected, key, PATTERN[key]),
                                 key=key, index=path)
            if depth < len(dims) - 1:
                next_level.extend(node)
                next_paths.extend(path + (i,) for i in range(n))
        shape.append(expected)
        if depth < len(dims) - 1:
            level, paths = next_level, next_paths
    check_size(key, shape)
    for row, path in zip(level, paths):
        if not all(type(v) in _NUMBER_TYPES for v in row):
            for j, v in enumerate(row):
                if not _is_number(v):
                    raise _bad_element(key, path + (j,), v)
    try:
        arr = np.array(level, dtype=np.float64)
    except (OverflowError, ValueError, TypeError):
        for row, path in zip(level, paths):
            for j, v in enumerate(row):
                try:
                    float(v)
                except (OverflowError, ValueError, TypeError):
                    raise StateError("{} is too large for float64".format(
                        _where(key, path + (j,))), key=key, index=path + (j,)) from None
        raise StateError("{} could not be read as numbers".format(key), key=key)
    arr = arr.reshape(shape)
    _check_finite(arr, key)
    return arr


def _check_finite(arr, key):
    bad, message = describe_nonfinite(arr, key)
    if bad is not None:
        raise StateError(message, key=key, index=bad)


def _int_list(value, key, name, ndim, minimum=1):
    if not isinstance(value, list) or len(value) != ndim or not all(
            type(v) is int and v >= minimum for v in value):
        raise StateError("{}: the compact form's {} must be a list of {} whole numbers >= {}; "
                         "got {}".format(key, name, ndim, minimum, shown(value)), key=key)
    return tuple(value)


_RECIPE_KEYS = ("preset", "seed", "shape", "scale", "decimals", "keep", "size", "edits",
                "digits")


def _recipe_from_json(d, key):
    dims = _DIMS[key]
    ndim = len(dims)
    unknown = sorted(str(k) for k in d if k not in _RECIPE_KEYS)
    if unknown:
        raise StateError("{}: unknown key {} in the compact form (it may hold {})".format(
            key, quoted(unknown[0]), ", ".join(_RECIPE_KEYS)), key=key)
    preset = d.get("preset")
    if preset not in ("random", "zeros", "tiny-vit"):
        raise StateError("{}: the compact form's preset must be \"random\", \"zeros\" or "
                         "\"tiny-vit\"; got {}".format(key, shown(preset)), key=key)
    digit_texts = _tiny_vit_digits(d, key) if preset == "tiny-vit" else None
    # Both the generated matrix (shape) and the one kept (size) are made: check both first.
    shape = _int_list(d.get("shape"), key, "shape", ndim)
    check_size(key, shape)
    size = _int_list(d["size"], key, "size", ndim) if "size" in d else shape
    check_size(key, size)
    keep = _int_list(d["keep"], key, "keep", ndim, minimum=0) if "keep" in d else None
    if keep is not None and any(k > min(a, b) for k, a, b in zip(keep, shape, size)):
        raise StateError("{}: the compact form's keep {} must fit in both shape {} and size "
                         "{}".format(key, list(keep), list(shape), list(size)), key=key)
    seed, scale, decimals = 0, 1.0, None
    if preset == "random":
        seed, scale, decimals = d.get("seed"), d.get("scale"), d.get("decimals")
        check_seed(seed, "{}: the compact form's seed".format(key), key=key)
        if type(scale) not in _NUMBER_TYPES or not math.isfinite(scale) or scale < 0:
            raise StateError("{}: the compact form's scale must be a finite number >= 0; got "
                             "{}".format(key, shown(scale)), key=key)
        if decimals is not None and (type(decimals) is not int or not 0 <= decimals <= 15):
            raise StateError("{}: the compact form's decimals must be a whole number from 0 "
                             "to 15; got {}".format(key, shown(decimals)), key=key)
    else:
        extra = [k for k in ("seed", "scale", "decimals") if k in d]
        if extra:
            raise StateError("{}: {!r} belongs to preset \"random\" only, not \"{}\"".format(
                key, extra[0], preset), key=key)
    edits = d.get("edits", [])
    if not isinstance(edits, list):
        raise StateError("{}: the compact form's edits must be a list of [{}, value]; got "
                         "{}".format(key, ", ".join(dims), shown(edits)), key=key)
    if len(edits) > int(np.prod(size)):
        raise StateError("{}: the compact form has more edits ({}) than cells".format(
            key, len(edits)), key=key)
    parsed = {}
    for n, edit in enumerate(edits):
        if not (isinstance(edit, list) and len(edit) == ndim + 1
                and all(type(i) is int for i in edit[:ndim])
                and type(edit[ndim]) in _NUMBER_TYPES):
            raise StateError("{}: edit {} must be [{}, value] with whole-number indices; got "
                             "{}".format(key, n, ", ".join(dims), shown(edit) if not
                                         isinstance(edit, list) else edit[:ndim + 2]), key=key)
        index = tuple(edit[:ndim])
        if not all(0 <= i < s for i, s in zip(index, size)):
            raise StateError("{}: edit {} is at {}, outside the {} matrix".format(
                key, n, _where(key, index), dims_text(size)), key=key)
        try:
            value = float(edit[ndim])
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            raise StateError("{}: edit {} ({}) is not a finite number".format(
                key, n, _where(key, index)), key=key, index=index)
        parsed[index] = value
    recipe = Recipe(preset, shape, seed, scale, decimals, keep, size, parsed, digit_texts)
    arr = recipe.materialize()
    _check_finite(arr, key)
    return arr, recipe


def _tiny_vit_digits(d, key):
    """The images of a "tiny-vit" compact form (its encoder output), or None (its W_head)."""
    if key == "cls" or (key == "W_head") == ("digits" in d):
        raise StateError("{}: a \"tiny-vit\" compact form is the model's W_head (no digits) or "
                         "its encoder_output (with digits)".format(key), key=key)
    if key == "W_head":
        return None
    texts = check_texts(d["digits"], "{}: digits".format(key))
    if "digits" in d and isinstance(d.get("shape"), list) and d["shape"][:1] != [len(texts)]:
        raise StateError("{}: the compact form has {} digits but shape {}".format(
            key, len(texts), shown(d.get("shape"))), key=key)
    return texts


def matrix_from_json(value, key):
    """Read one matrix of the state (nested lists or compact form).

    Returns
    -------
    (numpy.ndarray, Recipe or None)

    Raises
    ------
    StateError
        Naming the key, the index and the expected shape.
    """
    if isinstance(value, dict):
        return _recipe_from_json(value, key)
    if isinstance(value, list):
        return _lists_to_array(value, key), None
    raise StateError("{} must be a list of rows ({}) or a compact form {{\"preset\": ...}}; "
                     "got {}".format(key, PATTERN[key], shown(value)), key=key)


def matrix_to_json(state, key):
    """One matrix of ``state`` as JSON: compact when it came from a preset (or is mostly
    zeros) and has more than :data:`COMPACT_MIN` elements, nested lists otherwise."""
    arr = state.matrix(key)
    recipe = state.generated.get(key)
    if recipe is not None and recipe.preset == "tiny-vit":
        return recipe.to_json()  # pixels, not numbers: a real-ViT link stays short
    if arr.size > COMPACT_MIN:
        if recipe is not None:
            return recipe.to_json()
        if np.count_nonzero(arr) * 4 <= arr.size:
            return sparse_recipe(arr).to_json()
    return arr.tolist()


def _options_from_json(value, B, C):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StateError("options must be an object; got {}".format(shown(value)),
                         key="options")
    for old, new in FORMER_OPTIONS.items():
        if old in value and new not in value:
            value = dict(value, **{new: value[old]})
    if value.get("mistake") in FORMER_MISTAKES and value.get("variant") is None:
        value = dict(value, mistake=None, variant=value["mistake"])
    return dict((name, check_option(name, value[name], B, C))
                for name in DEFAULT_OPTIONS if name in value)


def state_from_json(obj):
    """Build and validate an :class:`ExplorerState` from parsed JSON.

    Parameters
    ----------
    obj : object
        Whatever ``json.loads`` gave (anything at all is handled).

    Returns
    -------
    ExplorerState

    Raises
    ------
    StateError
        The only exception, whatever ``obj`` is: not an object, missing W_head, both or
        neither of cls and encoder_output, ragged or non-numeric lists, NaN/inf, sizes
        over :data:`~pycore.explorer.state.explorer_state.LIMITS` or
        :data:`~pycore.explorer.state.explorer_state.ELEMENT_LIMITS`, shapes that do not fit, bad
        options.

    Examples
    --------
    >>> s = state_from_json({"W_head": [[1], [2]], "cls": [[3, 4]]})
    >>> s.mode, s.W_head.shape, s.options["sample"]
    ('cls', (2, 1), 0)
    """
    if not isinstance(obj, dict):
        raise StateError("the state must be a JSON object with W_head and cls or "
                         "encoder_output; got {}".format(shown(obj)))
    if obj.get("W_head") is None:
        raise StateError("the state has no W_head (D × C)", key="W_head")
    has_cls, has_z = obj.get("cls") is not None, obj.get("encoder_output") is not None
    if has_cls and has_z:
        raise StateError("the state has both cls and encoder_output: it must have exactly one",
                         key="encoder_output")
    if not (has_cls or has_z):
        raise StateError("the state needs cls (B × D) or encoder_output (B × (N+1) × D)",
                         key="cls")
    input_key = "cls" if has_cls else "encoder_output"
    W, W_recipe = matrix_from_json(obj["W_head"], "W_head")
    X, X_recipe = matrix_from_json(obj[input_key], input_key)
    check_fit(W, X, input_key)
    options = _options_from_json(obj.get("options"), X.shape[0], W.shape[1])
    labels = check_labels(obj.get("labels"), X.shape[0], W.shape[1])
    train = train_from_json(obj.get("train"))
    generated = {}
    if W_recipe is not None:
        generated["W_head"] = W_recipe
    if X_recipe is not None:
        generated[input_key] = X_recipe
    return ExplorerState(W, X if has_cls else None, None if has_cls else X, options,
                         generated, copy=False, labels=labels, train=train)


def state_to_json(state):
    """The state as a JSON-ready dict (see the module docstring).

    Examples
    --------
    >>> s = ExplorerState([[1.0], [2.0]], cls=[[3.0, 4.0]], options={"sample": 0})
    >>> state_to_json(s)
    {'W_head': [[1.0], [2.0]], 'cls': [[3.0, 4.0]]}
    """
    out = {"W_head": matrix_to_json(state, "W_head"),
           state.input_key: matrix_to_json(state, state.input_key)}
    options = dict((k, state.options[k]) for k in DEFAULT_OPTIONS
                   if k in state.options and state.options[k] != DEFAULT_OPTIONS[k])
    if options:
        out["options"] = options
    labels, train = labels_to_json(state.labels), train_to_json(state.train)
    if labels is not None:
        out["labels"] = labels
    if train is not None:
        out["train"] = train
    return out
