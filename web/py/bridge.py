"""The browser-side Python: one explorer session, reachable from the page's JavaScript.

Deliberately thin: all decisions live in pycore.explorer.session (tested in CPython). This module
turns JSON text into requests and answers back into JSON text, and lends the page the NumPy
arrays each answer names (pycore.explorer.protocol.matrix_names). It never raises: a bug becomes
an answer that says so, and the page stays alive.
"""
import json
import os
import time
import traceback

from pycore.explorer.model import class_names
from pycore.explorer.state.presets import WORKED_CLS, WORKED_W_HEAD
from pycore.explorer.protocol import matrix_names
from pycore.explorer.session import Session, answer_json

# The ViT-B/16 preset's ImageNet-1k class names, which the build wrote beside this file (when
# it could: else the classes stay numbered).
class_names.load_imagenet(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                       class_names.FILE_NAME))
_session = Session()
_practice = {"session": None, "edits": 0}  # warm-up's own session (made when first asked for)


def _internal_error(err):
    traceback.print_exc()
    detail = str(err)
    if len(detail) > 200:  # it may quote what was sent: never all of it
        detail = detail[:200] + "..."
    return {"ok": False, "error": {"message": "Internal error in the explorer: %s" % detail,
                                   "key": None, "index": None}}


def _session_for(practice):
    if not practice:
        return _session
    if _practice["session"] is None:
        _practice["session"] = Session()
    return _practice["session"]


def _handle(request_json, session):
    """(JSON text of the answer, the names of the matrices it carries)."""
    try:
        answer = session.handle_json(request_json)
        return answer_json(answer), matrix_names(answer)
    except Exception as err:  # a bug, not a refused input: say so, and keep the page alive
        return json.dumps(_internal_error(err)), []


def answer(request_json, practice=False):
    """The bridge's one call: (JSON text of the answer, {name: array} of every matrix it
    carries, each float64, C-contiguous, 2-D). Every host's worker crosses to the page from this
    (py/worker.py on the PyScript host, js/answers.js in the others). `practice`: answer it in
    warm-up's session."""
    session = _session_for(practice)
    text, names = _handle(request_json, session)
    return text, {name: session.matrix(name) for name in names}


# ---- warm-up ----------------------------------------------------------------------------------
# Python runs on WebAssembly, which the browser compiles twice: at once into plain machine code
# (V8's Liftoff), then, function by function once each has run long enough, again in the
# background into faster code (TurboFan). Until the edit path has run a few dozen times, an edit
# runs partly in the slow code and sets off background compiles that compete with the page for
# the CPU: the first edits of a visit take about twice as long in Python as later ones. So, once the
# page is ready and idle, it asks its host for practice edits, one at a time (js/runtime/warmup.js):
# cells of both grids edited in a session of their own, answered and encoded exactly as the
# page's own edits are (warm_up takes the worker's own crossing). The page's session is never
# touched.
#
# The menus are practised too, three times among the edits (MENU_DRILL_AT): a visit's first
# "last position" or MLP head imported numpy.random (its WebAssembly libraries, loaded then) and
# ran code no edit runs, about 90 ms of Python in the first switch of either menu. Once was not
# enough for WebKit, whose first real "last position" after one drill still took Python 39-87 ms
# (18-25 ms after three; later ones 3-9 ms).
MENU_DRILL = [
    {"op": "option", "name": "mistake", "value": "last_position"},
    {"op": "option", "name": "variant", "value": "mlp_tanh"},
    {"op": "option", "name": "variant", "value": "gap"},
    {"op": "load", "fragment": ""},  # the worked example again, for the edits that follow
]
MENU_DRILL_AT = (2, 14, 26)  # the practice requests that begin a drill (the first is 1)


def practice_request():
    """The JSON text of the next practice request: the menus' drill (MENU_DRILL) after the
    first edit and twice more (MENU_DRILL_AT), and otherwise edits of the worked example's
    cells in turn, CLS vectors and W_head alternately, each to a value it does not hold
    (eighths: the example has none)."""
    n = _practice["edits"] = _practice["edits"] + 1
    for start in MENU_DRILL_AT:
        if start <= n < start + len(MENU_DRILL):
            return json.dumps(MENU_DRILL[n - start])
    key, matrix = ("cls", WORKED_CLS) if n % 2 else ("W_head", WORKED_W_HEAD)
    rows, cols = len(matrix), len(matrix[0])
    cell = (n // 2) % (rows * cols)
    return json.dumps({"op": "edit", "key": key, "index": [cell // cols, cell % cols],
                       "text": "%g" % ((n % 9) * 0.25 - 1.125)})


def warm_up(edits, cross):
    """Answer `edits` practice requests (practice_request) through `cross(request_json)`, the
    worker's crossing of a practice request to the page's form (bridge.answer with practice, then
    its matrices made what the page receives), so that practice runs what an edit runs. Returns
    the milliseconds they took."""
    t0 = time.perf_counter()
    for _ in range(int(edits)):
        cross(practice_request())
    return (time.perf_counter() - t0) * 1000.0
