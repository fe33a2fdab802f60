"""The answer's sections, each registered once: its name, what it follows, what builds it.

An answer (docs/protocol.md) is assembled by walking :data:`SECTIONS` in order: a section is
built when the request changed something it follows, and left out otherwise (the page keeps
what it last drew). What a request changed is a set of the names below; ``STATE`` (a new
state: a load, a preset, a resize, a model file) reaches every section.

Each builder reads a :class:`~pycore.explorer.panels.snapshot.Snapshot` and returns a
:class:`~pycore.explorer.panels.snapshot.Part`; the session applies what the parts keep.

Adding a panel: one :class:`Section` here (its answer keys, with a line each for the protocol;
its element id and whether it may wait), its values' function (panels.py), one component on the
page registered under the same key (web/js/page/components.js: ``component``) and its HTML
slot; then ``python3 -m buildtools.javascript.protocol`` (docs/architecture.md, "Adding a panel").

Examples
--------
>>> sorted(s.name for s in SECTIONS if INPUT in s.after)[:4]
['contributions', 'digit', 'equations', 'finetune']
>>> [s.name for s in SECTIONS if s.after == EVERY]
['shape', 'link', 'walk']
"""
from collections import namedtuple

from ..comparisons import panel as comparison_panel, registry as comparisons
from ..digits import mode as digits
from ..errors import StateError, shown
from ..finetune import section as finetune_panel
from ..model.class_names import VIT_B16_NOTE, class_names, is_vit_b16_head
from ..shared import HEATMAP_IDS
from ..state.explorer_state import has_real_head
from ..state.link_answer import LINK_PENDING, state_link
from . import head as panels, readouts, tex, walkthrough
from .snapshot import Changes, Part, Snapshot  # noqa: F401 (the session builds a Snapshot)

# ---- what a request changed ------------------------------------------------------------------

STATE = "state"        # a new state: everything
INPUT = "input"        # cells of cls or encoder_output (typed, scrubbed or pasted)
W_HEAD = "W_head"      # cells of W_head
TRAINED = "trained"    # W_head set by training (its numbers, and no longer a preset's recipe)
FINETUNE = "finetune"  # an action of the fine-tuning panel (a label, a setting, a reset)
OPTIONS = ("sample", "logit_class", "mistake", "variant", "walk", "walk_class", "top_k")
"""The options and view settings (protocol.REQUESTS["option"]), each its own change."""

HEAD = frozenset((STATE, INPUT, W_HEAD, TRAINED))
"""What the logits follow."""
EVERY = frozenset(HEAD | {FINETUNE} | set(OPTIONS))
"""Sections built into every answer that redraws."""


class Section(namedtuple("Section", "name after build keys panel waits")):
    """One part of the answer.

    Attributes
    ----------
    name : str
        The answer key it writes, or the heatmap it draws ("heatmap-...", written into the
        answer's ``heatmaps``, ``grids`` and ``hide``).
    after : frozenset of str
        The changes it follows (see the module docstring).
    build : callable
        ``build(snap)``: the section as a :class:`Part`, from a :class:`Snapshot`; it
        changes nothing (tests/test_pure_answers.py).
    keys : dict
        The answer keys it writes beyond the envelope, each with its JSDoc type (for
        web/js/protocol.js, written by buildtools/javascript/protocol.py) and what it holds (they
        make :data:`pycore.explorer.protocol.ANSWER`).
    panel : str or None
        The element id of the panel of its own that shows it (web/index.html), or None. The
        page's scripts read these ids from js/shared.js's ``PANEL_IDS``, which
        ``python3 -m buildtools.javascript.protocol`` writes into pycore/explorer/shared.py from
        here.
    waits : bool
        Whether a request may leave it for later while its panel is out of view (the
        request's ``later``; :data:`DEFERRABLE`).
    """
    __slots__ = ()


Section.__new__.__defaults__ = (None, False)


def build_answer(snap, changed):
    """The answer to a request that changed ``changed``, and the :class:`Changes` the session
    applies to itself once it is built.

    Every section that follows one of ``changed`` is built, and every section an earlier
    answer left out (``snap.deferred``), except those the page said it does not show now
    (``snap.later``): these are left for a later answer, and the answer's ``deferred`` lists
    every section the page holds out of date.
    """
    changed = frozenset(changed)
    answer = {"ok": True, "error": None, "heatmaps": {}, "hide": []}
    matrices, sent, session = {}, {}, {}
    deferred = set(snap.deferred)
    behind = bool(deferred)
    for section in SECTIONS:
        if not (section.after & changed or STATE in changed or section.name in deferred):
            continue
        if section.name in snap.later:
            deferred.add(section.name)
            continue
        part = section.build(snap)
        answer.update(part.answer or ())
        answer["heatmaps"].update(part.heatmaps or ())
        answer["hide"].extend(part.hide or ())
        if part.grids:
            answer.setdefault("grids", {}).update(part.grids)
        matrices.update(part.matrices or ())
        sent.update(part.sent or ())
        session.update(part.session or ())
        deferred.discard(section.name)
    if behind or deferred or snap.later:  # [] once the page has caught up
        answer["deferred"] = sorted(deferred)
    return answer, Changes(matrices, sent, frozenset(deferred), session)


def check_later(names):
    """A request's ``later``: the list of section names it may leave out, as a frozenset.

    Raises
    ------
    StateError
        Not a list of names from :data:`DEFERRABLE`.

    Examples
    --------
    >>> sorted(check_later(["finetune", "mistake"]))
    ['finetune', 'mistake']
    >>> check_later(["heatmap-logits"])
    Traceback (most recent call last):
    ...
    pycore.explorer.errors.StateError: later: text 'heatmap-logits' is not a section that can ...
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

def _if_changed(snap, key, value):
    """``value`` under ``key`` only when it differs from what was last sent."""
    if snap.sent.get(key) == value:
        return Part()
    return Part(answer={key: value}, sent={key: value})


def _shape(snap):
    s = snap.state
    return Part(answer={"shape": {"mode": s.mode, "B": s.B, "D": s.D, "C": s.C,
                                  "N1": (s.N + 1) if s.mode == "encoder" else None}})


def _link(snap):
    return Part(answer={"link": dict(LINK_PENDING) if snap.link_later
                        else state_link(snap.state)})


def _labels(snap):
    return _if_changed(snap, "labels", panels.labels(snap.state))


def _input(snap):
    return Part(heatmaps=panels.input_heatmaps(snap.state, snap.trace),
                grids={"input": {"matrix": "input"}} if snap.grids else None,
                hide=[HEATMAP_IDS["encoder"]] if snap.state.mode != "encoder" else None)


def _head(snap):
    """Which head the pipeline shows, while a model file brought a real ViT's gamma/beta or bias
    (null otherwise)."""
    s = snap.state
    if not has_real_head(s.model):
        return _if_changed(snap, "head", None)
    shown = "model" if snap.trace.real is not None else "page"
    parts = [w for k, w in (("ln_gamma", "\u03b3"), ("ln_beta", "\u03b2"), ("b_head", "bias"))
             if s.model.get(k) is not None]
    text = ("The logits, predictions, tables and exports are the model's own (its %s, "
            "\u03b5 = %g); the problem's head is one click away in \u201cOther heads\u201d."
            % (", ".join(parts), s.model["eps"]) if shown == "model" else
            "The pipeline shows the problem's head; the model's own is one click away in "
            "\u201cOther heads\u201d.")
    return _if_changed(snap, "head", {"shown": shown, "text": text})


def _normalized(snap):
    heatmaps = dict(panels.normalized_heatmap(snap.trace))
    real = panels.real_heatmaps(snap.trace)  # a model file's own head: its y and its bias
    heatmaps.update(real)
    return Part(heatmaps=heatmaps,
                hide=None if real else [HEATMAP_IDS["y"], HEATMAP_IDS["bias"]])


def _stats(snap):
    return Part(answer={"stats": panels.stats_table(snap.trace)})


def _w(snap):
    return Part(heatmaps=panels.w_heatmap(snap.state, snap.w_limit()),
                grids={"W_head": {"matrix": "W_head"}} if snap.grids else None)


def _logits(snap):
    s = snap.state
    by_digit = digits.class_names(s) is not None  # class c is the digit c: no hover names
    return Part(heatmaps=panels.logits_heatmaps(
        snap.trace, "class c = digit" if by_digit else "class c",
        named=bool(class_names(s)) and not by_digit))


def top_k(state, trace, k):
    """The answer's ``top_k`` for a state, its trace and k (null below 21 classes)."""
    table = readouts.top_k_table(trace, k, classes=class_names(state))
    if table is not None and is_vit_b16_head(state):
        table["caption"] += VIT_B16_NOTE
    return table


def _top_k(snap):
    return Part(answer={"top_k": top_k(snap.state, snap.trace, snap.k)})


def _contributions(snap):
    """The selected logit's terms follow every change of the logits; a resize that takes the
    logit away ends the selection."""
    selected, s = snap.selected_logit, snap.state
    if selected is None:
        return Part()
    b, c = selected
    if b < s.B and c < s.C:
        return Part(answer={"contributions": readouts.contribution_chart(
            snap.trace, s.W_head, b, c, classes=class_names(s))})
    return Part(answer={"contributions": None}, session={"selected_logit": None})


def _logits_table(snap):
    return Part(answer={"logits_table": panels.logits_table(
        snap.trace, classes=class_names(snap.state))})


def _top_classes(snap):
    return Part(answer={"top_classes": panels.top_classes(
        snap.trace, classes=class_names(snap.state))})


def _prediction(snap):
    return Part(answer={"prediction": panels.prediction(
        snap.trace, classes=class_names(snap.state))})


def _softmax_bars(snap):
    s = snap.state
    return Part(answer={"softmax_bars": panels.softmax_bars(
        snap.trace, min(s.options.get("sample", 0) or 0, s.B - 1), classes=class_names(s))})


def _digit(snap):
    return _if_changed(snap, "digit", digits.section(snap.state, snap.trace))


def _lens(snap):
    """The drawing panel's logit lens, or its heatmap hidden outside the tiny ViT's state."""
    shown = panels.lens_heatmap(snap.state, snap.trace)
    if shown is None:
        return Part(hide=[HEATMAP_IDS["lens"]])
    array, spec = shown
    return Part(heatmaps={HEATMAP_IDS["lens"]: spec}, matrices={"lens": array})


def _comparison(kind):
    def build(snap):
        """The correct logits beside a mistake's or variant's output (and, for a mistake,
        the difference)."""
        s = snap.state
        key = s.options.get(kind)
        section, shown_output = comparison_panel.comparison(s, snap.trace, kind, key, snap.k,
                                                           page=snap.page_trace)
        choices = comparisons.choices(kind, s)  # the model's own head: while one is loaded
        sent = None
        if snap.sent.get(kind) != choices:
            section["choices"], sent = choices, {kind: choices}
        if shown_output is None:
            return Part(answer={kind: section}, sent=sent,
                        hide=comparison_panel.comparison_ids(kind))
        arrays, specs = shown_output
        return Part(answer={kind: section}, sent=sent, heatmaps=specs, matrices=arrays)
    return build


def _ahead(snap):
    """What a choice would show that is hidden now, at this state's shape: the page makes these
    figures while it is idle (the encoder output in the CLS mode, each comparison panel with
    nothing chosen, dW_head before the fine-tuning panel is used)."""
    return Part(answer={"ahead": {**panels.figures_shown_later(snap.state),
                                  **comparison_panel.comparisons_ahead(snap.state),
                                  **finetune_panel.shown_later(snap.finetune, snap.state)}})


def _walk(snap):
    """The walk-through's step, redone after every change (its numbers are this state's, its
    outlines on heatmaps that may have been redrawn); null while it is off."""
    s, t = snap.state, snap.trace
    names = digits.class_names(s)
    last = s.options.get("walk") == len(walkthrough.STEPS) - 1
    return Part(answer={"walk": walkthrough.section(
        s, t, panels.prediction(t, classes=names)["notes"] if last else (), classes=names)})


def _finetune(snap):
    panel = finetune_panel.section(snap.finetune, snap.state, snap.trace, live=snap.live,
                                   page=snap.page_trace)
    return Part(answer={"finetune": panel.section}, heatmaps=panel.heatmaps, hide=panel.hide,
                matrices=panel.matrices, session={"finetune": panel.notice_done})


def equations(state, trace):
    """The answer's ``equations``: the equations for the chosen sample and class."""
    o = state.options
    return tex.steps(state, trace, o.get("sample", 0), o.get("logit_class", 0))


def _equations(snap):
    if snap.equations == "later":  # the page asks with an "equations" request once in view
        return Part(answer={"equations_follow": True})
    if snap.equations:
        return Part(answer={"equations": equations(snap.state, snap.trace)})
    return Part()


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
                  "the per-sample statistics table: {caption, header, rows}")},
        panel="stats", waits=True),
    Section(HEATMAP_IDS["W_head"], frozenset((STATE, W_HEAD, TRAINED)), _w, {}),
    Section(HEATMAP_IDS["logits"], HEAD, _logits, {}),
    Section("top_k", HEAD | {"top_k"}, _top_k, {
        "top_k": ("?TopK",
                  "{k, caption, header, rows: [{label, cells, classes, mark}]}: each sample's k "
                  "largest logits, from 21 classes on (null below); ranks from "
                  "pycore.vit.readout.top_k: ties to the lower class, like argmax")},
        panel="top-k", waits=True),
    Section("contributions", HEAD, _contributions, {
        "contributions": ("?Contributions",
                          "{b, c, title, logit, logit_text, total_text, bars: [{label, d, value, "
                          "text, factors}], note}: the terms h_hat[b, d] * W_head[d, c] of the "
                          "selected logit: the 10 largest by magnitude named d = ..., largest "
                          "first, each with its two factors as printed, the rest summed into one "
                          "bar (d null), so the bars sum to the logit; a bar beyond float64 "
                          "(weights near +-1e308 whose other terms cancel it) has value null "
                          "and text 'beyond float64'; null: none selected")},
        panel="contributions", waits=True),
    Section("logits_table", HEAD, _logits_table, {
        "logits_table": ("Table",
                         "the logits table: {caption, header, rows}")},
        panel="logits-table", waits=True),
    Section("top_classes", HEAD, _top_classes, {
        "top_classes": ("string",
                        "one line per sample: its most probable classes")},
        panel="top-classes", waits=True),
    Section("prediction", HEAD, _prediction, {
        "prediction": ("{text: string, notes: string[]}",
                       "{text, notes}: what the head predicts, in words, with ties and rows that "
                       "LayerNorm flattens said as such (a live region says it once the page "
                       "is quiet after an edit)")},
        panel="prediction", waits=True),
    Section("softmax_bars", HEAD | {"sample"}, _softmax_bars, {
        "softmax_bars": ("{b: number, title: string, bars: {label: string, value: number, "
                         "text: string, mark: boolean, rest: boolean}[], note: string}",
                         "{b, title, bars: [{label, value, text, mark, rest}], note}: the "
                         "chosen sample's class probabilities (the display-only softmax) as "
                         "bars, most probable first, the predicted class marked, past 10 "
                         "classes the rest summed into one bar")},
        panel="softmax-bars", waits=True),
    Section("digit", HEAD, _digit, {
        "digit": ("?{images: ?number[][], attention: ?number[][], prediction: ?string, "
                  "top: ?Array<[string, number]>, "
                  "edits: ?{encoder_output: number, W_head: ?number}, encode_ms: ?number, "
                  "lens: boolean}",
                  "{images, attention, prediction, top, edits, encode_ms, lens}: the digit "
                  "panel, when it changed: the drawn images (B lists of 64 pixels 0..16, "
                  "row-major), the CLS token's attention to each of the 16 patches in the last "
                  "block, the prediction in words, image 0's three most likely classes [[name, "
                  "probability], ...], how many cells of encoder_output and W_head differ from "
                  "the model's, and the encoder's milliseconds per image; images null when the "
                  "state is not the tiny ViT's encoder output; lens: whether the head at every "
                  "depth is shown "
                  "(the drawn images', or a model file's hidden_cls)")},
        panel="digit", waits=True),
    Section(HEATMAP_IDS["lens"], HEAD | {"sample"}, _lens, {}),
    Section("mistake", HEAD | {"mistake", "top_k"}, _comparison("mistake"), {
        "mistake": ("Comparison",
                    COMPARISON + "the mistake shown (with none chosen, the explanation says what "
                    "is offered); changes: which samples' predictions it changes, in one line; "
                    "notice: the input switched to the full encoder output, for a head that "
                    "needs the patch tokens (position -1, average pooling) chosen while only "
                    "CLS vectors were edited; top_k: from "
                    "21 classes on, each sample's k largest outputs as a table (as the answer's "
                    "top_k)")},
        panel="mistakes", waits=True),
    Section("variant", HEAD | {"variant", "top_k"}, _comparison("variant"), {
        "variant": ("Comparison",
                    COMPARISON + "the other head shown, as for mistake")},
        panel="variants", waits=True),
    Section("walk", EVERY, _walk, {
        "walk": ("?Walk",
                 "{step, count, names, key, sample, class, predicted_class, class_chosen, title, "
                 "tex, note, notes, highlights}: the walk-through's step with this sample's "
                 "numbers, highlights {heatmap id: [[row0, col0, row1, col1], ...]} the cells it "
                 "uses; null while it is off. Sent with every answer that redraws, so an edit "
                 "redoes the step")},
        panel="walk", waits=True),
    Section("finetune", HEAD | {FINETUNE}, _finetune, {
        "finetune": ("FineTune",
                     "{labels, predicted, classes, settings, loss, accuracy, status, "
                     "start_note, run, reading, why, gradient_note, held_out, trained}: the "
                     "'Fine-tune the head' panel; trained is null but in the answer to train: "
                     "{asked, taken, text}; held_out is null or the held-out digits' {count, "
                     "accuracy, curve, text}; run is null or {id, steps, loss, accuracy, "
                     "compare: [{head, name, loss, own, stopped}]}, each curve step 0 first "
                     "(each field: protocol.FINETUNE)")},
        panel="finetune", waits=True),
    Section("equations", HEAD | {"sample", "logit_class"}, _equations, {
        "equations": ("{sample: number, class: number, "
                  "items: {title: string, tex: string, note: ?string}[]}",
                  "{sample, class, items: [{title, tex, note}]}: the equations with one sample's "
                  "numbers"),
        "equations_follow": ("boolean",
                             "true when the equations changed but were left out (see the "
                             "edit's 'equations')")}),
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

DEFERRABLE = tuple(section.name for section in SECTIONS if section.waits)
"""The sections a request may leave for later (its ``later``): each is a panel of its own on
the page, which the page can tell is out of view (its Section says ``waits``). The heatmaps of
the pipeline, the editors, the link (``link: "later"``) and the equations (``equations:
"later"``) are not among them."""

PANEL_IDS = {section.name: section.panel for section in SECTIONS if section.panel}
"""Each answer section that is a panel of its own, and that panel's element id (web/index.html);
pycore/explorer/shared.py holds the same, written from here, for the page's scripts."""
