"""Input checks shared by the head, the trace, the variants and the mistakes.

They turn array-likes into float64 arrays, or say exactly what is wrong:

* ``TypeError`` for data that is not real numbers (text, None, complex, booleans);
* ``ValueError`` for a wrong number of dimensions (naming the expected shape), for
  shapes that do not fit together (naming both), and for NaN or infinity (naming the
  first index, in C order).

NumPy arrays are never copied here unless their dtype must change.
"""

import numbers

import numpy as np


def shape_text(shape):
    """Format a shape like NumPy does, e.g. ``(2, 5, 4)`` or ``(3,)``.

    Examples
    --------
    >>> shape_text((2, 5)), shape_text((3,))
    ('(2, 5)', '(3,)')
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) == 1:
        return "({},)".format(shape[0])
    return "(" + ", ".join(str(s) for s in shape) + ")"


def _check_object_elements(arr, name):
    for flat, value in enumerate(arr.flat):
        index = np.unravel_index(flat, arr.shape) if arr.ndim else ()
        where = "{} at index {}".format(name, tuple(int(i) for i in index))
        if isinstance(value, (list, tuple, np.ndarray)):
            raise ValueError("{} is ragged: its rows have different lengths "
                             "(found a nested sequence {})".format(name, where[len(name) + 1:]))
        if isinstance(value, (bool, np.bool_)):
            raise TypeError("{} holds a boolean ({!r}): real numbers only".format(where, value))
        if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
            raise TypeError("{} holds a complex number ({!r}): real numbers only".format(
                where, value))
        if not isinstance(value, numbers.Real):
            raise TypeError("{} holds {!r}, which is not a number".format(where, value))


def real_array(x, name):
    """Return ``x`` as an ndarray with a real (integer or float) dtype.

    An ndarray is returned as it is (no copy); anything else goes through
    ``np.asarray``. The dtype is not changed yet, so a caller can slice first and
    convert only the part it needs.

    Parameters
    ----------
    x : array_like
        The input.
    name : str
        Its name in messages, e.g. ``"W_head"``.

    Returns
    -------
    numpy.ndarray
        With dtype kind integer, unsigned or float.

    Raises
    ------
    TypeError
        For text, booleans, complex numbers, None or other non-numeric data.
    ValueError
        For ragged nested lists.

    Examples
    --------
    >>> real_array([[1, 2], [3, 4]], "W_head").dtype.kind
    'i'
    >>> real_array([1j], "W_head")
    Traceback (most recent call last):
    ...
    TypeError: W_head is complex (dtype complex128): real numbers only
    """
    if isinstance(x, np.ndarray):
        arr = x
    else:
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError):
            raise ValueError("{} is ragged: its nested lists must have the same length "
                             "at each level".format(name)) from None
    kind = arr.dtype.kind
    if kind in "iuf":
        return arr
    if kind == "O":
        _check_object_elements(arr, name)
        return arr.astype(np.float64)
    if kind == "c":
        raise TypeError("{} is complex (dtype {}): real numbers only".format(name, arr.dtype))
    if kind == "b":
        raise TypeError("{} is boolean (dtype bool): real numbers only".format(name))
    if kind in "US":
        raise TypeError("{} holds text (dtype {}): real numbers only; parse it first".format(
            name, arr.dtype))
    raise TypeError("{} must hold real numbers; got dtype {}".format(name, arr.dtype))


def expect_ndim(arr, name, ndim, pattern, hint=""):
    """Raise ``ValueError`` unless ``arr.ndim == ndim``.

    Parameters
    ----------
    arr : numpy.ndarray
    name : str
    ndim : int
        The expected number of dimensions.
    pattern : str
        The expected shape in words, e.g. ``"(B, N+1, D)"``.
    hint : str, optional
        Appended to the message when given.

    Examples
    --------
    >>> expect_ndim(np.zeros((2, 4)), "encoder_output", 3, "(B, N+1, D)")
    Traceback (most recent call last):
    ...
    ValueError: encoder_output must be a 3-D array of shape (B, N+1, D); got a 2-D array of ...
    """
    if arr.ndim != ndim:
        message = "{} must be a {}-D array of shape {}; got a {}-D array of shape {}".format(
            name, ndim, pattern, arr.ndim, shape_text(arr.shape))
        raise ValueError(message + (" " + hint if hint else ""))


def first_nonfinite(arr):
    """Return the first (C-order) index of a NaN or infinity in ``arr``, or None.

    Examples
    --------
    >>> first_nonfinite(np.array([[1.0, 2.0], [np.inf, np.nan]]))
    (1, 0)
    >>> first_nonfinite(np.ones(3)) is None
    True
    """
    bad = ~np.isfinite(arr)
    if not bad.any():
        return None
    flat = int(np.argmax(bad))
    return tuple(int(i) for i in np.unravel_index(flat, arr.shape))


def value_word(value):
    """Name a non-finite value: ``'NaN'``, ``'inf'`` or ``'-inf'``."""
    value = float(value)
    if value != value:
        return "NaN"
    return "inf" if value > 0 else "-inf"


def describe_nonfinite(arr, name, to_index=None):
    """The first NaN or infinity of ``arr`` and the one sentence that names it.

    Parameters
    ----------
    arr : numpy.ndarray
        A float array.
    name : str
    to_index : callable, optional
        Maps an index of ``arr`` to the index reported (used when ``arr`` is a slice of
        the caller's array, e.g. the CLS rows of ``encoder_output``).

    Returns
    -------
    (tuple of int, str) or (None, None)
        The index as reported, and ``"<name>[i,j] is NaN: every number must be finite"``.

    Examples
    --------
    >>> describe_nonfinite(np.array([[1.0, np.inf]]), "W_head")
    ((0, 1), 'W_head[0,1] is inf: every number must be finite')
    """
    index = first_nonfinite(arr)
    if index is None:
        return None, None
    word = value_word(arr[index])
    shown = tuple(to_index(index)) if to_index is not None else index
    return shown, "{}[{}] is {}: every number must be finite".format(
        name, ",".join(str(i) for i in shown), word)


def check_finite(arr, name, to_index=None):
    """Raise ``ValueError`` naming the first NaN or infinity of ``arr`` (see
    :func:`describe_nonfinite`).

    Examples
    --------
    >>> check_finite(np.array([0.0, np.nan]), "cls")
    Traceback (most recent call last):
    ...
    ValueError: cls[1] is NaN: every number must be finite
    """
    index, message = describe_nonfinite(arr, name, to_index)
    if index is not None:
        raise ValueError(message)


def as_float64(arr):
    """Return ``arr`` as float64, without a copy when it already is."""
    if arr.dtype == np.float64:
        return arr
    return arr.astype(np.float64)


def cls_rows_from_encoder(encoder_output, check=True):
    """Check ``encoder_output`` and return ``(h_cls, shape)``: its CLS rows
    ``[:, 0, :]`` as float64 and the shape of the whole array.

    Only the CLS slice is converted and checked for NaN/inf: the patch tokens never
    enter the head, so they are not read (at ViT-B/16 scale the encoder output is
    77 MB; the CLS rows are 0.4 MB). With ``check=False`` the NaN/inf scan is left to
    the caller (the head infers it from the LayerNorm moments).

    Raises
    ------
    TypeError, ValueError
        As described in the module docstring.
    """
    z = real_array(encoder_output, "encoder_output")
    expect_ndim(z, "encoder_output", 3, "(B, N+1, D)",
                "(a 2-D array looks like the CLS rows alone: pass them as cls=...)"
                if z.ndim == 2 else "")
    if z.shape[1] < 1:
        raise ValueError("encoder_output has no tokens (shape {}): position 0, the CLS "
                         "token, must exist".format(shape_text(z.shape)))
    if z.shape[2] < 1:
        raise ValueError("encoder_output has D = 0 features (shape {}): LayerNorm needs "
                         "at least one".format(shape_text(z.shape)))
    h_cls = as_float64(z[:, 0, :])
    if check:
        check_finite(h_cls, "encoder_output", lambda i: (i[0], 0, i[1]))
    return h_cls, z.shape


def cls_rows(cls, check=True):
    """Check CLS rows ``cls`` (B, D) and return them as float64 (no copy if already);
    ``check=False`` leaves the NaN/inf scan to the caller."""
    h = real_array(cls, "cls")
    expect_ndim(h, "cls", 2, "(B, D)",
                "(a 3-D array looks like a whole encoder output: pass it as "
                "encoder_output=...)" if h.ndim == 3 else "")
    if h.shape[1] < 1:
        raise ValueError("cls has D = 0 features (shape {}): LayerNorm needs at least "
                         "one".format(shape_text(h.shape)))
    h = as_float64(h)
    if check:
        check_finite(h, "cls")
    return h


def w_head_for(W_head, D, other_name, other_shape):
    """Check ``W_head`` against the hidden size ``D`` and return it as float64.

    NaN/inf in ``W_head`` is not scanned here (that pass would cost as much as a
    third of the matrix product); callers check the logits instead and call
    :func:`explain_nonfinite_logits` when they are not finite.

    Raises
    ------
    ValueError
        Naming both shapes when ``W_head`` is not (D, C), and saying that ``W_head``
        looks transposed when it is (C, D).
    """
    W = real_array(W_head, "W_head")
    expect_ndim(W, "W_head", 2, "(D, C)")
    if W.shape[0] != D:
        if W.shape[1] == D:
            raise ValueError(
                "W_head looks transposed: it has shape {} = (C, D) but the head needs "
                "(D, C) = ({}, {}) to match {} of shape {}: transpose it".format(
                    shape_text(W.shape), D, W.shape[0], other_name, shape_text(other_shape)))
        raise ValueError(
            "W_head has shape {} but {} has shape {}: W_head must be (D, C) with D = {} "
            "rows".format(shape_text(W.shape), other_name, shape_text(other_shape), D))
    return as_float64(W)


def explain_nonfinite_logits(W):
    """Raise ``ValueError`` for logits that came out NaN or infinite.

    Called only after the CLS rows were found finite: either ``W_head`` holds a NaN or
    infinity (named by its first index), or the product overflowed float64.
    """
    check_finite(W, "W_head")
    raise ValueError("the logits overflowed float64 although every input is finite: "
                     "W_head holds values too large (largest magnitude {:.3g})".format(
                         float(np.max(np.abs(W)))))
