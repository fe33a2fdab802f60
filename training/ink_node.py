"""The drawing pad's own ink code (web/js/digits/ink.js), run in Node: the 64 pixels it makes of pen
strokes, as drawn ("rasterize") and as the model reads them ("prepared"). Used by
tests/test_ink.py, benchmarks/drawing_bench.py and training/pen_digits.py."""
import json
import os
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INK = os.path.join(ROOT, "web", "js", "digits", "ink.js")

SCRIPT = """
import { readFileSync } from "node:fs";
import * as ink from %s;
const { fn, drawings } = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(drawings.map((strokes) => ink[fn](strokes))));
""" % json.dumps("file://" + INK)


def node():
    """Node's path; a missing Node fails the test that needs it (CI installs it with npm)."""
    found = shutil.which("node") or shutil.which("nodejs")
    if not found:
        raise RuntimeError("Node.js is needed to run web/js/digits/ink.js (apt-get install nodejs)")
    return found


def pixels(drawings, fn="prepared"):
    """[64 ints] for each drawing (a list of strokes, each a list of (row, column) points)."""
    data = json.dumps({"fn": fn, "drawings": [[[list(map(float, p)) for p in s] for s in d]
                                              for d in drawings]})
    out = subprocess.run([node(), "--input-type=module", "-e", SCRIPT], input=data,
                         capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout)
