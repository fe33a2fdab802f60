// The PyScript host's interpreter module, loaded in PyScript's worker in place of pyodide.mjs
// (pyscript.json's "interpreter"). PyScript imports it, then calls its loadPyodide, so it runs
// before anything else in the worker. It exports Pyodide 314's `version` and `loadPyodide`
// (from the folder pyscript.json's vit.pyodide_index names) and adds what PyScript leaves out:
//
// - progress by bytes: Pyodide's own downloads (vit.downloads, but the NumPy wheel, which the
//   page fetches and checks itself, see boot/pyscript.js) are counted as they arrive, and the
//   page is told {vitBoot: {bytes: {loaded, total}}}, then what Python does once they are in:
//   {vitBoot: {stage: "python" | "numpy", text}} ("numpy" once NumPy's first library loads),
//   and once Pyodide's WebAssembly is compiled, {vitBoot: {compiled: true}}; each NumPy library
//   Pyodide got compiled early, {vitBoot: {libraries: "<used> of <compiled>"}};
// - failures in plain words, at once: a download that fails or returns an HTTP error, and a file
//   that fails its integrity check, are reported as {vitBoot: {fail: message}};
// - files the site serves gzip-compressed (vit.gzipped: Pyodide's WebAssembly and lock file, the
//   standard library) are fetched as <url>.gz and decompressed here (DecompressionStream);
// - in a CDN build, integrity: each file Pyodide's loader fetches from the CDN and the build
//   pinned (vit.integrity: URL -> sha256, the WebAssembly, the standard library, the lock file
//   that in turn pins the NumPy wheel) is read whole, checked, and only then handed to Pyodide;
//   a file that differs stops the boot with a message;
// - IndexedDB in memory (see memory-idb.js), so that PyScript starts where storage is denied;
// - Content-Security-Policy violations in this worker, which the page never sees (WebAssembly
//   refused, say: Pyodide then waits forever), are passed on: {vitBoot: {blocked}} (the kit's
//   forwardViolations and WebAssembly probe, js/host.js, as in the other hosts' workers);
// - Emscripten's PATH.dirname and PATH.basename without regular expressions (fs-paths.mjs);
// - NumPy's WebAssembly libraries compiled in the background once the wheel is in
//   (wheel-libraries.mjs), and "Starting Python" ended by the first one Pyodide loads.
import "../js/host.js"; // the boot kit (vitHost.boot), shared with the page and the other workers
import { installMemoryIndexedDB } from "./memory-idb.js";
import { usePlainPaths } from "./fs-paths.mjs";
import { compileLibrariesOf, libraries, useCompiledLibraries } from "./wheel-libraries.mjs";

const kit = self.vitHost.boot;
const FIX = kit.FIX;
installMemoryIndexedDB();
useCompiledLibraries({
  // Pyodide instantiates NumPy's shared libraries, from their bytes, once Python has started
  // (its feature checks instantiate modules or a few bytes): the first one ends "Starting Python".
  onLoad: (bytes) => {
    if (pythonUp || bytes.byteLength < LIBRARY_MIN_BYTES) return;
    pythonUp = true;
    progress(true);
  },
  onUse: () => tell({ libraries: `${libraries.used} of ${libraries.compiled}` }),
});
kit.forwardViolations((blocked) => tell({ blocked }));

// This worker's policy may refuse WebAssembly (a server's header without 'wasm-unsafe-eval'),
// and WebKit reports no violation event for that: the kit's probe asks at once, and the page is
// told as a violation would tell it.
if (kit.wasmRefused()) tell({ blocked: kit.WASM_REFUSED });

const site = new URL("../", import.meta.url);
const realFetch = globalThis.fetch.bind(globalThis);
// ---- talking to the page -------------------------------------------------------------------
function tell(message) { self.postMessage({ vitBoot: message }); }
// (the page says the first failure only: boot/pyscript.js)
function fail(message) { tell({ fail: message }); }
function trouble(url) {
  if (url === wheelURL) return "NumPy could not be loaded";
  if (/\/bytecode\/numpy-/.test(url)) return "NumPy's compiled Python (its bytecode) could not be loaded";
  if (/\/(py|pycore)\//.test(url)) return "The explorer's Python code could not be loaded";
  return "The Python runtime could not be downloaded";
}
// A download that failed, in words: what could not be loaded, the file, and why.
function failedDownload(url, why) { fail(`${trouble(url)} (${url}: ${why}).${FIX}`); }

const config = await fetchJSON(new URL("pyscript.json", site).href);
const vit = config.vit;
const index = new URL(vit.pyodide_index, site).href;
const wheelURL = vit.numpy_wheel ? new URL(vit.numpy_wheel.file, index).href : null;

// ---- progress by bytes ---------------------------------------------------------------------
// Expected sizes come from the build; a CDN build leaves them to the Content-Length header.
const expected = new Map((vit.downloads || []).map((d) => [new URL(d.url, site).href, d.bytes]));
expected.delete(wheelURL);
const loaded = new Map();
let pythonUp = false; // Pyodide has begun loading NumPy's libraries: Python has started
const LIBRARY_MIN_BYTES = 4096; // smaller modules given as bytes are Pyodide's feature checks
let lastSaid = 0;
let lastStage = "";
function progress(force) {
  const now = Date.now();
  if (!force && now - lastSaid < 100) return;
  lastSaid = now;
  let got = 0;
  let total = 0;
  let unknown = false;
  for (const [url, bytes] of expected) {
    if (bytes === null) { unknown = true; continue; }
    total += bytes;
    got += Math.min(loaded.get(url) || 0, bytes);
  }
  tell({ bytes: { loaded: got, total, done: !unknown && got >= total } });
  if (unknown || got < total) return;
  const stage = pythonUp ? "numpy" : "python";
  if (stage === lastStage) return;
  lastStage = stage;
  tell(pythonUp ? { stage, text: `Loading NumPy ${vit.numpy_wheel.version}…` }
                : { stage, text: `Starting Python ${vit.python}…` });
}

// Only the large files the build listed are counted; the explorer's own small files are not.
function counted(url, response) {
  if (!response.body || !expected.has(url)) return response;
  if (expected.get(url) === null) expected.set(url, Number(response.headers.get("Content-Length")) || 0);
  return kit.counting(response, (bytes) => {
    loaded.set(url, bytes);
    progress(false);
  }, (bytes) => {
    expected.set(url, bytes);
    progress(true);
  });
}

// ---- the explorer's Python files, asked for at once ------------------------------------------
// PyScript fetches its `files` (the explorer's zip, NumPy's bytecode) only once Python and NumPy
// are loaded, on the way to the explorer's first answer. They are asked for here, while Pyodide
// downloads, read whole and counted as they arrive (so the progress bar ends when the downloads
// do, not seconds later when PyScript gets to them), and handed to PyScript when it asks. One
// that is missing is said at once, not when PyScript would ask for it.
const early = new Map(); // URL -> the promise of its response, until its first asker takes it
for (const url of Object.keys(config.files || {})) {
  const absolute = new URL(url, site).href;
  const response = realFetch(absolute).then(async (r) => {
    if (!r.ok) {
      failedDownload(absolute, `HTTP ${r.status}`);
      return r;
    }
    const body = await counted(absolute, r).arrayBuffer();
    return new Response(body, { status: r.status, statusText: r.statusText, headers: r.headers });
  }).catch((error) => {
    failedDownload(absolute, error.message || error);
    throw error;
  });
  response.catch(() => {}); // said above; PyScript's own request then fails as it would have
  early.set(absolute, response);
}

globalThis.fetch = async function (input, init) {
  const url = new URL(input instanceof Request ? input.url : String(input), self.location.href).href;
  const asked = early.get(url);
  early.delete(url);
  if (gzipped.has(url)) return asked || inflated(url);
  let response;
  try {
    response = await (asked || realFetch(input, init));
  } catch (error) {
    let why = error.message || String(error);
    if (init && init.integrity) { // a damaged file, or none at all?
      const plain = await realFetch(url).catch(() => null);
      if (plain && plain.ok) why = "it does not match the sha256 pinned for it in pyodide-lock.json";
    }
    failedDownload(url, why);
    throw error;
  }
  if (!response.ok) {
    failedDownload(url, `HTTP ${response.status}`);
    return response;
  }
  if (asked) return response; // read and counted as it arrived (above)
  const pinned = vit.integrity && vit.integrity[url];
  const result = pinned ? await checked(url, response, pinned) : counted(url, response);
  if (url === wheelURL) compileLibrariesOf(result.clone()); // in the background (wheel-libraries.mjs)
  return result;
};

// ---- files served gzip-compressed (buildtools/assembly/gzipped.py) --------------------------------------
// Pyodide's loader asks for <url>; the site holds <url>.gz, which is counted as it arrives and
// decompressed on the way to Pyodide (its WebAssembly still compiles while it streams in).
const gzipped = new Set((vit.gzipped || []).map((u) => new URL(u, site).href));
const TYPES = { wasm: "application/wasm", zip: "application/zip", json: "application/json" };
async function inflated(url) {
  const packed = `${url}.gz`;
  let response;
  try {
    response = await realFetch(packed);
  } catch (error) {
    failedDownload(packed, error.message || error);
    throw error;
  }
  if (!response.ok) {
    failedDownload(packed, `HTTP ${response.status}`);
    return response;
  }
  const reader = counted(url, response).body.pipeThrough(new DecompressionStream("gzip")).getReader();
  const body = new ReadableStream({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        failedDownload(packed, "it could not be decompressed: the file is damaged");
        controller.error(error);
      }
    },
  });
  return new Response(body, { headers: { "Content-Type": TYPES[url.split(".").pop()] || "" } });
}

// A pinned file (a CDN build's), read whole while counted, handed on only if its sha256 is the
// pinned one: what Pyodide gets is exactly the bytes that were checked.
async function checked(url, response, sha256) {
  const bytes = await counted(url, response).arrayBuffer();
  if (await kit.sha256hex(bytes) !== sha256) {
    const why = "it does not match the sha256 pinned for it in the site's pyscript.json";
    failedDownload(url, why);
    throw new Error(`${url}: ${why}`);
  }
  return new Response(bytes, { status: response.status, statusText: response.statusText,
                               headers: response.headers });
}

async function fetchJSON(url) {
  const response = await realFetch(url);
  if (!response.ok) {
    fail(`The Python runtime could not be downloaded (${url}: HTTP ${response.status}).${FIX}`);
    throw new Error(`${url}: HTTP ${response.status}`);
  }
  return response.json();
}

// Python starts once Pyodide's WebAssembly is compiled: the page is told {compiled}, and may
// spend its main thread again (WebKit delivers this worker's downloads through it until then).
const instantiateStreaming = WebAssembly.instantiateStreaming;
if (instantiateStreaming) {
  WebAssembly.instantiateStreaming = function (...args) {
    const compiling = instantiateStreaming.apply(this, args);
    compiling.then(() => tell({ compiled: true }), () => {});
    return compiling;
  };
}

progress(true);
// Pyodide's loader asks for its WebAssembly, its standard library and its lock file, and imports
// pyodide.asm.mjs, only once pyodide.mjs is imported and loadPyodide runs: asked for here, they
// download while pyodide.mjs does (the WebAssembly, the longest, by about 0.2 s sooner).
for (const url of gzipped) {
  const response = inflated(url);
  response.catch(() => {}); // said in inflated; Pyodide's own request then fails as it would have
  early.set(url, response);
}
import(index + "pyodide.asm.mjs").catch(() => {}); // the same module, when Pyodide imports it
const pyodide = await import(index + "pyodide.mjs");
export const version = pyodide.version;

// PyScript derives Pyodide's folder from this module's URL; the real one is `index`.
export async function loadPyodide(options) {
  const stdlib = vit.stdlib ? { stdLibURL: new URL(vit.stdlib, site).href } : {};
  const loaded = await pyodide.loadPyodide({ ...options, indexURL: index, ...stdlib });
  usePlainPaths(loaded._module && loaded._module.PATH); // before PyScript writes the files (fs-paths.mjs)
  kit.pythonPath(loaded, vit.python_dir); // where PyScript will write the explorer's files
  return loaded;
}
