// Compiles the explorer's Python to bytecode with the very Pyodide the site ships, under Node.js
// (buildtools/bytecode.py runs it). Pyodide 314 ships no .pyc files: without these, the worker
// compiled pycore from source on every boot, about a sixth of a second on the way to ready.
//
//   node bytecode.mjs <pyodide folder> <site folder>  < [[url, path], ...] (JSON on stdin)
//
// Each file `url` (relative to the site) is compiled as Python would import it from `path`, and
// written as <dir of url>/__pycache__/<name>.<cache tag>.pyc. The .pyc files are checked-hash
// (PEP 552): Python uses one only while its source's hash matches, whatever the files' dates.
// Prints [[pyc url, pyc path], ...] as JSON.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, site] = process.argv.slice(2);
const sources = JSON.parse(readFileSync(0, "utf-8"));
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + "/", stdout: () => {}, stderr: () => {} });
for (const [url, path] of sources) {
  pyodide.FS.mkdirTree("/compile/" + dirname(path));
  pyodide.FS.writeFile("/compile/" + path, readFileSync(join(site, url)));
}
pyodide.globals.set("paths", pyodide.toPy(sources.map(([, path]) => path)));
const compiled = pyodide.runPython(`
import py_compile
[py_compile.compile("/compile/" + p, doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)[len("/compile/"):]
 for p in paths]
`).toJs();
const out = sources.map(([url, path], i) => {
  const pycPath = compiled[i];
  const pycURL = join(dirname(url), "__pycache__", pycPath.split("/").pop());
  mkdirSync(join(site, dirname(pycURL)), { recursive: true });
  writeFileSync(join(site, pycURL), pyodide.FS.readFile("/compile/" + pycPath));
  return [pycURL, pycPath];
});
process.stdout.write(JSON.stringify(out));
