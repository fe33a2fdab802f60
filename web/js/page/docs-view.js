// The docs in the one file (dist/vit-head-explorer.html; docs/hosts.md, "The one file"). A page
// opened from disk has no docs/ folder beside it: a link to docs/math.html replaced the
// explorer with the browser's "file couldn't be accessed". In the one file the build makes each
// docs link "#doc=<name>" (buildtools/onefile/page.py), and a click opens the doc here, in a dialog
// over the page: the served site's own page docs/<name>.html, which the file carries in its page
// payload (boot/onefile.js answers the fetch), its <main> shown. Its links stay in the dialog
// (another doc, a section) or open a new tab (another site); Esc or "Back to the explorer"
// closes it and gives the focus back to the link that opened it. The address bar keeps the
// state's link. On the served site the docs' links open their pages, and nothing here runs.

const $ = /** @type {ById} */ ((id) => document.getElementById(id));
const DOC = /^#doc=([\w-]+)(?::(.+))?$/; // "#doc=hosts", or a section: "#doc=hosts:the-one-file"
let active = false;
let opener = null; // the link on the page that opened the dialog: the focus goes back to it
let shown = "";    // the doc in the dialog
let stateFragment = () => "";
const decode = (text) => { try { return decodeURIComponent(text); } catch (err) { return text; } };

// Once, on a page that is the one file; `lastFragment`: the state's link, which the address bar
// shows again when a "#doc=" in it is done with.
export function bindDocs(lastFragment) {
  if (document.documentElement.dataset.oneFile !== "true") return;
  active = true;
  stateFragment = lastFragment;
  const dialog = $("doc-dialog");
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) {
      return; // a new tab or window: the file opens there with the doc shown
    }
    const link = e.target instanceof Element ? e.target.closest("a[href]") : null;
    if (!link) return;
    const href = link.getAttribute("href");
    const inside = dialog.contains(link);
    if (DOC.test(href)) {
      e.preventDefault();
      if (!inside) opener = link;
      openDoc(href);
    } else if (inside && href.startsWith("#")) {
      e.preventDefault(); // an anchor of the doc: the page's own fragment is the state's link
      reveal(decode(href.slice(1)));
    }
  });
  $("doc-close").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    if (DOC.test(location.hash)) {
      const fragment = stateFragment();
      const here = `${location.pathname}${location.search}`;
      history.replaceState(history.state, "", fragment ? `${here}#${fragment}` : here);
    }
    const back = opener;
    opener = null;
    if (back && back.isConnected) back.focus({ preventScroll: true });
  });
  if (DOC.test(location.hash)) openDoc(location.hash); // a docs link opened in a new tab
}

// Show the doc a "#doc=" link names (from a click, or the address bar: js/app.js); false if
// `hash` names none or the page is not the one file.
export function openDoc(hash) {
  const named = DOC.exec(hash);
  if (!active || !named) return false;
  show(named[1], named[2] ? decode(named[2]) : "");
  return true;
}

async function show(name, section) {
  const dialog = $("doc-dialog");
  const body = $("doc-body");
  const switched = dialog.open && name !== shown;
  if (name !== shown) {
    let main = null;
    try {
      const response = await fetch(`docs/${name}.html`);
      const text = response.ok ? await response.text() : "";
      main = new DOMParser().parseFromString(text, "text/html").querySelector("main");
    } catch (err) {
      main = null;
    }
    if (main) {
      adapt(main);
      body.replaceChildren(...document.importNode(main, true).childNodes);
    } else {
      body.textContent = `This copy of the explorer holds no doc named “${name}”.`;
    }
    shown = main ? name : "";
    const title = body.querySelector("h1");
    dialog.setAttribute("aria-label", title ? title.textContent : "Documentation");
  }
  if (!dialog.open) {
    dialog.showModal();
    $("doc-close").focus();
  } else if (switched) {
    body.focus({ preventScroll: true }); // the link that was pressed is gone with its doc
  }
  if (!section || !reveal(section)) dialog.scrollTop = 0;
}

// The doc's ids and links, made for a place on the explorer's page: ids that cannot meet the
// page's own, links to docs as "#doc=" links, links to other sites in a new tab.
function adapt(main) {
  for (const el of main.querySelectorAll("[id]")) el.id = `doc-${el.id}`;
  for (const a of main.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href");
    const page = /^([\w-]+)\.html(?:#(.+))?$/.exec(href);
    if (page) {
      a.setAttribute("href", `#doc=${page[1]}${page[2] ? `:${page[2]}` : ""}`);
    } else if (/^https?:/.test(href)) {
      a.target = "_blank";
      a.rel = "noopener";
    }
  }
}

// Scroll the doc's element `id` (its id in the doc's own page) into view; false if none.
function reveal(id) {
  const el = document.getElementById(`doc-${id}`);
  if (!el || !$("doc-body").contains(el)) return false;
  el.scrollIntoView({ block: "start" });
  return true;
}
