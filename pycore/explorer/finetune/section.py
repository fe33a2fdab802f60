"""What the "Fine-tune the head" panel shows: its section of an answer (protocol.FINETUNE), built
from the session's :class:`~pycore.explorer.finetune.panel.FineTune` without changing it.

:func:`section` reads the panel's run and settings and returns the section, dW_head's heatmap
and matrix, and what the session changes once the answer is made (the ``trained`` line said,
a setting's notice that no longer applies): pycore/explorer/panels/sections.py hands these to the
session, which applies them (:meth:`~pycore.explorer.finetune.panel.FineTune.answered`).

Examples
--------
>>> from pycore.explorer.computed import Computed
>>> from pycore.explorer.finetune.panel import FineTune
>>> from pycore.explorer.state.presets import preset
>>> ft, computed = FineTune(), Computed(preset("finetune"))
>>> ft.train(computed, 2)
>>> out = section(ft, computed.state, computed.trace, live=True)
>>> out.section["trained"]["taken"], ft.trained is not None   # the FineTune is as it was
(2, True)
"""
import math
from collections import namedtuple

import numpy as np

from ...vit.loss import cross_entropy
from ..comparisons.registry import page_trace
from ..panels.heatmap import AHEAD_LIMIT, VALUE, heatmap, shape_only
from ..shared import HEATMAP_IDS
from ..state.cells import format_number
from ..state.finetuning import TRAIN_DEFAULTS
from .run import converged, reading

GRADIENT_LIVE_MAX = 20000
"""Up to this many weights (D * C), dW_head is redrawn with every edit once the panel is in
use; a larger gradient comes only with the panel's own actions (an edit hides it)."""


class Panel(namedtuple("Panel", "section heatmaps hide matrices notice_done")):
    """The panel's part of an answer.

    Attributes
    ----------
    section : dict
        The answer's ``finetune`` (protocol.FINETUNE).
    heatmaps : dict
        dW_head's heatmap spec by element id, or {} while it is hidden.
    hide : list of str
        dW_head's element id while it is hidden.
    matrices : dict
        ``{"dW_head": array}`` while it is shown.
    notice_done : bool
        The last setting's notice no longer applies (another run replaced the one it spoke of).
    """
    __slots__ = ()


def current_run(ft, state):
    """The panel's run if it still describes ``state``, else None (the session drops it)."""
    return ft.run if ft.run is not None and ft.run.current(state) else None


def section(ft, state, trace, live=False, page=None):
    """The panel's section of an answer, with dW_head as a heatmap when the panel is in use
    (``live``: the answer to one of its own actions). The panel trains the head the page
    teaches: while the pipeline shows a model file's own head, its numbers are that head's
    (``page()``, the session's trace of it kept edit by edit, or traced here), and its start
    note says so. Reads ``ft`` and changes nothing.

    Returns
    -------
    Panel
    """
    real = trace.real is not None
    if real:  # the pipeline shows a model file's own head; the panel trains the page's
        trace = page() if page is not None else page_trace(state)
    run = current_run(ft, state)
    y = np.array(state.labels, dtype=np.int64)
    predicted = [int(c) for c in trace.predicted]
    zero_start = run is None and state.train["start"] == "zero"
    if run is not None:
        loss, accuracy = run.main.losses[-1], run.main.accuracies[-1]
    elif zero_start:
        # what the run will start from: W_head = 0, every logit 0, every sample class 0
        loss = cross_entropy(np.zeros((state.B, state.C)), y)
        accuracy = sum(t == 0 for t in state.labels) / float(state.B)
    else:
        with np.errstate(over="ignore"):
            loss = cross_entropy(trace.logits, y)
        accuracy = sum(p == t for p, t in zip(predicted, state.labels)) / float(state.B)
    correct = int(round(accuracy * state.B))
    finite = math.isfinite(loss)
    status = "%s · loss %s · accuracy %s %% (%d of %d)" % (
        "Step %d of this run" % run.steps if run is not None else
        "No steps yet · from W_head = 0" if zero_start else "No steps yet",
        format_number(loss, 4) if finite else "beyond float64 (logits more than ~1e308 "
        "apart)", format_number(100.0 * accuracy, 1), correct, state.B)
    notice, notice_done = _notice(ft.notice, run)
    if notice:
        status += " · " + notice
    done = converged(run.main.losses, run.main.accuracies) if run is not None else None
    if done:
        status += " · " + done
    line, why = reading(run) if run is not None else ("", "")
    out = {
        "labels": list(state.labels), "predicted": predicted, "classes": state.C,
        "settings": dict(state.train, compare=list(state.train["compare"])),
        "loss": float(loss) if finite else None, "accuracy": float(accuracy),
        "status": status,
        "start_note": ("This panel trains the problem's head (no \u03b3/\u03b2, no bias) on "
                       "these inputs; the pipeline shows the model's own head, so its loss "
                       "and predictions here are the problem's head's. " if real else "")
                      + start_note(state.C, state.train["start"]),
        "run": run.curves_json() if run is not None else None,
        "reading": line, "why": why, "gradient_note": None,
        "held_out": _held_out(ft.held_out, state, run),
        "trained": ft.trained if live else None,
    }
    if gradient_hidden(ft, state, live):
        out["gradient_note"] = (
            "The gradient dW_head appears here once you use this panel (Step, a label, a "
            "setting)." if not in_use(ft, state) else
            "dW_head (%d weights) is recomputed at each step, not at each edit." %
            (state.D * state.C))
        return Panel(out, {}, [HEATMAP_IDS["dw"]], {}, notice_done)
    dW = gradient(trace, y)
    return Panel(out, {HEATMAP_IDS["dw"]: gradient_heatmap(dW)}, [], {"dW_head": dW},
                 notice_done)


def _held_out(held, state, run):
    """The answer's "held_out": the held-out digits' accuracy under this W_head."""
    if held is None or not held.applies(state):
        return None
    accuracy = held.accuracy(state.W_head)
    right = int(round(accuracy * held.count))
    return {"count": held.count, "accuracy": accuracy,
            "curve": list(run.held_out) if run is not None else [],
            "probes": held.probes,
            "text": "Held-out digits (never trained on): %s %% right (%d of %d), with "
                    "this W_head." % (format_number(100.0 * accuracy, 1), right, held.count)}


def _notice(notice, run):
    """What the last setting changed, while it is news: before the next step, and during the
    run that step starts. Returns (its words or None, whether another run replaced that one
    and the notice is done)."""
    if notice is None:
        return None, False
    if run is not None and run.id != notice["next"]:
        return None, True
    words = [notice["said"]] if notice["said"] else []
    if notice["ended"] is not None:
        words.append("The run of %d step%s ended when the setting changed%s." % (
            notice["ended"], "" if notice["ended"] == 1 else "s",
            ": the next step starts a new run" if run is None else "; this is a new run"))
    return " ".join(words), False


def in_use(ft, state):
    """Whether the panel is in use: this session's actions, or a state that carries
    fine-tuning (a link, the preset). Until then dW_head is not shown."""
    return ft.active or any(state.labels) or state.train != TRAIN_DEFAULTS


def gradient_hidden(ft, state, live=False):
    """Whether dW_head is hidden: the panel not in use, or (but in the answer to one of the
    panel's own actions, ``live``) a gradient too large to follow every edit."""
    return not in_use(ft, state) or (not live and state.D * state.C > GRADIENT_LIVE_MAX)


def shown_later(ft, state):
    """dW_head's figure as a Step would show it, while it is hidden (the panel not in use,
    or a gradient too large to follow every edit), for the page to make ahead:
    {id: {spec, rows, cols}}, the colour range a placeholder; {} while it is shown."""
    if not gradient_hidden(ft, state):
        return {}
    return {HEATMAP_IDS["dw"]: {"spec": gradient_heatmap(shape_only(state.D, state.C),
                                                         limit=AHEAD_LIMIT),
                                "rows": state.D, "cols": state.C}}


def gradient_heatmap(dW_head, limit=None):
    """dW_head's heatmap (D, C); ``limit`` as for :func:`pycore.explorer.panels.heatmap.heatmap`."""
    return heatmap("dW_head", dW_head, "dW_head = ∂loss/∂W_head at this W_head (D × C)",
                   "class c", "feature d", "d = %{y}, class %{x}<br>dW = " + VALUE, limit=limit)


def gradient(trace, labels):
    """dW_head of the correct head at the trace's W_head: h_hatᵀ (softmax(logits) − Y) / B.

    Examples
    --------
    >>> from pycore.vit.trace import trace_head
    >>> t = trace_head(np.zeros((2, 2)), cls=[[1.0, -1.0], [-1.0, 1.0]])
    >>> gradient(t, np.array([0, 1])).round(4).tolist()   # each class toward its own rows
    [[-0.5, 0.5], [0.5, -0.5]]
    """
    B = trace.logits.shape[0]
    delta = np.array(trace.display_softmax, dtype=np.float64)
    delta[np.arange(B), labels] -= 1.0
    delta /= B
    return np.ascontiguousarray(np.dot(trace.h_hat.T, delta))


def start_note(C, start):
    """What the start setting means for a run's first loss, with this state's C (the panel
    says it beside the start). Only a run from zero begins at log C; from the W_head shown it
    begins at that W_head's own loss, the one the panel prints before any step.

    Examples
    --------
    >>> start_note(3, "current").startswith("A run starts from the W_head shown")
    True
    >>> "at step 0 every logit is 0" in start_note(3, "zero")
    True
    """
    log_c = "log C = log %d = %s" % (C, format_number(math.log(C), 4))
    if start == "zero":
        return ("A run starts from W_head = 0, the paper's start (its first Step, or Reset, puts "
                "it there): at step 0 every logit is 0, the softmax is uniform, the loss is "
                "exactly %s, and every sample predicts class 0 (ties go to the first class). The "
                "first SGD step then moves each column of W_head toward the mean normalized CLS "
                "row of its class." % log_c)
    return ("A run starts from the W_head shown, so its first loss is that W_head's own loss "
            "(the one shown before any step), not log C. Only the start \u201czero (the "
            "paper)\u201d begins with every logit at 0 and the loss at exactly %s." % log_c)
