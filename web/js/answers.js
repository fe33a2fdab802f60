// The worker's side of the crossing, where Python runs in a worker of the explorer's own (the
// fallback host's, the one file's): web/py/bridge.py's answer(request) with the matrices it
// carries attached, as {rows, cols, data: Float64Array}, and the page's "call" and "warm"
// messages answered (js/host.js, boot.workerLink, is the page's side; boot/fallback-worker.js
// lists the messages). On the PyScript host py/worker.py does the same in Python, from the
// same bridge.answer.
//
// A classic script, not a module, because a worker can only importScripts it; it defines
// self.vitAnswers(bridge) and self.vitWorker. The matrices leave WASM memory with getBuffer
// (zero-copy) and are copied once with slice(): a later allocation in Python may grow, and
// detach, WASM memory.
(function (scope) {
  "use strict";

  // A float64, C-contiguous 2-D array's proxy, copied out (and the proxy released).
  function read(proxy, key) {
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
  // matrices Python says it carries: bridge.answer's (text, {name: array}).
  // practice: a warm-up's request (web/py/bridge.py), answered in a session of its own.
  function answer(bridge, requestJSON, practice) {
    var out = bridge.answer(requestJSON, Boolean(practice));
    var arrays = null;
    try {
      var res = JSON.parse(out.get(0));
      arrays = out.get(1);
      res.matrices = {};
      var names = Array.from(arrays); // a dict's proxy iterates over its keys
      names.forEach(function (key) { res.matrices[key] = read(arrays.get(key), key); });
      return res;
    } finally {
      if (arrays) arrays.destroy();
      out.destroy();
    }
  }

  scope.vitAnswers = function (bridge) {
    return {
      answer: function (request) { return answer(bridge, JSON.stringify(request)); },
      // `edits` practice edits, crossing as the page's own do (bridge.warm_up); the
      // milliseconds they took.
      warmUp: function (edits) {
        return bridge.warm_up(edits, function (requestJSON) { answer(bridge, requestJSON, true); });
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
      } catch (err) { // bridge.answer turns Python's errors into answers: this is the crossing
        scope.postMessage({ kind: "answer", id: m.id, error: String((err && err.message) || err) });
        return true;
      }
      var buffers = Object.keys(res.matrices).map(function (k) { return res.matrices[k].data.buffer; });
      scope.postMessage({ kind: "answer", id: m.id, answer: res }, buffers);
      return true;
    },
  };
})(self);
