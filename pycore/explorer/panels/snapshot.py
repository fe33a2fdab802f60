"""What an answer's section builders read and return (pycore/explorer/panels/sections.py builds
them).

A builder reads a :class:`Snapshot` (the session as it is, and how the request wants its
answer) and returns a :class:`Part` (its piece of the answer, and what the session should keep);
it changes nothing. The session applies the parts' :class:`Changes` once the whole answer is
built (pycore/explorer/session.py: ``_answer``), so the layers hold at run time, not only for
imports (tests/test_pure_answers.py).

Examples
--------
>>> Part(answer={"stats": None}).hide is None    # what a builder leaves out is None
True
"""
from collections import namedtuple


class Snapshot(namedtuple("Snapshot", "state trace sent selected_logit k finetune deferred "
                                      "w_limit page_trace grids equations link_later live later")):
    """What a section builder reads: the session as it is, and how the request wants its answer.

    A builder reads it and returns a :class:`Part`; the session applies what the parts say
    should change (the sections last sent, the matrices the page reads, ...) once the whole
    answer is built (pycore/explorer/session.py: ``_answer``).

    Attributes
    ----------
    state, trace
        The session's state and its head's trace (read, never written).
    sent : mapping
        Sections sent only when they change, as last sent (read-only).
    selected_logit : tuple of int or None
        The (b, c) the person selected: its terms follow every change of the logits.
    k : int
        The top-k table's k.
    finetune : pycore.explorer.finetune.panel.FineTune
        The fine-tuning panel (read by pycore/explorer/finetune/section.py).
    deferred : frozenset of str
        Sections the page holds out of date (earlier requests' ``later``).
    w_limit, page_trace : callable
        W_head's colour range and the page's head's trace, from the session's
        :class:`~pycore.explorer.computed.Computed` (computed once and kept there).
    grids : bool
        Whether the editors are refilled (not for an edit: the page shows what was typed).
    equations : bool or "later"
        "later": the page's equations are out of view; the answer only says they changed.
    link_later : bool
        The link is left pending (a number being scrubbed).
    live : bool
        The answer to one of the fine-tuning panel's own actions.
    later : frozenset of str
        Sections the page does not show now (names from sections.DEFERRABLE): left out, and
        listed in the answer's ``deferred`` until an answer brings them.
    """
    __slots__ = ()


class Part(namedtuple("Part", "answer heatmaps hide grids matrices sent session")):
    """What one builder returns: its piece of the answer, and what the session should keep.

    Attributes
    ----------
    answer : dict
        Answer keys (its ``keys``).
    heatmaps, grids : dict
        Merged into the answer's ``heatmaps`` and ``grids``.
    hide : sequence of str
        Appended to the answer's ``hide``.
    matrices : dict
        Arrays the page reads by name, kept in the session's matrices.
    sent : dict
        Sections sent only when they change, kept as last sent.
    session : dict
        Other changes to the session, by name: ``selected_logit`` (a logit a resize took
        away), ``finetune`` (FineTune.answered's ``notice_done``).
    """
    __slots__ = ()


Part.__new__.__defaults__ = (None,) * len(Part._fields)


class Changes(namedtuple("Changes", "matrices sent deferred session")):
    """What an answer changes in the session (:func:`build_answer`): the parts' ``matrices``,
    ``sent`` and ``session`` merged, and the sections the page now holds out of date."""
    __slots__ = ()
