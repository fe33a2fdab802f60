// Links and exports. The state's fragment comes from Python (pycore.state.encode_fragment),
// so a link made here reproduces exactly the state that Python holds.

const $ = (id) => document.getElementById(id);
let fragment = "";
let exported = null;

export function lastFragment() { return fragment; }

export function writeUrl(next) {
  if (next === fragment) return;
  fragment = next;
  // replaceState: editing a cell should not add a history entry per keystroke.
  history.replaceState(null, "", `${location.pathname}${location.search}#${next}`);
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
