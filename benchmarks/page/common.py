"""What page_bench.py holds the page to: its targets, the edits it times, the limits it waits
within, and the error that stops it."""
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
ASSETS = Path(__file__).resolve().parent / "assets"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # buildtools, for the modules of the benchmark

# Per host: boot ratio, and edit ratio at the worked example's size (ViT-B/16 edits: 1.25x).
BOOT_RATIO_TARGET = {"pyscript": 1.15, "fallback": 1.25}
# A second visit (the browser's caches warm) against its floor's second visit.
SECOND_VISIT_TARGET = 1.2


EDIT_RATIO_TARGET = {"pyscript": 1.15, "fallback": 1.25}


BIG_EDIT_RATIO_TARGET = 1.25


HOSTS = ("pyscript", "fallback")


BOOT_TIMEOUT_MS = 180_000


RENDER_TIMEOUT_MS = 120_000


# Two valid numbers that an edit alternates between, so that every edit is a change.
EDIT_VALUES = ("0.375", "-1.25")


# One kind of edit: the preset it starts from (None: the page's default, the worked example),
# the cell it changes, the absolute target for its median, and whether it is also held to a
# ratio to the Plotly floor. (d) is not: it redraws W_head as the page's own bitmap, which the
# floor (Plotly alone, replaying the page's calls) does not draw; its ratio is still printed.
Scenario = collections.namedtuple("Scenario", "key title preset label target_ms has_ratio_target")


SCENARIOS = [
    Scenario("a", "CLS edit, worked example", None, "cls[0,1]", 100, True),
    Scenario("b", "W_head edit, worked example", None, "W_head[1,2]", 100, True),
    Scenario("c", "CLS edit, ViT-B/16 size", "vit-b16", "cls[0,1]", 150, True),
    Scenario("d", "W_head edit, ViT-B/16 size", "vit-b16", "W_head[1,2]", 150, False),
]


class BenchError(Exception):
    """Something that stops the benchmark, said in words (no traceback needed)."""
