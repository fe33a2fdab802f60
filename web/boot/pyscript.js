// Boot glue of the PyScript host (a module script). build.py inserts, after js/host.js:
//   <script type="module" src="boot/pyscript.js" data-core="<PyScript's core.js>"></script>
// Python runs in a PyScript worker (PyWorker), so the page never freezes while Python starts or
// computes. The page calls it with `sync.dispatch`, which needs no SharedArrayBuffer and so no
// COOP/COEP headers: any static server will do. This script starts the worker, shows the boot's
// progress by bytes and its failures (vitHost.status / fail), and hands the page a bridge whose
// call(request) resolves to Python's answer with its matrices attached (see js/host.js).
//
// The worker runs py/worker.py with Pyodide 314 as boot/pyodide-worker.mjs loads it; NumPy is a
// PyScript package that Pyodide's loader checks against the sha256 in its lock file. This page
// also downloads the wheel itself, at once, to count its bytes and to check the sha256 the build
// pinned while the worker is busy starting Python (the worker's own download then comes from the
// browser's cache): a damaged wheel is reported in a moment, not after Python has started.
import { installMemoryIndexedDB } from "./memory-idb.js";

const host = window.vitHost;
const FIX = host.boot.FIX;
const script = document.querySelector("script[data-core]");
const site = new URL("./", document.baseURI);
const core = new URL(script.getAttribute("data-core") || "vendor/pyscript/core.js", site).href;

let settled = false; // ready or fail has been called
function fail(message) {
  if (settled) return;
  settled = true;
  // A worker import refused by the policy fails without a word on why: the page asks the policy
  // first (askWorkerPolicy), so that the alert names what stopped the boot, never a wrong cause.
  askWorkerPolicy().then((refused) => { if (!refused) host.fail(message); });
}
function firstLine(e) { return String((e && e.message) || e).split("\n")[0]; }
class BootError extends Error {} // a message for the person, already in plain words

// ---- progress: the worker's downloads and the wheel's, as one bar ---------------------------
const MB = host.boot.MB;
const counts = { runtime: { loaded: 0, total: 0, done: false }, wheel: { loaded: 0, total: 0, done: true } };
let pyodideVersion = "";
let after = null; // what the worker said Python is doing once its downloads were in
function show() {
  if (settled) return;
  const { runtime, wheel } = counts;
  if (!runtime.done || !wheel.done) {
    const loaded = runtime.loaded + wheel.loaded;
    const total = runtime.total + wheel.total;
    const what = wheel.total ? "Python and NumPy" : "Python";
    host.status("runtime", `Downloading ${what} (Pyodide ${pyodideVersion}): ${MB(loaded)} of ${MB(total)} MB`,
                total ? loaded / total : 0);
  } else if (after) {
    host.status(after.stage, after.text);
  }
}

// The worker's messages about its boot:
// {vitBoot: {bytes} | {stage, text} | {compiled} | {libraries} | {fail} | {blocked}}.
function onBootMessage(event) {
  const m = event.data && event.data.vitBoot;
  // A Content-Security-Policy violation in the worker (WebAssembly refused, say) is the cause of
  // whatever fails next, or of a boot that never ends: the page's alert says so, in any case.
  if (m && m.blocked) host.blocked(m.blocked); // the kit's form (vitHost.boot.violation)
  if (!m || settled) return;
  if (m.fail) fail(/Python code/.test(m.fail) || m.fail.endsWith(FIX) ? m.fail : m.fail + FIX);
  else if (m.bytes) { counts.runtime = m.bytes; show(); }
  else if (m.stage === "explorer") host.status(m.stage, m.text);
  else if (m.stage) { after = m; show(); }
  else if (m.libraries) document.documentElement.dataset.earlyLibraries = m.libraries; // for the tests
  // The worker no longer needs this thread to start (WebKit delivers a worker's downloads
  // through it): the page may evaluate Plotly.js now.
  if (m.compiled || m.stage || (m.bytes && m.bytes.done)) host.started();
}

// ---- the NumPy wheel: downloaded here, counted, and checked against its pinned sha256 ----------
async function fetchWheel(vit) {
  const url = new URL(vit.numpy_wheel.file, new URL(vit.pyodide_index, site)).href;
  const download = vit.downloads.find((d) => new URL(d.url, site).href === url);
  counts.wheel = { loaded: 0, total: (download && download.bytes) || 0, done: false };
  const response = await fetch(url).catch((e) => {
    throw new BootError(`NumPy could not be loaded (${url}: ${firstLine(e)}).${FIX}`);
  });
  if (!response.ok) throw new BootError(`NumPy could not be loaded (${url}: HTTP ${response.status}).${FIX}`);
  if (!counts.wheel.total) counts.wheel.total = Number(response.headers.get("Content-Length")) || 0;
  const parts = [];
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    counts.wheel.loaded += value.byteLength;
    show();
  }
  counts.wheel = { loaded: counts.wheel.loaded, total: counts.wheel.loaded, done: true };
  show();
  // crypto.subtle exists in secure contexts only (https, localhost); elsewhere, e.g. a classroom
  // server at http://192.168.x.y, Pyodide's loader still checks the wheel (browser integrity).
  if (!(window.crypto && crypto.subtle)) return;
  const bytes = await new Blob(parts).arrayBuffer();
  if (await host.boot.sha256hex(bytes) !== vit.numpy_wheel.sha256) {
    throw new BootError(`NumPy could not be loaded (${url} does not match the sha256 pinned for it: ` +
                        `the file is damaged or was replaced).${FIX}`);
  }
}

// ---- the worker ----------------------------------------------------------------------------
// pyscript.json, read; the wheel's download (fetchWheel) starts once it names the wheel.
async function readConfig() {
  const configURL = new URL("pyscript.json", site).href;
  const config = await fetch(configURL).then((r) => {
    if (!r.ok) throw new BootError(`The Python runtime could not be downloaded (${configURL}: HTTP ${r.status}).${FIX}`);
    return r.json();
  });
  if (!config.vit.numpy) throw new BootError(config.vit.no_numpy_message);
  pyodideVersion = config.vit.pyodide;
  // The whole download from the start (the worker reports its part once it runs).
  counts.runtime.total = config.vit.downloads.reduce(
    (sum, d) => sum + (d.url.endsWith(config.vit.numpy_wheel.file) ? 0 : d.bytes || 0), 0);
  fetchWheel(config.vit).catch((e) => fail(e instanceof BootError ? e.message : `NumPy could not be loaded (${firstLine(e)}).${FIX}`));
  return config;
}

async function start() {
  host.status("runtime", "Downloading PyScript…");
  installMemoryIndexedDB(); // see memory-idb.js: PyScript opens IndexedDB as core.js loads
  // PyScript's core loads while the config downloads (the page preloads its modules, see
  // buildtools/assembly/hosts.py's runtime_tags); the observers it starts are recorded from now on.
  const watching = observersOf(new URL("./", core).href);
  let config, pyscript;
  try {
    const loading = import(core).catch((e) => {
      throw new BootError(`PyScript could not be loaded (${core}: ${firstLine(e)}).${FIX}`);
    });
    loading.catch(() => {}); // said below, once the config is in
    config = await readConfig();
    pyscript = await loading;
    // PyScript registers its worker hooks once its plugins have loaded, and defines <py-script>
    // right after; a PyWorker made before then starts without the `pyscript` module.
    await customElements.whenDefined("py-script");
  } finally {
    watching.stop();
  }
  // PyScript rebuilds the JavaScript hooks its plugins register for a worker from their text,
  // with Function(), on this page and in the worker: that needs 'unsafe-eval', which the page's
  // Content-Security-Policy does not allow (buildtools/assembly/csp.py). The only such hook is
  // pyscript.fs's, which the explorer does not use; without hooks nothing is evaluated.
  for (const [name, set] of Object.entries(pyscript.hooks.worker)) {
    if (!name.startsWith("code")) set.clear(); // code* hooks are Python source, run as Python
  }
  // Keep the worker object: nothing else holds it until its first answer, and a worker whose
  // object was garbage-collected may be stopped while it compiles Python.
  pyscript.hooks.main.onWorker.add((wrap, xworker) => {
    /** @type {any} */ (start).worker = xworker;
    xworker.addEventListener("message", onBootMessage);
    xworker.addEventListener("error", (event) => fail(`Python could not start (${firstLine(event.error || event.message)}).${FIX}`));
  });
  // Relative URLs in the config are the site's, not the worker's (a blob: URL).
  const absolute = (url) => new URL(url, site).href;
  const files = {};
  for (const [url, path] of Object.entries(config.files)) files[absolute(url)] = path;
  const interpreter = absolute(config.interpreter);
  const worker = await pyscript.PyWorker(absolute("py/worker.py"), {
    config: { ...config, interpreter, files }, version: interpreter,
  });
  document.documentElement.dataset.pyodide = pyodideVersion;
  const call = async (request) => {
    const out = await worker.sync.dispatch(JSON.stringify(request));
    const res = JSON.parse(out.text);
    // py/worker.py's dispatch: small matrices share one array (each is copied out, so that
    // none keeps the others alive), large ones come in arrays of their own
    res.matrices = {};
    for (const [name, rows, cols, at] of JSON.parse(out.shapes)) {
      res.matrices[name] = { rows, cols, data: at === null ? out.large[name] : out.small.slice(at, at + rows * cols) };
    }
    res.worker_ms = out.worker_ms; // for benchmarks/page_bench.py: Python's share
    return res;
  };
  if (settled) return;
  settled = true;
  host.ready({ call, warmUp: (edits) => worker.sync.warm_up(edits) });
}

// A worker whose own imports were refused by the policy fails without a word on why: Firefox
// checks a module worker's imports against worker-src, and says so only in the worker, which
// the page cannot hear. So when the boot fails, the page asks the same question its boot asked:
// a module worker from a blob: URL (as PyScript's) imports one of the site's modules statically
// (as boot/pyodide-worker.mjs does; Firefox lets a dynamic import() through) and says it
// started. If it did not, and the module is there, served as JavaScript, the policy refused it:
// vitHost.blocked names the directive. Resolves to whether the policy was named, within
// ANSWER_MS whatever the browser does.
const ANSWER_MS = 2000;
function askWorkerPolicy() {
  const url = new URL("./memory-idb.js", import.meta.url).href;
  const refused = () => {
    host.blocked({ directive: "worker-src", blocked: url, source: "" });
    return true;
  };
  const servedAsScript = () => fetch(url).then(
    (r) => r.ok && /javascript|ecmascript/i.test(r.headers.get("Content-Type") || ""), () => false);
  const source = `import ${JSON.stringify(url)}; postMessage(true);`;
  const blob = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  return new Promise((resolve) => {
    let probe = null;
    let timer = 0;
    let answered = false;
    const answer = (named) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      if (probe) probe.terminate();
      URL.revokeObjectURL(blob);
      resolve(named);
    };
    const importFailed = () => servedAsScript().then((ok) => answer(!answered && ok && refused()));
    try {
      probe = new Worker(blob, { type: "module" });
    } catch (e) {
      answer(e && e.name === "SecurityError" ? refused() : false);
      return;
    }
    timer = setTimeout(() => answer(false), ANSWER_MS);
    probe.addEventListener("message", () => answer(false));
    probe.addEventListener("error", importFailed);
  });
}

// PyScript's core watches the whole document (a MutationObserver: added nodes, attributes, the
// whole subtree) for <script type="py"> elements and py-* event attributes it should run, and
// answers every batch of changes with XPath queries over the added nodes. Every Plotly redraw
// adds nodes, so left watching, PyScript would run queries on the main thread in every edit
// (docs/performance.md, "Two page-only costs of every edit"). The explorer has neither (its
// Python is the PyWorker made in start()), so the observers that PyScript's own files start are
// disconnected once it has loaded. observersOf(dir) records them (by the file that called
// observe, from its stack) until stop() puts MutationObserver.prototype.observe back and
// disconnects them.
function observersOf(dir) {
  const proto = MutationObserver.prototype;
  const observe = proto.observe;
  const started = new Set();
  proto.observe = function (...args) {
    if (String(new Error().stack).includes(dir)) started.add(this);
    return observe.apply(this, args);
  };
  return {
    stop() {
      proto.observe = observe;
      for (const observer of started) observer.disconnect();
    },
  };
}

// Without an origin (a file:// page, a sandboxed iframe) nothing can start: js/host.js says why.
if (!host.unable) {
  start().catch((e) => fail(e instanceof BootError ? e.message
    : `Python could not start (${firstLine(e)}).${FIX}`));
}
