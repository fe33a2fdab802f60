"""What a training run of the "Fine-tune the head" panel needs in Python memory, and the budget
it is held to: which heads a run trains, and whether a request keeps a copy to take its steps
back (docs/interface.md, "Limits").

A run keeps, beside the state, W_head-sized arrays (D × C float64 each)::

    the run's start W0                                        1
    each head: its W_head, and its optimizer's buffers        1 + OPTIMIZER_SLOTS[optimizer]
    one step's gradient dW_head (the answer's, afterwards)    1
    a copy of the correct head's optimizer buffers            OPTIMIZER_SLOTS[optimizer]
      (only while a request's steps may still be taken back, and only when it fits)

and a few (B, D) and (B, C) arrays per head. An answer may need more for a moment: the
pre-training MLP compared in "Other heads" draws its W1 (D × D) and W2 (D × C); the estimate
counts them whether or not that panel is open, since it can be opened at any time in a run.

At the largest state the limits allow (inputs of 2,097,152 numbers, a 1024 × 1000 W_head)
Adam's five heads would need about 190 MB, over the 150 MB budget: a run leaves out compared
heads, the last first, until it fits (three heads there); the correct head is always trained,
and no head's numbers change. The panel says which were left out and why (their curve's
``stopped``). Momentum's five fit there without the copy, SGD's with it.

Examples
--------
>>> round(need_mb(2097152, 64, 1024, 1000, "adam", 5))
190
>>> plan(2097152, 64, 1024, 1000, "adam", 5)
(3, False)
>>> plan(2097152, 64, 1024, 1000, "sgd", 5)
(5, True)
"""
from ...vit.optimizers import OPTIMIZER_CLASSES

MEMORY_MB = 150.0
"""Python memory a training request may need at its peak, the state included (megabytes of
1e6 bytes, as tracemalloc counts them)."""

OPTIMIZER_SLOTS = {name: cls.BUFFERS for name, cls in OPTIMIZER_CLASSES.items()}
"""Arrays of W_head's size each head's optimizer keeps between steps, {"sgd": 0, "momentum":
1, "adam": 2} (its update's temporaries are a block's, pycore.vit.optimizers.BLOCK_NUMBERS)."""

SMALL_ARRAYS = {"state": 2, "head": 1}
"""Pairs of (B, D) and (B, C) float64 arrays counted for the state's trace (CLS rows, their
LayerNorm, logits, softmax), and for each head (its rows or features, its logits and softmax
while it steps)."""

ANSWER_NUMBERS = {"D*D": 1, "D*C": 1}
"""What the largest comparison an answer computes draws for a moment, beside the run: the
pre-training MLP's W1 (D × D) and W2 (D × C) (pycore.explorer.comparisons.registry,
"mlp_gelu")."""

OTHER_MB = 2.0
"""Everything else a session holds (its Python objects, the answer being made)."""


def held_mb(inputs, B, D, C, optimizer, heads):
    """What a run of ``heads`` heads holds between requests, in MB, the state included: the
    state's arrays, the run's start, each head's W_head and optimizer buffers, the last
    gradient, the small arrays, and :data:`OTHER_MB` (what an export counts beside it,
    pycore.explorer.export.memory). ``heads`` = 0: the state alone.

    Examples
    --------
    >>> round(held_mb(2097152, 64, 1024, 1000, "adam", 3))
    122
    >>> round(held_mb(2097152, 64, 1024, 1000, "adam", 0))   # the state alone
    29
    """
    slots = OPTIMIZER_SLOTS[optimizer]
    w_heads = (1 + heads * (1 + slots) + 1) if heads else 0
    small = (SMALL_ARRAYS["state"] + SMALL_ARRAYS["head"] * heads) * B * (D + C)
    return 8.0 * ((inputs + D * C) + w_heads * D * C + small) / 1e6 + OTHER_MB


def need_mb(inputs, B, D, C, optimizer, heads, copy=False):
    """The estimated peak of Python memory, in MB, of a ``train`` request of a run of ``heads``
    heads, the state included: :func:`held_mb`, the copied buffers, and what the largest
    answer draws for a moment.

    Parameters
    ----------
    inputs : int
        Numbers in the state's inputs: B × (N+1) × D, or B × D in ``cls`` mode.
    B, D, C : int
    optimizer : {"sgd", "momentum", "adam"}
    heads : int
        Heads the run trains (the correct one and those compared).
    copy : bool, optional
        Whether the request copies the correct head's optimizer buffers (to take its steps
        back at once if they overflow).

    Returns
    -------
    float
    """
    copied = OPTIMIZER_SLOTS[optimizer] if copy else 0
    answer = ANSWER_NUMBERS["D*D"] * D * D + ANSWER_NUMBERS["D*C"] * D * C
    return held_mb(inputs, B, D, C, optimizer, heads) + 8.0 * (copied * D * C + answer) / 1e6


def plan(inputs, B, D, C, optimizer, heads, budget_mb=None):
    """(how many of the ``heads`` a run trains, whether a request may copy the correct head's
    optimizer buffers) so that :func:`need_mb` stays within ``budget_mb`` (None:
    :data:`MEMORY_MB`): the most heads that fit, at least one (the correct head alone, with
    Adam, needs about 88 MB at the largest state), then the copy if it fits too.

    Examples
    --------
    >>> plan(2097152, 64, 1024, 1000, "momentum", 5), plan(20, 2, 10, 3, "adam", 4)
    ((5, False), (4, True))
    """
    if budget_mb is None:
        budget_mb = MEMORY_MB
    kept = heads
    while kept > 1 and need_mb(inputs, B, D, C, optimizer, kept) > budget_mb:
        kept -= 1
    return kept, need_mb(inputs, B, D, C, optimizer, kept, copy=True) <= budget_mb


def left_out_text(names, optimizer, heads, B, D, C, inputs):
    """Why a run leaves out compared heads, as the panel says it (a left-out head's
    ``stopped``); ``names`` are the optimizers' as the panel writes them.

    Examples
    --------
    >>> names = {"sgd": "SGD", "momentum": "momentum", "adam": "Adam"}
    >>> print(left_out_text(names, "adam", 5, 64, 1024, 1000, 2097152))
    left out at this size: Adam keeps 3 arrays of 1024 × 1000 numbers for each head, ...
    """
    others = [o for o in ("momentum", "sgd") if o != optimizer
              and plan(inputs, B, D, C, o, heads)[0] == heads]
    return ("left out at this size: %s keeps %d array%s of %d × %d numbers for each head, and "
            "%d heads would need about %d MB of Python memory, over the %d MB a run may use "
            "(fewer compared heads%s train them all)" % (
                names[optimizer], 1 + OPTIMIZER_SLOTS[optimizer],
                "" if optimizer == "sgd" else "s", D, C, heads,
                round(need_mb(inputs, B, D, C, optimizer, heads)), MEMORY_MB,
                ", or %s," % " or ".join(names[o] for o in others) if others else ""))
