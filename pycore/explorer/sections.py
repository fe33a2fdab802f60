"""The answer's sections, each registered once: its name, what it follows, what builds it.

An answer (docs/protocol.md) is assembled by walking :data:`SECTIONS` in order: a section is
built when the request changed something it follows, and left out otherwise (the page keeps
what it last drew). What a request changed is a set of the names below; ``STATE`` (a new
state: a load, a preset, a resize, a model file) reaches every section.

Adding a panel: one :class:`Section` here (its answer keys, with a line each for the protocol),
one component on the page registered under the same key (web/js/render.js: ``component``), its
HTML slot and its CSS (docs/architecture.md, "Adding a panel").

Examples
--------
>>> sorted(s.name for s in SECTIONS if INPUT in s.after)[:4]
['contributions', 'digit', 'finetune', 'heatmap-input']
>>> [s.name for s in SECTIONS if s.after == EVERY]
['shape', 'link', 'walk']
"""
from collections import namedtuple

from . import comparison_panel, comparisons, digits, panels, readouts, tex, walkthrough
from .class_names import VIT_B16_NOTE, class_names, is_vit_b16_head
from .errors import StateError, shown
from .state import has_real_head
from .shared import HEATMAP_IDS, PANEL_IDS

# ---- what a request changed ------------------------------------------------------------------

STATE = "state"        # a new state: everything
INPUT = "input"        # cells of cls or encoder_output (typed, scrubbed or pasted)
W_HEAD = "W_head"      # cells of W_head
TRAINED = "trained"    # W_head set by training (its numbers, and no longer a preset's recipe)
FINETUNE = "finetune"  # an action of the fine-tuning panel (a label, a setting, a reset)
OPTIONS = ("sample", "logit_class", "pitfall", "variant", "walk", "walk_class", "top_k")
"""The options and view settings (protocol.REQUESTS["option"]), each its own change."""

HEAD = frozenset((STATE, INPUT, W_HEAD, TRAINED))
"""What the logits follow."""
EVERY = frozenset(HEAD | {FINETUNE} | set(OPTIONS))
"""Sections built into every answer that redraws."""


class Section(namedtuple("Section", "name after build keys")):
    """One part of the answer.

    Attributes
    ----------
    name : str
        The answer key it writes, or the heatmap it draws ("heatmap-...", written into the
        answer's ``heatmaps``, ``grids`` and ``hide``).
    after : frozenset of str
        The changes it follows (see the module docstring).
    build : callable
        ``build(ctx)``: writes the section into ``ctx.answer`` (:class:`Context`).
    keys : dict
        The answer keys it writes beyond the envelope, each with its JSDoc type (for
        web/js/protocol.js, written by buildtools/protocol_js.py) and what it holds (they make
        :data:`pycore.explorer.protocol.ANSWER`).
    """
    __slots__ = ()


class Context(object):
    """What a section builder reads and writes.

    Attributes
    ----------
    session : pycore.explorer.session.Session
        The session: its state, trace and matrices, and what it keeps between requests (the
        selected logit, the top-k table's k, the sections last sent, the fine-tuning panel).
    answer : dict
        The answer being assembled; its envelope (``ok``, ``error``, ``heatmaps``, ``hide``)
        is there from the start.
    grids : bool
        Whether the editors are refilled (not for an edit: the page shows what was typed).
    steps : bool or "later"
        "later": the page's equations are out of view; the answer only says they changed.
    link_later : bool
        The link is left pending (a number being scrubbed).
    live : bool
        The answer to one of the fine-tuning panel's own actions.
    later : frozenset of str
        Sections the page does not show now (names from :data:`DEFERRABLE`): left out, and
        listed in the answer's ``deferred`` until an answer brings them.
    """

    def __init__(self, session, answer, grids=True, steps=True, link_later=False, live=False,
                 later=frozenset()):
        self.session, self.answer = session, answer
        self.state, self.trace = session.state, session.trace
        self.grids, self.steps, self.link_later, self.live = grids, steps, link_later, live
        self.later = later

    def if_changed(self, key, value):
        """Put ``value`` under ``key`` only when it differs from what was last sent."""
        if self.session.sent.get(key) != value:
            self.answer[key] = self.session.sent[key] = value


def build_answer(ctx, changed):
    """Build into ``ctx.answer`` every section that follows one of ``changed``, and every
    section an earlier answer left out (``session.deferred``), except those the page said it
    does not show now (``ctx.later``): these are left for a later answer, and the answer's
    ``deferred`` lists every section the page holds out of date."""
    changed = frozenset(changed)
    deferred = ctx.session.deferred
    behind = bool(deferred)
    for section in SECTIONS:
        if not (section.after & changed or STATE in changed or section.name in deferred):
            continue
        if section.name in ctx.later:
            deferred.add(section.name)
            continue
        section.build(ctx)
        deferred.discard(section.name)
    if behind or deferred or ctx.later:  # [] once the page has caught up
        ctx.answer["deferred"] = sorted(deferred)
    return ctx.answer


def check_later(names):
    """A request's ``later``: the list of section names it may leave out, as a frozenset.

    Raises
    ------
    StateError
        Not a list of names from :data:`DEFERRABLE`.

    Examples
    --------
    >>> sorted(check_later(["finetune", "pitfall"]))
    ['finetune', 'pitfall']
    >>> check_later(["heatmap-logits"])
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: later: text 'heatmap-logits' is not a section that can wait (finetune, pitfall, variant, digit, walk, contributions, top_k, stats, logits_table, top_classes, prediction).
    """
    if names is None:
        return frozenset()
    if not isinstance(names, list):
        raise StateError("later: a list of section names is expected; got %s." % shown(names))
    for name in names:
        if name not in DEFERRABLE:
            raise StateError("later: %s is not a section that can wait (%s)."
                             % (shown(name), ", ".join(DEFERRABLE)))
    return frozenset(names)


# ---- the builders -------------------------------------------------------------------------------

def _shape(ctx):
    s = ctx.state
    ctx.answer["shape"] = {"mode": s.mode, "B": s.B, "D": s.D, "C": s.C,
                           "N1": (s.N + 1) if s.mode == "encoder" else None}


def _link(ctx):
    ctx.answer["link"] = dict(LINK_PENDING if ctx.link_later else ctx.session.link())


def _labels(ctx):
    ctx.if_changed("labels", panels.labels(ctx.state))


def _input(ctx):
    ctx.answer["heatmaps"].update(panels.input_heatmaps(ctx.state, ctx.trace))
    if ctx.grids:
        ctx.answer.setdefault("grids", {})["input"] = {"matrix": "input"}
    if ctx.state.mode != "encoder":
        ctx.answer["hide"].append(HEATMAP_IDS["encoder"])


def _head(ctx):
    """Which head the pipeline shows, while a model file brought a real ViT's gamma/beta or bias
    (null otherwise)."""
    s = ctx.state
    if not has_real_head(s.model):
        ctx.if_changed("head", None)
        return
    shown = "model" if ctx.trace.real is not None else "page"
    parts = [w for k, w in (("ln_gamma", "\u03b3"), ("ln_beta", "\u03b2"), ("b_head", "bias"))
             if s.model.get(k) is not None]
    text = ("The logits, predictions, tables and exports are the model's own (its %s, "
            "\u03b5 = %g); the problem's head is one click away in \u201cOther heads\u201d."
            % (", ".join(parts), s.model["eps"]) if shown == "model" else
            "The pipeline shows the problem's head; the model's own is one click away in "
            "\u201cOther heads\u201d.")
    ctx.if_changed("head", {"shown": shown, "text": text})


def _normalized(ctx):
    ctx.answer["heatmaps"].update(panels.normalized_heatmap(ctx.trace))
    real = panels.real_heatmaps(ctx.trace)  # a model file's own head: its y and its bias
    ctx.answer["heatmaps"].update(real)
    if not real:
        ctx.answer["hide"].extend([HEATMAP_IDS["y"], HEATMAP_IDS["bias"]])


def _stats(ctx):
    ctx.answer["stats"] = panels.stats_table(ctx.trace)


def _w(ctx):
    ctx.answer["heatmaps"].update(panels.w_heatmap(ctx.state, ctx.session.computed.w_limit()))
    if ctx.grids:
        ctx.answer.setdefault("grids", {})["w"] = {"matrix": "W_head"}


def _logits(ctx):
    s = ctx.state
    by_digit = digits.class_names(s) is not None  # class c is the digit c: no hover names
    ctx.answer["heatmaps"].update(panels.logits_heatmaps(
        ctx.trace, "class c = digit" if by_digit else "class c",
        named=bool(class_names(s)) and not by_digit))


def top_k(session):
    """The answer's ``top_k`` for the session's state and k (null below 21 classes)."""
    table = readouts.top_k_table(session.trace, session.k, classes=class_names(session.state))
    if table is not None and is_vit_b16_head(session.state):
        table["caption"] += VIT_B16_NOTE
    return table


def _top_k(ctx):
    ctx.answer["top_k"] = top_k(ctx.session)


def _contributions(ctx):
    """The selected logit's terms follow every change of the logits; a resize that takes the
    logit away ends the selection."""
    selected, s = ctx.session.selected_logit, ctx.state
    if selected is None:
        return
    b, c = selected
    if b < s.B and c < s.C:
        ctx.answer["contributions"] = readouts.contribution_chart(
            ctx.trace, s.W_head, b, c, classes=class_names(s))
    else:
        ctx.session.selected_logit, ctx.answer["contributions"] = None, None


def _logits_table(ctx):
    ctx.answer["logits_table"] = panels.logits_table(ctx.trace, classes=class_names(ctx.state))


def _top_classes(ctx):
    ctx.answer["top_classes"] = panels.top_classes(ctx.trace, classes=class_names(ctx.state))


def _prediction(ctx):
    ctx.answer["prediction"] = panels.prediction(ctx.trace, classes=class_names(ctx.state))


def _digit(ctx):
    ctx.if_changed("digit", digits.section(ctx.state, ctx.trace))


def _lens(ctx):
    """The drawing panel's logit lens, or its heatmap hidden outside the tiny ViT's state."""
    shown = panels.lens_heatmap(ctx.state, ctx.trace)
    if shown is None:
        ctx.answer["hide"].append(HEATMAP_IDS["lens"])
        return
    array, spec = shown
    ctx.session.matrices["lens"] = array
    ctx.answer["heatmaps"][HEATMAP_IDS["lens"]] = spec


def _comparison(kind):
    def build(ctx):
        """The correct logits beside a pitfall's or variant's output (and, for a pitfall,
        the difference)."""
        s, answer = ctx.state, ctx.answer
        key = s.options.get(kind)
        section, shown_output = comparison_panel.comparison(s, ctx.trace, kind, key, ctx.session.k,
                                                           page=ctx.session.computed.page_trace)
        choices = comparisons.choices(kind, s)  # the model's own head: while one is loaded
        if ctx.session.sent.get(kind) != choices:
            section["choices"] = ctx.session.sent[kind] = choices
        answer[kind] = section
        if shown_output is None:
            answer["hide"].extend(comparison_panel.comparison_ids(kind))
            return
        arrays, specs = shown_output
        ctx.session.matrices.update(arrays)
        answer["heatmaps"].update(specs)
    return build


def _ahead(ctx):
    """What a choice would show that is hidden now, at this state's shape: the page makes these
    figures while it is idle (the encoder output in the CLS mode, each comparison panel with
    nothing chosen, dW_head before the fine-tuning panel is used)."""
    ctx.answer["ahead"] = {**panels.figures_shown_later(ctx.state),
                           **comparison_panel.comparisons_ahead(ctx.state),
                           **ctx.session.finetune.shown_later(ctx.state)}


def _walk(ctx):
    """The walk-through's step, redone after every change (its numbers are this state's, its
    outlines on heatmaps that may have been redrawn); null while it is off."""
    s, t = ctx.state, ctx.trace
    names = digits.class_names(s)
    last = s.options.get("walk") == len(walkthrough.STEPS) - 1
    ctx.answer["walk"] = walkthrough.section(
        s, t, panels.prediction(t, classes=names)["notes"] if last else (), classes=names)


def _finetune(ctx):
    ctx.session.finetune.add(ctx.answer, ctx.state, ctx.trace, ctx.session.matrices,
                             live=ctx.live, page=ctx.session.computed.page_trace)


def steps(state, trace):
    """The answer's ``steps``: the equations for the chosen sample and class."""
    o = state.options
    return tex.steps(state, trace, o.get("sample", 0), o.get("logit_class", 0))


def _steps(ctx):
    if ctx.steps == "later":  # the page asks with a "steps" request once they are in view
        ctx.answer["steps_follow"] = True
    elif ctx.steps:
        ctx.answer["steps"] = steps(ctx.state, ctx.trace)


DEFERRABLE = tuple(PANEL_IDS)
"""The sections a request may leave for later (its ``later``): each is a panel of its own on
the page, which the page can tell is out of view. The heatmaps of the pipeline, the editors,
the link (``link: "later"``) and the equations (``steps: "later"``) are not among them."""

LINK_PENDING = {"fragment": None, "pending": True, "note": None}
"""An answer's link while it is not spelled out yet: the page asks for it with a link request."""

COMPARISON = ("{choices (on load), selected, explanation, source, error, note, changes, notice, "
              "top_k}: ")

SECTIONS = (
    Section("shape", EVERY, _shape, {
        "shape": ("{mode: string, B: number, D: number, C: number, N1: ?number}",
                  "{mode, B, D, C, N1}: the state's sizes")}),
    Section("link", EVERY, _link, {
        "link": ("{fragment: ?string, pending: boolean, note: ?string}",
                 "{fragment, pending, note}: the state's URL fragment, or null with pending true "
                 "(more than 1,000 typed-in numbers, cells pasted into a preset's matrix "
                 "included: the page asks with a 'link' request once typing pauses) or a note "
                 "(too long for a URL; past 12,500 edits of a preset's matrix, which is known "
                 "without spelling the link out)")}),
    Section("labels", frozenset((STATE, TRAINED)), _labels, {
        "labels": ("{samples: string[], classes: string[], class_titles: ?string[]}",
                   "{samples, classes, class_titles}: the names of the rows and columns, sent "
                   "when they change; class_titles null, or the classes' whole names where some "
                   "in classes are cut short (for the hover and each name's title)")}),
    Section("head", frozenset((STATE,)), _head, {
        "head": ("?{shown: string, text: string}",
                 "{shown, text}: which head the pipeline shows ('model': the model file's own, "
                 "with its LayerNorm gamma/beta and bias; 'page': the problem's), while a model "
                 "file brought either; null otherwise (sent when it changes)")}),
    Section("heatmap-input", frozenset((STATE, INPUT)), _input, {}),
    Section(HEATMAP_IDS["normalized"], frozenset((STATE, INPUT)), _normalized, {}),
    Section("stats", frozenset((STATE, INPUT)), _stats, {
        "stats": ("Table",
                  "the per-sample statistics table: {caption, header, rows}")}),
    Section(HEATMAP_IDS["w"], frozenset((STATE, W_HEAD, TRAINED)), _w, {}),
    Section(HEATMAP_IDS["logits"], HEAD, _logits, {}),
    Section("top_k", HEAD | {"top_k"}, _top_k, {
        "top_k": ("?TopK",
                  "{k, caption, header, rows: [{label, cells, classes, mark}]}: each sample's k "
                  "largest logits, from 21 classes on (null below); ranks from "
                  "pycore.vit.readout.top_k: ties to the lower class, like argmax")}),
    Section("contributions", HEAD, _contributions, {
        "contributions": ("?Contributions",
                          "{b, c, title, logit, logit_text, total_text, bars: [{label, d, value, "
                          "text, factors}], note}: the terms h_hat[b, d] * W_head[d, c] of the "
                          "selected logit: the 10 largest by magnitude named d = ..., largest "
                          "first, each with its two factors as printed, the rest summed into one "
                          "bar (d null), so the bars sum to the logit; a bar beyond float64 "
                          "(weights near +-1e308 whose other terms cancel it) has value null "
                          "and text 'beyond float64'; null: none selected")}),
    Section("logits_table", HEAD, _logits_table, {
        "logits_table": ("Table",
                         "the logits table: {caption, header, rows}")}),
    Section("top_classes", HEAD, _top_classes, {
        "top_classes": ("string",
                        "one line per sample: its most probable classes")}),
    Section("prediction", HEAD, _prediction, {
        "prediction": ("{text: string, notes: string[]}",
                       "{text, notes}: what the head predicts, in words, with ties and rows that "
                       "LayerNorm flattens said as such (a live region says it once the page "
                       "is quiet after an edit)")}),
    Section("digit", HEAD, _digit, {
        "digit": ("?{images: ?number[][], attention: ?number[][], prediction: ?string, "
                  "top: ?Array<[string, number]>, "
                  "edits: ?{encoder_output: number, W_head: ?number}, encode_ms: ?number, "
                  "lens: boolean}",
                  "{images, attention, prediction, top, edits, encode_ms, lens}: the real-ViT "
                  "panel, "
                  "when it changed: the drawn images (B lists of 64 pixels 0..16, row-major), the "
                  "CLS token's attention to each of the 16 patches in the last block, the "
                  "prediction in words, image 0's three most likely classes [[name, "
                  "probability], ...], how many cells of encoder_output and W_head differ from the model's, "
                  "and the encoder's milliseconds per image; images null when the state is not "
                  "the tiny ViT's encoder output; lens: whether the head at every depth is shown "
                  "(the drawn images', or a model file's hidden_cls)")}),
    Section(HEATMAP_IDS["lens"], HEAD | {"sample"}, _lens, {}),
    Section("pitfall", HEAD | {"pitfall", "top_k"}, _comparison("pitfall"), {
        "pitfall": ("Comparison",
                    COMPARISON + "the mistake shown (with none chosen, the explanation says what "
                    "is offered); changes: which samples' predictions it changes, in one line; "
                    "notice: the input switched to the full encoder output, for a head that "
                    "needs the patch tokens (position -1, average pooling) chosen while only "
                    "CLS vectors were edited; top_k: from "
                    "21 classes on, each sample's k largest outputs as a table (as the answer's "
                    "top_k)")}),
    Section("variant", HEAD | {"variant", "top_k"}, _comparison("variant"), {
        "variant": ("Comparison",
                    COMPARISON + "the other head shown, as for pitfall")}),
    Section("walk", EVERY, _walk, {
        "walk": ("?Walk",
                 "{step, count, names, key, sample, class, predicted_class, class_chosen, title, "
                 "tex, note, notes, highlights}: the walk-through's step with this sample's "
                 "numbers, highlights {heatmap id: [[row0, col0, row1, col1], ...]} the cells it "
                 "uses; null while it is off. Sent with every answer that redraws, so an edit "
                 "redoes the step")}),
    Section("finetune", HEAD | {FINETUNE}, _finetune, {
        "finetune": ("FineTune",
                     "{labels, predicted, classes, settings, loss, accuracy, status, "
                     "start_note, run, reading, why, gradient_note, held_out, trained}: the "
                     "'Fine-tune the head' panel; trained is null but in the answer to train: "
                     "{asked, taken, text}; held_out is null or the held-out digits' {count, "
                     "accuracy, curve, text}; run is null or {id, steps, loss, accuracy, "
                     "compare: [{head, name, loss, own, stopped}]}, each curve step 0 first "
                     "(each field: protocol.FINETUNE)")}),
    Section("steps", HEAD | {"sample", "logit_class"}, _steps, {
        "steps": ("{sample: number, class: number, "
                  "items: {title: string, tex: string, note: ?string}[]}",
                  "{sample, class, items: [{title, tex, note}]}: the equations with one sample's "
                  "numbers"),
        "steps_follow": ("boolean",
                         "true when the equations changed but were left out (see the edit's "
                         "'steps')")}),
    Section("ahead", frozenset((STATE,)), _ahead, {
        "ahead": ("Object<string, {spec: HeatmapSpec, rows: number, cols: number}>",
                  "{element id: {spec, rows, cols}}: with a new state, the heatmaps hidden now "
                  "that a choice would show at its shape (the encoder output in the CLS mode, "
                  "each comparison panel with nothing chosen: its compared head titled as its "
                  "menu's first, dW_head while the fine-tuning panel hides it), for the page to "
                  "make ahead; their colour ranges are placeholders")}),
)
"""Every section of an answer, in the order they are built (the walk-through after the
logits, whose notes it reads)."""
