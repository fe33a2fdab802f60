// What a line chart of the page (js/figure/line-chart.js) shows, read back from the drawing alone: its
// first curve's points, each turned into [step, value] through the tick labels drawn beside the
// axes (the centre of each label's box is taken as its tick's place). Used by
// tests/browser/test_page_finetune.py and test_engines_panels.py to check the curve on screen against
// the losses computed in the test.
(id) => {
  const svg = document.getElementById(id).querySelector("svg.chart-plot");
  const place = (selector, anchor, centre) => [...svg.querySelectorAll(selector)]
    .filter((t) => !anchor || t.getAttribute("text-anchor") === anchor)
    .map((t) => [Number(t.textContent), centre(t.getBBox())]);
  const ys = place(".ytick text", "end", (b) => b.y + b.height / 2);
  const xs = place(".xtick text", null, (b) => b.x + b.width / 2);
  const fit = (ticks) => {
    const [v0, p0] = ticks[0], [v1, p1] = ticks[ticks.length - 1];
    return (p) => v0 + ((p - p0) * (v1 - v0)) / (p1 - p0);
  };
  const toStep = fit(xs), toValue = fit(ys);
  const d = svg.querySelector("path").getAttribute("d");
  const points = d.match(/[ML][^ML]+/g).map((seg) => seg.slice(1).trim().split(/[ ,]+/).map(Number));
  const span = Math.abs(ys[ys.length - 1][0] - ys[0][0]) / Math.abs(ys[ys.length - 1][1] - ys[0][1]);
  return { points: points.map(([x, y]) => [toStep(x), toValue(y)]), valuePerPixel: span };
}
