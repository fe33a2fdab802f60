// Turns answers from Python into redraws, one at a time. Answers that arrive while a redraw is
// running are merged and drawn together once it ends, so fast typing never queues stale frames.
//
// The page reports each completed cycle (redrawn, and its link in the URL) in <html data-renders>
// and the milliseconds from the newest edit it contains to the end of its last redraw in
// <html data-last-render-ms> (docs/interface.md: the link is not a redraw). The
// build-time first view drawn while Python boots (app.js) is not a recompute: it counts in neither.

import { drawHeatmap, clearHeatmap } from "./heatmaps.js";
import * as panels from "./panels.js";
import { writeUrl, deferLink, followLink } from "./share.js";

export class Renderer {
  // client: the bridge the host handed over (js/host.js); null until Python is ready.
  constructor(client, { onShape, grids }) {
    this.client = client;
    this.onShape = onShape;
    this.grids = grids;
    this.pending = null;
    this.running = null;
  }

  // Returns a promise that resolves once this answer is on screen and its link in the URL.
  schedule(res, t0, { preview = false } = {}) {
    if (!this.pending) {
      this.pending = { res: {}, heatmaps: {}, hide: new Set(), grids: {}, matrices: {}, t0, counted: false };
      this.pending.done = new Promise((resolve) => { this.pending.resolve = resolve; });
    }
    const job = this.pending;
    job.t0 = Math.max(job.t0, t0);
    job.counted = job.counted || !preview;
    merge(job, res);
    if (!this.running) this.running = this.loop();
    return job.done;
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
    const res = job.res;
    if (res.shape) this.onShape(res.shape);
    // The link: in the answer, asked for now (Python spells it out while Plotly draws; the
    // cycle ends once it is in the URL), or once typing pauses (a large state).
    let link = null;
    if (res.fragment) writeUrl(res.fragment);
    else if (res.fragment_follows) link = this.client.call({ op: "fragment" }).then(followLink);
    else if (res.fragment_deferred) deferLink(this.client);
    // Plotly first: it measures the page as it draws, and every DOM change made before it
    // (grids, tables, equations) would make it lay the whole page out again.
    panels.prepare(res);
    const draws = [];
    for (const id of job.hide) if (!(id in job.heatmaps)) clearHeatmap(id);
    for (const [id, spec] of Object.entries(job.heatmaps)) {
      draws.push(drawHeatmap(id, spec, rowsOf(job.matrices[spec.matrix])));
    }
    for (const [name, spec] of Object.entries(job.grids)) {
      this.grids[name].setMatrix(job.matrices[spec.matrix]);
    }
    panels.render(res);
    await Promise.all(draws);
    // The last redraw ends here (lastRenderMs). The cycle ends once the link is in the URL too:
    // its answer usually waits behind the frame that shows these redraws.
    const drawnAt = performance.now();
    if (link) await link;
    return drawnAt;
  }
}

// Later answers win, section by section; heatmaps, grids and their matrices accumulate.
function merge(job, res) {
  for (const [key, value] of Object.entries(res)) {
    if (key === "heatmaps" || key === "grids" || key === "matrices") Object.assign(job[key], value);
    else if (key === "hide") value.forEach((id) => { job.hide.add(id); delete job.heatmaps[id]; });
    else job.res[key] = value;
  }
}

// Rows of a matrix ({rows, cols, data: Float64Array}) as views: what Plotly takes as heatmap z
// (typed arrays are accepted as rows, so nothing is converted element by element).
function rowsOf(m) {
  const out = new Array(m.rows);
  for (let i = 0; i < m.rows; i++) out[i] = m.data.subarray(i * m.cols, (i + 1) * m.cols);
  return out;
}
