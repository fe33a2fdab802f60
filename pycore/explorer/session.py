"""One explorer session: the state a person is editing, and the answer to each of their actions.

The page sends one request per action (an edit, a paste, a resize, a preset, an option) and
gets back only what that action changed: heatmap specs, grids to refresh, tables, equations,
and the URL fragment of the new state. Refused actions change nothing and say why, so the last
valid state stays on screen and in the URL.

Examples
--------
>>> s = Session()
>>> answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "3"})
>>> answer["ok"], sorted(answer["heatmaps"])[:2]
(True, ['heatmap-cls', 'heatmap-logits'])
>>> s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "abc"})["ok"]
False
"""
import math
import sys

import numpy as np

from . import comparisons, export, panels
from .computed import Computed
from .editing import paste_block, resize, set_cell, set_mode
from .errors import StateError
from .link import decode_fragment, encode_fragment
from .presets import default_state, preset
from .state import check_option, whole_number

ALL = ("input", "norm", "w", "logits", "pitfall", "variant")

# The link is rewritten with every answer while the state is small. A state with many typed-in
# numbers costs tens of milliseconds to encode (64 ms for 20,000 in CPython), so the page asks
# for its link separately, once the person pauses ("fragment" request); past LINK_MAX characters
# no browser keeps the URL, and the page says so instead.
SYNC_LINK_NUMBERS = 4000
LINK_MAX = 1500000
AFTER_INPUT_EDIT = ("input", "norm", "logits", "pitfall", "variant")
AFTER_W_EDIT = ("w", "logits", "pitfall", "variant")


class Session(object):
    """Holds the state (through its :class:`~pycore.explorer.computed.Computed`) and answers the
    page's requests; see the module docstring."""

    def __init__(self, state=None):
        self.computed = Computed(state if state is not None else default_state())

    @property
    def state(self):
        return self.computed.state

    @state.setter
    def state(self, value):
        self.computed.state = value

    @property
    def trace(self):
        return self.computed.trace

    @property
    def matrices(self):
        return self.computed.matrices

    # ---- requests --------------------------------------------------------------------

    def handle(self, request):
        """Answer one request (a dict with "op"); a refused request gives ok False and a message."""
        try:
            if not isinstance(request, dict) or not isinstance(request.get("op"), str):
                raise StateError("A request must be an object with an 'op' name.")
            handler = getattr(self, "op_" + request["op"], None)
            if handler is None:
                raise StateError("Unknown request %r." % request["op"])
            return handler(request)
        except StateError as err:
            return {"ok": False, "error": error_info(err)}

    def op_load(self, request):
        fragment = request.get("fragment") or ""
        error = None
        if fragment.lstrip("#"):
            try:
                state = decode_fragment(fragment)
            except StateError as err:
                state = default_state()
                error = {"message": "The state in this link could not be used: %s. "
                                    "Showing the worked example instead." % str(err).rstrip("."),
                         "key": err.key, "index": _index(err)}
        else:
            state = default_state()
        self.state = state
        self.computed.recompute()
        answer = self._answer(ALL, steps=True)
        answer["error"] = error
        answer["host"] = "Python %d.%d.%d with NumPy %s" % (sys.version_info[:3] + (np.__version__,))
        return answer

    def op_edit(self, request):
        """One cell. The page already shows what was typed: the answer names the cell's value
        instead of resending its whole grid."""
        key, index = request.get("key"), request.get("index")
        self.state = set_cell(self.state, key, index, request.get("text"))
        self.computed.after_cell(key, tuple(int(i) for i in index))
        answer = self._answer(AFTER_W_EDIT if key == "W_head" else AFTER_INPUT_EDIT,
                              steps=_steps_wanted(request), link=request.get("link") != "separate")
        answer["value"] = float(self._source(key)[tuple(index)])
        answer["grids"] = {}
        return answer

    def op_paste(self, request):
        key = request.get("key")
        self.state = paste_block(self.state, key, request.get("index"), request.get("text"))
        self.computed.recompute()
        return self._answer(AFTER_W_EDIT if key == "W_head" else AFTER_INPUT_EDIT,
                            steps=_steps_wanted(request), link=request.get("link") != "separate")

    def op_resize(self, request):
        n1 = request.get("N1")
        kwargs = {name: request.get(name) for name in ("B", "D", "C")}
        if n1 is not None:
            kwargs["N"] = whole_number(n1, "N+1", floats=True) - 1
        self.state = resize(self.state, **{k: whole_number(v, k, floats=True)
                                            for k, v in kwargs.items()})
        return self._reset_view()

    def op_mode(self, request):
        self.state = set_mode(self.state, request.get("mode"))
        return self._reset_view()

    def op_preset(self, request):
        self.state = preset(request.get("name"),
                            seed=whole_number(request.get("seed", 0), "seed", floats=True))
        return self._reset_view()

    def op_option(self, request):
        name, value = request.get("name"), request.get("value")
        options = self.state.options
        if name not in ("sample", "logit_class", "pitfall", "variant"):
            raise StateError("Unknown option %r." % (name,))
        options[name] = check_option(name, value, self.state.B, self.state.C)
        if name in ("sample", "logit_class"):
            return self._answer((), steps=True)
        if name == "pitfall" and value is not None and not self.computed.exact \
                and self.computed.current():
            self.computed.recompute()  # see Computed.after_cell: the difference needs exact logits
        return self._answer((name,))

    def op_export(self, request):
        fmt = request.get("format")
        if fmt == "json":
            return {"ok": True, "text": export.state_json_text(self.state), "mime": "application/json",
                    "filename": "vit-head-state.json", "title": "The state as JSON"}
        if fmt == "numpy":
            return {"ok": True, "text": export.numpy_code(self.state), "mime": "text/x-python",
                    "filename": "vit_head.py", "title": "NumPy code that reproduces the logits"}
        if fmt == "csv":
            return {"ok": True, "text": export.logits_csv(self.trace.logits), "mime": "text/csv",
                    "filename": "logits.csv", "title": "The logits as CSV"}
        raise StateError("Unknown export format %r (json, numpy or csv)." % (fmt,))

    def op_steps(self, request):
        """The step-by-step equations of the current state (after an edit that said "steps": "later")."""
        return {"ok": True, "steps": self._steps()}

    def op_fragment(self, request):
        fragment = encode_fragment(self.state)
        if len(fragment) > LINK_MAX:
            return {"ok": True, "fragment": None,
                    "link_note": "This state holds %d typed-in numbers: too many for a link (it "
                                 "would be %.1f MB long). Save it with \u201cState as JSON\u201d "
                                 "instead." % (self._dense_numbers(), len(fragment) / 1e6)}
        return {"ok": True, "fragment": fragment, "link_note": None}

    # ---- arrays for the page ---------------------------------------------------------

    def matrix(self, key):
        """A C-contiguous float64 2-D array the page reads as a buffer (names from the answers)."""
        if key not in self.matrices:
            raise StateError("No matrix named %r." % (key,))
        return self.matrices[key]

    # ---- internals -------------------------------------------------------------------

    def _dense_numbers(self):
        """How many numbers the link must spell out (preset-generated matrices travel as recipes)."""
        s = self.state
        return sum(getattr(s, key).size for key in ("W_head", "cls", "encoder_output")
                   if getattr(s, key) is not None and key not in s.generated)

    def _source(self, key):
        return {"cls": self.state.cls, "encoder_output": self.state.encoder_output,
                "W_head": self.state.W_head}[key]

    def _reset_view(self):
        options = self.state.options
        options["sample"] = min(options.get("sample", 0) or 0, self.state.B - 1)
        options["logit_class"] = min(options.get("logit_class", 0) or 0, self.state.C - 1)
        self.computed.recompute()
        return self._answer(ALL, steps=True)

    def _answer(self, parts, steps=False, link=True):
        """The answer's sections for `parts`.

        The equations come too if `steps`; if it is "later", only a note that they changed (the
        page's equations are off-screen, so Python spares them). With link False (a request's
        "link": "separate") the page asks for the link with a "fragment" request of its own,
        right away, and the answer says so with "fragment_follows": Python then spells the link
        out while the page draws, instead of before."""
        s, t = self.state, self.trace
        deferred = self._dense_numbers() > SYNC_LINK_NUMBERS
        follows = not deferred and not link
        answer = {"ok": True, "error": None,
                  "fragment": None if deferred or follows else encode_fragment(s),
                  "fragment_deferred": deferred, "fragment_follows": follows,
                  "shape": {"mode": s.mode, "B": s.B, "D": s.D, "C": s.C,
                            "N1": (s.N + 1) if s.mode == "encoder" else None},
                  "heatmaps": {}, "grids": {}, "hide": []}
        heatmaps = answer["heatmaps"]
        if "input" in parts:
            heatmaps.update(panels.input_heatmaps(s, t))
            answer["grids"]["input"] = {"matrix": "input"}
            if s.mode != "encoder":
                answer["hide"].append("heatmap-encoder")
        if "norm" in parts:
            heatmaps.update(panels.normalized_heatmap(t))
            answer["stats"] = panels.stats_table(t)
        if "w" in parts:
            heatmaps.update(panels.w_heatmap(s))
            answer["grids"]["w"] = {"matrix": "W_head"}
        if "logits" in parts:
            heatmaps.update(panels.logits_heatmaps(t))
            answer["logits_table"] = panels.logits_table(t)
            answer["top_classes"] = panels.top_classes(t)
        if "pitfall" in parts:
            self._compare(answer, "pitfall")
        if "variant" in parts:
            self._compare(answer, "variant")
        if steps == "later":  # the page asks with a "steps" request once they are in view, or idle
            answer["steps_follow"] = True
        elif steps:
            answer["steps"] = self._steps()
        return answer

    def _steps(self):
        s = self.state
        return panels.steps(s, self.trace, s.options.get("sample", 0), s.options.get("logit_class", 0))

    def _compare(self, answer, name):
        """The correct logits beside a pitfall's or variant's output (and, for pitfalls, the
        difference)."""
        key = self.state.options.get(name)
        ids = ["heatmap-%s-correct" % name, "heatmap-%s" % name]
        if name == "pitfall":
            ids.append("heatmap-pitfall-diff")
        section = {"choices": comparisons.choices(name), "selected": key, "explanation": "",
                   "error": None}
        answer[name] = section
        output, error, item = None, None, None
        if key is not None:
            item = comparisons.find(key)
            section["explanation"] = item.explanation
            output, error = comparisons.run(self.state, key)
            section["error"] = error
        if output is None:
            answer["hide"].extend(ids)
            return
        logits = self.trace.logits
        self.matrices[name] = np.ascontiguousarray(output, dtype=np.float64)
        heatmaps = answer["heatmaps"]
        heatmaps[ids[0]] = panels.heatmap("logits", logits, "Correct head: logits", "class c",
                                          "sample b", "sample %{y}, class %{x}<br>logit = " + panels.EXACT)
        heatmaps[ids[1]] = panels.heatmap(name, output, item.title,
                                          "class c", "sample b",
                                          "sample %{y}, class %{x}<br>output = " + panels.EXACT)
        if name == "pitfall" and output.shape == logits.shape:
            with np.errstate(all="ignore"):
                self.matrices["pitfall_diff"] = np.ascontiguousarray(output - logits)
            heatmaps[ids[2]] = panels.heatmap("pitfall_diff", self.matrices["pitfall_diff"],
                                              "Difference: mistaken − correct", "class c", "sample b",
                                              "sample %{y}, class %{x}<br>difference = " + panels.EXACT)


def _steps_wanted(request):
    """An edit's "steps": "later" (the page's equations are out of view) or its equations now."""
    return "later" if request.get("steps") == "later" else True


def error_info(err):
    return {"message": str(err), "key": getattr(err, "key", None), "index": _index(err)}


def _index(err):
    index = getattr(err, "index", None)
    return list(index) if index is not None else None
