// Turns answers from Python (js/protocol.js) into redraws, one at a time. Answers that arrive
// while a redraw is running are merged and drawn together once it ends, so fast typing never
// queues stale frames.
//
// The renderer holds every matrix the page has been sent (the store): an answer attaches the
// matrices the page lacks, and names the cells that changed in those it holds ("patched"), so a
// W_head edit at ViT-B/16 size sends one number back, not 768,000.
//
// The page reports each completed cycle (redrawn, and its link in the URL) in <html data-renders>
// and the milliseconds from the newest edit it contains to the end of its last redraw in
// <html data-last-render-ms> (docs/interface.md: the link is not a redraw). The build-time first
// view drawn while Python boots (app.js) is not a recompute: it counts in neither.

// Every other section of an answer is drawn by the component registered for its key
// (js/page/components.js).

import { reached } from "./components.js";
import { drawHeatmap, clearHeatmap } from "../heatmap/draw.js";
import * as panels from "../panels/text.js";

// Patched cells remembered per matrix: a heatmap further behind recolours all its cells.
const PATCH_LOG_MAX = 4096;
// The longest a redraw runs before it lets other tasks in (between two heatmaps), and the
// smallest heatmap that makes it do so: smaller ones take a few milliseconds each.
const SLICE_MS = 40;
const SLICE_CELLS = 20000;

export class Renderer {
  constructor({ grids }) {
    this.grids = grids; // {input, w}: the editors, and the matrix each shows
    this.store = new Map(); // matrix name -> {rows, cols, data: Float64Array}
    this.pending = null;
    this.running = null;
    panels.afterRender();
  }

  // Returns a promise that resolves once this answer is on screen and its link in the URL.
  schedule(res, t0, { preview = false } = {}) {
    this.absorb(res);
    if (!this.pending) {
      this.pending = { res: {}, heatmaps: {}, hide: new Set(), grids: {}, patched: {}, t0, counted: false };
      this.pending.done = new Promise((resolve) => { this.pending.resolve = resolve; });
    }
    const job = this.pending;
    job.t0 = Math.max(job.t0, t0);
    job.counted = job.counted || !preview;
    merge(job, res);
    if (!this.running) this.running = this.loop();
    return job.done;
  }

  // The answer's matrices into the store at once (a later answer may patch them): attached
  // ones replace; patched ones take the new cells in place (a 768,000-value W_head is not
  // copied for one cell), under a new version, each cell logged with the version that wrote it
  // so that a heatmap recolours only the cells it has not drawn yet (js/heatmap/bitmap.js).
  // Each patch makes a new store entry: what was drawn from the old one is seen as changed.
  absorb(res) {
    for (const [name, m] of Object.entries(res.matrices || {})) this.store.set(name, m);
    for (const [name, cells] of Object.entries(res.patched || {})) {
      const m = this.store.get(name);
      if (!m) continue;
      const log = m.log || [];
      let version = m.version || 0;
      for (const [i, j, value] of cells) {
        m.data[i * m.cols + j] = value;
        log.push([++version, i * m.cols + j]);
      }
      if (log.length > PATCH_LOG_MAX) log.splice(0, log.length - PATCH_LOG_MAX);
      this.store.set(name, { rows: m.rows, cols: m.cols, data: m.data, version, log });
    }
  }

  async loop() {
    while (this.pending) {
      const job = this.pending;
      this.pending = null;
      let drawnAt = null;
      try {
        drawnAt = await this.draw(job);
      } catch (err) {
        console.error(err);
      }
      const root = document.documentElement;
      if (job.counted) {
        root.dataset.lastRenderMs = ((drawnAt || performance.now()) - job.t0).toFixed(1);
        root.dataset.renders = String(Number(root.dataset.renders || 0) + 1);
      }
      job.resolve();
    }
    this.running = null;
    panels.afterRender();
  }

  async draw(job) {
    try {
      return await this.redraw(job);
    } finally {
      // What is not a redraw (the link, docs/interface.md: writing the address costs a layout
      // of the page, which the figures need not wait for), once the figures are drawn.
      for (const c of reached("settled", job.res)) c.settled(job.res[c.key], job.res);
    }
  }

  // Returns when the last redraw ended (lastRenderMs).
  async redraw(job) {
    const res = job.res;
    // A redraw with large heatmaps (a Play round at ViT-B/16 size colours 1.5 million cells and
    // may make a figure) is cut into tasks of about SLICE_MS between heatmaps, so that the page
    // still scrolls and takes keys. A redraw of small ones only stays one task, drawn in one
    // frame, even past SLICE_MS (WebKit's first mistake of a visit makes four figures): cut, it
    // would paint a frame with half its figures new, and end a frame later.
    const large = Object.values(job.heatmaps).some((spec) => {
      const m = this.store.get(spec.matrix);
      return m && m.rows * m.cols >= SLICE_CELLS;
    });
    let sliceStart = performance.now();
    const between = async () => {
      if (!large || performance.now() - sliceStart < SLICE_MS) return;
      await new Promise((resolve) => setTimeout(resolve, 0));
      sliceStart = performance.now();
    };
    // Plotly first: it measures the page as it draws, and every DOM change made before it
    // (grids, tables, equations) would make it lay the whole page out again; only what changes
    // the layout it measures comes before (the components' "before").
    for (const c of reached("before", res)) c.before(res[c.key], res);
    const draws = [];
    for (const id of job.hide) if (!(id in job.heatmaps)) clearHeatmap(id);
    for (const [id, spec] of Object.entries(job.heatmaps)) {
      const m = this.store.get(spec.matrix);
      if (!m) continue;
      await between();
      draws.push(drawHeatmap(id, spec, m));
    }
    await between();
    for (const [name, spec] of Object.entries(job.grids)) {
      const m = this.store.get(spec.matrix);
      if (m) this.grids[name].setMatrix(m);
    }
    for (const [name, grid] of Object.entries(this.grids)) {
      const matrix = name; // the grids are named as their matrices: "input", "W_head"
      const cells = job.patched[matrix];
      if (cells && !(name in job.grids)) grid.patch(this.store.get(matrix), cells);
    }
    for (const c of reached("draw", res)) draws.push(c.draw(res[c.key], res));
    await Promise.all(draws);
    // after the redraws, whose Plotly.react would otherwise race their outlines
    for (const c of reached("last", res)) await c.last(res[c.key], res);
    // a scrubbed cell's newest number, in the frame that shows its answer (js/grid/scrub.js: show)
    for (const grid of Object.values(this.grids)) grid.scrubber.flush();
    return performance.now(); // the last redraw ends here (lastRenderMs)
  }
}

// Later answers win, section by section; heatmaps, grids and patched cells accumulate.
function merge(job, res) {
  for (const [key, value] of Object.entries(res)) {
    if (key === "heatmaps" || key === "grids") Object.assign(job[key], value);
    else if (key === "patched") {
      for (const [name, cells] of Object.entries(value)) job.patched[name] = (job.patched[name] || []).concat(cells);
    } else if (key === "hide") value.forEach((id) => { job.hide.add(id); delete job.heatmaps[id]; });
    else if (key !== "matrices") job.res[key] = value;
  }
}
