"""The explorer state, in one import: the object, JSON and URL-fragment encoding,
editing helpers, presets and limits.

>>> from pycore.state import default_state, encode_fragment, decode_fragment
>>> decode_fragment(encode_fragment(default_state())) == default_state()
True
"""

from .editing import paste_block, resize, set_cell, set_mode
from .errors import StateError
from .fragment import decode_fragment, encode_fragment
from .limits import LIMITS, check_limits
from .presets import PRESETS, default_state, preset
from .recipes import Recipe
from .state_json import COMPACT_MIN, state_from_json, state_to_json
from .state_object import DEFAULT_OPTIONS, ExplorerState

__all__ = ["ExplorerState", "DEFAULT_OPTIONS", "StateError", "state_to_json",
           "state_from_json", "encode_fragment", "decode_fragment", "set_cell",
           "paste_block", "resize", "set_mode", "preset", "default_state", "PRESETS",
           "LIMITS", "check_limits", "Recipe", "COMPACT_MIN"]
