// The Python of the one-file page (buildtools/onefile/page.py runs this under Node.js): only the
// modules of the standard library and of NumPy that the explorer uses, as bytecode, compiled by
// the very Pyodide the file embeds.
//
//   node python.mjs <pyodide folder> <site folder> <out folder>
//        < {"wheel": path, "stdlib": path of Pyodide's standard library zip,
//           "sources": [[url, path], ...] of the explorer's Python, "requests": [json, ...]}
//
// 1. Replays the page's use of Python: installs NumPy's wheel, imports the explorer (bridge),
//    answers `requests` (a selfcheck, every preset, each export, training...), so that every
//    module the page imports lazily is imported too.
// 2. Writes, into <out>: stdlib.zip (each standard-library module that was imported, as a
//    sourceless .pyc where its .py was: zipimport reads it without the source), numpy.zip (for
//    site-packages: NumPy's imported modules as sourceless .pyc, and the extension modules that
//    were loaded), both stored uncompressed (the one file compresses its payloads as a whole).
// 3. Checks them: a second Pyodide starts with only these two zips and the explorer, and must
//    answer the same requests the same way (a module left out fails the build, not the page).
// Prints {"stdlib": {"modules", "bytes"}, "numpy": {"modules", "extensions", "bytes"}}.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, site, out] = process.argv.slice(2);
const { wheel, stdlib, sources, requests, python_dir: pythonDir } = JSON.parse(readFileSync(0, "utf-8"));
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const quiet = { stdout: () => {}, stderr: () => {} };

function writeExplorer(pyodide) {
  for (const [url, path] of sources) {
    const full = pythonDir + "/" + path;
    pyodide.FS.mkdirTree(full.slice(0, full.lastIndexOf("/")));
    pyodide.FS.writeFile(full, readFileSync(join(site, url)));
  }
}

const ANSWER = `
import json, sys
sys.path.insert(0, ${JSON.stringify(pythonDir)})
sys.dont_write_bytecode = True
import bridge
def _answers(requests):
    out = []
    for r in requests:
        a = json.loads(bridge.answer(r)[0])
        if r == '{"op": "selfcheck"}':
            a = {k: a.get("selfcheck", {}).get(k) for k in ("attempted", "failed", "failures")}
        out.append(json.dumps({"ok": a.get("ok"), "error": a.get("error"),
                               "selfcheck": a if "attempted" in a else None}, sort_keys=True))
    return out
`;

// ---- 1. the replay, with Pyodide's whole standard library and NumPy's whole wheel ------------
const full = await loadPyodide({ indexURL: pyodideDir + "/", stdLibURL: stdlib, ...quiet });
await full.loadPackage(wheel, { messageCallback: () => {}, errorCallback: () => {} });
writeExplorer(full);
full.runPython(ANSWER);
full.globals.set("requests", full.toPy(requests));
const expected = full.runPython("_answers(requests)").toJs();
const made = full.runPython(`
import io, os, py_compile, zipfile, importlib.machinery
import numpy
FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the same inputs always give the same zips
UNCHECKED = py_compile.PycInvalidationMode.UNCHECKED_HASH

def add(z, name, data):
    info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
    info.compress_type = zipfile.ZIP_STORED
    z.writestr(info, data)

def pyc(source, display):
    """Bytecode of the file at source, as Python would compile it from display."""
    out = py_compile.compile(source, cfile="/tmp/one.pyc", dfile=display, doraise=True,
                             invalidation_mode=UNCHECKED)
    with open(out, "rb") as f:
        return f.read()

origins = sorted({getattr(getattr(m, "__spec__", None), "origin", None) or ""
                  for m in list(sys.modules.values())})
stdlib_file = next(p for p in sys.path if p.endswith(".zip"))
site_packages = os.path.dirname(os.path.dirname(numpy.__file__))
numpy_dir = os.path.dirname(numpy.__file__) + "/"

stdlib_names = sorted(o[len(stdlib_file) + 1:] for o in origins
                      if o.startswith(stdlib_file + "/") and o.endswith((".py", ".pyc")))
with zipfile.ZipFile(stdlib_file) as original, zipfile.ZipFile("/stdlib-one.zip", "w") as z:
    for name in stdlib_names:
        source = name[:-1] if name.endswith(".pyc") else name
        os.makedirs(os.path.dirname("/src/" + source) or "/src", exist_ok=True)
        with open("/src/" + source, "wb") as f:
            f.write(original.read(source))
        add(z, source[:-3] + ".pyc", pyc("/src/" + source, stdlib_file + "/" + source))

numpy_py = [o for o in origins if o.startswith(numpy_dir) and o.endswith(".py")]
numpy_ext = [o for o in origins if o.startswith(numpy_dir) and o.endswith(".so")]
with zipfile.ZipFile("/numpy-one.zip", "w") as z:
    for source in numpy_py:
        add(z, os.path.relpath(source, site_packages)[:-3] + ".pyc", pyc(source, source))
    for ext in numpy_ext:
        with open(ext, "rb") as f:
            add(z, os.path.relpath(ext, site_packages), f.read())
[len(stdlib_names), len(numpy_py), len(numpy_ext), site_packages]
`).toJs();
const [stdlibModules, numpyModules, numpyExtensions, sitePackages] = made;
const stdlibZip = full.FS.readFile("/stdlib-one.zip");
const numpyZip = full.FS.readFile("/numpy-one.zip");
writeFileSync(join(out, "stdlib.zip"), stdlibZip);
writeFileSync(join(out, "numpy.zip"), numpyZip);

// ---- 3. the check: only what the one file ships ----------------------------------------------
const one = await loadPyodide({ indexURL: pyodideDir + "/", stdLibURL: join(out, "stdlib.zip"), ...quiet });
one.unpackArchive(numpyZip, "zip", { extractDir: sitePackages });
writeExplorer(one);
one.runPython(ANSWER);
one.globals.set("requests", one.toPy(requests));
const got = one.runPython("_answers(requests)").toJs();
for (let i = 0; i < requests.length; i++) {
  if (got[i] !== expected[i]) {
    process.stderr.write(`Error: with only the one file's modules, ${requests[i]} answered\n` +
                         `${got[i]}\ninstead of\n${expected[i]}\n`);
    process.exit(1);
  }
}
const selfcheck = JSON.parse(expected[requests.indexOf('{"op": "selfcheck"}')] || "{}").selfcheck;
if (!selfcheck || !(selfcheck.attempted > 0) || selfcheck.failed !== 0) {
  process.stderr.write(`Error: pycore's selfcheck did not pass: ${JSON.stringify(selfcheck)}\n`);
  process.exit(1);
}
process.stdout.write(JSON.stringify({
  stdlib: { modules: stdlibModules, bytes: stdlibZip.length },
  numpy: { modules: numpyModules, extensions: numpyExtensions, bytes: numpyZip.length,
           site_packages: sitePackages },
  selfcheck_examples: selfcheck.attempted,
}));
