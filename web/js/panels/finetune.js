// The "Fine-tune the head" panel: labels, training settings, Step / Play / Reset, the loss
// curve (#loss-curve, data[0].y = the correct head's loss per step, step 0 first), the
// side-by-side curves of the mistaken heads (#compare-curves) and their reading. Every number
// and sentence comes from Python (pycore/explorer/finetune/panel.py; js/protocol.js: FineTune); this
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

import { component } from "../page/components.js";
import { calmly, hush, RESULT_TURN } from "../page/announce.js";
import { scrubField } from "../grid/scrub.js";
import { onColourScheme, setData, setHidden, setText, setValue } from "../page/dom.js";
import { drawLineChart } from "../figure/line-chart.js";
import { figureMenu, hideFigureMenu } from "../figure/menu.js";
import * as offscreen from "../page/offscreen.js";
import * as share from "../page/share.js";
import { DIGITS_PRESET, FINETUNE_PRESET, MAX_RUN_STEPS, PANEL_IDS } from "../shared.js";

// Where Play stopped is said once the page has drawn nothing for a second: heard with Orca, the
// status set at once was lost among the accessibility events of Play's last redraws and of the
// panels brought up to date after it (docs/accessibility.md, 4.1.3).
const sayStopped = calmly("ft-said", { quietMs: 1000, still: true });
const STEPS_PER_SECOND = 30; // Play's pace; benchmarks/finetune_bench.py holds it to at least 20
const MAX_BATCH = 100;
const PLAY_SAID_MS = 5000; // during Play the status is said at most this often (a calm rate)
const COLOURS = { correct: "#2156a5", softmax_inside: "#c2410c", no_layernorm: "#7c3aed", bias: "#15803d",
                  accuracy: "#6b7280" };
// Each compared head's own dash too, so that no two curves are told apart by colour alone
// (orange and green look alike to many: WCAG 1.4.1).
const DASH = { correct: "solid", softmax_inside: "dash", no_layernorm: "dot", bias: "dashdot" };
const $ = /** @type {ById} */ ((id) => document.getElementById(id));

class FineTunePanel {
  // io: the page {call(request) -> answer, render(answer, t0) -> promise, alert(text), clear(),
  // equationsLater()} (connect, once Python is ready)
  constructor() {
    this.io = null;
    this.section = null; // the last FineTune section (js/protocol.js)
    this.playing = false;
    this.typing = null; // the label input being typed in, and its text when entered
    this.root = $(PANEL_IDS.finetune);
    // the curves' axes in the new scheme's ink
    onColourScheme(() => {
      if (this.section) this.drawCurves(this.section);
    });
  }

  bind() {
    $("ft-step").addEventListener("click", () => this.step());
    $("ft-play").addEventListener("click", () => (this.playing ? this.pause() : this.play()));
    $("ft-reset").addEventListener("click", () => { this.pause(); this.request({ op: "train_reset" }); });
    $("ft-export").addEventListener("click", () => this.exportRun());
    $("ft-export-copy").addEventListener("click", () => this.exportRun(true));
    $("ft-load-means").addEventListener("click", () => this.loadPreset({ op: "preset", name: FINETUNE_PRESET, seed: 0 }));
    $("ft-load-digits").addEventListener("click", () => this.loadDigits());
    for (const [id, name] of /** @type {Array<["ft-lr" | "ft-scale", string]>} */ ([["ft-lr", "lr"], ["ft-scale", "input_scale"]])) {
      $(id).addEventListener("change", (e) => this.setting(name, /** @type {HTMLInputElement} */ (e.target).value, e.target));
      $(id).addEventListener("keydown", (e) => { if (e.key === "Escape") this.showSettings(true); });
      scrubField($(id), (text) => this.setting(name, text, $(id)));
    }
    $("ft-optimizer").addEventListener("change", (e) => this.setting("optimizer", /** @type {HTMLSelectElement} */ (e.target).value, e.target));
    $("ft-start").addEventListener("change", (e) => this.setting("start", /** @type {HTMLSelectElement} */ (e.target).value, e.target));
    const labels = $("ft-labels");
    labels.addEventListener("focusin", (e) => {
      const input = /** @type {HTMLInputElement} */ (e.target);
      if (input.matches("input")) this.typing = { input, before: input.value };
    });
    labels.addEventListener("input", (e) => this.label(e.target, false));
    labels.addEventListener("change", (e) => this.label(e.target, true));
    labels.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.typing && this.typing.input === e.target) {
        /** @type {HTMLInputElement} */ (e.target).value = this.typing.before; // the label it had when the person began typing
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
      const res = await this.answer(request, t0);
      this.announce();
      return res;
    } finally {
      this.busy(-1);
    }
  }

  // The panel's status, said after the panel's own actions only (an edit elsewhere changes the
  // status's loss too, and says its own result), and during Play at most once every
  // PLAY_SAID_MS, then once more when Play stops: <p id="ft-said">, the panel's one live region.
  announce(now = false) {
    const text = this.section && this.section.status;
    if (!text) return;
    hush(RESULT_TURN); // the panel's status is its action's one announcement, not the prediction
    const t = performance.now();
    if (this.playing && !now && t - (this.saidAt || -Infinity) < PLAY_SAID_MS) return;
    this.saidAt = t;
    if (now || this.stopping) {
      this.stopping = false;
      sayStopped(text); // where Play stopped: once the redraws are over
    } else {
      sayStopped.cancel(); // a Step pressed meanwhile: its own status, not where Play stopped
      setText($("ft-said"), text);
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
    const request = { op: "train", n, equations: this.io.equationsLater() };
    const run = this.section && this.section.run;
    if (this.playing && run) request.run = run.id;
    if (this.playing) {
      request.link = "later"; // written once Play pauses (js/page/share.js)
      // Panels out of view (the statistics and logits tables of every sample, ...) are brought
      // once Play pauses, or as one scrolls into view (js/page/offscreen.js); the panel's own
      // section is always asked for: Play reads its run.
      const later = offscreen.laterSections().filter((name) => name !== "finetune");
      if (later.length) request.later = later;
    }
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

  // A new session (js/page/components.js, reset): Play ends, a label being typed in is forgotten,
  // and the refusal marks and message go; the reset's answer then draws the panel as a new
  // session has it.
  reset() {
    this.playId = (this.playId || 0) + 1; // a Play loop waiting for its answer ends there
    this.playing = false;
    this.setPlaying(false);
    this.typing = null;
    this.section = null;
    this.stopping = false;
    sayStopped.cancel();
    for (const id of ["ft-lr", "ft-scale", "ft-optimizer", "ft-start"]) $(id).removeAttribute("aria-invalid");
    setText($("ft-error"), "");
    setHidden($("ft-error"), true);
    for (const key of ["stepsPerSecond", "lastAnswerMs", "lastRedrawMs"]) delete this.root.dataset[key];
  }

  pause() {
    const was = this.playing;
    this.playing = false;
    this.setPlaying(false);
    // where Play stopped, said once: now, or, while a round of steps is still being answered,
    // by that round once it is drawn (request: announce), with the step it really stopped at
    this.stopping = was; // said by announce(), now or by the round still being answered
    if (was && !this.pending) this.announce(true);
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

  // The run as NumPy code, downloaded (or copied), as the toolbar's exports are (js/page/share.js).
  exportRun(copy = false) {
    this.io.clear();
    const refused = (error) => this.refused(error);
    if (copy) share.copyExport("training", "the run's NumPy code", refused);
    else share.downloadExport("training", refused);
  }

  // ---- what the answer's section shows

  /** @param {import("../protocol.js").FineTune} s */
  show(s) {
    this.section = s;
    if (s.run === null && this.playing) this.pause();
    // no run (a new state, a link, a reset): the next Step's status is said even if it is the
    // one said before (the worked example's first step, loaded again); a cleared live region
    // says nothing
    if (s.run === null) setText($("ft-said"), "");
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
    showProbes(held && held.probes);
    setData(this.root, "runSteps", String(s.run ? s.run.steps : 0));
    this.drawCurves(s);
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
      const item = /** @type {HTMLElement} */ (host.children[b]);
      const input = /** @type {HTMLInputElement} */ (item.children[1]);
      if (!(this.typing && this.typing.input === input)) {
        setValue(input, String(s.labels[b]));
        input.removeAttribute("aria-invalid");
        delete input.dataset.state;
      }
      input.setAttribute("aria-label", `Label of sample ${b} (class 0 to ${s.classes - 1})`);
      const right = s.predicted[b] === s.labels[b];
      setText(item.children[2], `${right ? "✓" : "✗"} ${s.predicted[b]}`);
      /** @type {HTMLElement} */ (item.children[2]).title = `predicted class ${s.predicted[b]}`;
      setData(item, "right", right ? "true" : "false");
    }
  }

  // The controls show the settings in effect, unless being typed in (after a refusal: always).
  showSettings(force = false) {
    const s = this.section;
    if (!s) return;
    const fmt = (x) => String(Number(x.toPrecision(8)));
    /** @type {Array<["ft-lr" | "ft-scale" | "ft-optimizer" | "ft-start", string]>} */
    const fields = [["ft-lr", fmt(s.settings.lr)], ["ft-scale", fmt(s.settings.input_scale)],
                    ["ft-optimizer", s.settings.optimizer], ["ft-start", s.settings.start]];
    for (const [id, value] of fields) {
      const el = $(id);
      if (force || document.activeElement !== el || el.tagName === "SELECT") setValue(el, value);
    }
  }

  // The two charts (js/figure/line-chart.js), redrawn only when the run or its held-out curve moved.
  drawCurves(s) {
    const run = s.run;
    const key = run ? [run.id, run.steps, s.held_out ? s.held_out.curve.length : 0] : null;
    const x = run ? run.loss.map((_, i) => i) : [];
    /** @type {import("../figure/line-chart.js").LineTrace[]} */
    const traces = [
      { name: "loss (cross-entropy)", x, y: run ? run.loss.slice() : [], colour: COLOURS.correct },
      { name: "accuracy (%)", x, y: run ? run.accuracy.map((a) => 100 * a) : [], axis: "y2",
        colour: COLOURS.accuracy, dash: "dot" },
    ];
    if (s.held_out && s.held_out.curve.length) {
      traces.push({ name: "held-out accuracy (%)", x: s.held_out.curve.map((p) => p[0]),
                    y: s.held_out.curve.map((p) => 100 * p[1]), axis: "y2", colour: COLOURS.bias, markers: true });
    }
    drawLineChart($("loss-curve"), {
      key, title: "Loss, step by step", xTitle: "step", yTitle: "loss",
      y2: { title: "accuracy %", lo: 0, hi: 100 }, empty: !run, traces,
    });
    drawLineChart($("compare-curves"), {
      key, title: "Four heads, one start", xTitle: "step", yTitle: "loss (softmax once)", empty: !run,
      traces: run ? run.compare.map((c) => ({ name: c.name, x: c.loss.map((_, i) => i), y: c.loss.slice(),
                                             colour: COLOURS[c.head], dash: DASH[c.head] })) : [],
    });
    // "Download figure" on each (js/figure/menu.js), hidden while there is no step
    figureMenu($("loss-curve"));
    figureMenu($("compare-curves"));
  }
}

const panel = new FineTunePanel();

/** The panel's controls, once Python is ready (js/app.js: connect; page: see FineTunePanel). */
export function connect(page) {
  panel.io = page;
  panel.bind();
}

component("finetune", { draw: (s) => panel.show(s), reset: () => panel.reset() });

// The probe at every depth (pycore/explorer/finetune/digits.py, probes): its line, and each
// depth's held-out accuracy as a bar.
function showProbes(probes) {
  setHidden($("ft-probes"), !probes);
  if (!probes) {
    hideFigureMenu($("ft-probe-bars"));
    return;
  }
  setText($("ft-probes-text"), probes.text);
  const list = $("ft-probe-bars");
  if (list.children.length !== probes.depths.length) {
    list.replaceChildren(...probes.depths.map(() => {
      const item = document.createElement("li");
      const [name, bar, value] = ["top-name", "top-bar", "top-p"].map((cls) => {
        const span = document.createElement("span");
        span.className = cls;
        return span;
      });
      bar.append(document.createElement("span"));
      item.append(name, bar, value);
      return item;
    }));
  }
  probes.depths.forEach((depth, k) => {
    const [name, bar, value] = list.children[k].children;
    const percent = 100 * probes.held_out[k];
    setText(name, `\u2113 = ${depth}`);
    /** @type {HTMLElement} */ (bar.firstElementChild).style.width = `${percent.toFixed(1)}%`;
    setText(value, `${percent.toFixed(0)} %`);
  });
  figureMenu(list); // "Download figure" (js/figure/menu.js)
}
