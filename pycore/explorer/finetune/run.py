"""A training run of the "Fine-tune the head" panel: the correct head and the mistaken heads
beside it, trained from the same start, and the one line that reads their curves.

A **run** trains W_head on the state's CLS rows and labels, full batch, with the state's
optimizer and learning rate, from where the settings say (the W_head shown, or zero). Beside
the correct head it trains the mistaken heads of the settings (``compare``) from the same start,
on the same rows scaled by ``input_scale``, with the same optimizer and learning rate: those
the memory budget has room for (:mod:`pycore.explorer.finetune.memory`); the others are left
out, their curves empty and their ``stopped`` saying why.

Every curve is a list of losses, step 0 first: entry t is the loss after t updates, i.e.
before update t, and the last entry is the loss of the parameters now (as
:func:`pycore.vit.training.train_head` reports them). On the side-by-side chart each head's
curve is the cross-entropy of its logits, the softmax applied once, by the loss: for the
softmax-inside head that scores the W_head it learns as the correct head would use it; its own
(double-softmax) training loss is kept beside it.

Examples
--------
>>> from pycore.explorer.state.presets import preset
>>> run = Run(1, preset("finetune")); run.advance(3)
>>> [round(x, 4) for x in run.main.losses]    # from W_head = 0: log 10 first
[2.3026, 2.1111, 1.9323, 1.7666]
"""
import math

import numpy as np

from ...vit.loss import cross_entropy
from ...vit.optimizers import make_optimizer
from ...vit.training import HeadTrainer
from ..state.cells import format_number
from . import memory as training_memory

HEAD_NAMES = {"correct": "correct head", "softmax_inside": "softmax inside the head",
              "no_layernorm": "no LayerNorm", "bias": "with bias"}
OPTIMIZER_NAMES = {"sgd": "SGD", "momentum": "momentum 0.9", "adam": "Adam"}


def _g(x):
    """A loss as the panel's text writes it: three significant digits."""
    return "%.3g" % x


# ---- one head, trained ---------------------------------------------------------------------

class Curve(object):
    """One head trained from a run's start, and its curve.

    Parameters
    ----------
    head : str
        ``"correct"`` or one of the mistaken heads.
    h_cls, W0, labels : numpy.ndarray
        The run's CLS rows (B, D), start (D, C) and labels (B,).
    optimizer : str
        ``"sgd"``, ``"momentum"`` or ``"adam"``.
    lr, input_scale : float
    left_out : str, optional
        Why this head is not trained at all (its ``stopped``; it keeps no trainer).

    Attributes
    ----------
    losses : list of float
        The loss of the head's logits (softmax applied once), step 0 first.
    accuracies : list of float
        Share of samples whose arg-max logit is their label, step by step.
    own : list of float
        The softmax-inside head's own training loss (double softmax); empty for other heads.
    stopped : str or None
        Why the curve stopped early (its logits overflowed float64), or never started.

    Examples
    --------
    >>> c = Curve("correct", np.array([[1.0, -1.0], [-1.0, 1.0]]), np.zeros((2, 2)),
    ...           np.array([0, 1]), "sgd", 1.0)
    >>> c.advance(1)
    >>> [round(x, 4) for x in c.losses], c.accuracies
    ([0.6931, 0.1269], [0.5, 1.0])
    """

    __slots__ = ("head", "trainer", "losses", "accuracies", "own", "stopped", "_start")

    def __init__(self, head, h_cls, W0, labels, optimizer, lr, input_scale=1.0, left_out=None):
        self.head = head
        self.trainer = None
        self.losses, self.accuracies, self.own = [], [], []
        self.stopped = left_out
        # what the trainer is made from (the run's own arrays, not copies): rewind replays it
        self._start = (h_cls, W0, labels, optimizer, lr, input_scale)
        if left_out is not None:   # never trained: the run's memory budget has no room for it
            return
        try:
            self.trainer = self._new_trainer()
            with np.errstate(over="ignore", invalid="ignore"):   # an overflow stops it here
                self._record(*self.trainer.evaluate(), scored=self._scored())
        except ValueError:
            if head == "correct" and input_scale == 1.0:
                raise
            self.stopped = "could not start: at this input scale its logits overflow float64"

    def _new_trainer(self):
        h_cls, W0, labels, optimizer, lr, input_scale = self._start
        return HeadTrainer(h_cls, W0, labels, make_optimizer(optimizer, lr), head=self.head,
                           input_scale=input_scale)

    @property
    def steps(self):
        return len(self.losses) - 1

    def _scored(self):
        """The cross-entropy of the softmax-inside head's logits, before its own softmax
        (None for the other heads, whose training loss is that already)."""
        t = self.trainer
        if self.head != "softmax_inside":
            return None
        return cross_entropy(np.dot(t.features, t.params["W_head"]), t.labels)

    def _record(self, loss, accuracy, scored=None):
        # Finite logits that span more than float64 can subtract (about ±1e308) give an
        # infinite loss: that is an overflow too, and JSON could not carry it.
        if not (math.isfinite(loss) and (scored is None or math.isfinite(scored))):
            raise ValueError("the loss overflowed float64")
        if scored is not None:
            self.own.append(loss)
            loss = scored
        self.losses.append(loss)
        self.accuracies.append(accuracy)

    def advance(self, n):
        """Take n steps of this head.

        Raises
        ------
        ValueError
            From the trainer, when the logits overflow float64 (see :meth:`advance_or_stop`);
            the entries recorded until then stay.
        """
        for i in range(n):
            scored = self._scored() if i else None       # of the W_head this step starts from
            loss, accuracy = self.trainer.step()          # the same W_head's, before the update
            if i:                                         # (step 0's are recorded already)
                self._record(loss, accuracy, scored)
        scored = self._scored()
        self._record(*self.trainer.evaluate(), scored=scored)

    def advance_or_stop(self, n):
        """:meth:`advance`, but a head whose logits overflow stops where it was."""
        if self.stopped is not None:
            return
        try:
            self.advance(n)
        except ValueError:
            self.stopped = ("stopped at step %d: its logits overflowed float64"
                            % len(self.losses))

    def snapshot(self, params=None):
        """What :meth:`restore` needs to undo the next steps at once: copies of the optimizer's
        buffers (W_head's size each: none to two), and of the parameters unless ``params``
        holds arrays with their values already (the state's W_head for the correct head: it
        changes only once the steps are kept)."""
        t = self.trainer
        if t is None:
            return None
        opt = t.optimizer
        if params is None:
            params = dict((k, v.copy()) for k, v in t.params.items())
        return (params, opt.t,
                dict((k, tuple(a.copy() for a in v)) for k, v in opt.state.items()),
                t.steps_taken, self.mark())

    def restore(self, snap):
        if snap is None:
            return
        params, opt_t, opt_state, steps_taken, mark = snap
        t = self.trainer
        for name, value in params.items():
            t.params[name][...] = value
        t.optimizer.t, t.steps_taken = opt_t, steps_taken
        t.optimizer.state = opt_state
        self.rewind(mark)

    def mark(self):
        """Where the curve is, in a few numbers: :meth:`rewind` goes back to it."""
        return (None if self.trainer is None else self.trainer.steps_taken, len(self.losses),
                len(self.own), self.stopped)

    def rewind(self, mark):
        """Back to :meth:`mark`, with no copy kept in between: the curve's entries are cut,
        and a trainer that has moved since is made again from the run's start and retakes
        its steps, which gives the same numbers bit for bit (each step is deterministic).
        That costs as many steps as the curve had taken, so it is for what should never
        happen (an answer that fails after the steps); an overflow, which a learning rate
        can cause, is undone from a :meth:`snapshot` instead."""
        steps_taken, n, n_own, stopped = mark
        t = self.trainer
        if t is not None and t.steps_taken != steps_taken:
            t = self.trainer = self._new_trainer()
            with np.errstate(over="ignore", invalid="ignore"):   # as the steps were taken
                for _ in range(steps_taken):
                    t.step()
        del self.losses[n:], self.accuracies[n:], self.own[n_own:]
        self.stopped = stopped


# ---- a run: the correct head, and the mistaken ones beside it ------------------------------

class Run(object):
    """A training run of a state: see the module docstring.

    Parameters
    ----------
    run_id : int
    state : ExplorerState
        Its CLS rows, labels and settings are copied; its W_head is the start unless the
        settings say ``start: "zero"``.
    """

    def __init__(self, run_id, state):
        self.id = run_id
        self.state = state
        self.labels = state.labels
        self.train = dict(state.train)
        self.h_cls = np.array(state.h_cls, dtype=np.float64)
        zero = self.train["start"] == "zero"
        self.W0 = np.zeros_like(state.W_head) if zero else state.W_head.copy()
        recipe = None if zero else state.generated.get("W_head")
        self.W0_recipe = recipe.copy() if recipe is not None else None
        self.trained = False   # whether a request's steps were kept (FineTune.train)
        self.held_out = []   # [step, held-out accuracy] (FineTune.train, preset finetune-digits)
        y = np.array(self.labels, dtype=np.int64)
        opt, lr, scale = self.train["optimizer"], self.train["lr"], self.train["input_scale"]
        heads = ("correct",) + tuple(self.train["compare"])
        # The heads that fit the memory budget (training_memory.plan): the compared heads over
        # it are left out, the last first; the correct head, on rows as they are, always trains.
        B, D, C = state.B, state.D, state.C
        inputs = state.inputs.size
        count = len(heads) + (scale != 1.0)
        kept, self.copy_fits = training_memory.plan(inputs, B, D, C, opt, count)
        why = training_memory.left_out_text(OPTIMIZER_NAMES, opt, count, B, D, C, inputs) \
            if kept < count else None
        self.main = Curve("correct", self.h_cls, self.W0, y, opt, lr)
        kept -= 1
        self.side = []
        for head in heads:
            if head == "correct" and scale == 1.0:
                self.side.append(self.main)   # the same run, bit for bit
            else:
                self.side.append(Curve(head, self.h_cls, self.W0, y, opt, lr, scale,
                                       left_out=why if kept <= 0 else None))
                kept -= 1

    @property
    def steps(self):
        return self.main.steps

    def current(self, state):
        """Whether this run still describes ``state`` (nothing it depends on has changed)."""
        W = self.main.trainer.params["W_head"]   # what the state's W_head was set to
        return (state is self.state and self.trained
                and state.labels == self.labels and state.train == self.train
                and state.W_head.shape == W.shape and np.array_equal(state.W_head, W)
                and np.array_equal(state.h_cls, self.h_cls))

    def curves(self):
        """Every head's curve once: the correct head's first."""
        return [self.main] + [c for c in self.side if c is not self.main]

    def advance(self, n, snap=None, restore=True):
        """n steps of every head. A mistaken head that overflows stops alone; the correct
        head's overflow raises ValueError after putting the correct head back as it was (the
        others have not moved yet).

        Parameters
        ----------
        n : int
        snap : tuple, optional
            The correct head's :meth:`Curve.snapshot`, taken by the caller (a copy of its
            optimizer buffers): an overflow puts it back from there at once. Without one it is
            rewound instead (:meth:`Curve.rewind`: the same numbers, by replaying its steps
            from the run's start), which copies nothing but takes as long as its steps so
            far; :attr:`copy_fits` says whether the memory budget has room for the copy.
        restore : bool, optional
            False: an overflow leaves the correct head where it stopped (for a run the caller
            drops when this raises).
        """
        mark = self.main.mark()
        with np.errstate(over="ignore", invalid="ignore"):   # overflow is found and said here
            try:
                self.main.advance(n)
                if not np.isfinite(self.main.trainer.params["W_head"]).all():
                    raise ValueError("W_head overflowed float64")
            except ValueError:
                if restore and snap is not None:
                    self.main.restore(snap)
                elif restore:
                    self.main.rewind(mark)
                raise
            for c in self.curves()[1:]:
                c.advance_or_stop(n)

    def curves_json(self):
        """The run as the answer carries it (protocol.FINETUNE "run")."""
        scale = self.train["input_scale"]
        compare = []
        for c in self.side:
            name = HEAD_NAMES[c.head]
            if scale != 1.0 and c.head in ("correct", "no_layernorm"):
                name += " (inputs × %s)" % format_number(scale, 6, trim=True)
            compare.append({"head": c.head, "name": name, "loss": list(c.losses),
                            "own": list(c.own) or None, "stopped": c.stopped})
        return {"id": self.id, "steps": self.steps, "loss": list(self.main.losses),
                "accuracy": list(self.main.accuracies), "compare": compare,
                "converged": converged(self.main.losses, self.main.accuracies)}


CONVERGED_WINDOW = 20
"""Steps over which a run's loss is judged flat (see :func:`converged`)."""


def converged(losses, accuracies, window=CONVERGED_WINDOW):
    """Whether Play has nothing more to show, in words (None: it has).

    Play stops when every sample is classified right and, over the last ``window`` steps, the
    loss fell by less than 1% of its value at step 0: on the chart (whose scale is set by that
    start) the curve is flat. The loss itself has not converged then: with every sample right,
    cross-entropy keeps falling towards 0 as W_head grows, for as long as it trains, and may
    still halve in those steps; the words say so, with both falls. A loss that has not changed
    at all over the window (stuck, any accuracy) also ends Play.

    Examples
    --------
    >>> losses = [2.3] + [1.0 / (1 + t) for t in range(200)]
    >>> converged(losses[:40], [1.0] * 40) is None         # still falling fast
    True
    >>> converged(losses, [1.0] * 201)[:31]
    'Play stopped at step 200: every'
    >>> converged(losses, [0.9] * 201) is None             # a sample still wrong
    True
    >>> converged([2.3, 1.0, 0.5], [0.1, 0.5, 1.0]) is None    # too few steps to tell
    True
    """
    if len(losses) <= window:
        return None
    start, then, now = losses[0], losses[-1 - window], losses[-1]
    if not all(math.isfinite(x) for x in (start, then, now)):
        return None
    steps = len(losses) - 1
    if accuracies[-1] >= 1.0 and then - now < 0.01 * start:
        own = 100.0 * (then - now) / then if then > 0 else 0.0
        return ("Play stopped at step %d: every sample is classified right, and the loss curve "
                "is flat at its chart's scale: over the last %d steps the loss fell by %s "
                "(%s \u2192 %s), under 1%% of where it started (%s). The loss itself is still "
                "falling, by %s%% of its own value in those steps: with every sample right, "
                "cross-entropy keeps falling towards 0 as W_head grows. Step goes on."
                % (steps, window, _g(then - now), _g(then), _g(now), _g(start), _percent(own)))
    if abs(then - now) <= 1e-9 * max(abs(start), 1e-300):
        return ("The loss has not changed over the last %d steps (%s): Play stopped. A larger "
                "learning rate, or Reset, may move it." % (window, _g(now)))
    return None


def _percent(x):
    """A share in %: whole numbers from 1 on, two significant digits below."""
    return "%.0f" % x if x >= 1 else "%.2g" % x


# ---- what the side-by-side curves show, in words ------------------------------------------

def _order(loss, correct):
    """How a head's loss compares with the correct head's: equal within 2% (or 5e-4)."""
    if abs(loss - correct) <= max(0.02 * max(loss, correct), 5e-4):
        return "about the same"
    return "higher" if loss > correct else "lower"


def reading(run):
    """One line that reads the side-by-side curves at the run's last step, and one that says
    why, when the numbers show what the math predicts. Both come from the curves' numbers.

    Returns
    -------
    (str, str)

    Examples
    --------
    >>> from pycore.explorer.state.presets import preset
    >>> run = Run(1, preset("finetune")); run.advance(50)
    >>> line, why = reading(run)
    >>> line[line.index("softmax"):line.index(";", line.index("softmax"))]
    'softmax inside the head: 0.998 vs 0.165 for the correct head (higher'
    """
    k = run.steps
    if k == 0:
        return "", ""
    t = run.train
    correct = run.side[0]
    if correct.stopped:
        # The correct head on the scaled rows overflowed (a huge input_scale) and has no
        # loss at this step. LayerNorm divides the scale out, so the correct head on the
        # rows as they are (run.main, never stopped) is the one the others are read against.
        correct = run.main
    c_loss = correct.losses[-1]
    parts = ["After %d step%s (%s, lr %s): correct head %s" % (
        k, "" if k == 1 else "s", OPTIMIZER_NAMES[t["optimizer"]],
        format_number(t["lr"], 8, trim=True), _g(c_loss))]
    if run.side[0].stopped:
        parts.append("%s (inputs \u00d7 %s) %s" % (
            HEAD_NAMES["correct"], format_number(t["input_scale"], 6, trim=True),
            run.side[0].stopped))
    orders = {}
    C = run.W0.shape[1]
    floor = math.log(math.e + C - 1) - 1
    for c in run.side[1:]:
        name = HEAD_NAMES[c.head]
        if c.stopped:
            parts.append("%s %s" % (name, c.stopped))
            continue
        orders[c.head] = _order(c.losses[-1], c_loss)
        text = "%s: %s vs %s for the correct head (%s" % (
            name, _g(c.losses[-1]), _g(c_loss), orders[c.head])
        if c.head == "softmax_inside":
            text += "; its own, double-softmax loss is %s and can never go below %s" % (
                _g(c.own[-1]), _g(floor))
        parts.append(text + ")")
    why = []
    soft = orders.get("softmax_inside")
    if soft == "higher" and t["optimizer"] != "adam":
        why.append("The second softmax flattens the softmax-inside head's gradient (from "
                   "W_head = 0 it is exactly 1/C = 1/%d of the correct head's), so the same "
                   "learning rate moves it less." % C)
    elif soft in ("lower", "about the same") and t["optimizer"] == "adam":
        why.append("Adam divides each step by the gradient's own running size, which cancels "
                   "the softmax-inside head's factor 1/C = 1/%d." % C)
    if "no_layernorm" in orders and orders["no_layernorm"] != "about the same":
        rms = t["input_scale"] * math.sqrt(float(np.mean(run.h_cls * run.h_cls)))
        why.append("Without LayerNorm the head sees the rows as they come: here their root mean "
                   "square is %s (LayerNorm makes it 1), and a step moves the logits roughly in "
                   "proportion to %s." % (_g(rms), "it" if t["optimizer"] == "adam" else
                                          "its square"))
    if orders.get("bias") in ("lower", "about the same"):
        why.append("The head with a bias has C = %d more numbers to fit the same labels, so it "
                   "trains as well or better: real ViTs have one; the mistake is to read weights "
                   "trained with a bias without it, or the other way round." % C)
    if orders.get("no_layernorm") in ("lower", "about the same") and t["input_scale"] == 1:
        why.append("Rows of this size do no harm without LayerNorm (larger ones even train "
                   "faster at first): set the input scale to 100 or 0.01 to see what LayerNorm "
                   "protects a head against.")
    return "; ".join(parts) + ".", " ".join(why)
