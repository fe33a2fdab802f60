"""The explorer: what a person edits on the page, and what the page is told to show.

    errors       StateError, the one error every refused input raises, and how it quotes
    shared       the values the page's JavaScript shares (the build writes them as js/shared.js)
    state/       ExplorerState and its checks, cells, presets, editing, the state as JSON and
                 as a link, recipes (the compact form of big matrices), the fine-tuning settings
    comparisons/ the one registry of the heads shown beside the real one, and their panel
    digits/      drawn digits read by the tiny ViT, and the mode they feed
    model/       a lecturer's own model from a file: its formats, checks, transfer, class names
    export/      runnable NumPy code, the logits as CSV, the state as pretty JSON; their memory
    finetune/    the "Fine-tune the head" panel: its run, memory budget, code, digits, section
    panels/      what each panel shows, the heatmaps' specs, and the answer's sections
    computed     the state's trace, kept current edit by edit, and the arrays the page reads
    wire         requests and answers as JSON text
    session      the answer to each request of the page
    protocol     the requests and the answers, written down once (docs/protocol.md)
    protocol_types  their JavaScript types (web/js/protocol.js is written from them)

Rule: this package may import pycore.vit (the math); pycore.vit never imports this package.
Inside it, modules import only their own layer or lower ones, and nothing imports in a cycle
(docs/architecture.md, "Layers"; tests/test_pycore_layers.py).

>>> from pycore.explorer import default_state, encode_fragment, decode_fragment
>>> decode_fragment(encode_fragment(default_state())) == default_state()
True
"""

from .state.editing import paste_block, resize, set_cell, set_mode
from .errors import StateError
from .state.link import decode_fragment, encode_fragment
from .state.presets import PRESETS, default_state, preset
from .state.recipes import Recipe
from .state.explorer_state import DEFAULT_OPTIONS, LIMITS, ExplorerState, check_limits
from .state.as_json import COMPACT_MIN, state_from_json, state_to_json

__all__ = ["ExplorerState", "DEFAULT_OPTIONS", "StateError", "state_to_json",
           "state_from_json", "encode_fragment", "decode_fragment", "set_cell",
           "paste_block", "resize", "set_mode", "preset", "default_state", "PRESETS",
           "LIMITS", "check_limits", "Recipe", "COMPACT_MIN"]
