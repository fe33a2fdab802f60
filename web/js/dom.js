// Writes to the page that happen on every answer, made only when they change something: a
// write, even of the same text, marks the page for layout, and Plotly measures the page as it
// draws, so each needless write before a redraw costs a relayout of the whole page.

export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

export function setHidden(el, hidden) {
  if (el.hidden !== hidden) el.hidden = hidden;
}

export function setData(el, key, value) {
  if (el.dataset[key] !== value) el.dataset[key] = value;
}

export function setValue(input, value) {
  if (input.value !== value) input.value = value;
}
