// Boot glue of the offline fallback host: Pyodide 0.17 (Python 3.8, NumPy 1.17), all files in
// the site itself. build.py inserts, after js/host.js (so window.vitHost exists),
//   <script src="boot/fallback.js" data-index-url="vendor/pyodide-0.17/" data-python-dir="/home/..."
//           data-downloads='{file: bytes}'></script>
// (data-python-dir: the folder on sys.path the explorer's Python files go to, PYTHON_DIR in
// buildtools/assembly/hosts.py.)
// Python runs in a Web Worker (boot/fallback-worker.js, which also says what its messages are):
// this script starts it at once, passes its progress and failures on to the page, and hands the
// page a bridge whose call(request) posts the request to the worker and resolves to its answer.
(function () {
  "use strict";
  var host = window.vitHost;
  var script = /** @type {HTMLScriptElement} */ (document.currentScript);
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
  // (vitHost says the first failure only, and no ready after it)
  var fail = host.fail;
  // The worker's own script missing (or broken) never reaches its message handler.
  host.boot.watchMissing(/\/boot\/fallback-worker\.js/, function (error) {
    fail("The Python runtime could not be downloaded (" + scriptURL + ": HTTP " + error.status + ")." +
         host.boot.FIX);
  });
  worker.onerror = function (event) {
    event.preventDefault();
    var entry = /** @type {PerformanceResourceTiming} */ (performance.getEntriesByName(workerURL).pop());
    if (entry && entry.responseStatus >= 400) {
      fail("The Python runtime could not be downloaded (" + scriptURL + ": HTTP " +
           entry.responseStatus + ")." + host.boot.FIX);
    } else {
      fail("Python could not start (" + (event.message || scriptURL + " did not load") + ")." +
           host.boot.FIX);
    }
  };

  worker.onmessage = host.boot.workerLink(function (message) { worker.postMessage(message); }, fail,
                                          host.ready);
})();
