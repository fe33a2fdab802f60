"""The explorer: what a person edits on the page, and what the page is told to show.

    errors       StateError, the one error every refused input raises, and how it quotes
    state        ExplorerState, its size limits, and the checks every way into it shares
    train_state  the labels and the training settings in the state
    cells        the text of one cell or a pasted block, and how numbers are written
    digit_images drawn digits: their link form, their checks, the tiny ViT's z_L of them
    recipes      big matrices described by how they were made (the compact form of links)
    presets      the ready-made states
    editing      one cell, a pasted block, a resize, a mode switch
    state_json   the state to and from JSON
    link         the state in the URL, written exactly as the page's JavaScript would
    export       runnable NumPy code, the logits as CSV, the state as pretty JSON
    comparisons  the one registry of the heads shown beside the real one (mistakes, variants)
    panels       what the head's panels show (heatmap_spec, tex, comparison_panel: the others')
    computed     the state's trace, kept current edit by edit, and the arrays the page reads
    sections     the answer's sections, each registered once: what it follows, what builds it
    session      the answer to each request of the page
    protocol     the requests and the answers, written down once (docs/protocol.md)
    protocol_types  their JavaScript types (web/js/protocol.js is written from them)
    shared       the values the page's JavaScript shares (the build writes them as js/shared.js)

Rule: this package may import pycore.vit (the math); pycore.vit never imports this package.
Inside it, modules import only their own layer or lower ones, and nothing imports in a cycle
(docs/architecture.md, "Layers"; tests/test_pycore_layers.py).

>>> from pycore.explorer import default_state, encode_fragment, decode_fragment
>>> decode_fragment(encode_fragment(default_state())) == default_state()
True
"""

from .editing import paste_block, resize, set_cell, set_mode
from .errors import StateError
from .link import decode_fragment, encode_fragment
from .presets import PRESETS, default_state, preset
from .recipes import Recipe
from .state import DEFAULT_OPTIONS, LIMITS, ExplorerState, check_limits
from .state_json import COMPACT_MIN, state_from_json, state_to_json

__all__ = ["ExplorerState", "DEFAULT_OPTIONS", "StateError", "state_to_json",
           "state_from_json", "encode_fragment", "decode_fragment", "set_cell",
           "paste_block", "resize", "set_mode", "preset", "default_state", "PRESETS",
           "LIMITS", "check_limits", "Recipe", "COMPACT_MIN"]
