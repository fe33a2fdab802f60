"""What page_bench.py measures, side by side with one browser: boots against the runtime's floor,
edits against the Plotly floor, the two hosts against each other, and (page/scrub.py)
scrubbing."""
import time

from . import scrub
from .common import BOOT_TIMEOUT_MS, SCENARIOS, BenchError
from .pages import (Explorer, InPageReplay, PageErrors, PlotlyFloor, boot_once,
                              link_to_worked_example, new_page, replay_panels, runtime_floor,
                              wait_ready)
from .report import median


def bench_boot(browser, errors, base, host, runs, bytecode_floor=False):
    """Navigation to ready: the explorer (plain and from a link), its runtime floor and, for the
    PyScript host, the main-thread floor and (`bytecode_floor`) the floor with the build's
    bytecode, in turn (and in alternating order); then second visits of the explorer and of its
    floor ("explorer, second visit", "floor, second visit"). Returns {name: [marks of each
    run]}."""
    targets = [("explorer", base + "index.html"), ("floor", base + runtime_floor(host)),
               ("explorer from a link", base + "index.html" + link_to_worked_example())]
    if host == "pyscript":
        targets.append(("main-thread floor", base + "floor-pyscript-main.html"))
        if bytecode_floor:
            targets.append(("bytecode floor", base + "floor-pyscript-bytecode.html"))
    out = {name: [] for name, _ in targets}
    # One untimed boot of each first: it pays for the browser's and the OS's first-time costs.
    for name, url in targets:
        boot_once(browser, errors, url, name)
    for run in range(runs):
        for name, url in (targets if run % 2 == 0 else targets[::-1]):
            out[name].append(boot_once(browser, errors, url, name))
        print("  %s boot run %d/%d: %s" % (host, run + 1, runs, ", ".join(
            "%s %.0f ms" % (name, out[name][-1]["ready"]) for name, _ in targets)), flush=True)
    # Second visits: the explorer against the floor booted the same way (with the build's
    # bytecode, when there is one), in turn.
    floor = "bytecode floor" if bytecode_floor and host == "pyscript" else "floor"
    again = [("explorer, second visit", base + "index.html"),
             ("floor, second visit", dict(targets)[floor])]
    for name, _ in again:
        out[name] = []
    for run in range(runs):
        for name, url in (again if run % 2 == 0 else again[::-1]):
            out[name].append(boot_once(browser, errors, url, name, second_visit=True))
        print("  %s second visit %d/%d: %s" % (host, run + 1, runs, ", ".join(
            "%s %.0f ms" % (name, out[name][-1]["ready"]) for name, _ in again)), flush=True)
    return out


def bench_edits(browser, errors, base, host, runs, warmups):
    """Edit-to-render for every scenario; each timed edit is followed by one round of its Plotly
    floor and one replay of the same react calls inside the explorer (diagnostic)."""
    results = []
    explorer = Explorer(browser, errors, base)
    print("  Python's warm-up: %s, %.1f s after the page was ready" % explorer.warm_up, flush=True)
    preset = None
    for sc in SCENARIOS:
        if sc.preset != preset:
            ms = explorer.load_preset(sc.preset)
            print("  loaded preset %r in %.0f ms (the page's lastRenderMs)" % (sc.preset, ms), flush=True)
            preset = sc.preset
        explorer.page.bring_to_front()
        for _ in range(warmups):
            explorer.edit(sc.label)
        # Two consecutive edits, captured: the floor alternates between their react arguments.
        first = explorer.edit(sc.label, capture=True)
        order = [r["id"] for r in first["reacts"]]
        captures = [explorer.captured_calls(order)]
        second = explorer.edit(sc.label, capture=True)
        if [r["id"] for r in second["reacts"]] != order:
            raise BenchError("(%s) two edits of %s redrew different heatmaps: %s vs %s"
                             % (sc.key, sc.label, order, [r["id"] for r in second["reacts"]]))
        captures.append(explorer.captured_calls(order))
        panels = replay_panels(captures)
        floor = PlotlyFloor(browser, errors, base, panels)
        replay = InPageReplay(explorer, panels)
        for _ in range(warmups):
            floor.step()
            replay.step()
        page_runs, floor_runs, replay_runs = [], [], []
        for _ in range(runs):
            explorer.page.bring_to_front()
            page_runs.append(explorer.edit(sc.label))
            floor_runs.append(floor.step())
            replay_runs.append(replay.step())
        floor.close()
        results.append({"host": host, "scenario": sc, "redraws": order, "purges": first["purges"],
                        "page": page_runs, "floor": floor_runs, "replay": replay_runs,
                        "shapes": {i: explorer.shape(i) for i in order}})
        print("  %s (%s) %s: page %.0f ms, floor %.0f ms (medians)"
              % (host, sc.key, sc.title, median([r["ms"] for r in page_runs]),
                 median([r["ms"] for r in floor_runs])), flush=True)
    return explorer, results


def trace_examples(browser, errors, base, host, explorer, out_dir):
    """Chromium performance traces (open in chrome://tracing or ui.perfetto.dev) of one cold boot
    of each page and one edit per scenario, taken after the timed runs so they cannot skew them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, url in (("boot-explorer", base + "index.html"), ("boot-floor", base + runtime_floor(host))):
        page = new_page(browser, errors, name)
        browser.start_tracing(page=page, path=str(out_dir / (name + ".json")))
        page.goto(url, wait_until="commit", timeout=BOOT_TIMEOUT_MS)
        wait_ready(page)
        browser.stop_tracing()
        page.context.close()
    if explorer is not None:
        preset = SCENARIOS[-1].preset  # where bench_edits left the explorer
        for sc in reversed(SCENARIOS):
            if sc.preset != preset:
                explorer.load_preset(sc.preset or "worked")
                preset = sc.preset
            browser.start_tracing(page=explorer.page, path=str(out_dir / ("edit-%s.json" % sc.key)))
            explorer.edit(sc.label)
            browser.stop_tracing()
    print("\ntraces written to %s" % out_dir)


def measure(args, browser, bases, with_bytecode=()):
    """Run what was asked, with one browser, for each host in `bases` ({host: base URL});
    `with_bytecode`: the hosts whose sites have the build's bytecode (a floor with it is booted
    too). Returns (boots, edits, side_by_side, errors, scrubs): boots, edits and scrubs keyed
    by host (scrubs: the scrub scenarios' results, and the menus' switching times),
    side_by_side bench_hosts' results (None unless both hosts are measured)."""
    errors = PageErrors()
    boots, edits, side_by_side, scrubs = {}, {}, None, {}
    explorer = explorer_host = None
    for host, base in bases.items():
        if not args.skip_boot:
            print("\nbooting each %s page 1+%d times..." % (host, args.boot_runs), flush=True)
            boots[host] = bench_boot(browser, errors, base, host, args.boot_runs,
                                     bytecode_floor=host in with_bytecode)
    for host, base in bases.items():
        if not args.skip_edits:
            print("\nediting on the %s host..." % host, flush=True)
            explorer, edits[host] = bench_edits(browser, errors, base, host, args.runs, args.warmups)
            explorer_host = host
    if not args.skip_edits and {"pyscript", "fallback"} <= set(bases):
        print("\nediting on both hosts, edit by edit...", flush=True)
        side_by_side = bench_hosts(browser, errors, bases, args.runs, args.warmups)
    if args.trace:  # the host whose explorer is still open, else the first
        host = explorer_host or next(iter(bases))
        trace_examples(browser, errors, bases[host], host, explorer, args.trace)
    for host, base in bases.items():
        if not args.skip_scrub:
            print("\nscrubbing on the %s host..." % host, flush=True)
            page = Explorer(browser, errors, base)
            scrubs[host] = (scrub.bench_scrubs(browser, errors, base, host, args.scrub_runs, new_page, page),
                            scrub.bench_switches(page, args.scrub_runs))
            page.page.context.close()
    return boots, edits, side_by_side, errors, scrubs


def bench_hosts(browser, errors, bases, runs, warmups):
    """Section 3: the worked example's edits on a fresh explorer of each host, alternating edit by
    edit (and which host goes first, run by run). Returns [(scenario, {host: [edit results]})]."""
    explorers = {host: Explorer(browser, errors, bases[host]) for host in ("pyscript", "fallback")}
    results = []
    try:
        for sc in (sc for sc in SCENARIOS if sc.preset is None):
            runs_by = {host: [] for host in explorers}
            for k in range(warmups + runs):
                for host in (list(explorers) if k % 2 == 0 else list(reversed(explorers))):
                    time.sleep(0.1)  # the other page's work after its redraw (its link) is over
                    explorers[host].page.bring_to_front()
                    result = explorers[host].edit(sc.label)
                    if k >= warmups:
                        runs_by[host].append(result)
            results.append((sc, runs_by))
            print("  (%s) %s: PyScript %.0f ms, fallback %.0f ms (medians)"
                  % (sc.key, sc.title, median([r["ms"] for r in runs_by["pyscript"]]),
                     median([r["ms"] for r in runs_by["fallback"]])), flush=True)
    finally:
        for explorer in explorers.values():
            explorer.page.context.close()
    return results
