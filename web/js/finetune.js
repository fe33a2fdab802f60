// The "Fine-tune the head" panel: labels, training settings, Step / Play / Reset, the loss
// curve (#loss-curve, data[0].y = the correct head's loss per step, step 0 first), the
// side-by-side curves of the mistaken heads (#compare-curves) and their reading. Every number
// and sentence comes from Python (pycore/explorer/finetune.py; js/protocol.js: FineTune); this
// file binds the controls and draws the curves.
//
// Play sends "train" requests of several steps each, one after the other, each drawn before the
// next is sent. A round's time is mostly the redraw (every heatmap of the page), whatever the
// number of steps, so the batch asked for is sized from the last round to keep about
// STEPS_PER_SECOND: on a fast machine a few steps per redraw, on a slow or busy one more. Python
// takes only the steps that fit in about 0.2 s of work (at ViT-B/16 size one to five), so that
// Pause or an edit waits for at most one such request, and says how many it took
// (finetune.trained.taken): that is what Play counts. The section reports the rate reached in
// data-steps-per-second (benchmarks/finetune_bench.py).

import { component } from "./components.js";
import { scrubField } from "./scrub.js";
import { cssColour, holdHeight, inkColour, onColourScheme, setData, setHidden, setText, setValue } from "./dom.js";
import * as share from "./share.js";
import { TICK_LABELS_STAY } from "./heatmaps.js";
import { DIGITS_PRESET, FINETUNE_PRESET, MAX_RUN_STEPS, PANEL_IDS } from "./shared.js";

const STEPS_PER_SECOND = 30; // Play's pace; benchmarks/finetune_bench.py holds it to at least 20
const MAX_BATCH = 100;
const COLOURS = { correct: "#2156a5", softmax_inside: "#c2410c", no_layernorm: "#7c3aed", bias: "#15803d" };
const $ = (id) => document.getElementById(id);

// A chart is redrawn only when what it shows changed: most edits leave both curves as they
// were (no run yet, or the same run), and an unchanged Plotly.react still lays the chart out again.
const drawn = new Map(); // id -> JSON of the traces and layout on screen
function plot(id, traces, layout) {
  const text = JSON.stringify([traces, layout]);
  if (drawn.get(id) === text && $(id).data) return Promise.resolve($(id));
  drawn.set(id, text);
  holdHeight($(id), layout.height);
  return window.Plotly.react(id, traces, layout, { displayModeBar: false, responsive: true })
    .catch((err) => { drawn.delete(id); throw err; });
}

// While Play runs, each chart is redrawn at most every CHART_EVERY_MS, the two in turn: a
// Plotly.react of a chart of a thousand steps holds the main thread for tens of ms, and both in
// every step's redraw made tasks of hundreds of ms (the page could not scroll or take a key).
// The newest curves wait for their turn; Pause draws them at once.
const CHART_EVERY_MS = 500;
const waiting = new Map(); // id -> {traces, layout, timer}
const lastAt = new Map(); // id -> when it was last drawn

function plotSoon(id, traces, layout, offset) {
  const queued = waiting.get(id);
  if (queued) {
    Object.assign(queued, { traces, layout });
    return Promise.resolve($(id));
  }
  const due = Math.max((lastAt.get(id) || 0) + CHART_EVERY_MS, performance.now() + offset);
  const entry = { traces, layout };
  entry.timer = setTimeout(() => drawWaiting(id), due - performance.now());
  waiting.set(id, entry);
  return Promise.resolve($(id));
}

function drawWaiting(id) {
  const entry = waiting.get(id);
  if (!entry) return Promise.resolve();
  clearTimeout(entry.timer);
  waiting.delete(id);
  lastAt.set(id, performance.now());
  return plot(id, entry.traces, entry.layout).catch(console.error);
}

class FineTunePanel {
  // io: {call(request) -> answer, render(answer, t0) -> promise, alert(text), clear(), stepsLater()}
  // (bindFineTune, once Python is ready)
  constructor() {
    this.io = null;
    this.section = null; // the last FineTune section (js/protocol.js)
    this.playing = false;
    this.typing = null; // the label input being typed in, and its text when entered
    this.root = $(PANEL_IDS.finetune);
    // the curves' axes in the new scheme's ink
    onColourScheme(() => {
      if (this.section) Promise.all([this.drawLoss(this.section), this.drawCompare(this.section)]).catch(console.error);
    });
  }

  bind() {
    $("ft-step").addEventListener("click", () => this.step());
    $("ft-play").addEventListener("click", () => (this.playing ? this.pause() : this.play()));
    $("ft-reset").addEventListener("click", () => { this.pause(); this.request({ op: "train_reset" }); });
    $("ft-export").addEventListener("click", () => this.exportRun());
    $("ft-load-means").addEventListener("click", () => this.loadPreset({ op: "preset", name: FINETUNE_PRESET, seed: 0 }));
    $("ft-load-digits").addEventListener("click", () => this.loadDigits());
    for (const [id, name] of [["ft-lr", "lr"], ["ft-scale", "input_scale"]]) {
      $(id).addEventListener("change", (e) => this.setting(name, e.target.value, e.target));
      $(id).addEventListener("keydown", (e) => { if (e.key === "Escape") this.showSettings(true); });
      scrubField($(id), (text) => this.setting(name, text, $(id)));
    }
    $("ft-optimizer").addEventListener("change", (e) => this.setting("optimizer", e.target.value, e.target));
    $("ft-start").addEventListener("change", (e) => this.setting("start", e.target.value, e.target));
    const labels = $("ft-labels");
    labels.addEventListener("focusin", (e) => {
      if (e.target.matches("input")) this.typing = { input: e.target, before: e.target.value };
    });
    labels.addEventListener("input", (e) => this.label(e.target, false));
    labels.addEventListener("change", (e) => this.label(e.target, true));
    labels.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.typing && this.typing.input === e.target) {
        e.target.value = this.typing.before; // the label it had when the person began typing
        this.label(e.target, true);
      }
    });
    labels.addEventListener("focusout", () => { this.typing = null; });
    this.digitsData = fetch("digits.json").then((r) => (r.ok ? r.json() : null)).catch(() => null);
    this.digitsData.then((d) => {
      const ok = Boolean(d && d.available && d.finetune);
      $("ft-load-digits").disabled = !ok;
      if (!ok) setText($("ft-digits-note"), `The real-feature preset needs the held-out digits: ${(d && d.reason) || "digits.json could not be read"}.`);
    });
  }

  // ---- requests

  async request(request, t0 = performance.now()) {
    this.busy(1);
    try {
      return await this.answer(request, t0);
    } finally {
      this.busy(-1);
    }
  }

  // <section id="finetune" data-busy>: "true" while a request of the panel is being answered
  // or drawn (tests and benchmarks wait for "false").
  busy(delta) {
    this.pending = (this.pending || 0) + delta;
    setData(this.root, "busy", this.pending > 0 ? "true" : "false");
  }

  async answer(request, t0) {
    const res = await this.io.call(request);
    const answered = performance.now();
    if (!res.ok) {
      this.refused(res.error);
      return res;
    }
    this.io.clear();
    setHidden($("ft-error"), true);
    await this.io.render(res, t0);
    // where a round's time goes (Python's answer, then the redraw), for benchmarks
    setData(this.root, "lastAnswerMs", (answered - t0).toFixed(1));
    setData(this.root, "lastRedrawMs", (performance.now() - answered).toFixed(1));
    return res;
  }

  // A refusal changed nothing: say so where it happened, and show the settings as they are.
  refused(error) {
    this.io.alert(error.message);
    setText($("ft-error"), error.message);
    setHidden($("ft-error"), false);
    this.showSettings(true);
  }

  async step() {
    this.pause();
    await this.train(1);
  }

  async train(n) {
    const request = { op: "train", n, steps: this.io.stepsLater() };
    const run = this.section && this.section.run;
    if (this.playing && run) request.run = run.id;
    if (this.playing) request.link = "later"; // written once Play pauses (js/share.js)
    const res = await this.request(request);
    return res;
  }

  // Play: rounds of train requests until Pause, a refusal, the run's last step or its
  // convergence (Python says when: finetune.run.converged, in the status too). Each Play is
  // one loop: a loop whose Play was paused (a setting changed, then Play went on) ends.
  async play() {
    const id = (this.playId = (this.playId || 0) + 1);
    this.playing = true;
    this.setPlaying(true);
    let n = 2;
    let steps = 0;
    const start = performance.now();
    const mine = () => this.playing && this.playId === id;
    while (mine()) {
      const run = this.section && this.section.run;
      if (run && (run.steps >= MAX_RUN_STEPS || (steps && run.converged))) break;
      const t = performance.now();
      const res = await this.train(n);
      if (!res.ok || !mine()) break;
      const trained = res.finetune && res.finetune.trained;
      steps += trained ? trained.taken : n;
      const took = performance.now() - t;
      n = Math.max(2, Math.min(MAX_BATCH, Math.ceil((STEPS_PER_SECOND * took) / 1000)));
      const rate = (steps * 1000) / (performance.now() - start);
      setData(this.root, "stepsPerSecond", rate.toFixed(1));
      await new Promise((resolve) => requestAnimationFrame(resolve)); // let the page breathe
    }
    if (this.playId === id) this.pause();
  }

  // A new session (js/components.js, reset): Play ends without drawing the curves it left
  // waiting, a label being typed in is forgotten, and the refusal marks and message go; the
  // reset's answer then draws the panel as a new session has it.
  reset() {
    this.playId = (this.playId || 0) + 1; // a Play loop waiting for its answer ends there
    this.playing = false;
    this.setPlaying(false);
    for (const [id, entry] of waiting) {
      clearTimeout(entry.timer);
      waiting.delete(id);
    }
    this.typing = null;
    this.section = null;
    for (const id of ["ft-lr", "ft-scale", "ft-optimizer", "ft-start"]) $(id).removeAttribute("aria-invalid");
    setText($("ft-error"), "");
    setHidden($("ft-error"), true);
    for (const key of ["stepsPerSecond", "lastAnswerMs", "lastRedrawMs"]) delete this.root.dataset[key];
  }

  pause() {
    this.playing = false;
    this.setPlaying(false);
    for (const id of [...waiting.keys()]) drawWaiting(id);
  }

  setPlaying(on) {
    const button = $("ft-play");
    button.setAttribute("aria-pressed", String(on));
    setText(button, on ? "Pause" : "Play");
    setData(this.root, "playing", on ? "true" : "false");
  }

  // A setting changed during Play: the run ends there (Python says so in the status) and Play
  // goes on with a new run under the new setting.
  async setting(name, value, input) {
    const playing = this.playing;
    this.pause();
    const res = await this.request({ op: "train_set", name, value });
    input.setAttribute("aria-invalid", String(!res.ok));
    if (playing && res.ok) this.play();
  }

  async label(input, commit) {
    this.busy(1);
    try {
      await this.labelAnswer(input, commit);
    } finally {
      this.busy(-1);
    }
  }

  async labelAnswer(input, commit) {
    const b = Number(input.dataset.b);
    const res = await this.io.call({ op: "label", index: [b], text: input.value, commit });
    if (!res.ok) {
      this.refused(res.error);
      return;
    }
    const error = res.error;
    input.setAttribute("aria-invalid", String(Boolean(error && !error.incomplete)));
    setData(input, "state", !error ? "valid" : error.incomplete ? "pending" : "invalid");
    if (error && !error.incomplete) {
      this.io.alert(error.message);
      setText($("ft-error"), error.message);
      setHidden($("ft-error"), false);
    } else {
      this.io.clear();
      setHidden($("ft-error"), true);
    }
    if (commit && error) input.value = String(res.value); // left with a bad label: the one in effect
    if (this.playing) this.pause();
    await this.io.render(res, performance.now());
  }

  async loadPreset(request) {
    this.pause();
    await this.request(request);
  }

  async loadDigits() {
    const d = await this.digitsData;
    if (!d || !d.finetune) return;
    await this.loadPreset({ op: "preset", name: DIGITS_PRESET, seed: 0,
                            digits: { train: d.finetune.train, held_out: d.finetune.held_out } });
  }

  async exportRun() {
    const res = await this.io.call({ op: "export", format: "training" });
    this.io.clear();
    if (res.ok) share.openExport(res.export);
    else this.refused(res.error);
  }

  // ---- what the answer's section shows

  /** @param {import("./protocol.js").FineTune} s */
  show(s) {
    this.section = s;
    if (s.run === null && this.playing) this.pause();
    this.showLabels(s);
    this.showSettings();
    setText($("ft-status"), s.status);
    setText($("ft-start-note"), s.start_note);
    setText($("ft-reading"), s.reading || "Press Step or Play: the four heads' curves appear here, with what they show.");
    setText($("ft-why"), s.why);
    setHidden($("ft-gradient-note"), !s.gradient_note);
    setText($("ft-gradient-note"), s.gradient_note || "");
    const held = s.held_out;
    setHidden($("ft-held-out"), !held);
    setText($("ft-held-out"), held ? held.text : "");
    setData(this.root, "runSteps", String(s.run ? s.run.steps : 0));
    return Promise.all([this.drawLoss(s), this.drawCompare(s)]);
  }

  showLabels(s) {
    const host = $("ft-labels");
    const B = s.labels.length;
    if (host.children.length !== B) {
      host.replaceChildren();
      for (let b = 0; b < B; b++) {
        const item = document.createElement("label");
        item.className = "ft-label";
        const name = document.createElement("span");
        name.textContent = `b=${b}`;
        const input = document.createElement("input");
        Object.assign(input, { type: "text", inputMode: "numeric", autocomplete: "off", spellcheck: false });
        input.dataset.b = String(b);
        input.setAttribute("aria-label", `Label of sample ${b} (class 0 to ${s.classes - 1})`);
        const pred = document.createElement("span");
        pred.className = "ft-pred";
        item.append(name, input, pred);
        host.append(item);
      }
    }
    for (let b = 0; b < B; b++) {
      const item = host.children[b];
      const input = item.children[1];
      if (!(this.typing && this.typing.input === input)) {
        setValue(input, String(s.labels[b]));
        input.removeAttribute("aria-invalid");
        delete input.dataset.state;
      }
      input.setAttribute("aria-label", `Label of sample ${b} (class 0 to ${s.classes - 1})`);
      const right = s.predicted[b] === s.labels[b];
      setText(item.children[2], `${right ? "✓" : "✗"} ${s.predicted[b]}`);
      item.children[2].title = `predicted class ${s.predicted[b]}`;
      setData(item, "right", right ? "true" : "false");
    }
  }

  // The controls show the settings in effect, unless being typed in (after a refusal: always).
  showSettings(force = false) {
    const s = this.section;
    if (!s) return;
    const fmt = (x) => String(Number(x.toPrecision(8)));
    for (const [id, value] of [["ft-lr", fmt(s.settings.lr)], ["ft-scale", fmt(s.settings.input_scale)],
                               ["ft-optimizer", s.settings.optimizer], ["ft-start", s.settings.start]]) {
      const el = $(id);
      if (force || document.activeElement !== el || el.tagName === "SELECT") setValue(el, value);
    }
  }

  drawLoss(s) {
    const run = s.run;
    const x = run ? run.loss.map((_, i) => i) : [];
    const traces = [
      { x, y: run ? run.loss.slice() : [], name: "loss (cross-entropy)", mode: "lines", line: { color: COLOURS.correct } },
      { x, y: run ? run.accuracy.map((a) => 100 * a) : [], name: "accuracy (%)", mode: "lines", yaxis: "y2",
        line: { color: "#6b7280", dash: "dot" } },
    ];
    if (s.held_out && s.held_out.curve.length) {
      traces.push({ x: s.held_out.curve.map((p) => p[0]), y: s.held_out.curve.map((p) => 100 * p[1]),
                    name: "held-out accuracy (%)", mode: "lines+markers", yaxis: "y2", line: { color: "#15803d" } });
    }
    const layout = this.lossLayout(!run, run ? run.steps : 0);
    return this.playing ? plotSoon("loss-curve", traces, layout, 0) : plot("loss-curve", traces, layout);
  }

  drawCompare(s) {
    const run = s.run;
    const traces = run ? run.compare.map((c) => ({
      x: c.loss.map((_, i) => i), y: c.loss.slice(), name: c.name, mode: "lines",
      line: { color: COLOURS[c.head], dash: c.head === "correct" ? "solid" : "dash" },
    })) : [];
    const layout = this.layout("Four heads, one start", "loss (softmax once)", !run, run ? run.steps : 0);
    return this.playing ? plotSoon("compare-curves", traces, layout, CHART_EVERY_MS / 2)
      : plot("compare-curves", traces, layout);
  }

  // The loss curve's: the loss on the left axis, the accuracies in % on the right.
  lossLayout(empty, steps) {
    const layout = this.layout("Loss, step by step", "loss", empty, steps);
    layout.yaxis2 = { title: { text: "accuracy %" }, overlaying: "y", side: "right", range: [0, 100], showgrid: false,
                      zeroline: false, color: layout.font.color, ticklabeloverflow: TICK_LABELS_STAY };
    return layout;
  }

  // An empty chart (no run yet) shows its axes without numbers: two tick labels would meet
  // in its corner.
  // Steps are whole numbers: ticks 1, 2, 5, 10, 20... apart, about eight of them. The grid is
  // in the page's --line colour (bright white on a dark page otherwise).
  layout(title, yTitle, empty, steps = 0) {
    const ink = inkColour();
    const grid = cssColour("--line", "#d9dde5");
    const dtick = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].find((d) => d * 8 >= steps) || 1000;
    return {
      title: { text: title, x: 0, xanchor: "left", font: { size: 13 } },
      height: 320, margin: { l: 50, r: 50, t: 34, b: 80 },
      xaxis: { title: { text: "step" }, color: ink, showticklabels: !empty, tick0: 0, dtick,
               tickformat: "d", gridcolor: grid, zerolinecolor: grid, ticklabeloverflow: TICK_LABELS_STAY },
      yaxis: { title: { text: yTitle }, color: ink, showticklabels: !empty, gridcolor: grid,
               zerolinecolor: grid, ticklabeloverflow: TICK_LABELS_STAY },
      legend: { orientation: "h", y: -0.3 },
      paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      font: { family: "system-ui, sans-serif", size: 11, color: ink },
      uirevision: "finetune",
    };
  }
}

const panel = new FineTunePanel();

// The first line chart a visit draws costs Plotly two to three times a later one (its line code
// runs for the first time), a long task in Play's first round (docs/performance.md, "Play").
// Once the page is ready and idle, a throwaway chart like the panel's is drawn out of sight and
// removed.
export function warmCharts() {
  const idle = window.requestIdleCallback || ((run) => setTimeout(run, 0));
  idle(() => {
    const box = document.createElement("div");
    box.setAttribute("aria-hidden", "true");
    box.style.cssText = "position: fixed; left: -10000px; top: 0; width: 600px; visibility: hidden";
    document.body.append(box);
    const layout = panel.lossLayout(false, 10);
    const x = [0, 1, 2];
    const traces = [{ x, y: [1, 0.5, 0.2], mode: "lines" },
                    { x, y: [10, 50, 90], mode: "lines+markers", yaxis: "y2", line: { dash: "dot" } }];
    window.Plotly.react(box, traces, layout, { displayModeBar: false, staticPlot: true })
      .catch(() => {}) // a warm-up only: the page's own charts say their own errors
      .finally(() => { window.Plotly.purge(box); box.remove(); });
  }, { timeout: 2000 });
}

/** The panel's controls, once Python is ready (io: see FineTunePanel). */
export function bindFineTune(io) {
  panel.io = io;
  panel.bind();
}

component("finetune", { draw: (s) => panel.show(s), reset: () => panel.reset() });
