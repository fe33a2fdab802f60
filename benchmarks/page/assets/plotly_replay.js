// Replays the explorer's own Plotly.react calls, captured by instrument.js after two consecutive
// edits, and times them. Used by benchmarks/page_bench.py in the Plotly floor page (on divs of
// its own) and, as a diagnostic, inside the explorer itself (on the explorer's divs), which tells
// apart the cost of Plotly in the explorer's larger document from the cost of everything else.
(() => {
  "use strict";

  function decodeMatrix(m) {
    if (!m) return null; // the trace had no z
    const text = atob(m.b64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    return { rows: m.rows, cols: m.cols, typedRows: m.typedRows, flat: new Float64Array(bytes.buffer) };
  }

  // New array objects every time, shaped like the explorer's: rows as views of one new
  // Float64Array (or plain arrays, if that is what the explorer passed).
  function freshRows(m) {
    const flat = m.flat.slice();
    const rows = new Array(m.rows);
    for (let i = 0; i < m.rows; i++) {
      const row = flat.subarray(i * m.cols, (i + 1) * m.cols);
      rows[i] = m.typedRows ? row : Array.from(row);
    }
    return rows;
  }

  class PlotlyReplay {
    // panels: [{id, versions: [{traces, layout, config, zs}]}] in the explorer's call order;
    // elements: the divs to draw them into, in the same order.
    constructor(panels, elements) {
      this.panels = panels.map((p, i) => ({
        el: elements[i],
        versions: p.versions.map((v) => Object.assign({}, v, { zs: v.zs.map(decodeMatrix) })),
      }));
      this.k = 0;
    }

    // One round: everything is prepared before the clock starts; then all reacts are started
    // before any is awaited, as the explorer does. Returns {ms, reactMs, frameMs}: from before
    // the first call to all resolved, the part spent inside the react calls themselves, and
    // from before the first call until the next frame was produced.
    async step() {
      const k = this.k++;
      const calls = this.panels.map((p) => {
        const v = p.versions[k % p.versions.length];
        const traces = JSON.parse(v.traces);
        traces.forEach((trace, i) => { if (v.zs[i]) trace.z = freshRows(v.zs[i]); });
        return [p.el, traces, JSON.parse(v.layout), JSON.parse(v.config)];
      });
      let reactMs = 0;
      const t0 = performance.now();
      const pending = calls.map((args) => {
        const t = performance.now();
        const result = Plotly.react(...args);
        reactMs += performance.now() - t;
        return result;
      });
      await Promise.all(pending);
      const ms = performance.now() - t0;
      // Then, as for the explorer, until the next frame has been produced (instrument.js).
      const frameAt = await new Promise((resolve) => window.__bench.afterNextFrame(resolve));
      return { ms, reactMs, frameMs: frameAt - t0 };
    }
  }

  window.PlotlyReplay = PlotlyReplay;
})();
