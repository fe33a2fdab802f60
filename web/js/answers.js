// In the fallback host's worker (and the one file's), this turns the module web/py/bridge.py into
// what the worker answers the page with: answer(request) returns Python's answer with the
// matrices it carries attached, as {rows, cols, data: Float64Array}. (The PyScript host does the same in Python:
// web/py/worker.py.) It also holds the worker's side of the page's messages, which both workers
// speak (boot/fallback-worker.js lists them; js/host.js, boot.workerLink, is the page's side).
//
// A classic script, not a module, because a worker can only importScripts it; it defines
// self.vitAnswers(bridge) and self.vitWorker. The matrices leave WASM memory with getBuffer (zero-copy) and are
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

  scope.vitWorker = {
    // A "call" or "warm" message of the page's, answered with {kind: "answer", id, answer}
    // (the answer's matrices' buffers transferred, not copied) or {kind: "answer", id, error};
    // false for a message of another kind. Python answers one request at a time, in the order
    // they came: the page merges answers that arrive while it draws.
    reply: function (answers, m) {
      if (m.kind === "warm") {
        scope.postMessage({ kind: "answer", id: m.id, answer: answers.warmUp(m.edits) });
        return true;
      }
      if (m.kind !== "call") return false;
      var res;
      var t0 = performance.now();
      try {
        res = answers.answer(m.request);
        res.worker_ms = performance.now() - t0; // for benchmarks/page_bench.py: Python's share
      } catch (err) { // bridge.dispatch turns Python's errors into answers: this is the crossing
        scope.postMessage({ kind: "answer", id: m.id, error: String((err && err.message) || err) });
        return true;
      }
      var buffers = Object.keys(res.matrices).map(function (k) { return res.matrices[k].data.buffer; });
      scope.postMessage({ kind: "answer", id: m.id, answer: res }, buffers);
      return true;
    },
    // The last line of a Python traceback (or the whole message), for a one-sentence summary.
    summary: function (error) {
      var text = String((error && error.message) || error).trim();
      var lines = text.split("\n").filter(function (l) { return l.trim(); });
      return lines.length ? lines[lines.length - 1].trim() : text;
    },
    // A Content-Security-Policy violation in the worker goes to the page ("blocked", as
    // vitHost.blocked takes it); a report-only policy blocked nothing.
    forwardViolations: function () {
      scope.addEventListener("securitypolicyviolation", function (event) {
        if (event.disposition === "report") return;
        scope.postMessage({ kind: "blocked", violation: scope.vitHost.boot.violation(event) });
      });
    },
  };
})(self);
