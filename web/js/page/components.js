// The page's components: one per section of Python's answers (pycore/explorer/panels/sections.py), each
// registered here under its answer key by the file that draws it. js/page/render.js walks them for
// every redraw, so adding a panel touches its Python section, its component, its HTML slot and
// its CSS, and no dispatch code (docs/architecture.md, "Adding a panel").
//
// A component is {before, draw, last}, each optional, each called as (value, answer) when the
// answer (merged, js/page/render.js) holds its key:
//   before: before the heatmaps are drawn (what changes the layout Plotly measures);
//   draw:   after them; may return a promise that the redraw waits for;
//   last:   once those promises have settled, in turn (what outlines cells of drawn heatmaps);
//   settled: after the redraw, even a failed one, and outside its time (what is not a redraw).
// Within a phase, components run in the order they were registered.
// And one phase that is not a redraw:
//   reset:  called as () when the page starts a new session (js/app.js: the "reset" request,
//           for Reset and every link loaded), before its answer is drawn: the component lets go
//           of what it kept of the last one (a run being played, a selection, marks, messages),
//           so that the page then reads as a freshly opened one.

const registry = [];

export function component(key, parts) {
  registry.push({ key, ...parts });
}

// The components of one phase that this answer reaches, in order.
export function reached(phase, res) {
  return registry.filter((c) => c[phase] && c.key in res);
}

// Every component's reset, in the order they were registered.
export function resetAll() {
  for (const c of registry) if (c.reset) c.reset();
}
