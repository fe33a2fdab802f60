// A lecturer's own model, from a file (docs/own-model.md): the chooser <input id="model-file">,
// or a file dropped anywhere on the page. Nothing leaves the browser. Python decides what to read
// (pycore/explorer/model/file.py): each "open_file" answer names the byte ranges it needs next
// (file.need), read here with Blob.slice and sent back in base64, until the file is loaded or
// refused; a 170 MB checkpoint costs the few MB of its head. (The state saved as an .npz, which
// opens again here: js/page/share.js, like every export.)

import { setData, setHidden, setText } from "./dom.js";

const $ = /** @type {ById} */ ((id) => document.getElementById(id));
const ROUNDS_MAX = 40; // a file needs 2 or 3 requests, and one more per 4 MB of its arrays
// Every file's headers are in its first or last bytes (a zip's directory is at its end): these
// go with the first request, which saves a round trip (file_parts.PROBE in Python).
const PROBE = 65536 + 22;

// A slice of the file in base64, encoded by the browser itself (a data: URL's payload): several
// times faster than building a binary string for btoa.
function base64(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = /** @type {string} */ (reader.result); // readAsDataURL's
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
}

// The final answer to a file's "open_file" requests: loaded (file.summary) or refused (ok false).
async function readModelFile(file, call, target) {
  const spent = { rounds: 0, python: 0, calls: 0, reads: 0 }; // <html data-model-file-ms>
  const clock = () => performance.now();
  const read = async (ranges) => {
    const t = clock();
    const parts = [];
    for (const [a, b] of ranges) if (b > a) parts.push([a, await base64(file.slice(a, b))]);
    spent.reads += clock() - t;
    return parts;
  };
  const tail = Math.max(PROBE, file.size - PROBE);
  const request = { op: "open_file", name: file.name, size: file.size, first: true,
                    parts: await read([[0, Math.min(PROBE, file.size)], [tail, file.size]]) };
  if (target) request.target = target;
  for (let round = 0; round < ROUNDS_MAX; round++) {
    const t = clock();
    const res = await call(request);
    spent.calls += clock() - t;
    spent.rounds += 1;
    spent.python += res.worker_ms || 0;
    setData(document.documentElement, "modelFileMs", `${spent.rounds} requests: ` +
      `${spent.calls.toFixed(0)} ms (${spent.python.toFixed(0)} ms in Python); reading ${spent.reads.toFixed(0)} ms`);
    if (!res.ok || !res.file || !res.file.need) return res;
    if (!res.file.need.length) break; // asked for nothing more, yet not loaded: refused below
    const [offset, length] = res.file.need[0]; // Python asks for at most 4 MB a range
    delete request.first;
    delete request.target;
    request.parts = await read([[offset, offset + length]]);
  }
  return { ok: false, error: { message: `${file.name}: still not read after ${ROUNDS_MAX} requests.`, key: "file", index: null } };
}

// The page's side: the chooser, the drop, the status line, once Python is ready (js/app.js:
// connect). page: {call(request), render(answer, t0), alert(message), clear(), mode()}.
// A .npy fills the grid that last had focus (W_head's, or the input's: cls or encoder_output).
export function connect(page) {
  let grid = "input";
  $("grid-input").addEventListener("focusin", () => { grid = "input"; });
  $("grid-w").addEventListener("focusin", () => { grid = "W_head"; });
  const opts = {
    call: page.call,
    target: () => (grid === "W_head" ? "W_head" : page.mode() === "encoder" ? "encoder_output" : "cls"),
    done: (res, t0) => {
      page.clear();
      $("preset").value = "file";
      return page.render(res, t0);
    },
    refused: page.alert,
  };
  const status = $("model-file-status");
  const root = document.documentElement;
  const say = (text) => {
    setText(status, text);
    setHidden(status, !text);
  };
  let busy = Promise.resolve();
  const open = (file) => {
    if (!file) return busy;
    const t0 = performance.now();
    busy = busy.then(async () => {
      setData(root, "modelFile", "reading");
      say(`Reading ${file.name}…`);
      // Whatever happens to one file (an answer not foreseen, a file the browser cannot read),
      // it ends refused in words, and the next file is read as if it were the first.
      const res = await readModelFile(file, opts.call, opts.target()).catch((err) => (
        { ok: false, error: { message: `${file.name} could not be read: ${err && err.message || err}`,
                              key: "file", index: null } }));
      if (res.ok) {
        say(res.file.summary);
        await opts.done(res, t0);
      } else {
        say("");
        opts.refused(res.error.message);
      }
      setData(root, "modelFile", res.ok ? "loaded" : "refused");
    });
    return busy;
  };
  const input = $("model-file");
  input.addEventListener("change", () => {
    const file = input.files[0];
    open(file).then(() => { input.value = ""; }); // the same file may be chosen again
  });
  // A drop anywhere on the page (files only: a dragged text or link keeps its own meaning).
  const carriesFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");
  document.addEventListener("dragover", (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
    root.classList.add("dropping");
  });
  document.addEventListener("dragleave", (e) => {
    if (!e.relatedTarget) root.classList.remove("dropping");
  });
  document.addEventListener("drop", (e) => {
    root.classList.remove("dropping");
    if (!carriesFiles(e) && !(e.dataTransfer && e.dataTransfer.files.length)) return;
    e.preventDefault();
    open(e.dataTransfer.files[0]);
  });
}

// Another state replaced the file's (a preset, a link, a drawn digit): what was loaded is no
// longer what is shown.
export function forgetModelFile() {
  const status = $("model-file-status");
  setText(status, "");
  setHidden(status, true);
  delete document.documentElement.dataset.modelFile;
}
