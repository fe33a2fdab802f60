// The one meeting point between a runtime host and the page.
//
// build.py puts a host's boot glue into index.html (PyScript + Pyodide 314, or the offline
// Pyodide 0.17 fallback). Whatever the host, its glue reports through three calls:
//   vitHost.status(stage, text)  progress while the runtime boots (stage: "runtime" | "python"
//                                | "numpy" | "explorer"), shown in the page
//   vitHost.ready(bridge)        the Python module web/py/bridge.py, as a proxy, once NumPy
//                                and pycore are importable
//   vitHost.fail(message)        the runtime could not start; message is plain words for a person
// Calls made before the page's own script has loaded are queued, so load order never matters.
(function () {
  "use strict";
  var queue = [];
  var sink = null;
  function send(kind, args) {
    if (sink) sink(kind, args);
    else queue.push([kind, args]);
  }
  window.vitHost = {
    status: function (stage, text) { send("status", [stage, text]); },
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
