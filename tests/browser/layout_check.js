// What a person would call "cut off" or "overlapping", measured in the page (used by
// tests/browser/test_page_fit.py). Returns a list of problems, each a short sentence.
//
// - cut off: a text whose box reaches outside an ancestor that clips (overflow not visible),
//   unless that ancestor is one of the page's scrolling boxes, which show a scroll bar and shadows
//   where more is hidden (.table-scroll, .grid-body and the grid's headers that scroll with it,
//   the equations' rows); and a control whose own text is wider than the control;
// - overlapping: two visible texts whose boxes intersect (neither inside the other), within the
//   same stage or panel, including a plot's title, axis titles and tick labels;
// - the page wider than the window.
(() => {
  const SCROLLERS = ".table-scroll, .grid-body, .grid-colhead, .grid-rowhead, .step-list li, dialog";
  const TEXTS = "h1, h2, h3, p, label, th, td, caption, summary, button, select, a, .grid-h, " +
                ".colour-key span, .gtitle, .g-xtitle text, .g-ytitle text, .xtick text, .ytick text, " +
                ".chart-title, .chart-axis-title, .chart-readout, .chart-legend li";
  const problems = [];
  const visible = (el) => {
    if (el.closest("[hidden], .notices, details:not([open]) > :not(summary)")) return false;
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.display === "none" || Number(style.opacity) <= 0) return false;
    // inside a box for screen readers only (a 1 px box that hides its overflow): not shown
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const box = a.getBoundingClientRect();
      if (box.width <= 1 && box.height <= 1 && getComputedStyle(a).overflow === "hidden") return false;
    }
    return true;
  };
  const name = (el) => {
    const text = (el.textContent || el.value || "").trim().replace(/\s+/g, " ").slice(0, 40);
    const figure = el.closest(".js-plotly-plot");  // which figure, when it is one's text
    return `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""} "${text}"` +
      (figure && figure.id ? ` (in #${figure.id})` : "");
  };
  const texts = [...document.querySelectorAll(TEXTS)].filter((el) => visible(el) && (el.textContent || "").trim());

  // cut off by a clipping ancestor
  for (const el of texts) {
    const r = el.getBoundingClientRect();
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX === "visible" && style.overflowY === "visible") continue;
      if (a.matches(SCROLLERS) || a.closest(SCROLLERS)) break; // scrolls, with a visible cue
      const box = a.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) {
        problems.push(`${name(el)} is cut off by ${a.tagName.toLowerCase()}.${[...a.classList].join(".")}`);
      }
      break;
    }
  }
  // a control's own text wider than the control
  for (const el of document.querySelectorAll("input, select, button")) {
    if (!visible(el) || el.closest(".grid-body")) continue;
    if (el.scrollWidth > el.clientWidth + 2) problems.push(`${name(el)} shows only part of its text`);
  }
  // overlapping texts within one stage or panel (or one plot)
  const groups = new Map();
  for (const el of texts) {
    const group = el.closest(".stage, .panel, .toolbar, header, .plot") || document.body;
    if (!groups.has(group)) groups.set(group, []);
    groups.get(group).push(el);
  }
  for (const els of groups.values()) {
    for (let i = 0; i < els.length; i++) {
      for (let j = i + 1; j < els.length; j++) {
        const a = els[i], b = els[j];
        if (a.contains(b) || b.contains(a)) continue;
        if (a.closest(".grid") && b.closest(".grid")) continue; // the grid's cells sit edge to edge
        const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
        const x = Math.min(p.right, q.right) - Math.max(p.left, q.left);
        const y = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
        if (x > 1.5 && y > 1.5) problems.push(`${name(a)} overlaps ${name(b)}`);
      }
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    problems.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${window.innerWidth} px window`);
  }
  return problems;
})()
