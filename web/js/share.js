// Links and exports. The state's fragment comes from Python (pycore.state.encode_fragment),
// so a link made here reproduces exactly the state that Python holds.

import { setData, setHidden, setText } from "./dom.js";

const $ = (id) => document.getElementById(id);
let fragment = "";
let exported = null;
let linkTimer = 0;

export function lastFragment() { return fragment; }

export function writeUrl(next) {
  clearTimeout(linkTimer);
  linkTimer = 0;
  setData(document.documentElement, "linkPending", "false");
  linkNote("");
  if (next === fragment) return;
  fragment = next;
  // replaceState: editing a cell should not add a history entry per keystroke.
  history.replaceState(null, "", `${location.pathname}${location.search}#${next}`);
}

// A state with many typed-in numbers gets its link once the person pauses (see
// pycore/explorer/session.py); one too long for any browser's URL is explained instead.
// <html data-link-pending> is "true" from the answer until its link is written.
export function deferLink(client) {
  clearTimeout(linkTimer);
  document.documentElement.dataset.linkPending = "true";
  const timer = setTimeout(async () => {
    const res = await client.call({ op: "fragment" });
    if (timer !== linkTimer) return; // the state changed meanwhile: a newer answer decides
    followLink(res);
    document.documentElement.dataset.linkPending = "false";
  }, 400);
  linkTimer = timer;
}

// The answer to a "fragment" request: the link, or why there is none.
export function followLink(res) {
  if (res.fragment) writeUrl(res.fragment);
  else linkNote(res.link_note || "");
}

function linkNote(text) {
  const el = $("link-note");
  setText(el, text);
  setHidden(el, !text);
}

export async function copyLink() {
  const url = new URL(location.href);
  url.searchParams.delete("embed");
  await copyText(url.href, "Link copied");
}

async function copyText(text, done) {
  try {
    await navigator.clipboard.writeText(text);
    toast(done);
  } catch (err) {
    // No clipboard permission (an iframe, plain http): show the text to copy by hand.
    openExport({ ok: true, text, filename: "link.txt", mime: "text/plain", title: "Copy this link" });
  }
}

function toast(text) {
  const t = $("toast");
  t.textContent = text;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.textContent = ""; }, 2500);
}

// res: {ok, text, filename, mime, title}
export function openExport(res) {
  if (!res.ok) return;
  exported = res;
  $("export-title").textContent = res.title;
  $("export-text").value = res.text;
  const dialog = $("export-dialog");
  if (!dialog.open) dialog.showModal();
  $("export-text").select();
}

export function bindDialog() {
  $("export-close").addEventListener("click", () => $("export-dialog").close());
  $("export-copy").addEventListener("click", () => exported && copyText(exported.text, "Copied"));
  $("export-download").addEventListener("click", () => {
    if (!exported) return;
    const url = URL.createObjectURL(new Blob([exported.text], { type: exported.mime }));
    const a = document.createElement("a");
    a.href = url;
    a.download = exported.filename;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  });
}
