"""The conversation between the page and Python, written down once.

The page sends one request per action and gets one answer. A request is a JSON object with an
``op`` and the fields below; the answer is a JSON object with the keys below (only those that
changed), plus the matrices it names, attached by the bridge as ``{rows, cols, data:
Float64Array}``. protocol_types.py gives each name its JavaScript type, and web/js/protocol.js
is written from the two (buildtools/javascript/protocol.py); tests/test_protocol.py checks it is up
to date, and checks the session's answers against both.
docs/protocol.md tells the story.
"""
from .panels.sections import SECTIONS

# op -> {field: what it holds}. Fields not listed are refused; listed ones may be left out
# where the session has a default.
REQUESTS = {
    "load": {"fragment": "the URL's fragment, '#state=...' or '' (the worked example)"},
    "reset": {"fragment": "as for load: everything the session keeps goes back to a new "
                          "session's (the state, the selected logit, the top-k table's k, the "
                          "fine-tuning panel), and this fragment is loaded"},
    "edit": {"key": "'cls', 'encoder_output' or 'W_head'",
             "index": "the cell, 0-based: [b, d], [b, t, d] or [d, c]",
             "text": "what the cell holds now",
             "commit": "true once the person has finished with the cell (Enter, Tab, leaving it): "
                       "a refusal then leaves the state as it was before the cell was entered",
             "equations": "'later' when the equations are out of view (the answer then only says "
                      "that they changed)",
             "link": "'later' while the number is being scrubbed: the answer's link is pending "
                     "(the page asks for it with a link request once the changes pause)",
             "later": "the sections the page does not show now (out of view; names from "
                      "sections.DEFERRABLE): left out of the answer, which lists them in "
                      "'deferred' until an answer brings them"},
    "paste": {"key": "as for edit", "index": "the block's top-left cell",
              "text": "the pasted text: a spreadsheet's cells, CSV, or a NumPy literal",
              "equations": "as for edit"},
    "resize": {"B": "samples", "D": "features", "C": "classes",
               "N1": "tokens per sample, N+1 (encoder mode only)"},
    "mode": {"mode": "'cls' or 'encoder'"},
    "preset": {"name": "'worked', 'encoder', 'random', 'vit-b16', 'finetune' or "
                       "'finetune-digits'",
               "seed": "for 'random' and 'finetune'",
               "digits": "for 'finetune-digits' (and only it): {train: [[pixels, label], ...], "
                         "held_out: [...]} from digits.json, pixels in the link form (64 "
                         "characters 0-9a-g)"},
    "option": {"name": "'sample', 'logit_class', 'mistake', 'variant', 'walk' (the walk-through's "
                       "step, 0 to 6), 'walk_class' (the class of its dot product) or 'top_k' "
                       "(how many classes the top-k table lists, 1 to 20; not part of the link)",
               "value": "the new value (null: no comparison; the walk-through off; the "
                        "predicted class)",
               "equations": "as for edit (a mistake that needs the patch tokens switches the input "
                        "to the encoder output, and so changes the equations)"},
    "contributions": {"b": "the logit's sample (null with c null: nothing selected)",
                      "c": "the logit's class",
                      "select": "true when the person chose it (click, keyboard): its terms "
                                "then follow every edit; otherwise (hover) only this answer"},
    "digit": {"images": "the drawn or picked images: a list of B (1 to 16) images, each 8 rows "
                        "of 8 whole numbers from 0 (paper) to 16 (ink)",
              "head": "'keep' (the default: the model's W_head stays, with its edits) or "
                      "'trained' (the model's W_head as trained)",
              "equations": "as for edit",
              "link": "'later' while the pen is down: as for edit, the link is asked for once "
                      "the drawing pauses",
              "later": "as for edit: while the pen is down, the panels out of view (never "
                       "'digit', whose pad is drawn on), brought once the pen lifts"},
    "digit_preview": {"images": "one drawing in progress, as for digit (only the first is read)"},
    "export": {"format": "'json', 'numpy', 'csv', 'npz' (the state as .npz, base64) or "
                         "'training'"},
    "open_file": {"name": "the file's name: .npz, .safetensors or .npy (model_file.py)",
                  "size": "its size in bytes (over 300 MB: refused before any byte is read)",
                  "target": "for a .npy: 'W_head', 'cls' or 'encoder_output', the grid it fills",
                  "first": "true on a file's first request (a new reading begins)",
                  "parts": "[[offset, base64 text], ...]: byte ranges of it, at most 4 MB each: "
                           "the first and last 64 kB with the first request, then one range "
                           "the last answer's file.need asked for per request"},
    "equations": {},
    "link": {},
    "catch_up": {},
    "selfcheck": {},
    # the "Fine-tune the head" panel (pycore/explorer/finetune/panel.py, docs/training.md)
    "train": {"n": "how many training steps to ask for (1 to 500; default 1): the request takes "
                   "as many as fit in about 0.2 s of work, at least 1 (finetune.trained)",
              "run": "the id of the run the page is playing: refused (error key 'run') once "
                     "it is no longer the current run",
              "equations": "as for edit",
              "link": "'later' while Play runs: as for edit, the link is asked for once it "
                      "pauses",
              "later": "as for edit: while Play runs, the panels out of view (never 'finetune', "
                       "whose run Play reads), brought once Play pauses"},
    "train_reset": {},
    "train_set": {"name": "'lr', 'optimizer', 'start', 'compare' or 'input_scale'",
                  "value": "the new value (lr and input_scale may be text as typed)"},
    "label": {"index": "[b]: the sample", "text": "its class index, as typed so far",
              "commit": "as for edit"},
}

# answer key -> what it holds. Every answer has "ok"; the rest appear when they changed. The
# keys of the answer's sections are written where each section is registered (sections.py);
# these are the envelope's and those of answers to one request.
ENVELOPE = {
    "ok": "false when the request was refused: nothing changed, 'error' says why",
    "error": "{message, key, index}: what is wrong and where (a refusal, or a link that could not "
             "be used), or null",
    "heatmaps": "{element id: heatmap spec}: the heatmaps to redraw",
    "hide": "[element id]: heatmaps to clear",
    "grids": "{'input' | 'W_head': {matrix}}: editors to refill from a matrix",
    "patched": "{matrix name: [[row, col, value], ...]}: cells that changed in matrices the page "
               "already holds (they are not attached again)",
    "value": "the number an edited cell now holds",
    "digit_preview": "{prediction, top, attention, encode_ms}: the answer to digit_preview, "
                     "as in digit for the one drawing (its attention a list of 16)",
    "unchanged": "true when an edit changed nothing (the cell already held that value): "
                 "nothing to redraw",
    "deferred": "[section name]: the sections the page holds out of date, which requests left "
                "for later (their 'later'); the next answer whose request does not name them "
                "brings them, as does catch_up",
    "host": "the Python and NumPy the page runs on (in the answer to 'load')",
    "export": "{text, mime, filename, title, about, base64}: an export, saved as a file under "
              "its filename (base64 true: text is the file's bytes in base64, the .npz); about "
              "says what the file holds, in words",
    "file": "{need, summary}: a model file being read: need the [[offset, length], ...] byte "
            "ranges to send next (nothing changed yet), or null once it is loaded, and summary "
            "one line saying what was loaded",
    "matrices": "{name: {rows, cols, data}}: every matrix the heatmaps and grids name and the "
                "page does not hold (attached by the bridge, not part of the JSON)",
    "worker_ms": "how long the worker took to answer (attached by the host, for benchmarks)",
    "selfcheck": "{python, numpy, modules, attempted, failed, failures}: pycore's docstring "
                 "examples run in this runtime (pycore/selfcheck.py)",
}

ANSWER = dict(ENVELOPE)
for _section in SECTIONS:
    ANSWER.update((key, held) for key, (_type, held) in _section.keys.items())
del _section

# A heatmap spec, as heatmap_spec.heatmap writes it.
HEATMAP = {
    "matrix": "the name of the matrix it shows",
    "title": "its title",
    "x_title": "the x axis's title", "y_title": "the y axis's title",
    "zmin": "the colour scale's low end", "zmax": "the colour scale's high end",
    "scale": "'diverging' (blue, white at 0, red) or 'sequential' (from white)",
    "key": "[low, middle, high]: the colour key's three labels",
    "text": "whether each cell prints its value",
    "text_format": "how a printed value is formatted (Plotly's d3 format)",
    "hover": "what hovering a cell shows: a template whose %{x}, %{y}, %{customdata} and %{z} "
             "the page fills in",
    "marks": "[[row, col], ...]: cells outlined (the predicted classes)",
    "x_labels": "'classes' when the hover's %{customdata} is the column's class name (the "
                "answer's labels), else null",
}


# The "finetune" section of an answer (pycore/explorer/finetune/section.py: section).
FINETUNE = {
    "labels": "[int]: the state's label of each sample",
    "predicted": "[int]: each sample's predicted class (arg-max logit)",
    "classes": "C, the number of classes (labels are 0 to C - 1)",
    "settings": "{lr, optimizer, start, compare, input_scale}: the training settings",
    "loss": "the correct head's cross-entropy now (null beyond float64)",
    "accuracy": "its accuracy now (0 to 1)",
    "status": "the line that says both, and the run's step",
    "start_note": "what the start setting means for the run's first loss, with this C",
    "run": "null (no run: the curves are empty) or {id, steps, loss: [step 0 first, then after "
           "each update], accuracy: [...], compare: [{head, name, loss, own, stopped}], "
           "converged: null or the words that say why Play stops: every sample right and the "
           "loss curve flat on its chart, or the loss unchanged}",
    "reading": "one line: what the side-by-side curves show at the run's last step",
    "why": "why, when the numbers show what the math predicts ('' otherwise)",
    "gradient_note": "why the heatmap of dW_head is hidden, or null when it is drawn",
    "held_out": "null, or {count, accuracy, curve: [[step, accuracy], ...], probes, text}: the "
                "held-out digits' accuracy under this W_head (preset 'finetune-digits'), the "
                "curve at the end of each train request of the run; probes: {depths, train, "
                "held_out, steps, lr, text}, a head trained on each depth's CLS features and "
                "its accuracies (pycore.explorer.finetune.digits.probes)",
    "trained": "null, or in the answer to 'train': {asked, taken, text}: the steps asked for and "
               "those taken, as many as fit in about 0.2 s of work (at least 1, but 0 when a "
               "request of more than one step starts a run whose start and first step do not "
               "fit together; pycore.explorer.finetune.panel.steps_that_fit), and a line that says "
               "so",
}


def matrix_names(answer):
    """The matrices an answer must carry: those its heatmaps and grids name, but the ones it
    patches (the page holds them already).

    Examples
    --------
    >>> matrix_names({"heatmaps": {"heatmap-w": {"matrix": "W_head"}, "heatmap-logits":
    ...     {"matrix": "logits"}}, "patched": {"W_head": [[0, 0, 1.0]]}})
    ['logits']
    """
    names = set()
    for section in ("heatmaps", "grids"):
        for spec in (answer.get(section) or {}).values():
            names.add(spec["matrix"])
    return sorted(names - set(answer.get("patched") or {}))
