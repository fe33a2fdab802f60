// Talks to web/py/bridge.py: JSON requests in and out, matrices as float64 buffers.
//
// The matrices cross from WASM memory with getBuffer (zero-copy), then are copied once with
// slice(), because a later allocation in Python may grow and detach the WASM memory under a view.

export function makeClient(bridge) {
  return {
    call(request) {
      return JSON.parse(bridge.dispatch(JSON.stringify(request)));
    },
    // Returns {rows, cols, data: Float64Array, row(i): Float64Array view of row i}.
    matrix(key) {
      const proxy = bridge.matrix(key);
      let buffer = null;
      try {
        buffer = proxy.getBuffer("f64");
        const [rows, cols] = buffer.shape;
        if (!buffer.c_contiguous) throw new Error(`matrix ${key} is not C-contiguous`);
        const data = buffer.data.slice(buffer.offset, buffer.offset + rows * cols);
        return {
          rows, cols, data,
          row: (i) => data.subarray(i * cols, (i + 1) * cols),
        };
      } finally {
        if (buffer) buffer.release();
        proxy.destroy();
      }
    },
  };
}

// Rows of a matrix as an array of row views: what Plotly takes as heatmap z (typed arrays are
// accepted as rows, so nothing is converted element by element).
export function rowsOf(m) {
  const out = new Array(m.rows);
  for (let i = 0; i < m.rows; i++) out[i] = m.row(i);
  return out;
}
