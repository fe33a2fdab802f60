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

import { drawHeatmap, clearHeatmap, setClassLabels } from "./heatmaps.js";
import * as linked from "./linked.js";
import * as panels from "./panels.js";
import { writeLink } from "./share.js";

export class Renderer {
  // client: the bridge the host handed over (js/host.js); null until Python is ready.
  constructor(client, { onShape, grids, onDigit, onWalk, onFinetune }) {
    this.client = client;
    this.onShape = onShape;
    this.onDigit = onDigit; // the real-ViT panel (js/digits.js), given the answer's "digit"
    this.onWalk = onWalk; // the walk-through (js/walkthrough.js), given the answer's "walk"
    this.onFinetune = onFinetune; // the fine-tuning panel (js/finetune.js): draws its curves
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
  // ones replace, patched ones are copied with the new cells (a new array, so that Plotly and
  // the heatmaps' change check see a new z).
  absorb(res) {
    for (const [name, m] of Object.entries(res.matrices || {})) this.store.set(name, m);
    for (const [name, cells] of Object.entries(res.patched || {})) {
      const m = this.store.get(name);
      if (!m) continue;
      const data = m.data.slice();
      for (const [i, j, value] of cells) data[i * m.cols + j] = value;
      this.store.set(name, { rows: m.rows, cols: m.cols, data });
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
      // The link once the figures are drawn (docs/interface.md: it is not a redraw): writing the
      // address costs a layout of the page, which the figures need not wait for.
      if (job.res.link) writeLink(job.res.link, this.client);
    }
  }

  // Returns when the last redraw ended (lastRenderMs).
  async redraw(job) {
    const res = job.res;
    if (res.shape) this.onShape(res.shape);
    // Plotly first: it measures the page as it draws, and every DOM change made before it
    // (grids, tables, equations) would make it lay the whole page out again.
    panels.prepare(res);
    if (res.labels) setClassLabels(res.labels.classes);
    linked.prepare(res); // the top-k table opens or closes the logits heatmap's box: before it is drawn
    const draws = [];
    for (const id of job.hide) if (!(id in job.heatmaps)) clearHeatmap(id);
    for (const [id, spec] of Object.entries(job.heatmaps)) {
      const m = this.store.get(spec.matrix);
      if (m) draws.push(drawHeatmap(id, spec, m));
    }
    for (const [name, spec] of Object.entries(job.grids)) {
      const m = this.store.get(spec.matrix);
      if (m) this.grids[name].setMatrix(m);
    }
    for (const [name, grid] of Object.entries(this.grids)) {
      const matrix = name === "w" ? "W_head" : "input";
      const cells = job.patched[matrix];
      if (cells && !(name in job.grids)) grid.patch(this.store.get(matrix), cells);
    }
    panels.render(res);
    linked.render(res);
    if ("digit" in res && this.onDigit) this.onDigit(res.digit);
    if (res.finetune && this.onFinetune) draws.push(this.onFinetune(res.finetune));
    await Promise.all(draws);
    // after the redraws, whose Plotly.react would otherwise race its outlines
    if ("walk" in res && this.onWalk) await this.onWalk(res.walk);
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
