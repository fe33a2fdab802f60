"""Fine-tuning the head on the page: the training run behind the "Fine-tune the head" panel,
what the panel shows, and the run as NumPy code (docs/training.md, "The panel").

A run (:mod:`pycore.explorer.finetune.run`) trains the correct head and the mistaken heads
beside it; its NumPy code comes from :mod:`pycore.explorer.finetune.code`, and what the panel
shows from :mod:`pycore.explorer.finetune.section`. Each
``train`` request takes steps of all of them; the correct head's W_head becomes the state's, so
the link and every export carry it. A run lasts while nothing it depends on changes: an edit of
W_head or of the inputs, a label, a setting, or another state ends it, and the next step starts
a new one (the page clears its curves).

What each curve holds (step 0 first, the softmax applied once, by the loss) is said once, in
:mod:`pycore.explorer.finetune.run`, which computes them.

Examples
--------
>>> from pycore.explorer.computed import Computed
>>> from pycore.explorer.state.presets import preset
>>> ft, computed = FineTune(), Computed(preset("finetune"))
>>> ft.train(computed, 3)
>>> [round(x, 4) for x in ft.run.main.losses]    # from W_head = 0: log 10 first
[2.3026, 2.1111, 1.9323, 1.7666]
"""
import numpy as np

from ..errors import StateError
from ..export.files import about
from ..shared import MAX_RUN_STEPS
from ..state.cells import format_number, parse_cell
from ..state.explorer_state import shown, whole_number
from ..state.finetuning import LR_DEFAULTS, check_train_setting, parse_label
from .code import training_code
from .memory import OPTIMIZER_SLOTS
from .run import OPTIMIZER_NAMES, Run

MAX_STEPS_PER_REQUEST = 500
"""Steps one ``train`` request may ask for; it takes only as many as :func:`steps_that_fit`."""

REQUEST_WORK_MS = 200.0
"""About how long one ``train`` request may keep Python busy, in the page's worker: the page's
other requests (Pause, an edit) wait for it, so it takes only the steps that fit
(:func:`steps_that_fit`) and says how many (the section's ``trained``).

The estimate (:func:`step_cost_ms`, :func:`request_overhead_ms`) counts the passes over arrays
a step makes, and what the first request of a run does besides (each head's start, the
optimizer buffers written for the first time). It is computed from the sizes, not measured, so
the same request takes the same steps on every machine. Its constants were fitted to CPython
with one BLAS thread, then multiplied by :data:`PAGE_SLOWER` for Pyodide's WebAssembly
(docs/performance.md, "Training requests", has the figures)."""

PAGE_SLOWER = 1.5
"""How much slower the page's Python is than the CPython the costs were fitted on."""

HEAD_STEP_FIXED_MS = 0.35
"""A head's step in Python's own code (calls, small arrays): the whole cost at small sizes."""

NEW_ARRAY_PASSES = 4.0
"""What writing a W_head-sized array made for the first time costs, in passes over W_head: the
system maps and zeroes its memory as it is first written (each head's own W_head, its optimizer
buffers), where a later step writes memory already in use."""

OPTIMIZER_PASSES = {"sgd": 3.0, "momentum": 6.0, "adam": 20.0}
"""Nanoseconds per weight (D × C) of a head's step in its optimizer and gradient arrays (the
gradient made, then the update's passes: Adam's square root and divisions cost the most)."""


# ---- the panel, request by request ---------------------------------------------------------

def step_cost_ms(B, D, C, optimizer, heads):
    """The estimated time of one training step of ``heads`` heads in the page (see
    :data:`REQUEST_WORK_MS`).

    Per head: :data:`HEAD_STEP_FIXED_MS`, the optimizer's passes over W_head
    (:data:`OPTIMIZER_PASSES`), and 2.25 products with W_head (the logits, dW_head, and for
    the softmax-inside head its scored logits), each one read of W_head (1.5 ns a weight, for
    a small B the product is bound by memory) plus 0.09 ns per multiply-add (B per weight).

    Parameters
    ----------
    B, D, C : int
        The sizes: samples, features, classes.
    optimizer : {"sgd", "momentum", "adam"}
    heads : int
        How many heads the run trains (the correct one and those compared).

    Returns
    -------
    float
        Milliseconds.

    Examples
    --------
    >>> [round(step_cost_ms(2, 768, 1000, o, 4)) for o in ("sgd", "momentum", "adam")]
    [33, 47, 112]
    """
    weights = float(D) * C
    per_weight_ns = OPTIMIZER_PASSES[optimizer] + 2.25 * (1.5 + 0.09 * B)
    return heads * (HEAD_STEP_FIXED_MS + weights * per_weight_ns * 1e-6) * PAGE_SLOWER


def request_overhead_ms(B, D, C, optimizer, heads, fresh=False):
    """The estimated time of a ``train`` request besides its steps, in the page (see
    :data:`REQUEST_WORK_MS`).

    Every request: each head's loss evaluated after the steps, and the answer (the head
    recomputed, dW_head, W_head's heatmap and its copy to the page), about 8 passes over
    W_head and a few milliseconds of Python. A request that goes on with a run also copies the
    correct head's optimizer buffers (to take the steps back if they overflow or the answer
    fails: :meth:`pycore.explorer.finetune.run.Curve.rewind`). The request that starts a run
    (``fresh``) makes the run's start W0 and each head's start instead (its own copy of W_head
    and its first loss), and each head's optimizer buffers (:data:`NEW_ARRAY_PASSES` each),
    at its first step or, when it takes none, before the answer.

    Parameters
    ----------
    B, D, C : int
    optimizer : {"sgd", "momentum", "adam"}
    heads : int
    fresh : bool, optional
        Whether the request starts the run.

    Returns
    -------
    float
        Milliseconds.

    Examples
    --------
    >>> round(request_overhead_ms(2, 768, 1000, "sgd", 4))
    26
    >>> round(request_overhead_ms(2, 768, 1000, "adam", 4, fresh=True))   # m and v made
    79
    """
    weights = float(D) * C
    passes = 8 + heads * 1.5 * (1 + 0.06 * B)
    if fresh:
        passes += 1 + heads * (2 + 1.5 * (1 + 0.06 * B)
                               + OPTIMIZER_SLOTS[optimizer] * NEW_ARRAY_PASSES)
    else:
        passes += 1 + OPTIMIZER_SLOTS[optimizer]
    return (5.0 + weights * passes * 1e-6) * PAGE_SLOWER


def steps_that_fit(B, D, C, optimizer, heads, asked, budget_ms=REQUEST_WORK_MS, fresh=False):
    """How many of the ``asked`` steps one request takes: as many as fit in ``budget_ms`` of
    estimated work, never more than asked, and at least one, with one exception. A request
    that starts a run and asks for more than one step (Play) takes none when the start and
    one step together do not fit: it starts the run (each head's loss at step 0, and its
    optimizer buffers) and the next requests take the steps, so no request of Play holds Python
    for the start and a step at once. Step (one step asked) always takes its step.

    Parameters
    ----------
    B, D, C : int
    optimizer : {"sgd", "momentum", "adam"}
    heads : int
    asked : int
        Steps the request asked for, >= 1.
    budget_ms : float, optional
    fresh : bool, optional
        Whether the request starts the run (:func:`request_overhead_ms`).

    Returns
    -------
    int
        0 to ``asked``; 0 only for a ``fresh`` request that asked for more than one.

    Examples
    --------
    >>> steps_that_fit(2, 768, 1000, "sgd", 4, 500), steps_that_fit(2, 768, 1000, "adam", 4, 500)
    (5, 1)
    >>> steps_that_fit(60, 64, 10, "sgd", 4, 500), steps_that_fit(60, 64, 10, "sgd", 4, 3)
    (88, 3)
    >>> [steps_that_fit(64, 1024, 1000, "adam", 4, n, fresh=True) for n in (500, 1)]
    [0, 1]
    """
    room = budget_ms - request_overhead_ms(B, D, C, optimizer, heads, fresh)
    fit = int(room // step_cost_ms(B, D, C, optimizer, heads)) if room > 0 else 0
    least = 0 if fresh and asked > 1 else 1
    return max(least, min(asked, fit))


class FineTune(object):
    """The fine-tuning side of a session: the current run, the label being typed, and what the
    panel's next section says (pycore/explorer/finetune/section.py reads it)."""

    def __init__(self):
        self.run = None
        self.active = False   # the panel has been used: its gradient follows every edit
        self._runs = 0
        self._entry = None    # the label being typed: (state, b, the label when entered)
        self.held_out = None  # the held-out digits of preset "finetune-digits" (HeldOut)
        self.trained = None   # the last train request's {asked, taken, text}, for its answer
        self.notice = None    # what the last setting changed besides itself (see setting)

    def current_run(self, state):
        """The run, if it still describes ``state`` (else it is dropped)."""
        if self.run is not None and not self.run.current(state):
            self.run = None
        return self.run

    def answered(self, state, notice_done):
        """After an answer that brought the panel's section: its ``trained`` line has been
        said, a run that no longer describes ``state`` is let go, and so is a setting's
        notice that another run replaced (``notice_done``, from finetune_panel.section)."""
        self.trained = None
        self.current_run(state)
        if notice_done:
            self.notice = None

    # -- requests

    def train(self, computed, n, run_id=None, undo=None):
        """Take up to n steps of the run (a new one if none describes the state): as many as
        fit in about :data:`REQUEST_WORK_MS` of work (:func:`steps_that_fit`: at least one,
        or none for a request of Play that only starts the run); the correct head's W_head
        becomes the state's, and :attr:`trained` says how many steps were taken (the answer's
        ``finetune.trained``). Changes nothing if it cannot be done.

        Parameters
        ----------
        computed : Computed
            The session's state and its trace; W_head is trained in place.
        n : int
            Steps, 1 to :data:`MAX_STEPS_PER_REQUEST`.
        run_id : int, optional
            The run the page is playing (None: whichever is current).
        undo : list, optional
            When given, a function that puts everything this call changed back (W_head, its
            recipe, the trace, the run and its curves) is appended: the session calls it if
            the answer to these steps cannot be made, so a refusal still changes nothing.

        Raises
        ------
        StateError
            A bad n; ``key="run"`` when ``run_id`` is not the current run (something changed
            it: the page stops playing); a run at :data:`MAX_RUN_STEPS`; W_head or the logits
            overflowing float64.
        """
        state = computed.state
        n = whole_number(n, "n", 1, MAX_STEPS_PER_REQUEST, floats=True)
        run = self.current_run(state)
        if run_id is not None and (run is None or run.id != run_id):
            raise StateError("The training run changed (an edit, a label, a setting or new "
                             "data): this step was not taken.", key="run")
        fresh = run is None
        if fresh:
            try:
                run = Run(self._runs + 1, state)
            except ValueError as exc:
                raise StateError("Training cannot start: %s; nothing was changed." % exc,
                                 key="train") from None
        asked = n
        n = min(n, MAX_RUN_STEPS - run.steps)
        if n <= 0:
            raise StateError("This run has taken its %d steps: press Reset, or change a "
                             "setting, to start another." % MAX_RUN_STEPS, key="run")
        heads = sum(1 for c in run.curves() if c.stopped is None)
        n = steps_that_fit(state.B, state.D, state.C, run.train["optimizer"], heads, n,
                           fresh=fresh)
        # What a failure takes back, without a copy of every head. An overflow (a learning
        # rate can cause one) stops the correct head before its steps are kept: it is put back
        # from a copy of its optimizer buffers, and from the state's W_head, not yet changed,
        # or, where the memory budget has no room for the copy (Adam at the largest sizes,
        # training_memory.plan), by replaying its steps (Run.advance).
        # Past that point nothing should fail; if the answer does, every head is rewound to its
        # mark (Curve.rewind replays its steps) and the state's W_head is the correct head's
        # again. A new run is dropped instead: the state's W_head goes back to the run's start
        # (or a copy, for a run from zero).
        # The last answer's dW_head is let go before the steps (a refusal carries no matrix,
        # and the answer to these steps makes a new one): one W_head's size less at the peak.
        computed.matrices.pop("dW_head", None)
        recipe = state.generated.get("W_head")
        W_start = None
        if fresh:
            W_start = run.W0 if run.train["start"] == "current" else state.W_head.copy()
        marks = [(c, c.mark()) for c in run.curves()]
        before = (self.run, self.active, self._runs, len(run.held_out))
        try:
            snap = None if fresh or not run.copy_fits else \
                run.main.snapshot(params={"W_head": state.W_head})
            if n:
                run.advance(n, snap, restore=not fresh)
            else:   # a run started with no step: its first step is then as any other
                for curve in run.curves():
                    if curve.trainer is not None:
                        curve.trainer.optimizer.make_buffers(curve.trainer.params)
            snap = None   # the steps are kept: the copies go before the answer is made
            if n or run.train["start"] != "current":   # a run from zero puts W_head at 0
                state.W_head[...] = run.main.trainer.params["W_head"]
                state.generated.pop("W_head", None)   # trained: no longer the preset's matrix
                computed.recompute()
        except ValueError as exc:
            snap = None
            self._take_back(state, run, W_start, recipe, marks)
            raise StateError("Training stopped: %s at lr = %s; nothing was changed. Try a "
                             "smaller learning rate." % (str(exc).rstrip("."), format_number(
                                 state.train["lr"], 8, trim=True)), key="train") from None
        run.trained = True
        held = self.held_out
        if held is not None and held.applies(state):   # at the run's start, then per request
            if fresh:
                run.held_out.append([0, held.accuracy(run.W0)])
            if n:
                run.held_out.append([run.steps, held.accuracy(state.W_head)])
        if fresh:
            self._runs += 1
        self.run, self.active = run, True
        self.trained = {"asked": asked, "taken": n, "text": _taken_text(asked, n, run.steps)}
        if undo is not None:
            undo.append(lambda: self._untrain(computed, W_start, recipe, run, marks, before))

    @staticmethod
    def _take_back(state, run, W_start, recipe, marks):
        """The run's heads and the state's W_head as they were before :meth:`train`'s steps
        (``W_start``: the W_head of a new run's state; None for a run that goes on)."""
        if W_start is None:
            for curve, mark in marks:
                curve.rewind(mark)
            state.W_head[...] = run.main.trainer.params["W_head"]
        else:
            state.W_head[...] = W_start
        state.generated.pop("W_head", None)
        if recipe is not None:
            state.generated["W_head"] = recipe

    def _untrain(self, computed, W_start, recipe, run, marks, before):
        """Put back what :meth:`train` changed (see its ``undo``)."""
        self.trained = None
        self.run, self.active, self._runs, held = before
        del run.held_out[held:]
        self._take_back(computed.state, run, W_start, recipe, marks)
        computed.recompute()   # the W_head it was computed with before: cannot overflow

    def reset(self, computed):
        """W_head back to where training starts: the current run's start, or zero when the
        settings say so; the curves are cleared. Returns whether W_head changed."""
        state = computed.state
        self.active = True
        run = self.current_run(state)
        self.run = None
        if run is not None:
            W, recipe = run.W0, run.W0_recipe
        elif state.train["start"] == "zero":
            W, recipe = np.zeros_like(state.W_head), None
        else:
            return False
        if np.array_equal(W, state.W_head):
            return False
        before, old_recipe = state.W_head.copy(), state.generated.get("W_head")
        state.W_head[...] = W
        state.generated.pop("W_head", None)
        if recipe is not None:
            state.generated["W_head"] = recipe.copy()
        try:
            computed.recompute()
        except ValueError as exc:  # cannot happen for a start that was computed: kept honest
            state.W_head[...] = before
            state.generated.pop("W_head", None)
            if old_recipe is not None:
                state.generated["W_head"] = old_recipe
            raise StateError("This cannot be computed: %s; nothing was changed." % exc) from None
        return True

    def setting(self, state, name, value):
        """Change one training setting (text from the page is read as a number for ``lr``
        and ``input_scale``). Raises StateError, changing nothing, for a bad value."""
        typed = isinstance(value, str) and name in ("lr", "input_scale")
        try:
            if typed:
                value = parse_cell(value, where="train." + name)
            checked = check_train_setting(name, value)
        except StateError as err:
            message = str(err)
            if typed and "; got " in message:  # as the person typed it: -1, not -1.0
                message = message[:message.rindex("; got ")] + "; got " + \
                    format_number(value, 8, trim=True)
            if isinstance(name, str) and name in state.train:  # a malformed name is no key
                message += "; it stays %s" % _setting_text(state.train[name])
            raise StateError(message, key="train") from None
        before = dict(state.train)
        run = self.current_run(state)
        state.train[name] = checked
        said = []
        if name == "optimizer" and checked != before["optimizer"]:
            # each optimizer with a learning rate it works with (Adam at SGD's 0.5 diverges)
            state.train["lr"] = LR_DEFAULTS[checked]
            said.append("%s, with its usual learning rate %s%s." % (
                OPTIMIZER_NAMES[checked], _setting_text(state.train["lr"]),
                "" if state.train["lr"] == before["lr"] else
                " (it was %s; type another to change it)" % _setting_text(before["lr"])))
        ended = run.steps if run is not None and state.train != before else None
        # said until the run that follows the change is replaced (finetune_panel._notice)
        self.notice = {"said": " ".join(said), "ended": ended, "next": self._runs + 1} \
            if said or ended is not None else None
        self.active = True

    def label(self, state, index, text, commit=False):
        """One label as typed so far, as a cell is edited: a class index is in effect at
        once; anything else puts the label back to what it was when the person began typing
        in it, and is returned as the error ({message, key, index, incomplete}: an empty
        field is no error until it is left)."""
        B, C = state.B, state.C
        if not isinstance(index, list) or len(index) != 1:
            raise StateError("A label's index is [b], one sample; got %s." % shown(index),
                             key="labels")
        b = whole_number(index[0], "labels index", 0, B - 1, key="labels")
        entry = self._entry
        if entry is None or entry[0] is not state or entry[1] != b:
            entry = self._entry = (state, b, state.labels[b])
        error = None
        try:
            value = parse_label(text, b, C)
        except StateError as err:
            value = entry[2]
            error = {"message": str(err), "key": "labels", "index": [b],
                     "incomplete": not commit and isinstance(text, str) and not text.strip()}
        labels = list(state.labels)
        labels[b] = value
        state.labels = tuple(labels)
        if commit:
            self._entry = None
        self.active = True
        return value, error

    def export(self, state):
        """The run as runnable NumPy code (export format "training")."""
        run = self.current_run(state)
        if run is None:
            raise StateError("There is no training run to export: press Step or Play in "
                             "\u201cFine-tune the head\u201d first.")
        return {"text": training_code(run), "mime": "text/x-python",
                "filename": "vit_head_training.py",
                "title": "NumPy code that reproduces the training run's losses",
                "about": about(state, "training", run)}

def _taken_text(asked, taken, steps):
    """What the answer to a train request says about the steps it took.

    Examples
    --------
    >>> _taken_text(500, 5, 5)
    'Took 5 of the 500 steps asked (about 0.2 s of work per request); the run is at step 5.'
    >>> _taken_text(3, 3, 10)
    'Took 3 steps; the run is at step 10.'
    >>> _taken_text(500, 0, 0)[:60]
    'Started the run (each head at step 0): at this size the next'
    """
    if taken == 0:
        return ("Started the run (each head at step 0): at this size the next requests take "
                "its steps (about %s s of work per request)." % format_number(
                    REQUEST_WORK_MS / 1000.0, 3, trim=True))
    if taken >= asked:
        return "Took %d step%s; the run is at step %d." % (taken, "" if taken == 1 else "s",
                                                            steps)
    return ("Took %d of the %d steps asked (about %s s of work per request); the run is at "
            "step %d." % (taken, asked, format_number(REQUEST_WORK_MS / 1000.0, 3, trim=True),
                          steps))


def _setting_text(value):
    """A training setting as a message quotes it: 0.1, sgd, "bias, no_layernorm" or none."""
    if isinstance(value, float):
        return format_number(value, 8, trim=True)
    if isinstance(value, tuple):
        return ", ".join(value) or "none"
    return str(value)
