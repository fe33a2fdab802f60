// Boot glue of the offline fallback host: Pyodide 0.17 (Python 3.8, NumPy 1.17), all files in
// the site itself. build.py inserts, after js/host.js (so window.vitHost exists), preloads of
// the runtime's big files and
//   <script src="boot/fallback.js" data-index-url="vendor/pyodide-0.17/" defer></script> This script starts the runtime, loads NumPy, writes
// the Python files named in py-files.json into the browser's file system, imports bridge and
// hands it to the page (see web/README.md). Any failure becomes one plain sentence for a person.
(function () {
  "use strict";
  var host = window.vitHost;
  var script = document.currentScript;
  var indexURL = (script && script.getAttribute("data-index-url")) || "vendor/pyodide-0.17/";
  // Same folder as PYTHON_DIR in buildtools/hosts.py and web/py/main.py.
  var PYTHON_DIR = "/home/pyodide/explorer";
  var stage = "runtime";

  // What went wrong, in words for the person in front of the page, by boot stage.
  var TROUBLE = {
    runtime: "The Python runtime could not be downloaded",
    python: "Python could not start",
    numpy: "NumPy could not be loaded",
    explorer: "The explorer's Python code could not be loaded",
  };

  function step(name, text) {
    stage = name;
    host.status(name, text);
  }

  function loadScript(url) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = url;
      s.onload = resolve;
      s.onerror = function () { reject(new Error(url + " could not be loaded")); };
      document.head.appendChild(s);
    });
  }

  function fetchText(url) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error(url + ": HTTP " + response.status);
      return response.text();
    });
  }

  // Last line of a Python traceback (or the whole message), for the one-sentence summary.
  function summary(error) {
    var text = String((error && error.message) || error).trim();
    var lines = text.split("\n").filter(function (l) { return l.trim(); });
    return lines.length ? lines[lines.length - 1].trim() : text;
  }

  async function boot() {
    if (location.protocol === "file:") {
      stage = "file";
      throw new Error("opened from a file");
    }
    step("runtime", "Downloading Python (Pyodide 0.17, about 19 MB)…");
    await host.boot.afterFirstPaint();
    host.boot.whenDownloaded(["pyodide.asm.wasm", "pyodide.asm.data"], function () {
      if (stage === "runtime") step("python", "Starting Python 3.8…");
    });
    await loadScript(indexURL + "pyodide.js");
    var pyodide = await globalThis.loadPyodide({ indexURL: indexURL });
    document.documentElement.dataset.pyodide = pyodide.version;

    step("numpy", "Loading NumPy (9 MB)…");
    // The explorer's Python files download while NumPy loads.
    var sources = fetchText("py-files.json").then(function (text) {
      var files = JSON.parse(text).files;
      return Promise.all(files.map(function (f) { return fetchText(f.url); }))
        .then(function (texts) { return { list: files, texts: texts }; });
    });
    sources.catch(function () { /* reported where it is awaited, below */ });
    var problems = [];
    await pyodide.loadPackage(["numpy"], function () {}, function (m) { problems.push(m); });
    try {
      pyodide.runPython("import numpy");
    } catch (e) {
      throw new Error(problems.join("; ") || summary(e));
    }

    step("explorer", "Loading the explorer…");
    var loaded = await sources;
    var list = loaded.list;
    var texts = loaded.texts;
    var write = pyodide.runPython([
      "def _vit_write(path, text):",
      "    import os",
      "    os.makedirs(os.path.dirname(path), exist_ok=True)",
      "    with open(path, 'w', encoding='utf-8') as f:",
      "        f.write(text)",
      "_vit_write",
    ].join("\n"));
    list.forEach(function (f, i) { write(PYTHON_DIR + "/" + f.path, texts[i]); });
    write.destroy();
    var bridge = pyodide.runPython([
      "del _vit_write",
      "import sys",
      "if " + JSON.stringify(PYTHON_DIR) + " not in sys.path:",
      "    sys.path.insert(0, " + JSON.stringify(PYTHON_DIR) + ")",
      "import bridge",
      "bridge",
    ].join("\n"));
    if (reported) return; // a missing file was already reported; do not pretend all is well
    stage = "ready";
    host.ready(bridge);
  }

  var reported = false;
  function report(error) {
    if (reported) return;
    reported = true;
    if (stage === "ready") throw error; // the page's own error while taking over: not ours
    if (stage === "file") {
      host.fail("This page needs a web server: Python cannot start from a file:// address. " +
                "In the site's folder run `python3 -m http.server`, then open " +
                "http://localhost:8000/.");
      return;
    }
    // The explorer's files download while NumPy loads: name what is missing, not the stage.
    var what = /\/(py|pycore)\/|py-files\.json/.test(summary(error)) ? "explorer" : stage;
    console.error("[vit boot] " + what + ":", error);
    // a missing file is fixed by a complete copy of the site; a Python error in the explorer
    // is a bug that no copying fixes
    var missingFile = what !== "explorer" || /HTTP [45]\d\d/.test(summary(error));
    host.fail(TROUBLE[what] + " (" + summary(error) + ")." + (missingFile ? host.boot.FIX : ""));
  }
  host.boot.watchMissing(/\/(vendor|py|pycore)\/|py-files\.json/, function (error) {
    if (stage !== "ready") report(error);
  });
  boot().catch(report);
})();
