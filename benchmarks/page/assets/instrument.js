// Installed by benchmarks/page_bench.py (page.add_init_script) into every page it opens: the
// explorer and both floor pages alike, so whatever this costs, it costs everywhere. It runs
// before any of the page's own scripts and only records timestamps (performance.now(), i.e. ms
// since navigation start); it never changes what a page does.
(() => {
  "use strict";
  const now = () => performance.now();
  const bench = (window.__bench = {
    marks: {},        // milestone name -> time of its first occurrence
    reacts: [],       // one record per Plotly.react call: {id, start, returned, resolved}
    purges: [],       // ids passed to Plotly.purge
    katexMs: 0,       // time spent inside katex.render since the last reset
    inputAt: null,    // time of the last `input` event (capture phase, before the page sees it)
    capture: false,   // when true, Plotly.react also keeps its arguments, for the Plotly floor
    captured: {},     // element id -> arguments of its last react while `capture` was on
  });
  const mark = (name) => { if (!(name in bench.marks)) bench.marks[name] = now(); };
  bench.mark = mark;

  // The readiness signals live on <html>, which does not exist yet when this runs: observe the
  // whole document. A MutationObserver fires in the microtask right after the attribute is set,
  // so the time is the page's own moment of readiness, not the next poll of the test driver.
  new MutationObserver(() => {
    const ds = document.documentElement.dataset;
    if (ds.ready === "true") mark("ready");
    if (ds.bootFailed === "true") mark("bootFailed");
    if (ds.renders !== bench.lastRenders) {
      bench.lastRenders = ds.renders;
      afterNextFrame((t) => { bench.frameAt = t; });
    }
  }).observe(document, {
    subtree: true, attributes: true, attributeFilter: ["data-ready", "data-boot-failed", "data-renders"],
  });

  // Calls back once the next frame has been produced: a task posted from requestAnimationFrame
  // runs after that frame's style, layout and paint. This shows work a redraw leaves for the
  // browser (relayout of the page), which the page's own lastRenderMs does not include.
  bench.frameAt = null;
  function afterNextFrame(callback) {
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => callback(now());
      channel.port2.postMessage(null);
    });
  }
  bench.afterNextFrame = afterNextFrame;

  document.addEventListener("DOMContentLoaded", () => mark("domContentLoaded"));
  window.addEventListener("input", () => { bench.inputAt = now(); }, true);

  // Libraries publish themselves with `window.X = ...` (host.js, Plotly's and KaTeX's UMD
  // wrappers). A setter on window sees that moment, which is also when their script finished
  // evaluating, and lets us wrap the few functions whose timing we want.
  function onAssign(name, hook) {
    let value;
    Object.defineProperty(window, name, {
      configurable: true,
      enumerable: true,
      get() { return value; },
      set(v) {
        value = v;
        try { hook(v); } catch (err) { console.warn("[page_bench] could not instrument " + name, err); }
      },
    });
  }

  // The runtime host's progress calls (web/js/host.js): when each boot stage began. The bridge
  // handed to the page is passed on wrapped, so that the time from each request to its answer
  // (Python, plus the trip to and from the fallback host's worker) is known.
  onAssign("vitHost", (host) => {
    for (const kind of ["status", "ready", "fail"]) {
      const original = host[kind];
      if (typeof original !== "function") continue;
      host[kind] = function (...args) {
        mark(kind === "status" ? "status:" + args[0] : "host:" + kind);
        if (kind === "ready") args[0] = timedBridge(args[0]);
        return original.apply(this, args);
      };
    }
  });

  bench.pythonMs = 0; // time from each request to its answer, summed since the last reset
  bench.answerAt = null; // when the first answer since the last reset reached the page
  bench.workerMs = 0;    // of pythonMs, the time the host's worker spent answering
  // What crossed between the page and Python since the last reset: requests (each is one message
  // there and one back), and the answers' size: their JSON and the bytes of their matrices.
  bench.traffic = { calls: 0, requestBytes: 0, jsonBytes: 0, matrixBytes: 0 };
  bench.resetTraffic = () => { bench.traffic = { calls: 0, requestBytes: 0, jsonBytes: 0, matrixBytes: 0 }; };
  function timedBridge(bridge) {
    if (!bridge || typeof bridge.call !== "function") return bridge;
    return {
      warmUp: bridge.warmUp && ((edits) => bridge.warmUp(edits)), // practice (js/runtime/warmup.js): not counted
      call(request) {
        const t = now();
        bench.traffic.calls += 1;
        bench.traffic.requestBytes += JSON.stringify(request).length;
        return bridge.call(request).then((answer) => {
          const at = now();
          if (bench.answerAt === null) bench.answerAt = at; // the first answer after the reset
          bench.pythonMs += at - t;
          bench.workerMs += (answer && answer.worker_ms) || 0;
          if (answer) {
            const matrices = answer.matrices || {};
            let bytes = 0;
            for (const m of Object.values(matrices)) bytes += (m && m.data && m.data.byteLength) || 0;
            bench.traffic.matrixBytes += bytes;
            bench.traffic.jsonBytes += JSON.stringify(answer, (k, v) => (k === "matrices" ? undefined : v)).length;
          }
          return answer;
        });
      },
    };
  }

  // Main-thread tasks over 50 ms (the browser's long tasks): what a page that runs Python on
  // its main thread costs the person waiting (no scrolling, no typing meanwhile).
  bench.longTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) bench.longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: "longtask", buffered: true });
  } catch (e) { /* no long-task timing in this browser */ }

  onAssign("katex", (katex) => {
    mark("katexEvaluated");
    const render = katex.render;
    katex.render = function (...args) {
      const t = now();
      try { return render.apply(this, args); } finally { bench.katexMs += now() - t; }
    };
  });

  onAssign("Plotly", (Plotly) => {
    mark("plotlyEvaluated");
    const react = Plotly.react;
    Plotly.react = function (gd, data, layout, config) {
      const rec = { id: typeof gd === "string" ? gd : gd && gd.id, start: now(), returned: null, resolved: null };
      if (bench.capture) keep(rec.id, gd, data, layout, config);
      const result = react.apply(this, arguments);
      rec.returned = now();
      bench.reacts.push(rec);
      // Registered before the caller's own await, so `resolved` is set before the caller resumes.
      Promise.resolve(result).then(() => { rec.resolved = now(); }, () => { rec.resolved = now(); rec.failed = true; });
      return result;
    };
    const purge = Plotly.purge;
    Plotly.purge = function (gd) {
      bench.purges.push(typeof gd === "string" ? gd : gd && gd.id);
      return purge.apply(this, arguments);
    };
  });

  // Copies of a react call's arguments as they were passed (Plotly later writes computed
  // ranges into the layout, so it is serialized now). z is kept by reference: Plotly does not
  // write into it, and serializing 768,000 numbers here would slow the edit being captured.
  function keep(id, gd, data, layout, config) {
    bench.captured[id] = {
      gd: typeof gd === "string" ? document.getElementById(gd) : gd,
      traces: JSON.stringify(data, (key, value) => (key === "z" ? undefined : value)),
      zs: data.map((trace) => trace.z),
      layout: JSON.stringify(layout || {}),
      config: JSON.stringify(config || {}),
    };
  }

  // The captured calls in a form page.evaluate can carry: z as base64 of its float64 bytes.
  bench.exportCaptured = () => Object.entries(bench.captured).map(([id, c]) => {
    const box = c.gd.getBoundingClientRect();
    return {
      id,
      width: box.width,
      fullWidth: c.gd._fullLayout && c.gd._fullLayout.width,
      fullHeight: c.gd._fullLayout && c.gd._fullLayout.height,
      traces: c.traces,
      layout: c.layout,
      config: c.config,
      zs: c.zs.map(encodeMatrix),
    };
  });

  function encodeMatrix(z) {
    if (!z) return null; // a trace with no z (a bar chart, a curve): its data is in `traces`
    const rows = z.length;
    const cols = rows ? z[0].length : 0;
    const flat = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) flat.set(z[i], i * cols);
    const bytes = new Uint8Array(flat.buffer);
    let text = "";
    for (let i = 0; i < bytes.length; i += 0x8000) {
      text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    }
    return { rows, cols, typedRows: rows > 0 && ArrayBuffer.isView(z[0]), b64: btoa(text) };
  }
})();
