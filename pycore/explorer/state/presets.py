"""Ready-made states: the worked example (the default), seeded random ones, a
ViT-B/16-sized one, a small full encoder output, and labelled data to fine-tune the head on."""

import numpy as np

from ...vit.training import class_means_dataset
from ..errors import StateError
from ..shared import FINETUNE_PRESET, PRESETS
from .explorer_state import SEED_LIMIT, ExplorerState, check_seed, quoted
from .recipes import Recipe

WORKED_CLS = [[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]]
WORKED_W_HEAD = [[0.5, -0.2, 0.1], [0.3, 0.4, -0.5], [-0.1, 0.6, 0.2], [0.7, -0.3, 0.8]]
"""The worked example (docs/math.md): logits [[0.8854, -1.3914, 1.5811], [0.2, -0.1, -1.4]]."""


FINE_TUNING_PRESET = {"K": 10, "D": 64, "per_class": 6, "seed": 0, "spread": 2.0,
                      "lr": 0.1, "steps": 50}
"""The fine-tuning preset: :func:`pycore.vit.training.class_means_dataset` arguments (B = 60,
C = 10) and a learning rate and number of SGD steps from W_head = 0 that show the loss falling."""


def _generated(recipes, options):
    arrays = dict((key, r.materialize()) for key, r in recipes.items())
    return ExplorerState(arrays["W_head"], cls=arrays.get("cls"),
                         encoder_output=arrays.get("encoder_output"), options=options,
                         generated=recipes, copy=False)


def preset(name, seed=0):
    """A ready-made state.

    * ``"worked"``: the worked example of docs/math.md, B = 2, D = 4, C = 3 (the default).
    * ``"random"``: B = 2, D = 6, C = 4; cls ~ N(0, 1) and W_head ~ N(0, 0.5²), rounded to
      one decimal so they are easy to read and edit.
    * ``"vit-b16"``: B = 2, D = 768, C = 1000 (ImageNet-1k classes), cls mode; cls ~ N(0, 1)
      and W_head ~ N(0, 0.02²), the scale of a freshly initialised ViT linear layer
      (truncated-normal std 0.02 in common implementations; the original fine-tuning
      head is zero-initialised, which would make every logit 0).
    * ``"encoder"``: a full encoder output, B = 2, N+1 = 5, D = 4, C = 3, whose position 0 is
      the worked example's CLS rows (same W_head, same logits) and whose patch tokens are
      seeded N(0, 1) values with one decimal.
    * ``"finetune"``: labelled data for the "Fine-tune the head" panel (docs/training.md):
      K = 10 classes of CLS vectors (B = 60, D = 64) drawn around 10 class means by
      :func:`pycore.vit.training.class_means_dataset` (spread 2, from ``seed``), with their
      labels, and W_head = 0, the paper's start.

    Random values come from ``np.random.RandomState``: the cls (or patch tokens) from
    ``seed``, W_head from ``seed + 1``, identical in every NumPy version. ``seed`` is also
    stored as ``options["seed"]``.

    Parameters
    ----------
    name : str
        One of :data:`PRESETS`.
    seed : int, optional
        0 <= seed < 2**32.

    Returns
    -------
    ExplorerState

    Raises
    ------
    StateError
        Unknown name or bad seed.

    Examples
    --------
    >>> s = preset("vit-b16")
    >>> s.B, s.D, s.C, round(float(s.W_head.std()), 2)
    (2, 768, 1000, 0.02)
    """
    if not isinstance(name, str) or name not in PRESETS:
        raise StateError("unknown preset {}: choose {}".format(quoted(name), ", ".join(PRESETS)))
    seed = check_seed(seed)
    options = {"seed": seed}
    w_seed = (seed + 1) % SEED_LIMIT
    if name == "worked":
        return ExplorerState(WORKED_W_HEAD, cls=WORKED_CLS, options=options)
    if name == "random":
        return _generated({"cls": Recipe("random", (2, 6), seed, 1.0, 1),
                           "W_head": Recipe("random", (6, 4), w_seed, 0.5, 1)}, options)
    if name == "vit-b16":
        return _generated({"cls": Recipe("random", (2, 768), seed, 1.0),
                           "W_head": Recipe("random", (768, 1000), w_seed, 0.02)}, options)
    if name == FINETUNE_PRESET:
        p = FINE_TUNING_PRESET
        h_cls, labels = class_means_dataset(p["K"], p["D"], p["per_class"], seed=seed,
                                            spread=p["spread"])
        return ExplorerState(np.zeros((p["D"], p["K"])), cls=h_cls, options=options, copy=False,
                             labels=labels)
    z = Recipe("random", (2, 5, 4), seed, 1.0, 1).materialize()
    z[:, 0, :] = WORKED_CLS
    return ExplorerState(WORKED_W_HEAD, encoder_output=z, options=options, copy=False)


def default_state():
    """The worked example (``preset("worked")``; docs/math.md works it out by hand).

    Examples
    --------
    >>> default_state().cls.tolist()
    [[2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, -1.0]]
    """
    return preset("worked")
