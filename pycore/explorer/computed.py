"""What the state computes to: the head's trace, kept current edit by edit, and the arrays the
page reads. pycore/explorer/session.py answers the requests and owns one of these."""
import numpy as np

from ..vit.trace import retrace_column, retrace_row, trace_head
from .comparisons import registry as comparisons
from .panels.colour_range import RunningColourLimit
from .panels.readouts import LOGITS_TABLE_TOP_K
from .state.explorer_state import real_head


class Computed(object):
    """`state`, its `trace` (pycore.vit.trace.HeadTrace) and `matrices`, the C-contiguous float64
    arrays the page reads by name ("input", "h_cls", "h_hat", "W_head", "logits", "probs").

    Parameters
    ----------
    state : ExplorerState

    Raises
    ------
    ValueError
        When the state's logits are not finite (see pycore.vit.head.project).
    """

    # An edit recomputes only the row or column it changes once the product has this many
    # multiply-adds (B * D * C); below, the whole head costs no more than the bookkeeping.
    INCREMENTAL_FROM = 1 << 16

    def __init__(self, state):
        self.state = state
        self.matrices = {}
        self._traced = None  # the state and arrays self.trace was computed from, see after_cell
        self.exact = False  # whether self.trace is trace_head's, bit for bit
        self.recompute()

    def recompute(self):
        """Trace the whole head again (after anything but a one-cell edit).

        Raises ValueError (logits that overflow) before changing anything here: the caller
        puts the state back as it was (pycore/explorer/session.py), and this stays its trace.
        """
        s = self.state
        real = real_head(s)  # a model file's own head, when the pipeline shows it
        if s.mode == "encoder":
            trace = trace_head(s.W_head, encoder_output=s.encoder_output, real=real)
        else:
            trace = trace_head(s.W_head, cls=s.cls, real=real)
        self.trace, self.exact = trace, True
        self._page = None  # the problem's head beside a real one, traced when asked (page_trace)
        self._w_limit = None  # W_head's colour range, found when first asked for (w_limit)
        self.publish()

    def w_limit(self):
        """W_head's colour range, ``colour_range.colour_limit(W_head)``, kept edit by edit."""
        running = self._w_limit
        if running is None or running.values is not self.state.W_head:  # not kept cell by cell
            running = self._w_limit = RunningColourLimit(self.state.W_head)
        return running.limit

    def after_cell(self, key, index):
        """Bring the trace and the matrices up to date after set_cell changed one cell.

        A patch token never reaches the head. A CLS cell changes one sample's row of the
        trace, a W_head cell one class's column: in a large head only that part is computed
        (at ViT-B/16 size a row is half the product, a column a thousandth). Anything else, a
        trace that is not the current state's, or new logits that are not finite take the full
        recompute, so every answer and error is as before. Raises as :meth:`recompute` does.

        A row or column product may differ from the batched one in its last bits. That is
        invisible, except in three places, where the full recompute is kept: near ties among
        the classes the page ranks (which one is predicted, marked and listed first would
        depend on the last bits, where a fresh load takes the first of equal logits), and
        beside a mistake, whose head shares the batched product's rounding: a difference that
        is exactly zero (position -1 with CLS rows alone) would turn into noise, which the
        difference heatmap stretches over its whole colour range; and logits within 1e-12 of
        zero, where the batched product may give exact zeros (a constant CLS row) and the row
        product 1e-16: a heatmap of zeros keeps the colour range +-1, one of 1e-16 gets +-1e-16.

        Parameters
        ----------
        key : {"cls", "encoder_output", "W_head"}
        index : tuple of int
            The cell, checked by set_cell.
        """
        s = self.state
        if not self.current():
            self.recompute()
            return
        if key == "W_head" and self._w_limit is not None:
            self._w_limit.after_cell(index[0] * s.C + index[1])
        if key == "encoder_output" and index[1] > 0:
            self.publish()
            return
        trace = self._retraced(self.trace, key, index)
        if trace is None:
            self.recompute()
            return
        if self._page is not None:  # kept the same way, or traced again when next asked for
            self._page = self._retraced(self._page, key, index)
        self.trace, self.exact = trace, False
        self.publish()

    def _retraced(self, trace, key, index):
        """``trace`` after the one-cell edit, its changed row or column alone, or None where
        the whole head must be traced again (see :meth:`after_cell`)."""
        s = self.state
        if s.options.get("mistake") is not None or s.B * s.D * s.C < self.INCREMENTAL_FROM:
            return None
        if key == "W_head":
            trace, changed = retrace_column(trace, s.W_head, index[1]), slice(None)
        else:
            trace = retrace_row(trace, s.W_head, s.h_cls, index[0])
            changed = slice(index[0], index[0] + 1)
        if trace is None or _near_tie(trace.logits[changed], RANKED) \
                or _near_zero(trace.logits[changed]):
            return None
        return trace

    def page_trace(self):
        """The trace of the head the page teaches (no gamma/beta, no bias) on the state's
        inputs: the pipeline's own trace, or, while it shows a model file's own head, a second
        trace kept beside it, edit by edit as the pipeline's is (the fine-tuning panel and the
        mistakes read it at every edit)."""
        if self.trace.real is None:
            return self.trace
        if self._page is None:
            self._page = comparisons.page_trace(self.state)
        return self._page

    def publish(self):
        """Point self.matrices at the current state's and trace's arrays (C-contiguous float64)."""
        s, t = self.state, self.trace
        if s.mode == "encoder":
            B, tokens, D = s.encoder_output.shape
            inputs = s.encoder_output.reshape(B * tokens, D)
        else:
            inputs = s.cls
        for key, value in (("input", inputs), ("h_cls", t.h_cls), ("h_hat", t.h_hat),
                           ("W_head", s.W_head), ("logits", t.logits),
                           ("probs", t.display_softmax)):
            self.matrices[key] = np.ascontiguousarray(value, dtype=np.float64)
        if t.real is not None:  # a real ViT's head: its LayerNorm's output y, and its bias
            self.matrices["y"] = np.ascontiguousarray(t.y, dtype=np.float64)
            self.matrices["b_head"] = np.ascontiguousarray(
                np.zeros((1, s.C)) if t.real.b_head is None else t.real.b_head[None, :],
                dtype=np.float64)
        self._traced = (s, s.W_head, s.inputs)

    def current(self):
        """Whether self.trace belongs to the state as it is (the editing helpers change the
        arrays in place, and replace them when the shape changes)."""
        s, traced = self.state, self._traced
        return traced is not None and all(a is b for a, b in zip(traced, (s, s.W_head, s.inputs)))


# The logits table lists each sample's LOGITS_TABLE_TOP_K largest logits in order; one more rank
# decides which comes last.
RANKED = LOGITS_TABLE_TOP_K + 1


def _near_tie(logits, ranks):
    """Whether two of a sample's largest logits lie within 1e-9 (relative, or absolute near
    zero) of each other: far more than another summation order moves a well-conditioned
    product (about D * 2.2e-16 relative), far less than typed-in values differ by.

    Parameters
    ----------
    logits : numpy.ndarray
        (rows, C), finite.
    ranks : int
        How many of each row's largest logits to look at.

    Returns
    -------
    bool
    """
    C = logits.shape[1]
    k = min(ranks, C)
    if k < 2:
        return False
    top = np.sort(np.partition(logits, C - k, axis=1)[:, C - k:], axis=1)
    return bool(np.any(top[:, 1:] - top[:, :-1] <= 1e-9 * (1.0 + np.abs(top[:, :-1]))))


def _near_zero(logits):
    """Whether some logit lies within 1e-12 of zero (see Computed.after_cell)."""
    return bool(np.any(np.abs(logits) <= 1e-12))
