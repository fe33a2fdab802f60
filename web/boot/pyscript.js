// Boot glue of the PyScript host. build.py inserts, after js/host.js (so window.vitHost exists):
// core.css, preloads of Pyodide's big files, <script type="py" src="py/main.py"
// config="pyscript.json"> and this script (defer) with data-core = the URL of PyScript's core.js.
// It reports progress until web/py/main.py takes over (NumPy, the explorer, vitHost.ready), and
// turns a runtime that cannot start into a plain message instead of a blank page.
(function () {
  "use strict";
  var host = window.vitHost;
  var script = document.currentScript;
  var core = new URL(script.getAttribute("data-core") || "vendor/pyscript/core.js",
                     document.baseURI).href;
  var settled = false; // main.py (or this script) has called ready or fail
  ["ready", "fail"].forEach(function (name) {
    var call = host[name];
    host[name] = function () {
      settled = true;
      return call.apply(host, arguments);
    };
  });
  var FIX = " The site's files may be incomplete: rebuild it with `python build.py` and copy " +
            "all of dist/, then reload the page.";

  function fail(text) {
    if (!settled) host.fail(text);
  }

  function firstLine(e) {
    return String((e && e.message) || e).split("\n")[0];
  }

  if (location.protocol === "file:") {
    fail("This page needs a web server: Python cannot start from a file:// address. In the " +
         "site's folder run `python3 -m http.server`, then open http://localhost:8000/.");
    return;
  }
  host.status("runtime", "Downloading PyScript and Python (Pyodide 314, about 13 MB)…");

  // The interpreter's big downloads are over: Python is starting now.
  function whenDownloaded(names, callback) {
    if (!window.PerformanceObserver) return;
    var seen = {};
    var observer = new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (entry) {
        names.forEach(function (n) { if (entry.name.slice(-n.length) === n) seen[n] = true; });
      });
      if (names.every(function (n) { return seen[n]; })) {
        observer.disconnect();
        callback();
      }
    });
    try { observer.observe({ type: "resource", buffered: true }); } catch (e) { /* no hint */ }
  }

  // A file of the runtime or of the explorer that the server does not have (HTTP 404 and the
  // like) stops the boot, sometimes without any error event (a missing .wasm just hangs):
  // the browser's resource timing reports every response's status, so watch that.
  if (window.PerformanceObserver) {
    var missing = new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (entry) {
        if (entry.responseStatus >= 400 && /\/(vendor|py|pycore)\/|pyscript\.json/.test(entry.name)) {
          fail("The Python runtime could not be downloaded (" + entry.name + ": HTTP " +
               entry.responseStatus + ")." + FIX);
        }
      });
      if (settled) missing.disconnect();
    });
    try { missing.observe({ type: "resource", buffered: true }); } catch (e) { /* no watch */ }
  }

  // Until the page is handed over, an uncaught error means the runtime did not start.
  window.addEventListener("error", function (event) {
    var target = event.target;
    var url = target && target !== window && (target.src || target.href);
    if (url && /pyscript|pyodide|main\.py/.test(url)) {
      fail("The Python runtime could not be downloaded (" + url + " is missing)." + FIX);
    } else if (!url && /pyscript|pyodide/.test(event.filename || "")) {
      fail("Python could not start (" + firstLine(event.error || event.message) + ")." + FIX);
    }
  }, true);
  window.addEventListener("unhandledrejection", function (event) {
    fail("Python could not start (" + firstLine(event.reason) + ")." + FIX);
  });
  // PyScript finished running main.py; if it neither handed over nor failed, say so.
  document.addEventListener("py:done", function () {
    fail("The explorer's start-up script (py/main.py) did not run." + FIX);
  });

  // Starting Python keeps the main thread busy for seconds: start PyScript only once the page
  // has run its own scripts and painted the first status (the downloads are already running).
  function start() {
    whenDownloaded(["pyodide.asm.wasm", "python_stdlib.zip"], function () {
      if (!settled) host.status("python", "Starting Python 3.14…");
    });
    import(core).catch(function (e) {
      fail("PyScript could not be loaded (" + firstLine(e) + ")." + FIX);
    });
  }
  var started = false;
  function once() {
    if (!started) { started = true; start(); }
  }
  function painted() {
    requestAnimationFrame(function () { setTimeout(once, 0); });
    setTimeout(once, 300); // background tabs get no animation frames
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", painted);
  else painted();
})();
