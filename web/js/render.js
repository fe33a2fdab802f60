// Turns answers from Python into redraws, one at a time. Answers that arrive while a redraw is
// running are merged and drawn together once it ends, so fast typing never queues stale frames.
//
// The page reports each completed cycle in <html data-renders> and the milliseconds from the
// newest edit it contains to the end of its last redraw in <html data-last-render-ms>.

import { rowsOf } from "./bridge-client.js";
import { drawHeatmap, clearHeatmap } from "./heatmaps.js";
import * as panels from "./panels.js";
import { writeUrl, deferLink } from "./share.js";

export class Renderer {
  constructor(client, { onShape, grids }) {
    this.client = client;
    this.onShape = onShape;
    this.grids = grids;
    this.pending = null;
    this.running = null;
  }

  // Returns a promise that resolves once this answer is on screen.
  schedule(res, t0) {
    if (!this.pending) {
      this.pending = { res: {}, heatmaps: {}, hide: new Set(), grids: {}, t0 };
      this.pending.done = new Promise((resolve) => { this.pending.resolve = resolve; });
    }
    const job = this.pending;
    job.t0 = Math.max(job.t0, t0);
    merge(job, res);
    if (!this.running) this.running = this.loop();
    return job.done;
  }

  async loop() {
    while (this.pending) {
      const job = this.pending;
      this.pending = null;
      try {
        await this.draw(job);
      } catch (err) {
        console.error(err);
      }
      const root = document.documentElement;
      root.dataset.renders = String(Number(root.dataset.renders || 0) + 1);
      root.dataset.lastRenderMs = (performance.now() - job.t0).toFixed(1);
      job.resolve();
    }
    this.running = null;
    panels.afterRender();
  }

  async draw(job) {
    const res = job.res;
    if (res.shape) this.onShape(res.shape);
    if (res.fragment) writeUrl(res.fragment);
    else if (res.fragment_deferred) deferLink(this.client);
    const cache = new Map();
    const matrix = (key) => {
      if (!cache.has(key)) cache.set(key, this.client.matrix(key));
      return cache.get(key);
    };
    // Plotly first: it measures the page as it draws, and every DOM change made before it
    // (grids, tables, equations) would make it lay the whole page out again.
    panels.prepare(res);
    const draws = [];
    for (const id of job.hide) if (!(id in job.heatmaps)) clearHeatmap(id);
    for (const [id, spec] of Object.entries(job.heatmaps)) {
      draws.push(drawHeatmap(id, spec, rowsOf(matrix(spec.matrix))));
    }
    for (const [name, spec] of Object.entries(job.grids)) {
      this.grids[name].setMatrix(matrix(spec.matrix));
    }
    panels.render(res);
    await Promise.all(draws);
  }
}

// Later answers win, section by section; heatmaps and grids accumulate.
function merge(job, res) {
  for (const [key, value] of Object.entries(res)) {
    if (key === "heatmaps") Object.assign(job.heatmaps, value);
    else if (key === "grids") Object.assign(job.grids, value);
    else if (key === "hide") value.forEach((id) => { job.hide.add(id); delete job.heatmaps[id]; });
    else job.res[key] = value;
  }
}
