"""axe-core in the page, in any engine of this kit (docs/accessibility-checks.md).

axe-core is pinned in artifacts.json (npm) and fetched by the build's cache; it is never part of
a site. It is put into the page through the engine's own script evaluation (`Engine.evaluate`:
Playwright's evaluate in Chromium, WebDriver BiDi's script.callFunction in Firefox, classic
WebDriver's Execute Async Script in WebKit), with its source as the body of the function called.
None of these is subject to the page's Content-Security-Policy, which rightly refuses an inline
script and has no 'unsafe-eval': the page is checked exactly as served. (`inject` checks that
axe arrived and says which engine refused, should one ever start applying the policy.)
"""
import functools
import os
import time

from .base import EngineError
import pinned

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# Every WCAG 2.0, 2.1 and 2.2 level A and AA rule axe-core has (the rules with these tags: 70 in
# axe 4.14.1, its experimental and deprecated ones included); no other rule runs (axe's
# "best-practice" rules are left out). Every impact fails.
WCAG_A_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]

# Results a person can read: each rule that failed or that axe could not decide, with its nodes
# (the CSS path, the element's start tag, and what axe says is wrong or undecided).
RUN = """async (tags) => {
    const start = performance.now();
    // By rule id, not by tag: a tag runs only the rules axe enables by default, which leaves out
    // its experimental WCAG rules (css-orientation-lock, p-as-heading, table-fake-caption,
    // td-has-header) and its deprecated ones (aria-roledescription, audio-caption).
    const ids = axe.getRules(tags).map((rule) => rule.ruleId);
    const r = await axe.run(document, {runOnly: {type: 'rule', values: ids},
                                       resultTypes: ['violations', 'incomplete']});
    const ran = new Set([...r.passes, ...r.violations, ...r.incomplete, ...r.inapplicable].map((x) => x.id)).size;
    const node = (n) => ({target: n.target.map(String).join(' >>> '), html: n.html.slice(0, 160),
                          why: (n.failureSummary || [...n.any, ...n.all, ...n.none]
                                .map((c) => c.message).join('; ')).replace(/\\s+/g, ' ').slice(0, 300)});
    const rule = (v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(node)});
    return {version: axe.version, ms: Math.round(performance.now() - start),
            rules: ran + ' of ' + ids.length,
            violations: r.violations.map(rule), incomplete: r.incomplete.map(rule)};
}"""


@functools.lru_cache(maxsize=1)
def source():
    """axe-core's script (axe.min.js), from the build's cache (or the VIT_HEAD_MIRROR mirror)."""
    folder = pinned.unpacked("axe-core")
    with open(os.path.join(folder, "axe.min.js"), encoding="utf-8") as f:
        return f.read()


def inject(engine, source):
    """Put axe-core into the engine's current document (or frame), once."""
    if engine.evaluate("() => typeof window.axe === 'object'"):
        return
    try:
        engine.evaluate("() => {\n%s\n}" % source)
    except EngineError as e:
        raise EngineError("%s refused axe-core's script: %s" % (engine.name, str(e)[:500]))
    if not engine.evaluate("() => typeof window.axe === 'object' && typeof axe.run === 'function'"):
        raise EngineError("%s: axe-core's script ran but window.axe is missing" % engine.name)


def check(engine, source, state):
    """Run every WCAG A/AA rule in the engine's current document: a dict with the state, the
    engine, axe's version, the rules run, the violations and the incomplete results, and the
    seconds it took (the injection included)."""
    start = time.monotonic()
    inject(engine, source)
    found = engine.evaluate(RUN, WCAG_A_AA)
    found.update(state=state, engine=engine.name, engine_version=engine.version,
                 seconds=round(time.monotonic() - start, 2))
    text = report(found)
    print(text)
    _write(found["engine"], text)
    return found


# Every check's report, by engine, for the run: build/axe/<engine>.txt (each engine's file is
# started anew by its first check in a test process). A passing test's printed output is not
# shown by pytest: the incomplete results are read there.
RESULTS = os.path.join(ROOT, "build", "axe")
_started = set()


def _write(engine_name, text):
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, engine_name + ".txt"), "a" if engine_name in _started else "w",
              encoding="utf-8") as f:
        f.write(text + "\n")
    _started.add(engine_name)


def report(found):
    """The result as lines of text (the test's output; docs/accessibility-checks.md cites it)."""
    lines = ["axe %s, %s %s, %s: %s rules in %.2f s (axe.run %d ms): %d violations, %d incomplete"
             % (found["version"], found["engine"], found["engine_version"], found["state"],
                found["rules"], found["seconds"], found["ms"], len(found["violations"]),
                len(found["incomplete"]))]
    for rule in found["violations"]:  # each node: a violation is to be fixed where it is
        lines.append("  VIOLATION %s (%s, %d nodes): %s" % (rule["id"], rule["impact"],
                                                         len(rule["nodes"]), rule["help"]))
        for n in rule["nodes"]:
            lines.append("    %s  %s\n      %s" % (n["target"], n["html"], n["why"]))
    for rule in found["incomplete"]:  # by what axe could not decide, with a few of the nodes
        lines.append("  incomplete %s (%s, %d nodes): %s" % (rule["id"], rule["impact"],
                                                          len(rule["nodes"]), rule["help"]))
        why = {}
        for n in rule["nodes"]:
            why.setdefault(n["why"], []).append(n["target"])
        for text, targets in why.items():
            lines.append("    %d x %s: e.g. %s" % (len(targets), text, ", ".join(targets[:3])))
    return "\n".join(lines)


def violations(results):
    """{state: [rule id: targets]} of every violation in `results` (a list of `check`'s dicts)."""
    return {"%s in %s" % (r["engine"], r["state"]): ["%s (%s): %s" % (v["id"], v["impact"],
                                                                      ", ".join(n["target"] for n in v["nodes"]))
                                                     for v in r["violations"]]
            for r in results if r["violations"]}


def catches_a_nameless_button(engine):
    """Whether axe, in this engine, reports a button without a name (one added for the check
    and removed after it): a check that "no violations" is axe's finding, not a run that saw
    nothing."""
    return engine.evaluate("""async () => {
        const b = document.createElement('button');
        b.id = '__axe_probe';
        document.querySelector('main').append(b);
        try {
            const r = await axe.run('#__axe_probe', {runOnly: {type: 'rule', values: ['button-name']},
                                                     resultTypes: ['violations']});
            return r.violations.length === 1 && r.violations[0].nodes[0].target[0] === '#__axe_probe';
        } finally { b.remove(); }
    }""")
