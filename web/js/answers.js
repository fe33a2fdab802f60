// In the fallback host's worker (and the one file's), this turns the module web/py/bridge.py into
// what the worker answers the page with: answer(request) returns Python's answer with the
// matrices it carries attached, as {rows, cols, data: Float64Array}. (The PyScript host does the same in Python:
// web/py/worker.py.)
//
// A classic script, not a module, because a worker can only importScripts it; it defines
// self.vitAnswers(bridge). The matrices leave WASM memory with getBuffer (zero-copy) and are
// copied once with slice(): a later allocation in Python may grow, and detach, WASM memory.
(function (scope) {
  "use strict";

  function read(bridge, key) {
    var proxy = bridge.matrix(key);
    var buffer = null;
    try {
      buffer = proxy.getBuffer("f64");
      var rows = buffer.shape[0];
      var cols = buffer.shape[1];
      if (!buffer.c_contiguous) throw new Error("matrix " + key + " is not C-contiguous");
      return { rows: rows, cols: cols, data: buffer.data.slice(buffer.offset, buffer.offset + rows * cols) };
    } finally {
      if (buffer) buffer.release();
      proxy.destroy();
    }
  }

  // One request in, one answer out (synchronously, in the thread that runs Python), with the
  // matrices Python says it carries (pycore.explorer.protocol.matrix_names).
  // practice: a warm-up's request (web/py/bridge.py), answered in a session of its own.
  function answer(bridge, requestJSON, practice) {
    var res = JSON.parse(bridge.dispatch(requestJSON, Boolean(practice)));
    res.matrices = {};
    JSON.parse(bridge.last_matrix_names()).forEach(function (key) { res.matrices[key] = read(bridge, key); });
    return res;
  }

  scope.vitAnswers = function (bridge) {
    return {
      answer: function (request) { return answer(bridge, JSON.stringify(request)); },
      // `edits` practice edits, answered as the page's own are; the milliseconds they took.
      warmUp: function (edits) {
        var t0 = performance.now();
        for (var k = 0; k < edits; k++) answer(bridge, bridge.practice_request(), true);
        return performance.now() - t0;
      },
    };
  };
})(self);
