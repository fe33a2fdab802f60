// The conversation between the page and Python, on the JavaScript side. Written by
// `python3 -m buildtools.javascript.protocol` from pycore/explorer/protocol.py (the names) and
// pycore/explorer/protocol_types.py (their types): change those, not this file.
// docs/protocol.md tells the story. (Types only: this file exports nothing.)

/**
 * One request: an op and its fields (pycore.explorer.protocol.REQUESTS says what each holds).
 * @typedef {Object} Request
 * @property {"load"|"reset"|"edit"|"paste"|"resize"|"mode"|"preset"|"option"|"contributions"|"digit"|"digit_preview"|"export"|"open_file"|"equations"|"link"|"catch_up"|"selfcheck"|"train"|"train_reset"|"train_set"|"label"} op
 * @property {string} [fragment] load, reset
 * @property {string} [key] edit, paste
 * @property {number[]} [index] edit, paste, label
 * @property {string} [text] edit, paste, label
 * @property {boolean} [commit] edit, label
 * @property {"later"} [equations] edit, paste, option, digit, train
 * @property {"later"} [link] edit, digit, train
 * @property {Array<"stats"|"top_k"|"contributions"|"logits_table"|"top_classes"|"prediction"|"softmax_bars"|"digit"|"mistake"|"variant"|"walk"|"finetune">} [later] edit, digit, train
 * @property {number} [B] resize
 * @property {number} [D] resize
 * @property {number} [C] resize
 * @property {number} [N1] resize
 * @property {string} [mode] mode
 * @property {string} [name] preset, option, open_file, train_set
 * @property {number} [seed] preset
 * @property {{train: Array<[string, number]>, held_out: Array<[string, number]>}} [digits] preset
 * @property {*} [value] option, train_set
 * @property {?number} [b] contributions
 * @property {?number} [c] contributions
 * @property {boolean} [select] contributions
 * @property {number[][][]} [images] digit, digit_preview
 * @property {"keep"|"trained"} [head] digit
 * @property {string} [format] export
 * @property {number} [size] open_file
 * @property {"W_head"|"cls"|"encoder_output"} [target] open_file
 * @property {boolean} [first] open_file
 * @property {Array<[number, string]>} [parts] open_file
 * @property {number} [n] train
 * @property {number} [run] train
 */

/**
 * One answer (pycore.explorer.protocol.ANSWER): "ok", and what changed.
 * @typedef {Object} Answer
 * @property {boolean} ok
 * @property {?{message: string, key: ?string, index: ?number[], incomplete: (boolean|undefined)}} [error]
 * @property {Object<string, HeatmapSpec>} [heatmaps]
 * @property {string[]} [hide]
 * @property {Object<string, {matrix: string}>} [grids]
 * @property {Object<string, number[][]>} [patched]
 * @property {number} [value]
 * @property {boolean} [unchanged]
 * @property {string[]} [deferred]
 * @property {{prediction: string, top: Array<[string, number]>, attention: number[], encode_ms: number}} [digit_preview]
 * @property {string} [host]
 * @property {{text: string, mime: string, filename: string, title: string, about: string, base64: (boolean|undefined)}} [export]
 * @property {{need: ?Array<[number, number]>, summary: ?string}} [file]
 * @property {Object<string, Matrix>} [matrices]
 * @property {number} [worker_ms]
 * @property {{python: string, numpy: string, modules: number, attempted: number, failed: number, failures: {module: string, report: string}[]}} [selfcheck]
 * @property {{mode: string, B: number, D: number, C: number, N1: ?number}} [shape]
 * @property {{fragment: ?string, pending: boolean, note: ?string}} [link]
 * @property {{samples: string[], classes: string[], class_titles: ?string[]}} [labels]
 * @property {?{shown: string, text: string}} [head]
 * @property {Table} [stats]
 * @property {?TopK} [top_k]
 * @property {?Contributions} [contributions]
 * @property {Table} [logits_table]
 * @property {string} [top_classes]
 * @property {{text: string, notes: string[]}} [prediction]
 * @property {{b: number, title: string, bars: {label: string, value: number, text: string, mark: boolean, rest: boolean}[], note: string}} [softmax_bars]
 * @property {?{images: ?number[][], attention: ?number[][], prediction: ?string, top: ?Array<[string, number]>, edits: ?{encoder_output: number, W_head: ?number}, encode_ms: ?number, lens: boolean}} [digit]
 * @property {Comparison} [mistake]
 * @property {Comparison} [variant]
 * @property {?Walk} [walk]
 * @property {FineTune} [finetune]
 * @property {{sample: number, class: number, items: {title: string, tex: string, note: ?string}[]}} [equations]
 * @property {boolean} [equations_follow]
 * @property {Object<string, {spec: HeatmapSpec, rows: number, cols: number}>} [ahead]
 */

/**
 * A heatmap spec (pycore.explorer.protocol.HEATMAP).
 * @typedef {Object} HeatmapSpec
 * @property {string} matrix
 * @property {string} title
 * @property {string} x_title
 * @property {string} y_title
 * @property {number} zmin
 * @property {number} zmax
 * @property {"diverging"|"sequential"} scale
 * @property {string[]} key
 * @property {boolean} text
 * @property {string} text_format
 * @property {string} hover
 * @property {number[][]} marks
 * @property {?("classes"|number[])} x_labels the hover's %{customdata} is the column's class name: column j is class j ("classes"), or the list's j-th class (some classes only)
 */

/**
 * Each sample's k largest logits (pycore.explorer.panels.readouts.top_k_table).
 * @typedef {Object} TopK
 * @property {number} k
 * @property {string} caption
 * @property {string[]} header
 * @property {{label: string, cells: string[], classes: number[], mark: number}[]} rows
 */

/**
 * One logit's terms h_hat[b, d] * W_head[d, c] (pycore.explorer.panels.readouts.contribution_chart).
 * @typedef {Object} Contributions
 * @property {number} b
 * @property {number} c
 * @property {string} title
 * @property {number} logit
 * @property {string} logit_text
 * @property {string} total_text
 * @property {{label: string, d: ?number, value: ?number, text: string, factors: string}[]} bars the rest summed: d null; value null beyond float64 (text "beyond float64", "-beyond float64")
 * @property {string} note
 */

/**
 * The "Fine-tune the head" panel's section (pycore.explorer.protocol.FINETUNE).
 * @typedef {Object} FineTune
 * @property {number[]} labels
 * @property {number[]} predicted
 * @property {number} classes
 * @property {{lr: number, optimizer: string, start: string, compare: string[], input_scale: number}} settings
 * @property {?number} loss
 * @property {number} accuracy
 * @property {string} status
 * @property {string} start_note
 * @property {?{id: number, steps: number, loss: number[], accuracy: number[], compare: {head: string, name: string, loss: number[], own: ?number[], stopped: ?string}[], converged: ?string}} run
 * @property {string} reading
 * @property {string} why
 * @property {?string} gradient_note
 * @property {?{count: number, accuracy: number, curve: number[][], probes: ?{depths: number[], train: number[], held_out: number[], steps: number, lr: number, text: string}, text: string}} held_out
 * @property {?{asked: number, taken: number, text: string}} trained a train request's steps: those that fit in its time budget (at least one, never more than asked)
 */

/**
 * @typedef {Object} Matrix
 * @property {number} rows
 * @property {number} cols
 * @property {Float64Array} data row-major
 */

/**
 * @typedef {Object} Table
 * @property {string} caption
 * @property {string[]} header
 * @property {{label: string, cells: string[], mark: ?number}[]} rows
 */

/**
 * @typedef {Object} Comparison
 * @property {string[][]} [choices] [[key, title], ...], sent once
 * @property {?string} selected
 * @property {string} explanation
 * @property {string} source
 * @property {?string} error
 * @property {?string} note
 * @property {?string} changes which samples' predictions it changes, in one line
 * @property {?string} notice the input switched to the full encoder output for it
 * @property {?TopK} top_k from 21 classes on: each sample's k largest outputs
 */

/**
 * The walk-through's step (pycore.explorer.panels.walkthrough.section); null while it is off.
 * @typedef {Object} Walk
 * @property {number} step 0 to count - 1
 * @property {number} count
 * @property {string[]} names the steps' short names
 * @property {string} key
 * @property {number} sample
 * @property {number} class the class of the dot product
 * @property {number} predicted_class
 * @property {boolean} class_chosen whether the class was chosen (else: the predicted one)
 * @property {string} title
 * @property {string} tex the step's equation with this sample's numbers
 * @property {string} note
 * @property {string[]} notes ties and rows LayerNorm flattens (the prediction step)
 * @property {Object<string, number[][]>} highlights heatmap id -> [[row0, col0, row1, col1]]
 */

export {};
