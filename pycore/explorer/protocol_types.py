"""The JavaScript types of the protocol (pycore/explorer/protocol.py names its requests and
answers): what web/js/protocol.js declares, as JSDoc typedefs, for the page's scripts.

web/js/protocol.js is written from this module (``python3 -m buildtools.javascript.protocol``),
never by hand; tests/test_protocol.py checks that it is what this module writes, that each typedef
of a request, an answer, a heatmap spec and the fine-tuning section names exactly the fields
protocol.py lists, and that the session's answers hold values of these types.

Each typedef: (name, what it is, [(property, JSDoc type, optional, what it holds)]). The
``Request`` typedef is written from protocol.REQUESTS (its ops, and which ops carry each field)
and :data:`REQUEST_TYPES` (each field's type): a field's meaning is written once, in REQUESTS.
"""

from .panels.sections import DEFERRABLE, SECTIONS
from .protocol import REQUESTS

REQUEST_TYPES = {
    "fragment": "string",
    "key": "string",
    "index": "number[]",
    "text": "string",
    "commit": "boolean",
    "equations": "\"later\"",
    "link": "\"later\"",
    "later": "Array<%s>" % "|".join('"%s"' % name for name in DEFERRABLE),
    "B": "number", "D": "number", "C": "number", "N1": "number",
    "mode": "string",
    "name": "string",
    "seed": "number",
    "digits": "{train: Array<[string, number]>, held_out: Array<[string, number]>}",
    "value": "*",
    "b": "?number", "c": "?number",
    "select": "boolean",
    "images": "number[][][]",
    "head": "\"keep\"|\"trained\"",
    "format": "string",
    "size": "number",
    "target": "\"W_head\"|\"cls\"|\"encoder_output\"",
    "first": "boolean",
    "parts": "Array<[number, string]>",
    "n": "number",
    "run": "number",
}
"""The JSDoc type of each request field (protocol.REQUESTS says what each holds, per op)."""


def _request_fields():
    """The Request typedef's properties: ``op``, then each field of REQUESTS in the order the
    ops first name it, optional, with the ops that carry it as its description."""
    fields = [("op", False, "OPS", "")]
    seen = {}
    for op, names in REQUESTS.items():
        for name in names:
            seen.setdefault(name, []).append(op)
    fields += [(name, True, REQUEST_TYPES[name], ", ".join(ops)) for name, ops in seen.items()]
    return fields


TYPEDEFS = [
    ("Request",
     "One request: an op and its fields (pycore.explorer.protocol.REQUESTS says what each "
     "holds).", _request_fields()),
    ("Answer",
     "One answer (pycore.explorer.protocol.ANSWER): \"ok\", and what changed.", [
        # the envelope's keys here; each section's key and type where it is registered
        # (pycore/explorer/panels/sections.py), added below
        ("ok", False, "boolean",
         ""),
        ("error", True,
         "?{message: string, key: ?string, index: ?number[], incomplete: (boolean|undefined)}",
         ""),
        ("heatmaps", True, "Object<string, HeatmapSpec>",
         ""),
        ("hide", True, "string[]",
         ""),
        ("grids", True, "Object<string, {matrix: string}>",
         ""),
        ("patched", True, "Object<string, number[][]>",
         ""),
        ("value", True, "number",
         ""),
        ("unchanged", True, "boolean",
         ""),
        ("deferred", True, "string[]",
         ""),
        ("digit_preview", True,
         "{prediction: string, top: Array<[string, number]>, attention: number[], "
         "encode_ms: number}",
         ""),
        ("host", True, "string",
         ""),
        ("export", True,
         "{text: string, mime: string, filename: string, title: string, about: string, base64: "
         "(boolean|undefined)}",
         ""),
        ("file", True, "{need: ?Array<[number, number]>, summary: ?string}",
         ""),
        ("matrices", True, "Object<string, Matrix>",
         ""),
        ("worker_ms", True, "number",
         ""),
        ("selfcheck", True,
         "{python: string, numpy: string, modules: number, attempted: number, failed: number, "
         "failures: {module: string, report: string}[]}",
         ""),
    ]),
    ("HeatmapSpec",
     "A heatmap spec (pycore.explorer.protocol.HEATMAP).", [
        ("matrix", False, "string",
         ""),
        ("title", False, "string",
         ""),
        ("x_title", False, "string",
         ""),
        ("y_title", False, "string",
         ""),
        ("zmin", False, "number",
         ""),
        ("zmax", False, "number",
         ""),
        ("scale", False, "\"diverging\"|\"sequential\"",
         ""),
        ("key", False, "string[]",
         ""),
        ("text", False, "boolean",
         ""),
        ("text_format", False, "string",
         ""),
        ("hover", False, "string",
         ""),
        ("marks", False, "number[][]",
         ""),
        ("x_labels", False, "?(\"classes\"|number[])",
         "the hover's %{customdata} is the column's class name: column j is class j "
         "(\"classes\"), or the list's j-th class (some classes only)"),
    ]),
    ("TopK",
     "Each sample's k largest logits (pycore.explorer.panels.readouts.top_k_table).", [
        ("k", False, "number",
         ""),
        ("caption", False, "string",
         ""),
        ("header", False, "string[]",
         ""),
        ("rows", False, "{label: string, cells: string[], classes: number[], mark: number}[]",
         ""),
    ]),
    ("Contributions",
     "One logit's terms h_hat[b, d] * W_head[d, c] "
     "(pycore.explorer.panels.readouts.contribution_chart).", [
        ("b", False, "number",
         ""),
        ("c", False, "number",
         ""),
        ("title", False, "string",
         ""),
        ("logit", False, "number",
         ""),
        ("logit_text", False, "string",
         ""),
        ("total_text", False, "string",
         ""),
        ("bars", False,
         "{label: string, d: ?number, value: ?number, text: string, factors: string}[]",
         "the rest summed: d null; value null beyond float64 (text \"beyond float64\", "
         "\"-beyond float64\")"),
        ("note", False, "string",
         ""),
    ]),
    ("FineTune",
     "The \"Fine-tune the head\" panel's section (pycore.explorer.protocol.FINETUNE).", [
        ("labels", False, "number[]",
         ""),
        ("predicted", False, "number[]",
         ""),
        ("classes", False, "number",
         ""),
        ("settings", False,
         "{lr: number, optimizer: string, start: string, compare: string[], input_scale: number}",
         ""),
        ("loss", False, "?number",
         ""),
        ("accuracy", False, "number",
         ""),
        ("status", False, "string",
         ""),
        ("start_note", False, "string",
         ""),
        ("run", False,
         "?{id: number, steps: number, loss: number[], accuracy: number[], compare: {head: "
         "string, name: string, loss: number[], own: ?number[], stopped: ?string}[], "
         "converged: ?string}",
         ""),
        ("reading", False, "string",
         ""),
        ("why", False, "string",
         ""),
        ("gradient_note", False, "?string",
         ""),
        ("held_out", False,
         "?{count: number, accuracy: number, curve: number[][], probes: ?{depths: number[], "
         "train: number[], held_out: number[], steps: number, lr: number, text: string}, "
         "text: string}",
         ""),
        ("trained", False, "?{asked: number, taken: number, text: string}",
         "a train request's steps: those that fit in its time budget (at least one, never "
         "more than asked)"),
    ]),
    ("Matrix",
     "", [
        ("rows", False, "number",
         ""),
        ("cols", False, "number",
         ""),
        ("data", False, "Float64Array",
         "row-major"),
    ]),
    ("Table",
     "", [
        ("caption", False, "string",
         ""),
        ("header", False, "string[]",
         ""),
        ("rows", False, "{label: string, cells: string[], mark: ?number}[]",
         ""),
    ]),
    ("Comparison",
     "", [
        ("choices", True, "string[][]",
         "[[key, title], ...], sent once"),
        ("selected", False, "?string",
         ""),
        ("explanation", False, "string",
         ""),
        ("source", False, "string",
         ""),
        ("error", False, "?string",
         ""),
        ("note", False, "?string",
         ""),
        ("changes", False, "?string",
         "which samples' predictions it changes, in one line"),
        ("notice", False, "?string",
         "the input switched to the full encoder output for it"),
        ("top_k", False, "?TopK",
         "from 21 classes on: each sample's k largest outputs"),
    ]),
    ("Walk",
     "The walk-through's step (pycore.explorer.panels.walkthrough.section); null while it is "
     "off.", [
        ("step", False, "number",
         "0 to count - 1"),
        ("count", False, "number",
         ""),
        ("names", False, "string[]",
         "the steps' short names"),
        ("key", False, "string",
         ""),
        ("sample", False, "number",
         ""),
        ("class", False, "number",
         "the class of the dot product"),
        ("predicted_class", False, "number",
         ""),
        ("class_chosen", False, "boolean",
         "whether the class was chosen (else: the predicted one)"),
        ("title", False, "string",
         ""),
        ("tex", False, "string",
         "the step's equation with this sample's numbers"),
        ("note", False, "string",
         ""),
        ("notes", False, "string[]",
         "ties and rows LayerNorm flattens (the prediction step)"),
        ("highlights", False, "Object<string, number[][]>",
         "heatmap id -> [[row0, col0, row1, col1]]"),
    ]),
]


def _with_sections(typedefs):
    """The Answer typedef completed with the keys of the answer's sections, each typed where the
    section is registered (a new panel declares its type there, not here)."""
    out = []
    for name, doc, props in typedefs:
        if name == "Answer":
            props = props + [(key, True, js_type, "") for section in SECTIONS
                             for key, (js_type, _held) in section.keys.items()]
        out.append((name, doc, props))
    return out


TYPEDEFS = _with_sections(TYPEDEFS)
