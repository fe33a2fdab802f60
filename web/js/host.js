// The one meeting point between a runtime host and the page.
//
// build.py puts a host's boot glue into index.html (PyScript + Pyodide 314, or the offline
// Pyodide 0.17 fallback). Whatever the host, its glue reports through three calls:
//   vitHost.status(stage, text, fraction)  progress while the runtime boots (stage: "runtime" |
//                                "python" | "numpy" | "explorer"; fraction, when known: how much
//                                of the boot's downloads has arrived, 0 to 1), shown in the page
//   vitHost.ready(bridge)        once NumPy and pycore are imported: an object whose
//                                call(request) resolves to web/py/bridge.py's answer, with the
//                                matrices it names attached (js/answers.js makes it where
//                                Python runs: the fallback host's worker, the PyScript page)
//   vitHost.fail(message)        the runtime could not start; message is plain words for a person
// and finds shared helpers in vitHost.boot (download and missing-file watches, first paint).
// Calls made before the page's own script has loaded are queued, so load order never matters.
(function () {
  "use strict";
  var queue = [];
  var sink = null;
  function send(kind, args) {
    if (sink) sink(kind, args);
    else queue.push([kind, args]);
  }
  // What every host's boot glue (web/boot/*.js) needs, in one place.
  var tools = {
    FIX: " The site's files may be incomplete: rebuild it with `python build.py` and copy all " +
         "of dist/, then reload the page.",
    // callback() once every named file has downloaded (resource timing): Python is starting.
    whenDownloaded: function (names, callback) {
      if (!self.PerformanceObserver) return;
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
    },
    // onMissing(error) (error.status: the HTTP status) for the first response with HTTP status
    // >= 400 whose URL matches `pattern`: a missing runtime file can stop the boot without any
    // error event (a missing .wasm just hangs), but resource timing reports every status.
    watchMissing: function (pattern, onMissing) {
      if (!self.PerformanceObserver) return;
      var observer = new PerformanceObserver(function (list) {
        list.getEntries().forEach(function (entry) {
          if (entry.responseStatus >= 400 && pattern.test(entry.name)) {
            observer.disconnect();
            var error = new Error(entry.name + ": HTTP " + entry.responseStatus);
            error.status = entry.responseStatus;
            onMissing(error);
          }
        });
      });
      try { observer.observe({ type: "resource", buffered: true }); } catch (e) { /* no watch */ }
    },
    // Starting Python keeps the main thread busy for seconds: resolves once the page has run its
    // own scripts and painted its first status (downloads already run in parallel, preloaded).
    afterFirstPaint: function () {
      return new Promise(function (resolve) {
        var started = false;
        function start() { if (!started) { started = true; resolve(); } }
        function painted() {
          requestAnimationFrame(function () { setTimeout(start, 0); });
          setTimeout(start, 300); // background tabs get no animation frames
        }
        if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", painted);
        else painted();
      });
    },
  };
  // `self`: the page's window, or the fallback host's worker, which uses only `boot`.
  self.vitHost = {
    boot: tools,
    status: function (stage, text, fraction) { send("status", [stage, text, fraction]); },
    ready: function (bridge) { send("ready", [bridge]); },
    fail: function (message) { send("fail", [String(message)]); },
    // The page calls this once; queued calls are replayed in order.
    connect: function (handler) {
      sink = handler;
      var pending = queue;
      queue = [];
      pending.forEach(function (item) { handler(item[0], item[1]); });
    },
  };
})();
