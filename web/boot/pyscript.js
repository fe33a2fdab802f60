// Boot glue of the PyScript host. build.py inserts, after js/host.js (so window.vitHost exists):
// core.css, preloads of Pyodide's big files, js/answers.js, <script type="py" src="py/main.py"
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
    host[name] = function (arg) {
      settled = true;
      // main.py hands over the Python module bridge; the page takes it as js/answers.js makes it
      return call.call(host, name === "ready" ? window.vitAnswers(arg) : arg);
    };
  });
  var FIX = host.boot.FIX;

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

  // A file of the runtime or of the explorer that the server does not have (HTTP 404 and the
  // like) stops the boot, sometimes without any error event (a missing .wasm just hangs):
  // the browser's resource timing reports every response's status, so watch that.
  host.boot.watchMissing(/\/(vendor|py|pycore)\/|pyscript\.json/, function (error) {
    fail("The Python runtime could not be downloaded (" + error.message + ")." + FIX);
  });

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

  // Start PyScript once the page has painted its first status (see vitHost.boot.afterFirstPaint).
  host.boot.afterFirstPaint().then(function () {
    host.boot.whenDownloaded(["pyodide.asm.wasm", "python_stdlib.zip"], function () {
      if (!settled) host.status("python", "Starting Python 3.14…");
    });
    import(core).catch(function (e) {
      fail("PyScript could not be loaded (" + firstLine(e) + ")." + FIX);
    });
  });
})();
