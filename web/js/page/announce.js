// What a screen reader hears, one concise announcement per action (WCAG 2.2, 4.1.3): a figure's
// result shown on screen at once (the prediction line, the drawing's reading) is said in a
// live region of its own once the page has been quiet for QUIET_MS, so typing "-1.25" key by
// key, a scrubbed number or a stroke says its final result once, not every step on the way.
// The same text again is not said again. Quiet means no new result and no key or press (or
// drag) either: results that lag behind the keys (a slow answer on a busy machine) are not
// said between two keys of the same action.
//
// Speakers that share a turn say one thing per quiet spell: the one of highest rank that spoke
// in it. A stroke on the drawing pad changes both the tiny ViT's reading and the pipeline's
// prediction (its input is the drawing); the reading is the stroke's result and is said alone.

const QUIET_MS = 700;

/** The turn the results of an action share (the prediction line and the drawing's reading). */
export const RESULT_TURN = {};

let lastInput = -Infinity;
let lastDrawn = -Infinity; // the page's last completed render (js/page/render.js: data-renders)
new MutationObserver(() => { lastDrawn = performance.now(); })
  .observe(document.documentElement, { attributes: true, attributeFilter: ["data-renders"] });
const hushed = new Set(); // turns whose results are not said until the next action
for (const type of ["keydown", "pointerdown", "pointermove"]) {
  document.addEventListener(type, (e) => {
    if (type !== "pointermove" || /** @type {PointerEvent} */ (e).buttons) lastInput = performance.now();
    if (type !== "pointermove") hushed.clear();
  }, { capture: true, passive: true });
}

/**
 * A function that says `text` in the live region `id`, once things are quiet.
 * @param {string} id
 * @param {{quietMs?: number, turn?: object, rank?: number, still?: boolean}} [options] `turn`:
 *   an object shared by speakers of which only one is said per quiet spell, the highest `rank`
 *   (later wins ties); `still`: quiet also means no render for quietMs (a result that ends a
 *   burst of redraws, where a screen reader drops what comes while it catches up: Orca ignores
 *   a live region's change while more than 100 events wait)
 * @returns {((text: string) => void) & {cancel: () => void}} `cancel()` drops what waits
 */
export function calmly(id, { quietMs = QUIET_MS, turn = {}, rank = 0, still = false } = {}) {
  const t = /** @type {{timer?: number, next?: {id: string, text: string, rank: number}}} */ (turn);
  const say = (text) => {
    clearTimeout(t.timer);
    if (!t.next || rank >= t.next.rank) t.next = { id, text, rank };
    t.timer = setTimeout(function speak() {
      const wait = Math.max(lastInput, still ? lastDrawn : -Infinity) + quietMs - performance.now();
      if (wait > 0) {
        t.timer = setTimeout(speak, wait);
        return;
      }
      const { id: at, text: said } = t.next;
      t.next = undefined;
      if (hushed.has(turn)) return;
      const region = document.getElementById(at);
      if (region && region.textContent !== said) region.textContent = said;
    }, quietMs);
  };
  say.cancel = () => drop(t);
  return say;
}

/** What waits in a turn, dropped. @param {{timer?: number, next?: object}} turn */
function drop(turn) {
  clearTimeout(turn.timer);
  turn.next = undefined;
}

/**
 * Say nothing in `turn` until the next key or press: the action's result was said elsewhere.
 * The fine-tuning panel says its status; the prediction its steps changed, which may come
 * later (a panel out of view is brought up to date once the page is idle: js/page/offscreen.js),
 * is not a second announcement.
 * @param {object} turn
 */
export function hush(turn) {
  drop(turn);
  hushed.add(turn);
}
