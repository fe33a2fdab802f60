// The page's alert: what was refused and why. It is shown in #alert, the box under the toolbar,
// and said by #alert-said (role="alert", visually hidden). A text typed into a cell is answered
// at every key, so while it is being typed its refusal ("'ab' is not a number") is only shown,
// beside the cell that aria-invalid marks; it is said once, when the entry ends (Enter, Tab,
// leaving the cell): one alert per refused entry, not one per key (WCAG 4.1.3).

const $ = /** @type {ById} */ ((id) => document.getElementById(id));

// `message` shown, and said unless `say` is false.
/**
 * @param {string} message
 * @param {{say?: boolean}} [options]
 */
export function showAlert(message, { say = true } = {}) {
  const box = $("alert");
  box.textContent = message;
  box.hidden = false;
  const said = $("alert-said");
  said.hidden = !say; // what was said before is not left for a screen reader to find
  if (!say) {
    said.textContent = "";
    return;
  }
  // a new text node, so that the same message refused again is said again
  said.replaceChildren(document.createTextNode(message));
}

export function clearAlert() {
  for (const id of ["alert", "alert-said"]) {
    const el = $(id);
    el.hidden = true;
    el.textContent = "";
  }
}
