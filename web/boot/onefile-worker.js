// The one-file page's Python, in a classic Web Worker started from a blob: URL (boot/onefile.js),
// after js/host.js and js/answers.js in the same blob. It runs the PyScript host's runtime
// (Pyodide 314, Python 3.14, NumPy 2.4) and the same bridge (web/py/bridge.py) without PyScript,
// whose module worker a page opened from a file may not start (docs/hosts.md, "The one file").
//
// Messages, page -> worker: {kind: "facts", facts, lock} (the file's manifest and Pyodide's lock
// file, first), {kind:
// "payload", name, text} (base64 of a gzip: "wasm", "stdlib", "numpy", "explorer"),
// then {kind: "call", id, request} and {kind: "warm", id, edits} as for boot/fallback-worker.js;
// worker -> page: status, started, ready, fail, blocked and answer, as for that worker.
//
// Pyodide's two modules follow this script in the worker's blob, made classic scripts by the
// build (buildtools/onefile/page.py), and the page puts them there: WebKit loads neither import() nor
// importScripts() of a blob: URL in a worker of a page opened from a file, while every engine
// runs the worker's own blob. Nothing is fetched: Pyodide's loader asks for its files with
// fetch() under an address that is no place (INDEX), answered here from the payloads.
// Pyodide 314 refuses to start in a classic worker: as its script runs, it asks whether
// importScripts runs a data: URL (which the file's policy refuses, a violation). It needs none
// of a classic worker's features here, its modules being in this blob: the answer is no.
self.importScripts = function () { throw new TypeError("not a classic worker"); };
(function () {
  "use strict";
  var boot = self.vitHost.boot;
  var summary = boot.summary;
  var INDEX = "https://vit-head-explorer.invalid/pyodide/";
  var AGAIN = " Download vit-head-explorer.html again (or copy it again, whole) and open the new copy.";
  var facts = null;
  var lockFile = null; // pyodide-lock.json, as text
  var stage = "runtime";
  var answers = null;
  var arrived = {}; // payload name -> promise of {path: Uint8Array}
  var waitingFor = {}; // payload name -> resolve
  var unpacked = 0;
  var WORKER_PAYLOADS = 4; // wasm, stdlib, numpy, explorer: the page keeps "runtime" and "page"

  function payload(name) {
    if (!arrived[name]) arrived[name] = new Promise(function (resolve) { waitingFor[name] = resolve; });
    return arrived[name];
  }
  function step(name, text, fraction) {
    stage = name;
    self.postMessage({ kind: "status", stage: name, text: text, fraction: fraction });
  }
  // base64 -> gzip -> the payload's files; a damaged or short payload is said in words
  function receive(name, text) {
    var expected = facts.payloads[name];
    boot.gunzipBase64(text).then(function (bytes) {
      if (bytes.byteLength !== expected.bytes) throw new Error(bytes.byteLength + " bytes, not " + expected.bytes);
      unpacked += 1;
      if (stage === "runtime" && unpacked < WORKER_PAYLOADS) {
        step("runtime", "Unpacking Python (Pyodide " + facts.pyodide + ")…", unpacked / WORKER_PAYLOADS);
      } else if (stage === "runtime") { // all in: what remains is Python starting
        step("python", "Starting Python " + facts.python + "…", 1);
      }
      payload(name);
      waitingFor[name](boot.unpack(bytes));
    }).catch(function (e) {
      report(new Error("This file is damaged: its " + name + " part could not be decompressed (" +
                       ((e && e.message) || e) + ")." + AGAIN), true);
    });
  }

  // Pyodide's loader fetches its WebAssembly, its standard library and nothing else (its lock
  // file is handed over): answered from the payloads, never from the network.
  var FILES = { "pyodide.asm.wasm": ["wasm", "application/wasm"],
                "python_stdlib.zip": ["stdlib", "application/zip"] };
  self.fetch = function (input) {
    var url = String((input && /** @type {Request} */ (input).url) || input);
    var name = url.indexOf(INDEX) === 0 ? url.slice(INDEX.length) : null;
    if (!name || !FILES[name]) {
      return Promise.reject(new Error("the one file has no " + url));
    }
    return payload(FILES[name][0]).then(function (files) {
      return new Response(files[name], { headers: { "Content-Type": FILES[name][1] } });
    });
  };

  async function start() {
    var pyodideModule = self.vitPyodide; // Pyodide's two scripts follow this one in the blob
    var pyodide = await pyodideModule.loadPyodide({
      indexURL: INDEX,
      createPyodideModule: pyodideModule.createPyodideModule,
      lockFileContents: lockFile,
      stdout: function () {}, stderr: function (line) { console.warn(line); },
    });
    self.postMessage({ kind: "started", version: pyodide.version });
    step("numpy", "Loading NumPy " + facts.numpy + "…");
    var numpy = await payload("numpy");
    pyodide.unpackArchive(numpy["numpy.zip"], "zip", { extractDir: facts.site_packages });
    var explorer = await payload("explorer");
    pyodide.unpackArchive(explorer["explorer.zip"], "zip", { extractDir: facts.python_dir });
    try {
      pyodide.runPython("import numpy");
    } catch (e) {
      throw new Error("NumPy could not be loaded (" + summary(e) + ")");
    }
    step("explorer", "Loading the explorer…");
    var bridge;
    try {
      bridge = boot.importBridge(pyodide, facts.python_dir);
    } catch (e) {
      throw new Error("The explorer's Python code could not be loaded (" + summary(e) + ")");
    }
    answers = self.vitAnswers(bridge);
    stage = "ready";
    self.postMessage({ kind: "ready" });
  }

  // damaged: the error says in words that the copy is damaged (what fails after is its echo).
  // The page says the first failure only; "ready" after one changes nothing there.
  function report(error, damaged) {
    if (stage === "ready") return;
    console.error("[vit one file] " + stage + ":", error);
    var text = (error && error.message) || String(error);
    self.postMessage({ kind: "fail", damaged: Boolean(damaged),
                       message: damaged || /^(NumPy|The explorer)/.test(text) ? text
                         : "Python could not start (" + summary(error) + ")." });
  }

  self.addEventListener("unhandledrejection", function (event) {
    if (stage === "ready") return;
    event.preventDefault();
    report(event.reason);
  });
  boot.forwardViolations(function (violation) { self.postMessage({ kind: "blocked", violation: violation }); });
  self.onmessage = function (event) {
    var m = event.data;
    if (m.kind === "facts") {
      facts = m.facts;
      lockFile = m.lock;
      if (boot.wasmRefused()) {
        self.postMessage({ kind: "blocked", violation: boot.WASM_REFUSED });
        return;
      }
      start().catch(function (e) { report(e); });
    } else if (m.kind === "payload") receive(m.name, m.text);
    else self.vitWorker.reply(answers, m);
  };
})();
