// Panels out of view, which a scrubbed number's answers leave for later.
//
// While a number is scrubbed, each change asks Python for only what the screen shows: the
// request's `later` names the panels that may wait (shared.js's DEFERRABLE, each shown in its
// PANEL_IDS element) that are out of view now, and Python leaves them out. Each answer's `deferred`
// lists the sections the page then holds out of date; they are brought (a `catch_up` request)
// as soon as one of them scrolls into view, and in any case once the changes have paused for
// CATCH_UP_MS, so the whole page ends at the state's values (docs/protocol.md).

import { component } from "./components.js";
import { DEFERRABLE, PANEL_IDS } from "../shared.js"; // answer section -> the panel that shows it

const CATCH_UP_MS = 400;

const inView = new Map(); // section -> whether its panel is on screen (unknown: taken as on screen)
let deferred = new Set(); // sections the page holds out of date (the last answer's `deferred`)
let timer = 0;
let client = null;
let draw = null;
let asking = null; // a catch_up in flight

const observer = new IntersectionObserver((entries) => {
  for (const entry of entries) inView.set(/** @type {HTMLElement} */ (entry.target).dataset.section, entry.isIntersecting);
  if ([...deferred].some((name) => inView.get(name))) catchUp();
});
for (const name of DEFERRABLE) {
  const el = document.getElementById(PANEL_IDS[name]);
  if (!el) continue;
  el.dataset.section = name;
  observer.observe(el);
}

/**
 * The page, once Python is ready (js/app.js: connect): its call, and its render for the
 * sections a catch_up brings.
 * @param {{call: function(Object): Promise<Object>, render: function(Object, number): Promise<void>}} page
 */
export function connect(page) {
  client = page;
  draw = page.render;
}

/** The sections whose panels are out of view now: a scrub's request's `later`. */
export function laterSections() {
  return DEFERRABLE.filter((name) => inView.get(name) === false);
}

// Each answer's list, once it is drawn: a new pause to wait for. A new session (Reset, a
// link) holds nothing out of date.
component("deferred", {
  settled: (names) => {
    deferred = new Set(names);
    clearTimeout(timer);
    timer = deferred.size ? setTimeout(catchUp, CATCH_UP_MS) : 0;
    document.documentElement.dataset.deferred = names.join(" ");
  },
  reset: () => {
    deferred = new Set();
    clearTimeout(timer);
    timer = 0;
    if ("deferred" in document.documentElement.dataset) document.documentElement.dataset.deferred = "";
  },
});

function catchUp() {
  clearTimeout(timer);
  timer = 0;
  if (!deferred.size || !client || asking) return asking;
  deferred = new Set();
  const t0 = performance.now();
  asking = client.call({ op: "catch_up" })
    .then((res) => (res.ok ? draw(res, t0) : null))
    .finally(() => { asking = null; });
  return asking;
}
