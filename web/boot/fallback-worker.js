// The offline fallback host's Python, in a Web Worker: Pyodide 0.17 (Python 3.8, NumPy 1.17)
// compiles, starts, loads NumPy and then answers the page's requests here, so that none of it
// ever blocks the page's main thread, where Plotly.js, KaTeX and the page load meanwhile (on a
// 2-CPU machine the boot overlaps instead of queueing). boot/fallback.js starts this worker.
//
// Started as fallback-worker.js?index=<Pyodide's folder>&files=<py-files.json>&sizes=<{file:
// bytes} of the large downloads> (absolute URLs), it boots at once. Messages, page -> worker:
//   {kind: "call", id, request}         one request for web/py/bridge.py
//   {kind: "warm", id, edits}           practice edits (bridge.py's warm-up); answered with
//                                       {kind: "answer", id, answer: the milliseconds they took}
// worker -> page:
//   {kind: "status", stage, text, fraction}  boot progress, as vitHost.status (js/host.js)
//   {kind: "started", version}          Python is up (Pyodide's version)
//   {kind: "ready"}                     NumPy and the explorer are imported; calls are answered
//   {kind: "fail", message}             the boot failed: one plain sentence for a person
//   {kind: "blocked", violation}        a Content-Security-Policy violation here (vitHost.blocked)
//   {kind: "answer", id, answer}        or {kind: "answer", id, error}; the answer's matrices'
//                                       buffers are transferred, not copied
importScripts("../js/host.js", "../js/answers.js");

// Pyodide 0.17 makes each callable Python object it hands to JavaScript from `new Function()`:
// an empty function, but made from text, which a Content-Security-Policy without 'unsafe-eval'
// refuses (buildtools/assembly/csp.py). The same empty function, made without eval, serves it as well.
self.Function = new Proxy(self.Function, {
  construct: function (target, args, newTarget) {
    if (args.length) return Reflect.construct(target, args, newTarget);
    var empty = function () {};
    Object.setPrototypeOf(empty, newTarget.prototype);
    return empty;
  },
});

(function () {
  "use strict";
  var params = new URLSearchParams(self.location.search);
  var boot = self.vitHost.boot; // only the helpers: progress goes to the page as messages
  var summary = boot.summary;
  // The folder on sys.path that holds the explorer's Python files (boot/fallback.js passes
  // PYTHON_DIR of buildtools/assembly/hosts.py).
  var PYTHON_DIR = params.get("dir");
  var stage = "runtime";
  var answers = null;

  // What went wrong, in words for the person in front of the page, by boot stage.
  var TROUBLE = {
    runtime: "The Python runtime could not be downloaded",
    python: "Python could not start",
    numpy: "NumPy could not be loaded",
    explorer: "The explorer's Python code could not be loaded",
  };

  function step(name, text) {
    stage = name;
    self.postMessage({ kind: "status", stage: name, text: text, fraction: fraction() });
  }

  // Progress by bytes: the large files' sizes come from the build (the worker's URL, "sizes");
  // their downloads are counted as they arrive (XHR progress events for the .data files, a
  // counting stream for the .wasm), and the page is told at most every 150 ms.
  var sizes = JSON.parse(params.get("sizes") || "{}");
  var loaded = {};
  var lastSaid = 0;
  function fraction() {
    var got = 0, total = 0;
    Object.keys(sizes).forEach(function (name) {
      total += sizes[name];
      got += Math.min(loaded[name] || 0, sizes[name]);
    });
    return total ? got / total : undefined;
  }
  function arrived(url, bytes) {
    var name = String(url).split("?")[0].split("/").pop();
    if (!(name in sizes)) return;
    loaded[name] = bytes;
    var now = Date.now();
    if (now - lastSaid < 150 && bytes < sizes[name]) return;
    lastSaid = now;
    var group = stage === "numpy" ? ["numpy.data"] : Object.keys(sizes).filter(function (n) { return n !== "numpy.data"; });
    var got = 0, total = 0;
    group.forEach(function (n) { total += sizes[n]; got += Math.min(loaded[n] || 0, sizes[n]); });
    if (got >= total) return; // done: the next stage says what Python is doing
    var what = stage === "numpy" ? "Loading NumPy 1.17" : "Downloading Python (Pyodide 0.17)";
    self.postMessage({ kind: "status", stage: stage, text: what + ": " + boot.MB(got) + " of " + boot.MB(total) + " MB",
                       fraction: fraction() });
  }
  function countDownloads() {
    var realFetch = self.fetch;
    self.fetch = function (input, init) {
      return realFetch(input, init).then(function (response) {
        var url = response.url || String(input);
        if (!response.ok || !/\.wasm$/.test(url.split("?")[0])) return response;
        return boot.counting(response, function (bytes) { arrived(url, bytes); });
      });
    };
  }

  function fetchText(url) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error(url + ": HTTP " + response.status);
      return response.text();
    });
  }

  // A data file of pycore (py-files.json marks it "binary": the tiny ViT's weights), as bytes.
  function fetchBytes(url) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error(url + ": HTTP " + response.status);
      return response.arrayBuffer().then(function (buffer) { return new Uint8Array(buffer); });
    });
  }

  // Pyodide 0.17 starts Python (seconds of work that keep this worker busy) inside the load
  // handler of the request for its data file. A listener added first runs just before it, in
  // time to say so; resource timing (vitHost.boot.whenDownloaded) would report only after.
  function sayWhenPythonStarts() {
    var Request = self.XMLHttpRequest;
    self.XMLHttpRequest = /** @type {typeof XMLHttpRequest} */ (/** @type {unknown} */ (function () {
      /** @type {XMLHttpRequest & {vitURL?: string}} */
      var xhr = new Request();
      var open = xhr.open;
      xhr.open = function (method, url) {
        xhr.vitURL = url;
        return open.apply(xhr, /** @type {any} */ (arguments));
      };
      xhr.addEventListener("progress", function (event) { arrived(xhr.vitURL, event.loaded); });
      xhr.addEventListener("load", function () {
        if (stage === "runtime" && /pyodide\.asm\.data$/.test(xhr.responseURL)) {
          step("python", "Starting Python 3.8…");
        }
      });
      return xhr;
    }));
    self.XMLHttpRequest.prototype = Request.prototype;
  }

  async function start(indexURL, filesURL) {
    sayWhenPythonStarts();
    countDownloads();
    importScripts(indexURL + "pyodide.js");
    var pyodide = await self.loadPyodide({ indexURL: indexURL });
    self.postMessage({ kind: "started", version: pyodide.version });

    step("numpy", "Loading NumPy 1.17…");
    // The explorer's Python files download while NumPy loads.
    var sources = fetchText(filesURL).then(function (text) {
      var files = JSON.parse(text).files;
      return Promise.all(files.map(function (f) {
        return (f.binary ? fetchBytes : fetchText)(new URL(f.url, filesURL).href);
      }))
        .then(function (texts) { return { list: files, texts: texts }; });
    });
    var problems = [];
    var numpy = pyodide.loadPackage(["numpy"], function () {}, function (m) { problems.push(m); });
    numpy.catch(function () { /* reported where it is awaited, below */ });
    // Meanwhile (NumPy downloads, and compiles in the browser's background threads), Python
    // compiles the explorer to bytecode: importing it after NumPy then only loads the .pyc
    // files, which takes the compiling (~2/3 of the import) off the boot's critical path.
    var loaded = await sources;
    var write = pyodide.runPython([
      "def _vit_write(path, text):",
      "    import os, py_compile",
      "    os.makedirs(os.path.dirname(path), exist_ok=True)",
      "    if text is None:  # a binary file: its folder only; the bytes are written from JS",
      "        return",
      "    with open(path, 'w', encoding='utf-8') as f:",
      "        f.write(text)",
      "    if path.endswith('.py'):",
      "        py_compile.compile(path, quiet=2)  # an error shows when the import meets it",
      "_vit_write",
    ].join("\n"));
    loaded.list.forEach(function (f, i) {
      var path = PYTHON_DIR + "/" + f.path;
      write(path, f.binary ? null : loaded.texts[i]);
      // Pyodide 0.17's file system (Emscripten's FS) takes bytes as they are
      if (f.binary) pyodide._module.FS.writeFile(path, loaded.texts[i]);
    });
    write.destroy();

    await numpy;
    try {
      pyodide.runPython("import numpy");
    } catch (e) {
      throw new Error(problems.join("; ") || summary(e));
    }

    step("explorer", "Loading the explorer…");
    pyodide.runPython("del _vit_write");
    answers = self.vitAnswers(boot.importBridge(pyodide, PYTHON_DIR));
    stage = "ready";
    self.postMessage({ kind: "ready" });
  }

  // (the page says the first failure only; "ready" after one changes nothing there)
  function report(error) {
    if (stage === "ready") return;
    // Files download in parallel with other stages (Python starts as soon as its data file is
    // in, maybe before the .wasm's 404 is seen; the explorer's files load with NumPy): a missing
    // file names what it belongs to, not the stage the worker had reached.
    var text = summary(error);
    var what = /\/(py|pycore)\/|py-files\.json/.test(text) ? "explorer"
      : /\/numpy\.(data|js)\b/.test(text) ? "numpy"
      : /\/vendor\/\S*: HTTP [45]\d\d/.test(text) ? "runtime"
      : stage;
    console.error("[vit boot] " + what + ":", error);
    // a missing file is fixed by a complete copy of the site; a Python error in the explorer
    // is a bug that no copying fixes
    var missingFile = what !== "explorer" || /HTTP [45]\d\d/.test(text);
    self.postMessage({
      kind: "fail",
      message: TROUBLE[what] + " (" + text + ")." + (missingFile ? boot.FIX : ""),
    });
  }

  // Pyodide's loaders throw some failures (a missing package file) from their own callbacks,
  // outside any promise here: they are the boot's failures too, in the stage they stopped.
  self.addEventListener("error", function (event) {
    if (stage === "ready") return;
    event.preventDefault(); // said once, by report, not again as the worker's uncaught error
    report(event.error || event.message);
  });
  self.addEventListener("unhandledrejection", function (event) {
    if (stage === "ready") return;
    event.preventDefault();
    report(event.reason);
  });

  boot.forwardViolations(function (violation) { self.postMessage({ kind: "blocked", violation: violation }); });
  self.onmessage = function (event) { self.vitWorker.reply(answers, event.data); };
  boot.watchMissing(/\/(vendor|py|pycore)\/|py-files\.json/, report);
  // A worker has a policy of its own (its response's header): whether it may compile
  // WebAssembly is asked here, at once. WebKit reports no violation event for a refused
  // compile in a worker, and Pyodide then fails without saying why.
  if (boot.wasmRefused()) {
    self.postMessage({ kind: "blocked", violation: boot.WASM_REFUSED });
    return;
  }
  start(params.get("index"), params.get("files")).catch(report);
})();
