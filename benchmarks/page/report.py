"""page_bench.py's report: each figure beside its target and floor, PASS or FAIL, the machine it
ran on, and a one-line summary."""
import os
import platform
import statistics

import onefile_bench
from . import scrub
from .common import (BIG_EDIT_RATIO_TARGET, BOOT_RATIO_TARGET, EDIT_RATIO_TARGET,
                               SECOND_VISIT_TARGET)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def verdict(ok):
    return "PASS" if ok else "FAIL"


def fmt(ms):
    return "%7.0f" % ms if ms is not None else "      -"


BOOT_MILESTONES = {
    # (label, explorer's mark, floor's mark)
    "fallback": [
        ("HTML parsed (DOMContentLoaded)", "domContentLoaded", "domContentLoaded"),
        ("Plotly.js evaluated", "plotlyEvaluated", None),
        ("KaTeX evaluated", "katexEvaluated", None),
        ("Pyodide's wasm + data downloaded", "runtimeFiles", "runtimeFiles"),
        ("Python started (loadPyodide resolved)", "status:numpy", "floor:python"),
        ("NumPy loaded and imported", "status:explorer", "floor:numpyImported"),
        ("explorer's Python imported (host ready)", "host:ready", None),
        ("ready", "ready", "ready"),
    ],
    "pyscript": [
        ("HTML parsed (DOMContentLoaded)", "domContentLoaded", "domContentLoaded"),
        ("Plotly.js evaluated", "plotlyEvaluated", None),
        ("Pyodide's wasm downloaded", "runtimeFiles", "runtimeFiles"),
        ("downloads done, Python starting", "status:python", None),
        ("NumPy loading", "status:numpy", None),
        ("NumPy imported: the explorer's Python runs", "status:explorer", "floor:numpyImported"),
        ("explorer's Python imported (host ready)", "host:ready", None),
        ("ready", "ready", "ready"),
    ],
}


def report_boot(host, boots):
    """Print section 1 for one host; returns (ratio, ok)."""
    explorer, floor, linked = boots["explorer"], boots["floor"], boots["explorer from a link"]
    e, f = median([m["ready"] for m in explorer]), median([m["ready"] for m in floor])
    ratio = e / f
    target = BOOT_RATIO_TARGET[host]
    ok = ratio <= target
    what = ("PyScript + Pyodide 314 + NumPy in a PyWorker, nothing else" if host == "pyscript"
            else "Pyodide 0.17 + NumPy only")
    print("\n1. %s host: navigation to ready (%d cold runs each, fresh browser context per run: no"
          " HTTP cache for either page)" % (host, len(explorer)))
    print("   explorer       median %6.0f ms   [min %.0f, max %.0f]"
          % (e, min(m["ready"] for m in explorer), max(m["ready"] for m in explorer)))
    print("   runtime floor  median %6.0f ms   [min %.0f, max %.0f]   (%s)"
          % (f, min(m["ready"] for m in floor), max(m["ready"] for m in floor), what))
    # Each run's explorer and floor boots are neighbours in time; the median of their ratios is
    # less moved by load that drifts over the minutes of the run (printed as a check).
    paired = median([e_["ready"] / f_["ready"] for e_, f_ in zip(explorer, floor)])
    print("   ratio          %.2fx   target <= %.2fx   %s   (median of per-run ratios: %.2fx)"
          % (ratio, target, verdict(ok), paired))
    l_ = median([m["ready"] for m in linked])
    print("   the explorer opened from a link to the same state, which draws nothing before Python"
          " is ready: median %.0f ms, %.2fx the floor" % (l_, l_ / f))
    if "bytecode floor" in boots:
        b = median([m["ready"] for m in boots["bytecode floor"]])
        print("   the runtime floor with the build's bytecode (the standard library's and NumPy's, as"
              " the explorer boots): median %.0f ms;\n   the explorer takes %.2fx that: its own"
              " cost over the same runtime booted the same way" % (b, e / b))
    if "explorer, second visit" in boots:  # the floor booted as the explorer: with its bytecode
        e2 = median([m["ready"] for m in boots["explorer, second visit"]])
        f2 = median([m["ready"] for m in boots["floor, second visit"]])
        which = "bytecode floor" if "bytecode floor" in boots else "runtime floor"
        print("   a second visit (caches warm from a first one): explorer median %.0f ms, %s median"
              " %.0f ms: %.2fx (target <= %.2fx) %s" % (e2, which, f2, e2 / f2, SECOND_VISIT_TARGET,
                                                     verdict(e2 / f2 <= SECOND_VISIT_TARGET)))
    print("   the page's main thread until ready (median ms): longest task, total blocking time"
          " (the sum of each long task's time over 50 ms)")
    rows = [("explorer", explorer), ("runtime floor", floor)]
    for name in ("main-thread floor", "bytecode floor"):
        if name in boots:
            rows.append((name, boots[name]))
    for name, runs in rows:
        print("     %-20s ready %6.0f   longest task %6.0f   blocking %6.0f" % (
            name, median([m["ready"] for m in runs]), median([m["longestTask"] for m in runs]),
            median([m["blocked"] for m in runs])))
    print("   where the time goes (median ms since navigation start):")
    print("     %-42s %8s %8s" % ("milestone", "explorer", "floor"))
    for label, em, fm in BOOT_MILESTONES[host]:
        ev = median([m.get(em) for m in explorer]) if em else None
        fv = median([m.get(fm) for m in floor]) if fm else None
        print("     %-42s %8s %8s" % (label, fmt(ev).strip() if ev is not None else "-",
                                      fmt(fv).strip() if fv is not None else "-"))
    return ratio, ok


def breakdown(run):
    """Split one page edit: edit event -> first Plotly.react (Python, reading the matrices, grids,
    URL) and first react -> last react resolved (Plotly, with the text panels drawn meanwhile)."""
    reacts = run["reacts"]
    if not reacts or run["inputAt"] is None:
        return {}
    first = min(r["start"] for r in reacts)
    last = max(r["resolved"] or r["returned"] for r in reacts)
    answer = run["answerAt"] - run["inputAt"] if run.get("answerAt") is not None else None
    return {"pre": first - run["inputAt"], "span": last - first, "python": run["pythonMs"],
            "answer": answer, "worker": run.get("workerMs"),
            "react": sum(r["returned"] - r["start"] for r in reacts), "katex": run["katexMs"]}


def ratio_target(res):
    """The edit ratio target of one host's scenario (None: none): the host's at the worked
    example's size."""
    if not res["scenario"].has_ratio_target:
        return None
    return EDIT_RATIO_TARGET[res["host"]] if res["scenario"].preset is None else BIG_EDIT_RATIO_TARGET


def edit_figures(res):
    """Medians of one scenario and its verdicts."""
    sc = res["scenario"]
    page = median([r["ms"] for r in res["page"]])
    floor = median([r["ms"] for r in res["floor"]])
    # An edit whose heatmaps the page recolours itself calls no Plotly.react: this floor is then
    # nothing, and the edit's floor is the scrubbing section's (a worker round trip and the same
    # cells painted on canvases): no ratio here
    plotly = bool(res["redraws"])
    ratio = (page / floor if floor else float("inf")) if plotly else None
    target = ratio_target(res)
    return {"page": page, "floor": floor, "ratio": ratio, "plotly": plotly,
            "ratio_ok": target is None or not plotly or ratio <= target,
            "abs_ok": page <= sc.target_ms}


def report_edits(host, results, runs, warmups):
    """Print section 2 for one host; returns a list of (name, ok) verdicts."""
    verdicts = []
    print("\n2. %s host: edit to render (%d edits per scenario after %d warm-ups; each edit followed"
          " by one round of its floor)" % (host, runs, warmups))
    print("   page  = <html data-last-render-ms>: edit event to the end of the last redraw, measured"
          " by the page\n   floor = Plotly.react alone, in a page with only Plotly.js, on the heatmaps"
          " the edit redrew,\n           with the page's own captured arguments (new arrays each time)")
    for res in results:
        sc, f = res["scenario"], edit_figures(res)
        plotly = f["plotly"]
        if sc.has_ratio_target and plotly:
            verdicts.append(("%s (%s) ratio" % (host, sc.key), f["ratio_ok"]))
        verdicts.append(("%s (%s) median" % (host, sc.key), f["abs_ok"]))
        shapes = ", ".join("%s %dx%d" % ((i.replace("heatmap-", ""),) + res["shapes"][i])
                           if res["shapes"][i] else "%s (a chart)" % i
                           for i in res["redraws"])
        print("\n   (%s) %s: edit %s; redraws %s" % (sc.key, sc.title, sc.label,
                                                     shapes or "no Plotly figure"))
        if res["purges"]:
            print("       also purges: %s" % ", ".join(res["purges"]))
        print("       %-14s %8s %8s %8s" % ("", "median", "min", "max"))
        for name, values in (("page", [r["ms"] for r in res["page"]]),
                             ("Plotly floor", [r["ms"] for r in res["floor"]])):
            print("       %-14s %8.1f %8.1f %8.1f ms" % (name, median(values), min(values), max(values)))
        if not plotly:
            ratio_text = ("no ratio: the edit called no Plotly.react (the page recoloured the cells"
                          " itself; its floor is the scrubbing section's)")
        elif sc.has_ratio_target:
            ratio_text = "ratio %.2fx (target <= %.2fx) %s" % (f["ratio"], ratio_target(res),
                                                                verdict(f["ratio_ok"]))
        else:
            ratio_text = "ratio %.2fx (no target: the floor does not draw the page's bitmap)" % f["ratio"]
        print("       %s;  median %.0f ms (target <= %d ms) %s"
              % (ratio_text, f["page"], sc.target_ms, verdict(f["abs_ok"])))
        traffic = [r["traffic"] for r in res["page"]]
        print("       per edit, between the page and Python (medians): %s request(s), one message"
              " each way; answers: %.1f kB of JSON + %.1f kB of matrices"
              % (median([x["calls"] for x in traffic]), median([x["jsonBytes"] for x in traffic]) / 1e3,
                 median([x["matrixBytes"] for x in traffic]) / 1e3))
        parts = [breakdown(r) for r in res["page"]]
        m = {k: median([p.get(k) for p in parts])
             for k in ("pre", "span", "python", "answer", "worker", "react", "katex")}
        if m["pre"] is not None:
            print("       where the page's time goes (medians, ms):")
            print("         edit event -> first Plotly.react %7.1f  (the answer was in the page at %.1f;"
                  " requests to answers %.1f, the link's included, of which %.1f answering in the"
                  " worker: Python, reading the matrices)" % (m["pre"], m["answer"], m["python"], m["worker"]))
            print("         first react -> all resolved     %7.1f  (inside the react calls %.1f,"
                  " KaTeX %.1f)" % (m["span"], m["react"], m["katex"]))
            print("         the same react calls: %.1f in the floor page (inside react %.1f);"
                  " %.1f replayed in the explorer (inside react %.1f)"
                  % (f["floor"], median([r["reactMs"] for r in res["floor"]]),
                     median([r["ms"] for r in res["replay"]]),
                     median([r["reactMs"] for r in res["replay"]])))
            print("         to the next frame (incl. the page's relayout and paint, not in lastRenderMs):"
                  " page %.1f, floor %.1f" % (median([r["frameMs"] for r in res["page"]]),
                                               median([r["frameMs"] for r in res["floor"]])))
    return verdicts


def load_average():
    """The 1-minute load average (None where unknown): other work on the machine shows up in
    every figure, so it is printed with them."""
    try:
        return round(os.getloadavg()[0], 1)
    except (OSError, AttributeError):
        return None


def machine_facts(browser):
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count()
    try:
        import importlib.metadata as md
        pw = md.version("playwright")
    except Exception:
        pw = "?"
    return {"nproc": cpus, "chromium": browser.version, "playwright": pw, "load": load_average(),
            "python": platform.python_version(), "machine": "%s %s" % (platform.system(), platform.machine())}


def report_hosts(side_by_side):
    """Print section 3 (bench_hosts' results); returns verdicts (at the worked example's size,
    the PyScript host must be no slower)."""
    if not side_by_side:
        return []
    print("\n3. The hosts side by side: edits alternating between a PyScript and a fallback explorer"
          "\n   (medians, ms; Python's part: edit event -> first Plotly.react, the trip to Python and"
          " back)")
    verdicts = []
    for sc, runs_by in side_by_side:
        page = {h: median([r["ms"] for r in runs]) for h, runs in runs_by.items()}
        pre = {h: median([breakdown(r).get("pre") for r in runs]) for h, runs in runs_by.items()}
        span = {h: median([breakdown(r).get("span") for r in runs]) for h, runs in runs_by.items()}
        ratio = page["pyscript"] / page["fallback"]
        ok = ratio <= 1.0
        verdicts.append(("(%s) PyScript no slower than fallback" % sc.key, ok))
        print("   (%s) %-28s PyScript %5.1f  fallback %5.1f  %.2fx (target <= 1.00x) %s;"
              "  Python's part %.1f vs %.1f (%.2fx), the redraws %.1f vs %.1f"
              % (sc.key, sc.title, page["pyscript"], page["fallback"], ratio, verdict(ok),
                 pre["pyscript"], pre["fallback"], pre["pyscript"] / pre["fallback"],
                 span["pyscript"], span["fallback"]))
    return verdicts


def print_report(args, boots, edits, side_by_side, errors, facts, seconds, one_file=None, scrubs=None):
    """The sections and the summary line; returns the exit status."""
    verdicts, summary = [], []
    for host, boot in boots.items():
        ratio, ok = report_boot(host, boot)
        verdicts.append(("%s boot ratio" % host, ok))
        summary.append("%s boot %.2fx %s" % (host, ratio, verdict(ok)))
    for host, results in edits.items():
        verdicts += report_edits(host, results, args.runs, args.warmups)
        for res in results:
            f = edit_figures(res)
            ratio = " %.2fx" % f["ratio"] if f["plotly"] else ""
            summary.append("%s (%s) %.0f ms%s %s" % (host, res["scenario"].key, f["page"], ratio,
                                                     verdict(f["ratio_ok"] and f["abs_ok"])))
    hosts = report_hosts(side_by_side)
    verdicts += hosts
    summary += ["%s %s" % (name, verdict(ok)) for name, ok in hosts]
    for host, (results, switches) in (scrubs or {}).items():
        scrub_verdicts = scrub.report_scrubs(host, results, verdict)
        scrub_verdicts += scrub.report_switches(host, switches, verdict)
        verdicts += scrub_verdicts
        summary.append("%s scrubbing %d/%d %s" % (host, sum(ok for _, ok in scrub_verdicts), len(scrub_verdicts),
                                                 verdict(all(ok for _, ok in scrub_verdicts))))
    end_load = load_average()
    print("\n4. Machine: %s CPUs (nproc), Chromium %s; load average %s at start, %s at the end;"
          " whole run %.0f s" % (facts["nproc"], facts["chromium"], facts["load"], end_load, seconds))
    if max(facts["load"] or 0, end_load or 0) > facts["nproc"]:
        print("   the machine was busy with other work (load above its %d CPUs): expect noisy figures;"
              " the ratios, measured interleaved, are the steadier ones" % facts["nproc"])
    if errors.items:
        print("   page errors seen (%d), first ones:" % len(errors.items))
        for item in errors.items[:5]:
            print("     " + item[:200])
    if one_file:  # section 5: benchmarks/onefile_bench.py
        found = onefile_bench.report(one_file)
        verdicts += found
        summary += ["%s %s" % (name, verdict(ok)) for name, ok in found]
    met = sum(ok for _, ok in verdicts)
    print("\nSUMMARY: %d of %d targets met; %s" % (met, len(verdicts), "; ".join(summary)))
    return 1 if args.strict and met < len(verdicts) else 0
