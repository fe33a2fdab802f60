// What a screen reader hears, one concise announcement per action (WCAG 2.2, 4.1.3): a figure's
// result shown on screen at once (the prediction line, the drawing's reading) is said in a
// live region of its own once the page has been quiet for QUIET_MS, so typing "-1.25" key by
// key, a scrubbed number or a stroke says its final result once, not every step on the way.
// The same text again is not said again.
//
// Speakers that share a turn say one thing per quiet spell: the one of highest rank that spoke
// in it. A stroke on the drawing pad changes both the tiny ViT's reading and the pipeline's
// prediction (its input is the drawing); the reading is the stroke's result and is said alone.

const QUIET_MS = 700;

/** The turn the results of an action share (the prediction line and the drawing's reading). */
export const RESULT_TURN = {};

/**
 * A function that says `text` in the live region `id`, once things are quiet.
 * @param {string} id
 * @param {{quietMs?: number, turn?: object, rank?: number}} [options] `turn`: an object shared
 *   by speakers of which only one is said per quiet spell, the highest `rank` (later wins ties)
 * @returns {(text: string) => void}
 */
export function calmly(id, { quietMs = QUIET_MS, turn = {}, rank = 0 } = {}) {
  const t = /** @type {{timer?: number, next?: {id: string, text: string, rank: number}}} */ (turn);
  return (text) => {
    clearTimeout(t.timer);
    if (!t.next || rank >= t.next.rank) t.next = { id, text, rank };
    t.timer = setTimeout(() => {
      const { id: at, text: said } = t.next;
      t.next = undefined;
      const region = document.getElementById(at);
      if (region && region.textContent !== said) region.textContent = said;
    }, quietMs);
  };
}
