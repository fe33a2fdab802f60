// Links and exports. The state's link comes from Python (pycore/explorer/state/link.py) with every
// answer (js/protocol.js: answer.link), so a link made here reproduces exactly the state that
// Python holds. Copy link copies the current state's link, or says why it does not: a state with
// no link (too big, or a model file's), or a link longer than LINK_SHARE_MAX characters, which
// mail, chat and course platforms cut. It then offers the state as .npz and as JSON (the .npz
// also keeps a model file's gamma, beta, bias and class names, which JSON drops), and copies a
// long link only if asked. It never copies an older state's link.
//
// Every export is a download, named and said ("Downloaded vit_head.py (1.4 kB): a Python
// script that ..."); the text ones also copy. A copy is a real clipboard write; where the
// browser refuses it, the text is copied from a selection, and failing that shown, selected,
// to copy by hand.

import { component } from "./components.js";
import { setData, setHidden, setText } from "./dom.js";
import { LINK_SHARE_MAX } from "../shared.js";

const $ = /** @type {ById} */ ((id) => document.getElementById(id));
let fragment = "";   // what the URL holds
let loading = "";    // the last link from the address bar that the page took to load ("#state=...")
let current = null;  // the current state's link: {fragment, pending, note}
let shown = null;    // what the open dialog offers: {text, filename, mime} to copy or download
let linkTimer = 0;
let client = null;
export function lastFragment() { return fragment; }

// The page takes the address bar's link to load (js/app.js: when it opens, and on hashchange).
export function loadingLink(hash) { loading = hash; }

// An answer's link: write it, ask for it once typing pauses, or say why there is none.
// The answer's "link" (js/page/components.js), once its redraw has ended.
component("link", { settled: (link) => writeLink(link) });

// The page, once Python is ready (js/app.js: connect): its call, for links that answers leave
// pending.
export function connect(page) { client = page; }

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

// The address to share for `link`: the page's own, without ?embed=1, with the link's state.
function linkUrl(link) {
  if (!link || !link.fragment) return null;
  const url = new URL(location.href);
  url.searchParams.delete("embed");
  url.hash = link.fragment;
  return url.href;
}

const count = (n) => n.toLocaleString("en-US");

export async function copyLink() {
  let link = current;
  if (link && link.pending && client) {
    // Asked of Python, and the clipboard written with it still to come, within the click
    // (writeClipboard): unless it turns out too long, or there is none.
    const text = currentLink().then((l) => {
      link = l;
      const url = linkUrl(l);
      return url && url.length <= LINK_SHARE_MAX ? url : null;
    });
    const done = await writeClipboard(text);
    if (done !== "nothing") {
      copied(done, await text, `Link copied (${count((await text).length)} characters)`,
             { filename: "link.txt", mime: "text/plain", what: "this link" });
      return;
    }
  }
  const url = linkUrl(link);
  if (!url) {
    toast("No link for this state");
    openDialog({ title: "This state is too big for a link", message: (link && link.note) || "",
                 offerState: true });
  } else if (url.length > LINK_SHARE_MAX) {
    openDialog({
      title: `This link is ${count(url.length)} characters long`,
      message: `Nothing was copied: email, chat and course platforms (Moodle, Canvas, ` +
               `Blackboard) cut or refuse links longer than about ${count(LINK_SHARE_MAX)} ` +
               `characters, so this one would most likely arrive broken. Share the state as a ` +
               `file instead: \u201cState as .npz\u201d keeps every number bit for bit and ` +
               `opens again with \u201cYour model\u2026\u201d; \u201cState as JSON\u201d is ` +
               `for reading in Python. (The link still works in this browser's address bar.)`,
      offerState: true, copyAnyway: url });
  } else {
    const done = await writeClipboard(url);
    copied(done, url, `Link copied (${count(url.length)} characters)`,
           { filename: "link.txt", mime: "text/plain", what: "this link" });
  }
}

// ---- the clipboard ----------------------------------------------------------------------

// Writes `source` (a text, or a promise of one; null: nothing to copy) to the clipboard:
// "copied", "refused" or "nothing". A text still to come (an export Python makes after the
// click) is written as a ClipboardItem holding its promise, started within the click: WebKit
// lets a page write the clipboard only then, and Chromium and Firefox accept it too. Where the
// clipboard API is missing (a page served over plain http is not a secure context) or refuses,
// the text is copied from a selection, as a person's Ctrl+C would.
async function writeClipboard(source) {
  if (typeof source === "string") return writeText(source);
  const clip = navigator.clipboard;
  const text = Promise.resolve(source);
  if (clip && typeof clip.write === "function" && typeof ClipboardItem === "function") {
    try {
      const blob = text.then((t) => {
        if (t == null) throw new Error("nothing to copy");
        return new Blob([t], { type: "text/plain" });
      });
      // handled here too: a write the browser refused before the text came (the page not
      // focused) leaves the promise to nobody, and its "nothing" would be an uncaught error
      blob.catch(() => {});
      await clip.write([new ClipboardItem({ "text/plain": blob })]);
      return "copied";
    } catch (err) {
      // refused, or not taken with a promise: written again below, now that the text is here
    }
  }
  const t = await text;
  return t == null ? "nothing" : writeText(t);
}

// A known text written at once: the clipboard API is called before anything is awaited, so
// within the click that asked (WebKit's condition).
async function writeText(t) {
  const clip = navigator.clipboard;
  if (clip && typeof clip.writeText === "function") {
    try {
      await clip.writeText(t);
      return "copied";
    } catch (err) {
      // refused (no permission: an iframe without it); a selection may still be copied
    }
  }
  return copyBySelection(t) ? "copied" : "refused";
}

// The text copied as a selection (document.execCommand: deprecated, but what a page served
// over plain http has): true if the browser copied it.
function copyBySelection(text) {
  const host = document.querySelector("dialog[open]") || document.body; // the rest is inert
  const area = document.createElement("textarea");
  area.value = text;
  area.readOnly = true;
  area.setAttribute("aria-hidden", "true");
  area.style.cssText = "position:fixed;left:0;top:0;width:1px;height:1px;opacity:0;";
  const focused = /** @type {HTMLElement} */ (document.activeElement);
  host.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch (err) {
    ok = false;
  }
  area.remove();
  if (focused && typeof focused.focus === "function") focused.focus({ preventScroll: true });
  return ok;
}

// After a copy: said when done, else the text shown, selected, to copy by hand.
function copied(done, text, said, { filename, mime, what }) {
  if (done === "copied") {
    toast(said);
    return;
  }
  toast("The browser refused to copy: copy it by hand");
  openDialog({ title: `Copy ${what} by hand`, text, filename, mime,
               message: "The browser did not let the page write to the clipboard. The text is " +
                        "selected below: press Ctrl+C (\u2318C on a Mac) to copy it, or download it." });
}

// ---- exports: each a download, the text ones also a copy ------------------------------------

const sizeText = (bytes) => (bytes < 1000 ? `${bytes} bytes` : bytes < 1e6
  ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`);

// Saves `out` (an answer's export: {text, mime, filename, base64}) as a file under its name;
// returns its size in bytes.
export function saveFile(out) {
  let data = out.text;
  if (out.base64) {
    const raw = atob(out.text);
    data = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) data[i] = raw.charCodeAt(i);
  }
  const blob = new Blob([data], { type: out.mime });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = out.filename;
  a.hidden = true;
  // in the document (Firefox once saved only a link that was), where a modal dialog allows it
  (document.querySelector("dialog[open]") || document.body).append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return blob.size;
}

// An export ({op: "export", format}) downloaded, and said with what its file holds. `refused`
// gets Python's refusal (an export past the memory budget: nothing is made).
export async function downloadExport(format, refused) {
  const res = await client.call({ op: "export", format });
  if (!res.ok) {
    refused(res.error);
    return;
  }
  const out = res.export;
  toast(`Downloaded ${out.filename} (${sizeText(saveFile(out))}): ${out.about}.`);
}

// An export's text copied, and said with what it holds; `what` names it ("the NumPy code").
export async function copyExport(format, what, refused) {
  /** @type {import("../protocol.js").Answer} */
  let answer;
  const text = client.call({ op: "export", format }).then((res) => {
    answer = res;
    return res.ok ? res.export.text : null;
  });
  const done = await writeClipboard(text);
  if (!answer.ok) {
    refused(answer.error);
    return;
  }
  const out = answer.export;
  copied(done, out.text, `Copied ${what} (${count(out.text.length)} characters): ${out.about}.`,
         { filename: out.filename, mime: out.mime, what });
}

// ---- messages ------------------------------------------------------------------------------

// A short message in the toast (a polite status: screen readers say it when idle).
export function notify(text) { toast(text); }

let toastTimer = 0;
function toast(text) {
  const t = $("toast");
  t.textContent = text;
  clearTimeout(toastTimer);
  // long enough to read: 2.5 s, and 50 ms a character past the first 50, at most 10 s
  toastTimer = setTimeout(() => { t.textContent = ""; },
                           Math.min(10000, 2500 + 50 * Math.max(0, text.length - 50)));
}

// The dialog for what cannot be done at once: a state with no link or one too long to share
// (offerState: its "State as .npz" and "State as JSON"; copyAnyway: the long link, copied if
// asked), or a text the browser would not copy ({text, filename, mime}: shown, selected).
function openDialog({ title, message, text = null, filename = "", mime = "text/plain",
                      offerState = false, copyAnyway = null }) {
  shown = { text: text != null ? text : copyAnyway, filename, mime };
  $("export-title").textContent = title;
  setText($("export-message"), message || "");
  const area = $("export-text");
  area.value = text != null ? text : "";
  setHidden(area, text == null);
  setHidden($("export-download"), text == null || !filename);
  setHidden($("export-as-npz"), !offerState);
  setHidden($("export-as-json"), !offerState);
  setHidden($("export-copy"), copyAnyway == null);
  const dialog = $("export-dialog");
  if (!dialog.open) dialog.showModal();
  if (text != null) {
    area.focus();
    area.select();
  } else {
    (offerState ? $("export-as-npz") : $("export-close")).focus();
  }
}

export function bindDialog(refused) {
  const dialog = $("export-dialog");
  const close = () => { if (dialog.open) dialog.close(); };
  $("export-close").addEventListener("click", close);
  // Closed (by its button or Esc), the dialog lets its text go: an export of a large state is
  // megabytes, and a later one must never find the last one's text there.
  dialog.addEventListener("close", () => {
    shown = null;
    $("export-text").value = "";
  });
  // The state as a file, from the dialog: the toolbar's downloads, by the same code. The
  // dialog closes first, so that what they say is seen and heard.
  $("export-as-npz").addEventListener("click", () => { close(); downloadExport("npz", refused); });
  $("export-as-json").addEventListener("click", () => { close(); downloadExport("json", refused); });
  $("export-copy").addEventListener("click", async () => {
    const url = shown && shown.text;
    if (!url) return;
    const done = await writeClipboard(url); // within the click: the link is known
    close();
    copied(done, url, `Link copied (${count(url.length)} characters): longer than ` +
                      `${count(LINK_SHARE_MAX)}, it may arrive cut short`,
           { filename: "link.txt", mime: "text/plain", what: "this link" });
  });
  $("export-download").addEventListener("click", () => {
    if (!shown || shown.text == null || !shown.filename) return;
    const out = { text: shown.text, filename: shown.filename, mime: shown.mime };
    close();
    toast(`Downloaded ${out.filename} (${sizeText(saveFile(out))})`);
  });
}
