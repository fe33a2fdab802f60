"""One explorer session: the state a person is editing, and the answer to each of their actions.

The page sends one request per action (pycore/explorer/protocol.py lists them) and gets back only
what that action changed: heatmap specs, tables, equations, the new link. Every request either
applies fully or changes nothing: a refused action, or one whose result cannot be computed
(logits that overflow float64), leaves the state, and so the page, its link and its exports, as
they were, and says why.

A cell being typed in is previewed: each text that is a number is in effect at once; a text that
is not puts the cell back to the value it held when the person entered it (never the last valid
prefix: typing "1e999" never leaves 1e99 behind). A text that could still become a number ("-",
"1e") is not called an error until the cell is left (``commit``).

Examples
--------
>>> s = Session()
>>> answer = s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "3"})
>>> answer["ok"], sorted(answer["heatmaps"])[:2]
(True, ['heatmap-cls', 'heatmap-logits'])
>>> s.handle({"op": "edit", "key": "cls", "index": [0, 0], "text": "abc"})["error"]["message"]
"cls[0,0]: 'abc' is not a number"
>>> float(s.state.cls[0, 0])   # back to the value the cell held when it was entered
2.0
"""
import base64
import sys
from types import MappingProxyType

import numpy as np

from . import protocol
from .comparisons import registry as comparisons
from .computed import Computed
from .digits import mode as digits
from .errors import StateError
from .export import files as export, memory as export_memory
from .finetune import digits as finetune_digits
from .finetune.panel import FineTune
from .model import file as model_file, transfer as model_transfer  # docs/own-model.md
from .model.class_names import class_names
from .panels import readouts, sections
from .state import editing
from .state.cells import could_become_number, format_number
from .state.editing import cell_index, check_mode, paste_block, resize, resized_shapes, set_mode
from .state.explorer_state import check_option, shown, whole_number
from .state.link import decode_fragment
from .state.link_answer import state_link
from .state.presets import default_state, preset
from .wire import (answer_json, error_info, fragment_of, parse_request, refuse_long_numbers,
                   refused, equations_wanted)

__all__ = ["Session", "answer_json", "parse_request"]


class Session(object):
    """Holds the state (through its :class:`~pycore.explorer.computed.Computed`) and answers the
    page's requests; see the module docstring."""

    def __init__(self, state=None):
        self._start(state)

    def _start(self, state=None):
        """Everything the session keeps, as a new session has it (see op_reset)."""
        self.computed = Computed(state if state is not None else default_state())
        self._typing = None  # the cell being typed in, as it was entered (editing.Typing)
        self.sent = {}    # sections sent only when they change, as last sent (sections.py)
        self.selected_logit = None  # (b, c) the person selected: its terms follow every edit
        self.k = readouts.TOP_K_DEFAULT  # the top-k table's k (a view setting, not in the link)
        # the "Fine-tune the head" panel (pycore/explorer/finetune/panel.py)
        self.finetune = FineTune()
        self._reading = None  # a model file being read, between requests (model_transfer)
        self.deferred = set()  # sections the page holds out of date (a request's "later")

    @property
    def state(self):
        return self.computed.state

    @property
    def trace(self):
        return self.computed.trace

    @property
    def matrices(self):
        return self.computed.matrices

    def matrix(self, key):
        """A C-contiguous float64 2-D array the page reads as a buffer (names from the answers)."""
        if key not in self.matrices:
            raise StateError("No matrix named %s." % shown(key))
        return self.matrices[key]

    # ---- requests --------------------------------------------------------------------

    def handle(self, request):
        """Answer one request (a dict with "op"); a refused one changes nothing and says why."""
        try:
            if not isinstance(request, dict) or not isinstance(request.get("op"), str):
                raise StateError("A request must be an object with an 'op' name.")
            op = request["op"]
            fields = protocol.REQUESTS.get(op)
            if fields is None:
                raise StateError("Unknown request %s." % shown(op))
            unknown = sorted(str(k) for k in request if k != "op" and k not in fields)
            if unknown:
                raise StateError("The request %s has no field %s." % (op, shown(unknown[0])))
            refuse_long_numbers(request)
            if op != "open_file":
                self._reading = None  # a file being read is let go by any other action
            if op not in ("edit", "contributions", "link", "equations", "catch_up"):
                self._typing = None  # any other action ends the typing in a cell (pointing at a
                #  logit, and what the page asks while a person types, a pending link or panels
                #  scrolled into view, change nothing: a refused text still puts back the value
                #  the cell held when it was entered)
            return getattr(self, "op_" + op)(request)
        except StateError as err:
            return refused(err)

    def handle_json(self, text):
        """Answer one request given as JSON text, as the page sends it: text that is not JSON,
        or holds a number longer than any float64 needs, is refused like any bad request.

        Parameters
        ----------
        text : str
            The request's JSON.

        Returns
        -------
        dict
            The answer (see :meth:`handle`); :func:`answer_json` turns it into JSON text.
        """
        try:
            request = parse_request(text)
        except StateError as err:
            return refused(err)
        return self.handle(request)

    def op_load(self, request):
        fragment = fragment_of(request)
        error = None
        computed = None
        if fragment.lstrip("#"):
            try:
                computed = Computed(decode_fragment(fragment))
            except (StateError, ValueError) as err:
                error = error_info(err)
                error["message"] = ("The state in this link could not be used: %s. Showing the "
                                    "worked example instead." % str(err).rstrip("."))
        self.computed = computed or Computed(default_state())
        self._typing, self.sent, self.selected_logit = None, {}, None
        answer = self._answer({sections.STATE})
        answer["contributions"] = None  # no logit selected in a new state: the page's ends too
        answer["error"] = error
        answer["host"] = "Python %d.%d.%d with NumPy %s" % (sys.version_info[:3]
                                                           + (np.__version__,))
        return answer

    def op_reset(self, request):
        """Everything the session keeps back to a new session's (the state, the selected logit,
        the top-k table's k, the fine-tuning panel and its runs, the cell being typed in, a
        model file being read), then the fragment loaded as by "load": the answer is a new
        session's (a test reuses one page for many cases); a refused one resets nothing."""
        fragment_of(request)
        self._start()
        return self.op_load(request)

    def op_edit(self, request):
        """One cell, as typed so far (see the module docstring). The page shows what was typed:
        the answer names the value in use and patches the matrices the page holds."""
        key, index, text = request.get("key"), request.get("index"), request.get("text")
        arr, index = cell_index(self.state, key, index)
        later = sections.check_later(request.get("later"))
        if self._typing is None or not self._typing.names(key, index):
            self._typing = editing.typing(self.state, key, index)
        before = self._typing.value
        commit = request.get("commit") is True
        error = None
        try:
            value = editing.cell_value(key, index, text)
        except StateError as err:
            value, error = before, error_info(err)
            error["incomplete"] = not commit and could_become_number(text)
        old = float(arr[index])
        if value != old:
            editing.write_cell(self.state, key, index, value, self._typing)
            try:
                self.computed.after_cell(key, index)
            except ValueError:  # the logits overflow: back to the value before typing
                editing.write_cell(self.state, key, index, before, self._typing)
                if before != old:
                    self.computed.after_cell(key, index)
                error = error_info(StateError(
                    "%s[%s]: %s makes the logits overflow float64; the cell keeps %s"
                    % (key, ",".join(str(i) for i in index), format_number(value, trim=True),
                       format_number(before, trim=True)), key=key, index=index))
        if commit:
            self._typing = None
        if value == old:  # nothing to redraw: the page only learns the value in effect
            return {"ok": True, "unchanged": True, "value": old, "error": error}
        answer = self._answer(_edited(key), equations=equations_wanted(request), grids=False,
                              link_later=request.get("link") == "later", later=later)
        answer["value"] = float(self.state.matrix(key)[index])
        answer["patched"] = editing.patches(self.state, key, index, answer["value"])
        answer["error"] = error
        return answer

    def op_paste(self, request):
        key = request.get("key")
        undo = []
        paste_block(self.state, key, request.get("index"), request.get("text"), undo=undo)
        try:
            self.computed.recompute()
        except ValueError:
            undo[0]()
            raise StateError("%s: the pasted block makes the logits overflow float64; nothing was "
                             "pasted" % key, key=key) from None
        return self._answer(_edited(key), equations=equations_wanted(request))

    def op_resize(self, request):
        sizes = {}
        for name in ("B", "D", "C"):
            if request.get(name) is not None:
                sizes[name] = whole_number(request.get(name), name, floats=True)
        if request.get("N1") is not None:
            sizes["N"] = whole_number(request.get("N1"), "N+1", floats=True) - 1
        resized_shapes(self.state, **sizes)  # refused before the state is copied (it may be MBs)
        return self._replace(resize(self.state.copy(), **sizes))

    def op_mode(self, request):
        mode = check_mode(request.get("mode"))  # refused before the state is copied
        return self._replace(set_mode(self.state.copy(), mode))

    def op_preset(self, request):
        name = request.get("name")
        seed = whole_number(request.get("seed", 0), "seed", floats=True)
        if (name == finetune_digits.PRESET) != ("digits" in request):
            raise StateError("digits belong to the preset %s, and it needs them (from "
                             "digits.json)." % finetune_digits.PRESET)
        if name != finetune_digits.PRESET:
            return self._replace(preset(name, seed=seed))
        state, held_out = finetune_digits.digits_preset(request["digits"], seed)
        before, self.finetune.held_out = self.finetune.held_out, held_out
        try:
            return self._replace(state)
        except StateError:   # refused: nothing changed, the held-out set neither
            self.finetune.held_out = before
            raise

    def op_option(self, request):
        name, value = request.get("name"), request.get("value")
        equations = equations_wanted(request)
        if name == "top_k":  # how many classes the top-k table lists: the page's view only
            self.k = readouts.check_k(value)
            return self._answer({name})
        if name not in ("sample", "logit_class", "mistake", "variant", "walk", "walk_class",
                        "head"):
            raise StateError("Unknown option %s." % shown(name))
        value = check_option(name, value, self.state.B, self.state.C)
        if name == "head":  # another head in the pipeline: every stage is new
            state = self.state.copy()
            state.options["head"] = value
            return self._replace(state, equations)
        if name in ("mistake", "variant") and value is not None and self.state.mode == "cls" \
                and comparisons.find(value).needs == "encoder":
            return self._to_encoder_for(name, value, equations)
        self.state.options[name] = value
        if name == "mistake" and value is not None and not self.computed.exact \
                and self.computed.current():
            self.computed.recompute()  # see Computed.after_cell: the difference needs exact logits
        return self._answer({name}, equations=equations)

    def _to_encoder_for(self, kind, key, equations=True):
        """Choose a comparison that needs the patch tokens while only the CLS rows are edited:
        switch to the full encoder output (the CLS rows at position 0, seeded patch tokens
        after them; pycore.explorer.state.editing.set_mode), rather than show a difference of zeros,
        and say so in the panel's notice. ``equations``: as for ``_answer``."""
        state = set_mode(self.state.copy(), "encoder")
        state.options[kind] = key
        answer = self._replace(state, equations)
        B, tokens, D = state.encoder_output.shape
        answer[kind]["notice"] = (
            "\u201c%s\u201d needs the patch tokens, which the CLS vectors alone do not have, so "
            "the input is now the full encoder output (B \u00d7 (N+1) \u00d7 D = %d \u00d7 %d "
            "\u00d7 %d): your CLS vectors are position 0 and %d seeded random patch tokens follow "
            "them. The mode menu switches back."
            % (comparisons.find(key).title, B, tokens, D, tokens - 1))
        return answer

    def op_digit(self, request):
        """The real-ViT mode: the tiny ViT encodes the drawn images (pycore/explorer/digits/mode.py)
        and its z_L and W_head become the state; the head keeps its edits unless "trained"."""
        texts = digits.check_images(request.get("images"))
        later = sections.check_later(request.get("later"))
        return self._replace(digits.digit_state(self.state, texts, request.get("head")),
                             equations_wanted(request), request.get("link") == "later", later)

    def op_digit_preview(self, request):
        """The tiny ViT's reading of a drawing in progress (digits.preview): the state stays."""
        texts = digits.check_images(request.get("images"))
        return {"ok": True, "digit_preview": digits.preview(self.state, texts)}

    def op_contributions(self, request):
        """The terms of logit (b, c), for the contribution chart; with "select" the session
        keeps the choice, and every later answer that changes the logits brings its terms
        again. b null: nothing selected."""
        b, c = request.get("b"), request.get("c")
        if b is None and c is None:
            self.selected_logit = None
            return {"ok": True, "contributions": None}
        b, c = readouts.check_logit(b, c, self.state.B, self.state.C)
        if request.get("select") is True:
            self.selected_logit = (b, c)
        return {"ok": True, "contributions": readouts.contribution_chart(
            self.trace, self.state.W_head, b, c, classes=class_names(self.state))}

    def op_export(self, request):
        fmt = request.get("format")
        # within the memory budget, beside a training run (a format that is not text is
        # refused below, by name)
        if isinstance(fmt, str) and fmt in export_memory.NAMES:
            run = self.finetune.run
            export_memory.check(self.state, fmt, run, self.finetune.current_run(self.state)
                                if fmt == "training" else None)
        if fmt == "json":
            out = {"text": export.state_json_text(self.state), "mime": "application/json",
                   "filename": "vit-head-state.json", "title": "The state as JSON"}
        elif fmt == "numpy":
            out = {"text": export.numpy_code(self.state), "mime": "text/x-python",
                   "filename": "vit_head.py", "title": "NumPy code that reproduces the logits"}
        elif fmt == "csv":
            out = {"text": export.logits_csv(self.trace.logits), "mime": "text/csv",
                   "filename": "logits.csv", "title": "The logits as CSV"}
        elif fmt == "training":
            out = self.finetune.export(self.state)
        elif fmt == "npz":
            out = {"text": base64.b64encode(model_file.state_npz(self.state)).decode("ascii"),
                   "mime": "application/octet-stream", "filename": "vit-head-state.npz",
                   "title": "The state as .npz", "base64": True}
        else:
            raise StateError("Unknown export format %s (json, numpy, csv, npz or training)."
                             % shown(fmt))
        if fmt != "training":  # the run's says its own (finetune.export)
            out["about"] = export.about(self.state, fmt)
        return {"ok": True, "export": out}

    def op_open_file(self, request):
        """A model file, read in the byte ranges Python asks for (model_file.py): until it has
        them the answer's ``file.need`` names them and nothing changes; then the file's arrays
        become the state, or it is refused, naming what was found and what was expected."""
        name, size = request.get("name"), request.get("size")
        if not isinstance(name, str):
            raise StateError("A file needs a name; got %s." % shown(name), key="file")
        size = whole_number(size, "size", 0, 2 ** 53, key="file")
        if request.get("first") is True:
            model_file.file_kind(name, size)  # refused by its name and size before a byte is kept
            self._reading = model_transfer.Reading(name, size, request.get("target"))
        elif self._reading is None or (name, size) != (self._reading.name, self._reading.size):
            raise StateError("%s is not the file being read: send it again from its first "
                             "request." % shown(name, 60), key="file")
        reading = self._reading
        try:
            reading.add(model_transfer.decode_parts(request.get("parts"), size))
            loaded = reading.step(self.state)
        except StateError:
            self._reading = None  # refused: its bytes are let go
            raise
        if loaded is None:
            return {"ok": True, "file": {"need": [list(r) for r in reading.outstanding],
                                         "summary": None}}
        self._reading = None
        arrays, lib = loaded
        try:
            state, summary = model_file.model_state(self.state, arrays, lib, name)
        except StateError as err:
            raise StateError("%s: %s" % (model_file.named(name), err), key="file") from None
        answer = self._replace(state)
        answer["file"] = {"need": None, "summary": summary}
        return answer

    # ---- the "Fine-tune the head" panel (its logic: pycore/explorer/finetune/panel.py) -----------

    def op_train(self, request):
        """Training steps of the current run (a new run if none describes the state)."""
        later = sections.check_later(request.get("later"))
        undo = []
        self.finetune.train(self.computed, request.get("n", 1), request.get("run"), undo=undo)
        try:
            return self._answer({sections.TRAINED, sections.FINETUNE},
                                equations=equations_wanted(request), live=True,
                                link_later=request.get("link") == "later", later=later)
        except Exception:
            undo[0]()   # the steps are taken back: a request that fails changes nothing
            raise

    def op_train_reset(self, request):
        """W_head back to where training starts; the curves are cleared."""
        changed = self.finetune.reset(self.computed)
        return self._answer({sections.TRAINED, sections.FINETUNE} if changed
                            else {sections.FINETUNE}, live=True)

    def op_train_set(self, request):
        """One training setting (lr, optimizer, start, compare, input_scale)."""
        self.finetune.setting(self.state, request.get("name"), request.get("value"))
        return self._answer({sections.FINETUNE}, live=True)

    def op_label(self, request):
        """One sample's label, as typed so far (like an edit: see FineTune.label)."""
        value, error = self.finetune.label(self.state, request.get("index"),
                                           request.get("text"), request.get("commit") is True)
        answer = self._answer({sections.FINETUNE}, live=True)
        answer["value"], answer["error"] = value, error
        return answer

    def op_equations(self, request):
        """The equations of the current state (after edits that said "equations": "later")."""
        return {"ok": True, "equations": sections.equations(self.state, self.trace)}

    def op_catch_up(self, request):
        """Every section that answers left for later (their requests' ``later``), now."""
        return self._answer(frozenset())

    def op_link(self, request):
        """The link of a state whose answers said it was pending (many typed-in numbers)."""
        return {"ok": True, "link": self.link(pending_allowed=False)}

    def op_selfcheck(self, request):
        """pycore's docstring examples, run in the runtime the page uses (about a second)."""
        from ..selfcheck import run_examples  # above both subpackages: imported only here
        return {"ok": True, "selfcheck": run_examples()}

    # ---- internals -------------------------------------------------------------------

    def _replace(self, state, equations=True, link_later=False, later=frozenset()):
        """Make `state` the session's, once its head has been computed (nothing changes if it
        cannot be). ``equations``, ``link_later``, ``later``: as for ``_answer``."""
        options = state.options
        options["sample"] = min(options.get("sample", 0) or 0, state.B - 1)
        options["logit_class"] = min(options.get("logit_class", 0) or 0, state.C - 1)
        if (options.get("walk_class") or 0) >= state.C:
            options["walk_class"] = None  # the class is gone: back to the predicted one
        try:
            computed = Computed(state)
        except ValueError as exc:
            raise StateError("This cannot be computed: %s; nothing was changed." % exc) from None
        self.computed = computed
        return self._answer({sections.STATE}, equations=equations, link_later=link_later,
                            later=later)

    def link(self, pending_allowed=True):
        """The answer's ``link`` for the state (link_answer.state_link)."""
        return state_link(self.state, pending_allowed)

    def _answer(self, changed, equations=True, grids=True, link_later=False, live=False,
                later=frozenset()):
        """The answer to a request that changed ``changed`` (names from sections.py): every
        section that follows one of them, built in the order of ``sections.SECTIONS``.
        ``equations`` "later": only a note that the equations changed (the page's are out of view,
        so Python spares them). ``grids``: whether the editors are refilled. ``link_later``: the
        link is left pending (a number being scrubbed, or Play, changes the state many times a
        second; spelling it out each time would be most of the answer's cost, and writing each
        into the address bar a few ms of the page's). ``live``: the answer to one of
        the fine-tuning panel's own actions. ``later``: sections the page does not show now,
        left for a later answer (sections.build_answer)."""
        snap = self.snapshot(grids=grids, equations=equations, link_later=link_later, live=live,
                             later=later)
        answer, changes = sections.build_answer(snap, changed)
        self._apply(changes)
        return answer

    def snapshot(self, grids=True, equations=True, link_later=False, live=False, later=frozenset()):
        """What the answer's sections read (sections.Snapshot): the session as it is now, and
        how the request wants its answer (as for ``_answer``)."""
        return sections.Snapshot(
            state=self.state, trace=self.trace, sent=MappingProxyType(dict(self.sent)),
            selected_logit=self.selected_logit, k=self.k, finetune=self.finetune,
            deferred=frozenset(self.deferred), w_limit=self.computed.w_limit,
            page_trace=self.computed.page_trace, grids=grids, equations=equations,
            link_later=link_later, live=live, later=later)

    def _apply(self, changes):
        """What an answer's sections said the session keeps (sections.Changes)."""
        self.matrices.update(changes.matrices)
        self.sent.update(changes.sent)
        self.deferred = set(changes.deferred)
        if "selected_logit" in changes.session:
            self.selected_logit = changes.session["selected_logit"]
        if "finetune" in changes.session:
            self.finetune.answered(self.state, changes.session["finetune"])

def _edited(key):
    """What an edit or a paste of the matrix ``key`` changed."""
    return {sections.W_HEAD if key == "W_head" else sections.INPUT}

