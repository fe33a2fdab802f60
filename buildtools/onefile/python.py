"""The one file's Python: the standard library and NumPy modules the explorer uses, as bytecode.

buildtools/onefile/python.mjs replays, under Node.js with the site's own Pyodide, what the page
asks of Python (the requests below: a selfcheck that runs every docstring example of pycore,
every preset, comparison, export and a few training steps), keeps only the modules that were
imported, and checks that a Pyodide given only those answers every request as before. The served
site ships Pyodide's whole standard library (2.5 MB zipped) and NumPy's whole wheel (2.9 MB);
the one file ships what the explorer imports.
"""
import json
import os
import re
import shutil
import subprocess

from ..assembly import hosts
from ..errors import BuildError

NODE_TIMEOUT_S = 300


def _comparisons(root):
    """The keys of pycore's mistakes and variants ((key, kind), ...), read from its source."""
    registry = os.path.join(root, "pycore", "explorer", "comparisons", "registry.py")
    with open(registry, encoding="utf-8") as f:
        return re.findall(r'Comparison\(\s*"(\w+)", "(mistake|variant)"', f.read())


def requests(root, digits_page):
    """What the replay asks of the explorer: JSON texts, each one request (docs/protocol.md)."""
    def r(op, **fields):
        return json.dumps(dict(op=op, **fields))
    out = [r("load", fragment=""), '{"op": "selfcheck"}', r("equations"), r("link"),
           r("contributions", b=0, c=0, select=True)]
    out += [r("export", format=f) for f in ("json", "numpy", "csv")]
    for key, kind in _comparisons(root):
        out.append(r("option", name=kind, value=key))
    out.append(r("option", name="walk", value=3))
    out += [r("mode", mode="encoder"), r("paste", key="encoder_output", index=[0, 0, 0],
                                          text="[[1, 2], [3, 4]]")]
    for name in ("random", "vit-b16", "encoder", "worked"):
        out.append(r("preset", name=name, seed=3) if name == "random" else r("preset", name=name))
    out.append(r("preset", name="finetune", seed=1))
    for optimizer in ("sgd", "momentum", "adam"):
        out += [r("train_set", name="optimizer", value=optimizer), r("train", n=2)]
    out.append(r("export", format="training"))
    finetune = (digits_page or {}).get("finetune")
    if finetune:
        out += [r("preset", name="finetune-digits", digits=finetune), r("train", n=2)]
    image = [[(i * 3 + j * 5) % 17 for j in range(8)] for i in range(8)]
    out.append(r("digit", images=[image]))
    return out


def build(pyodide_dir, site, wheel, stdlib_zip, sources, reqs, work, log=print):
    """Write stdlib.zip and numpy.zip (stored, uncompressed) into `work`; return what
    python.mjs printed. Raises BuildError when Node.js is missing or the check fails."""
    node = shutil.which("node")
    if not node:
        raise BuildError("Node.js is needed to compile the one file's Python",
                         "install Node.js 18+")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python.mjs")
    request = {"wheel": wheel, "stdlib": stdlib_zip, "sources": sources, "requests": reqs,
               "python_dir": hosts.PYTHON_DIR}
    try:
        done = subprocess.run([node, script, pyodide_dir, site, work], input=json.dumps(request),
                              capture_output=True, text=True, timeout=NODE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError("the one file's Python could not be compiled: %s" % exc,
                         "check that Node.js runs")
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        why = next((line for line in lines if line.startswith("Error")), lines[-1] if lines else
                   "exit status %d" % done.returncode)
        raise BuildError("the one file's Python could not be made: %s" % why[:600],
                         "a module the explorer imports may be missing from the replay's requests "
                         "(buildtools/onefile/python.py)")
    out = json.loads(done.stdout)
    log("one file: %d standard-library modules and %d of NumPy's (+%d extensions) as bytecode; "
        "%d docstring examples pass with only those"
        % (out["stdlib"]["modules"], out["numpy"]["modules"], out["numpy"]["extensions"],
           out["selfcheck_examples"]))
    return out
