// Boot glue of the offline fallback host: Pyodide 0.17 (Python 3.8, NumPy 1.17), all files in
// the site itself. build.py inserts, after js/host.js (so window.vitHost exists),
//   <script src="boot/fallback.js" data-index-url="vendor/pyodide-0.17/" data-python-dir="/home/..."
//           data-downloads='{file: bytes}'></script>
// (data-python-dir: the folder on sys.path the explorer's Python files go to, PYTHON_DIR in
// buildtools/hosts.py.)
// Python runs in a Web Worker (boot/fallback-worker.js, which also says what its messages are):
// this script starts it at once, passes its progress and failures on to the page, and hands the
// page a bridge whose call(request) posts the request to the worker and resolves to its answer.
(function () {
  "use strict";
  var host = window.vitHost;
  var script = document.currentScript;
  var base = document.baseURI;
  var indexURL = new URL((script && script.getAttribute("data-index-url")) || "vendor/pyodide-0.17/", base).href;
  var scriptURL = new URL("fallback-worker.js", (script && script.src) || base).href;
  // The worker's parameters travel in its URL: it starts booting as soon as its script runs,
  // not when a message from this (by then busy) main thread reaches it.
  var workerURL = scriptURL + "?" + new URLSearchParams({
    index: indexURL, files: new URL("py-files.json", base).href,
    dir: (script && script.getAttribute("data-python-dir")) || "",
    sizes: (script && script.getAttribute("data-downloads")) || "{}" }).toString();

  // Without an origin (a file:// page, a sandboxed iframe) no worker can start: js/host.js
  // says why.
  if (host.unable) return;
  host.status("runtime", "Downloading Python (Pyodide 0.17, about 19 MB)…");

  var worker = new Worker(workerURL);
  host.started();
  var settled = false;
  function fail(message) {
    if (settled) return;
    settled = true;
    host.fail(message);
  }
  // The worker's own script missing (or broken) never reaches its message handler.
  host.boot.watchMissing(/\/boot\/fallback-worker\.js/, function (error) {
    fail("The Python runtime could not be downloaded (" + scriptURL + ": HTTP " + error.status + ")." +
         host.boot.FIX);
  });
  worker.onerror = function (event) {
    if (settled) return;
    event.preventDefault();
    var entry = performance.getEntriesByName(workerURL).pop();
    if (entry && entry.responseStatus >= 400) {
      fail("The Python runtime could not be downloaded (" + scriptURL + ": HTTP " +
           entry.responseStatus + ")." + host.boot.FIX);
    } else {
      fail("Python could not start (" + (event.message || scriptURL + " did not load") + ")." +
           host.boot.FIX);
    }
  };

  var waiting = new Map(); // request id -> {resolve, reject}
  var next = 0;
  function ask(message) {
    return new Promise(function (resolve, reject) {
      next += 1;
      waiting.set(next, { resolve: resolve, reject: reject });
      message.id = next;
      worker.postMessage(message);
    });
  }
  var bridge = {
    call: function (request) { return ask({ kind: "call", request: request }); },
    warmUp: function (edits) { return ask({ kind: "warm", edits: edits }); },
  };

  worker.onmessage = function (event) {
    var m = event.data;
    if (m.kind === "answer") {
      var w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error) w.reject(new Error(m.error));
      else w.resolve(m.answer);
    } else if (m.kind === "status") {
      if (!settled) host.status(m.stage, m.text, m.fraction);
    } else if (m.kind === "started") {
      document.documentElement.dataset.pyodide = m.version;
    } else if (m.kind === "fail") {
      fail(m.message);
    } else if (m.kind === "blocked") {
      host.blocked(m.violation); // the cause of what fails next: said even after a failure
    } else if (m.kind === "ready" && !settled) {
      settled = true;
      host.ready(bridge);
    }
  };
})();
