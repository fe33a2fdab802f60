// Links and exports. The state's link comes from Python (pycore/explorer/link.py) with every
// answer (js/protocol.js: answer.link), so a link made here reproduces exactly the state that
// Python holds. Copy link copies the current state's link, or says why it cannot and offers the
// state as JSON and as .npz instead (the .npz also keeps a model file's gamma, beta, bias and class
// names, which JSON drops): it never copies an older state's link.

import { component } from "./components.js";
import { setData, setHidden, setText } from "./dom.js";

const $ = (id) => document.getElementById(id);
let fragment = "";   // what the URL holds
let loading = "";    // the last link from the address bar that the page took to load ("#state=...")
let current = null;  // the current state's link: {fragment, pending, note}
let exported = null;
let linkTimer = 0;
let client = null;

export function lastFragment() { return fragment; }

// The page takes the address bar's link to load (js/app.js: when it opens, and on hashchange).
export function loadingLink(hash) { loading = hash; }

// An answer's link: write it, ask for it once typing pauses, or say why there is none.
// The answer's "link" (js/components.js), once its redraw has ended.
component("link", { settled: (link) => writeLink(link) });

// The bridge, once Python is ready: for links that answers leave pending.
export function connect(bridge) { client = bridge; }

export function writeLink(link, bridge) {
  client = bridge || client;
  current = link;
  clearTimeout(linkTimer);
  linkTimer = 0;
  if (link.pending) {
    setData(document.documentElement, "linkPending", "true");
    const timer = setTimeout(async () => {
      const res = await client.call({ op: "link" });
      if (timer !== linkTimer) return; // the state changed meanwhile: a newer answer decides
      linkTimer = 0;
      writeLink(res.link, client);
    }, 400);
    linkTimer = timer;
    return;
  }
  setData(document.documentElement, "linkPending", "false");
  linkNote(link.note || "");
  // A link pasted into the address bar is in the URL but was never written here. Once the page
  // has taken it to load, its answer's link replaces it, even when it is the one written last;
  // until then (an answer that was on its way when the link was pasted: the hashchange that
  // loads it comes next) it stays, or the page would throw it away for the state it had.
  const pasted = location.hash.startsWith("#state=") && location.hash.slice(1) !== fragment;
  if (pasted && location.hash !== loading) return;
  if (link.fragment && (link.fragment !== fragment || pasted)) {
    fragment = link.fragment;
    // replaceState: editing a cell should not add a history entry per keystroke.
    history.replaceState(history.state, "", `${location.pathname}${location.search}#${fragment}`);
  } else if (!link.fragment && (fragment || pasted)) {
    // No link for this state: the address bar must not keep an older state's, which anyone
    // copying it would take for this one (the note says to save the state as JSON instead).
    fragment = "";
    history.replaceState(history.state, "", `${location.pathname}${location.search}`);
  }
}

// The note that a state has no link: said once (it leaves after NOTE_MS, or with its close
// button), not again while the next answers repeat it; a new note is said anew.
const NOTE_MS = 15000;
let noteSaid = "";
let noteTimer = 0;
function linkNote(text) {
  if (text === noteSaid) return;
  noteSaid = text;
  clearTimeout(noteTimer);
  const el = $("link-note");
  setText($("link-note-text"), text);
  setHidden(el, !text);
  if (text) noteTimer = setTimeout(() => setHidden(el, true), NOTE_MS);
}
document.getElementById("link-note-close").addEventListener("click", () => {
  clearTimeout(noteTimer);
  setHidden($("link-note"), true);
});

// The current state's link, asked for if it is still pending; null (with the reason) if the
// state has none.
async function currentLink() {
  if (current && current.pending && client) {
    clearTimeout(linkTimer);
    linkTimer = 0;
    writeLink((await client.call({ op: "link" })).link, client);
  }
  return current;
}

export async function copyLink() {
  const link = await currentLink();
  if (link && !link.fragment) {
    toast("No link for this state");
    openExport({ title: "This state is too big for a link", text: link.note || "",
                 filename: "", mime: "text/plain", offerJson: true, offerNpz: true });
    return;
  }
  const url = new URL(location.href);
  url.searchParams.delete("embed");
  if (link && link.fragment) url.hash = link.fragment;
  await copyText(url.href, "Link copied", { title: "Copy this link", filename: "link.txt" });
}

async function copyText(text, done, fallback) {
  try {
    await navigator.clipboard.writeText(text);
    toast(done);
  } catch (err) {
    // No clipboard permission (an iframe, plain http): show the text to copy by hand.
    if (fallback) openExport({ text, filename: fallback.filename, mime: "text/plain", title: fallback.title });
    else toast("Copying was refused by the browser: select the text and copy it");
  }
}

// A short message in the toast (a polite status: screen readers say it when idle).
export function notify(text) { toast(text); }

function toast(text) {
  const t = $("toast");
  t.textContent = text;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.textContent = ""; }, 2500);
}

// out: {text, filename, mime, title, offerJson?, offerNpz?}: the offers are the dialog's
// "State as JSON" and "State as .npz" buttons, for a state that has no link.
export function openExport(out) {
  exported = out;
  $("export-title").textContent = out.title;
  $("export-text").value = out.text;
  setHidden($("export-download"), !out.filename);
  setHidden($("export-as-json"), !out.offerJson);
  setHidden($("export-as-npz"), !out.offerNpz);
  const dialog = $("export-dialog");
  if (!dialog.open) dialog.showModal();
  $("export-text").select();
}

export function bindDialog(exportState) {
  $("export-close").addEventListener("click", () => $("export-dialog").close());
  // Closed (by its button or Esc), the dialog lets its text go: an export of a large state is
  // megabytes, and a later export must never find the last one's text there.
  $("export-dialog").addEventListener("close", () => {
    exported = null;
    $("export-text").value = "";
  });
  $("export-copy").addEventListener("click", () => exported && copyText(exported.text, "Copied"));
  $("export-as-json").addEventListener("click", () => exportState("json"));
  // The toolbar's "State as .npz" (js/app.js), so the dialog's download is the same file, made
  // and saved by the same code (the dialog stays open: its note and "State as JSON" remain).
  $("export-as-npz").addEventListener("click", () => $("export-npz").click());
  $("export-download").addEventListener("click", () => {
    if (!exported || !exported.filename) return;
    const url = URL.createObjectURL(new Blob([exported.text], { type: exported.mime }));
    const a = document.createElement("a");
    a.href = url;
    a.download = exported.filename;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
}
