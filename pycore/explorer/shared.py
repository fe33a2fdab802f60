"""Values the page's JavaScript needs too, defined here once.

The build writes them into the site as ``js/shared.js`` (buildtools/javascript/shared.py), an ES
module the page's scripts import; nothing under web/js keeps a copy (tests/test_shared_values.py
checks both). This module imports nothing, so the build, which never imports NumPy, reads it on its
own (``runpy.run_path``), and every name below that is not private goes to the page.

Examples
--------
>>> encoder_row(1, 2, 5)       # sample 1, token 2 of N+1 = 5: row 7 of the stacked (B*(N+1), D)
7
>>> encoder_position(7, 5)
(1, 2)
"""

LINK_MAX = 100000
"""The longest fragment (``state=...``) a link may have, written or read. Browsers accept a few
MB, but mail, chat and course platforms cut links far shorter; the page offers a larger state
as JSON instead (pycore/explorer/session.py). The page skips its preview of a longer link."""

LINK_SHARE_MAX = 2000
"""The longest link (the whole address) Copy link copies without asking. A longer one opens in
the browser, up to :data:`LINK_MAX`, but email clients, chat and course platforms (an LMS's link
field) cut or refuse links past about 2,000 characters: Copy link then says how long it is and
why, offers the state as .npz or JSON instead, and copies it only if asked
(web/js/page/share.js)."""

MAX_RUN_STEPS = 1000
"""Steps in one fine-tuning run; the curves travel whole in each answer, so they stay short.
The page stops playing a run that reached it."""

HEATMAP_IDS = {
    "encoder": "heatmap-encoder",      # encoder_output, samples stacked: (B*(N+1), D)
    "cls": "heatmap-cls",              # h_cls (B, D)
    "normalized": "heatmap-normalized",  # h_hat (B, D)
    "W_head": "heatmap-w",             # W_head (D, C)
    "logits": "heatmap-logits",        # logits (B, C)
    "probs": "heatmap-probs",          # softmax(logits), for display only (B, C)
    "dw": "heatmap-dw",                # dW_head (D, C), the fine-tuning panel's gradient
    "lens": "heatmap-lens",            # the head at every depth of the tiny ViT (L+1, C)
    "y": "heatmap-y",                  # a real head's gamma * h_hat + beta (B, D)
    "bias": "heatmap-bias",            # a real head's bias b_head (1, C)
}
"""The element id of each heatmap of the head's stages (web/index.html holds one element per id;
the comparison panels' ids are comparison_panel.comparison_ids)."""

# ---- written by python3 -m buildtools.javascript.protocol from panels/sections.py ----
PANEL_IDS = {
    "stats": "stats",
    "top_k": "top-k",
    "contributions": "contributions",
    "logits_table": "logits-table",
    "top_classes": "top-classes",
    "prediction": "prediction",
    "softmax_bars": "softmax-bars",
    "digit": "digit",
    "mistake": "mistakes",
    "variant": "variants",
    "walk": "walk",
    "finetune": "finetune",
}
"""Each answer section that is a panel of its own, and that panel's element id
(web/index.html), as its Section in pycore/explorer/panels/sections.py declares it."""

DEFERRABLE = (
    "stats",
    "top_k",
    "contributions",
    "logits_table",
    "top_classes",
    "prediction",
    "softmax_bars",
    "digit",
    "mistake",
    "variant",
    "walk",
    "finetune",
)
"""The sections a request may leave for later while their panels are out of view (its
``later``): the page brings them up to date when one scrolls into view
(web/js/page/offscreen.js)."""
# ---- end of what buildtools/javascript/protocol.py writes ----

FINETUNE_PRESET = "finetune"
"""The fine-tuning panel's own preset: labelled class means (presets.py), its "Load" button's."""

DIGITS_PRESET = "finetune-digits"
"""The fine-tuning panel's real-ViT preset: the page sends the held-out digits with it
(finetune_digits.py), so it is not in :data:`PRESETS` and not in the preset menu."""

PRESETS = ("worked", "random", "vit-b16", "encoder", FINETUNE_PRESET)
"""The ready-made states a "preset" request names by name alone (presets.py; DIGITS_PRESET is
sent with its digits). web/index.html offers them (a test checks its options)."""

DEFAULT_PRESET = PRESETS[0]
"""The state a page opens with, without a link, and the one its Reset loads."""


def encoder_row(b, t, tokens):
    """The row of token ``t`` of sample ``b`` in the encoder output stacked by sample,
    ``z_L.reshape(B * tokens, D)`` (``tokens``: N+1 per sample, t = 0 the CLS token)."""
    return b * tokens + t


def encoder_position(row, tokens):
    """``(b, t)`` of a row of the stacked encoder output: the inverse of :func:`encoder_row`."""
    return row // tokens, row % tokens
