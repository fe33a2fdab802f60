"""The tiny ViT's weights: the name and shape of each (:func:`parameter_shapes`), and the check
a set of them passes before a model is made of it (:func:`check_params`).

The shipped weights are in ``weights.npz`` (:data:`WEIGHTS_PATH`), which
training/train_tiny_vit.py writes and :func:`pycore.vit.tiny.model.load_tiny_vit` reads.
"""

import os

import numpy as np

from .layers import IMAGE_SIDE, shape_text

CLASSES = 10
WEIGHTS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights.npz")


def parameter_shapes(patch_size, D, L, mlp_dim, classes=CLASSES):
    """The name and shape of every weight of a tiny ViT, in a fixed order.

    Parameters
    ----------
    patch_size : int
        P, a divisor of 8: the image is cut into N = (8 / P)**2 patches.
    D : int
        Width of every token.
    L : int
        The number of encoder blocks (the paper's L).
    mlp_dim : int
        Hidden width of each block's MLP.
    classes : int, optional
        Columns of W_head.

    Returns
    -------
    list of (str, tuple)
        ``E`` (P*P, D), ``b_E`` (D,), ``x_class`` (D,), ``E_pos`` (N+1, D), then for
        each block ``l`` the names ``block{l}.ln1_gamma`` ... ``block{l}.b_2``, then
        ``W_head`` (D, classes).

    Raises
    ------
    ValueError
        For a patch size that does not divide 8, or sizes below 1.

    Examples
    --------
    >>> shapes = dict(parameter_shapes(4, D=8, L=1, mlp_dim=16))
    >>> shapes["E"], shapes["E_pos"], shapes["block0.W_qkv"], shapes["W_head"]
    ((16, 8), (5, 8), (8, 24), (8, 10))
    """
    for name, value in (("patch_size", patch_size), ("D", D), ("L", L),
                        ("mlp_dim", mlp_dim), ("classes", classes)):
        if int(value) != value or value < 1:
            raise ValueError("{} must be a positive integer; got {!r}".format(name, value))
    if IMAGE_SIDE % patch_size:
        raise ValueError("patch_size must divide {}; got {}".format(IMAGE_SIDE, patch_size))
    N = (IMAGE_SIDE // patch_size) ** 2
    shapes = [("E", (patch_size * patch_size, D)), ("b_E", (D,)), ("x_class", (D,)),
              ("E_pos", (N + 1, D))]
    for l in range(L):
        p = "block{}.".format(l)
        shapes += [(p + "ln1_gamma", (D,)), (p + "ln1_beta", (D,)),
                   (p + "W_qkv", (D, 3 * D)), (p + "b_qkv", (3 * D,)),
                   (p + "W_o", (D, D)), (p + "b_o", (D,)),
                   (p + "ln2_gamma", (D,)), (p + "ln2_beta", (D,)),
                   (p + "W_1", (D, mlp_dim)), (p + "b_1", (mlp_dim,)),
                   (p + "W_2", (mlp_dim, D)), (p + "b_2", (D,))]
    shapes.append(("W_head", (D, classes)))
    return shapes


def check_params(params, patch_size):
    """The weights of a tiny ViT, checked against :func:`parameter_shapes` for the sizes they
    imply (D from ``E``, L from the blocks present, mlp_dim from ``block0.W_1``).

    Parameters
    ----------
    params : dict of str to array_like
        Every weight :func:`parameter_shapes` names, no more.
    patch_size : int
        P, a divisor of 8.

    Returns
    -------
    (dict of str to numpy.ndarray, (int, int, int))
        float64 copies of the weights, and (D, L, mlp_dim).

    Raises
    ------
    ValueError
        For a missing, unknown or misshapen weight (naming it and both shapes), or one holding
        NaN or infinity.

    Examples
    --------
    >>> params = {k: np.zeros(s) for k, s in parameter_shapes(4, D=8, L=2, mlp_dim=16)}
    >>> check_params(params, 4)[1]
    (8, 2, 16)
    >>> check_params(dict(params, E=np.zeros((16, 9))), 4)
    Traceback (most recent call last):
    ...
    ValueError: b_E must have shape (9,); got (8,)
    """
    E = np.asarray(params.get("E")) if "E" in params else None
    E_pos = np.asarray(params.get("E_pos")) if "E_pos" in params else None
    if E is None or E.ndim != 2 or E_pos is None or E_pos.ndim != 2:
        raise ValueError("params needs E (P*P, D) and E_pos (N+1, D)")
    D = E.shape[1]
    L = 0
    while "block{}.W_qkv".format(L) in params:
        L += 1
    W_1 = params.get("block0.W_1")
    if L < 1 or W_1 is None:
        raise ValueError("params needs at least one block (block0.W_qkv, block0.W_1, ...)")
    mlp_dim = np.asarray(W_1).shape[-1]
    expected = parameter_shapes(patch_size, D, L, mlp_dim)
    unknown = sorted(set(params) - set(name for name, _ in expected))
    if unknown:
        raise ValueError("unknown weights: {}".format(", ".join(unknown)))
    checked = {}
    for name, shape in expected:
        if name not in params:
            raise ValueError("the weight {} {} is missing".format(name, shape_text(shape)))
        value = np.array(params[name], dtype=np.float64)
        if value.shape != shape:
            raise ValueError("{} must have shape {}; got {}".format(
                name, shape_text(shape), shape_text(value.shape)))
        if not np.isfinite(value).all():
            raise ValueError("{} holds NaN or infinity".format(name))
        checked[name] = value
    return checked, (D, L, mlp_dim)
