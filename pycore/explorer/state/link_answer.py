"""The answer's ``link``: the state's URL fragment, pending, or a note saying why there is none.

The link comes with every answer while the state is small. Spelling out many typed-in numbers
costs milliseconds per thousand in the browser, too much for every keystroke: past
:data:`SYNC_LINK_NUMBERS` the answer says the link is pending and the page asks for it
("link") once typing pauses. Past LINK_MAX characters (link.py) a link is not safe to share:
the page then offers the state as JSON instead.

Examples
--------
>>> from pycore.explorer.state.presets import default_state
>>> link = state_link(default_state())
>>> link["fragment"].startswith("state="), link["pending"], link["note"]
(True, False, None)
"""
from .link import LINK_MAX, encode_fragment

SYNC_LINK_NUMBERS = 1000
"""Past this many numbers to spell out, an answer's link is pending while typing."""

EDIT_MIN_CHARS = 8
"""The fewest characters an edit of a preset's matrix takes in a link: "[0,0,0]," (and more
once encoded). Past LINK_MAX / EDIT_MIN_CHARS edits (a block pasted into the ViT-B/16 preset's
W_head) the link is too long without spelling it out, which took seconds."""

NUMBER_MIN_CHARS = 2
"""The fewest characters a number of a typed-in (or trained) matrix takes in a link: "0," or
"0]". Past LINK_MAX / NUMBER_MIN_CHARS of them the link is too long without spelling it out,
which for a trained 1024 x 1000 W_head made 74 MB of text beside the training run."""

LINK_PENDING = {"fragment": None, "pending": True, "note": None}
"""An answer's link while it is not spelled out yet: the page asks for it with a link request."""


def dense_numbers(state):
    """How many numbers the link must spell out: every number of a typed-in matrix, and
    each edited cell of a preset's (which travels as its recipe plus those edits: a block
    pasted into one is as many edits as cells, 768,000 for a whole ViT-B/16 W_head)."""
    count = 0
    for key in ("W_head", "cls", "encoder_output"):
        arr, recipe = getattr(state, key), state.generated.get(key)
        if arr is not None:
            count += arr.size if recipe is None else len(recipe.edits)
    return count


def state_link(state, pending_allowed=True):
    """The answer's ``link`` for ``state``: the fragment, pending (many typed-in numbers, while
    typing: ``pending_allowed``), or a note that the state is too big for a link."""
    if state.model is not None:  # gamma, beta, bias and names have no place in a link
        return {"fragment": None, "pending": False,
                "note": "This state comes from a model file, %s: too much for a link. Save "
                        "it with \u201cState as .npz\u201d, which \u201cYour model\u2026\u201d "
                        "loads back exactly." % state.model["file"][:60]}
    dense = dense_numbers(state)
    if pending_allowed and dense > SYNC_LINK_NUMBERS:
        return dict(LINK_PENDING)
    edits = sum(len(r.edits) for r in state.generated.values())
    least = edits * EDIT_MIN_CHARS + (dense - edits) * NUMBER_MIN_CHARS
    if least > LINK_MAX:  # surely too long: not spelled out to find out
        size = "more than %s" % "{:,}".format(LINK_MAX // 1000)
    else:
        fragment = encode_fragment(state)
        if len(fragment) <= LINK_MAX:
            return {"fragment": fragment, "pending": False, "note": None}
        size = "{:,}".format(len(fragment) // 1000)
    return {"fragment": None, "pending": False,
            "note": "This state holds %s typed-in numbers: too many for a link (it would be "
                    "%s kB long). Save it with \u201cState as .npz\u201d instead, which "
                    "\u201cYour model\u2026\u201d loads back exactly, or \u201cState as "
                    "JSON\u201d." % ("{:,}".format(dense), size)}
