// Compiles Python to bytecode with the very Pyodide the site ships, under Node.js
// (buildtools/assembly/bytecode.py runs it). Pyodide 314 ships no .pyc files, neither for its standard
// library nor in NumPy's wheel: without these, the worker compiled every module it imported
// from source on every boot, the standard library's that Pyodide starts with included.
//
//   node bytecode.mjs <pyodide folder> <site folder>  < {"sources": [[url, path], ...],
//        "boot": null | {"wheel", "entry", "also": [module], "numpy_zip", "stdlib_zip"}}
//
// Each source `url` (relative to the site) is compiled as Python would import it from `path`,
// and written as <dir of url>/__pycache__/<name>.<cache tag>.pyc. With "boot", the boot is
// replayed: NumPy's wheel (a file path) is installed, then numpy, `entry` (the explorer's first
// module) and `also` are imported; then every module that imported is compiled into two zips
// (paths relative to the site):
// - numpy_zip: NumPy's, each as <dir>/__pycache__/<name>.<cache tag>.pyc relative to
//   site-packages: unpacked there, Python finds it beside its source;
// - stdlib_zip: Pyodide's standard library zip, stored, every file as published but that each
//   <name>.py the boot imported is <name>.pyc instead (zipimport reads it without its source),
//   compiled under the file name Python gives it.
// All .pyc files are checked-hash (PEP 552): Python uses one only while its source's hash
// matches, whatever the files' dates.
// Prints {"files": [[pyc url, pyc path], ...], "numpy": null | {"zip", "modules",
// "site_packages"}, "stdlib": null | {"zip", "modules", "file"}} as JSON.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, site] = process.argv.slice(2);
const { sources, boot } = JSON.parse(readFileSync(0, "utf-8"));
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: pyodideDir + "/", stdout: () => {}, stderr: () => {} });
for (const [url, path] of sources) {
  pyodide.FS.mkdirTree("/compile/" + dirname(path));
  pyodide.FS.writeFile("/compile/" + path, readFileSync(join(site, url)));
}
pyodide.globals.set("paths", pyodide.toPy(sources.map(([, path]) => path)));
const compiled = pyodide.runPython(`
import py_compile
CHECKED = py_compile.PycInvalidationMode.CHECKED_HASH
[py_compile.compile("/compile/" + p, doraise=True, invalidation_mode=CHECKED)[len("/compile/"):]
 for p in paths]
`).toJs();
const files = sources.map(([url, path], i) => {
  const pycPath = compiled[i];
  const pycURL = join(dirname(url), "__pycache__", pycPath.split("/").pop());
  mkdirSync(join(site, dirname(pycURL)), { recursive: true });
  writeFileSync(join(site, pycURL), pyodide.FS.readFile("/compile/" + pycPath));
  return [pycURL, pycPath];
});

let numpyOut = null;
let stdlibOut = null;
if (boot) {
  await pyodide.loadPackage(boot.wheel, { messageCallback: () => {}, errorCallback: () => {} });
  pyodide.globals.set("entry", boot.entry);
  pyodide.globals.set("also", pyodide.toPy(boot.also));
  const [modules, sitePackages, stdlibModules, stdlibFile] = pyodide.runPython(`
import importlib, os, sys, zipfile
sys.path.insert(0, "/compile")
sys.dont_write_bytecode = True  # only the .pyc compiled below go into the zips
import numpy
importlib.import_module(entry)
for name in also:
    importlib.import_module(name)
FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # the same inputs always give the same zips

def add(z, name, data):
    info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)

origins = [getattr(getattr(m, "__spec__", None), "origin", None) or "" for m in list(sys.modules.values())]

# NumPy: each module's .pyc in __pycache__ beside its source, relative to site-packages
site_packages = os.path.dirname(os.path.dirname(numpy.__file__))
numpy_dir = os.path.dirname(numpy.__file__) + "/"
numpy_sources = sorted(o for o in origins if o.startswith(numpy_dir) and o.endswith(".py"))
with zipfile.ZipFile("/numpy-bytecode.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for source in numpy_sources:
        pyc = py_compile.compile(source, doraise=True, invalidation_mode=CHECKED)
        with open(pyc, "rb") as f:
            add(z, os.path.relpath(pyc, site_packages), f.read())

# The standard library: Pyodide's zip, stored uncompressed (the site serves it gzipped, which
# compresses it better as a whole), with name.pyc in place of each name.py the boot imported
# (zipimport reads a .pyc without its source), compiled under the file name Python gives it.
stdlib_file = next(p for p in sys.path if p.endswith(".zip"))
with zipfile.ZipFile(stdlib_file) as original, \
        zipfile.ZipFile("/stdlib.zip", "w", zipfile.ZIP_STORED) as z:
    names = set(original.namelist())
    stdlib_sources = sorted({o[len(stdlib_file) + 1:] for o in origins
                             if o.startswith(stdlib_file + "/") and o.endswith(".py")
                             and o[len(stdlib_file) + 1:-3] + ".pyc" not in names})
    replaced = set(stdlib_sources)
    for info in original.infolist():
        if info.filename not in replaced:
            stored = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            stored.external_attr = info.external_attr
            z.writestr(stored, original.read(info))
    for name in stdlib_sources:
        os.makedirs(os.path.dirname("/stdlib/" + name), exist_ok=True)
        with open("/stdlib/" + name, "wb") as f:
            f.write(original.read(name))
        pyc = py_compile.compile("/stdlib/" + name, cfile="/stdlib/" + name + "c",
                                 dfile=stdlib_file + "/" + name, doraise=True,
                                 invalidation_mode=CHECKED)
        with open(pyc, "rb") as f:
            z.writestr(zipfile.ZipInfo(name[:-3] + ".pyc", date_time=FIXED_DATE), f.read())
[len(numpy_sources), site_packages, len(stdlib_sources), stdlib_file]
`).toJs();
  for (const [zip, made] of [[boot.numpy_zip, "/numpy-bytecode.zip"], [boot.stdlib_zip, "/stdlib.zip"]]) {
    mkdirSync(join(site, dirname(zip)), { recursive: true });
    writeFileSync(join(site, zip), pyodide.FS.readFile(made));
  }
  numpyOut = { zip: boot.numpy_zip, modules, site_packages: sitePackages };
  stdlibOut = { zip: boot.stdlib_zip, modules: stdlibModules, file: stdlibFile };
}
process.stdout.write(JSON.stringify({ files, numpy: numpyOut, stdlib: stdlibOut }));
