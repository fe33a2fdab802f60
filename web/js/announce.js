// What a screen reader hears, one concise announcement per action (WCAG 2.2, 4.1.3): a figure's
// result shown on screen at once (the prediction line, the drawing's reading) is said in a
// live region of its own once the page has been quiet for QUIET_MS, so typing "-1.25" key by
// key, a scrubbed number or a stroke says its final result once, not every step on the way.
// The same text again is not said again.

const QUIET_MS = 700;

/** A function that says `text` in the live region `id`, once things are quiet. */
/**
 * @param {string} id
 * @param {number} [quietMs]
 * @returns {(text: string) => void}
 */
export function calmly(id, quietMs = QUIET_MS) {
  let timer = 0;
  return (text) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const region = document.getElementById(id);
      if (region && region.textContent !== text) region.textContent = text;
    }, quietMs);
  };
}
