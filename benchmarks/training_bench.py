"""Benchmark of one training step's math: ``python3 benchmarks/training_bench.py``.

Times :func:`pycore.vit.backward.head_backward` (the correct head: LayerNorm, logits,
softmax, cross-entropy, dW_head and dh_cls) side by side, interleaved in one run, with the
minimal NumPy expression of the same math written below, at ViT-B/16 scale (B = 64, D = 768,
C = 1000), and reports the medians, the ratio (target: at most 1.3x) and the peak extra memory
of one call of each. Then it times what the page calls per training step at the page's size
(B = 64, D = 64, C = 10). A script, not a test: ``--strict`` makes it exit 1 on a miss.

``--memory`` measures instead the Python memory of the page's training requests (tracemalloc,
the state included) at the sizes docs/performance.md's table lists, against the budget of
:data:`pycore.explorer.finetune.memory.MEMORY_MB`.

``--requests`` times instead the page's ``train`` requests at the largest sizes, side by side
in one run: the request of Play that starts a run, the next one, the later ones, and Step on
a new run, each beside the steps it took and the estimate
(:func:`pycore.explorer.finetune.panel.request_overhead_ms`) that chose them, against the budget of
:data:`pycore.explorer.finetune.panel.REQUEST_WORK_MS` (an estimate for the page: CPython's time
times :data:`pycore.explorer.finetune.panel.PAGE_SLOWER`).
"""

import argparse
import os
import platform
import sys
import time
import tracemalloc

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from pycore_bench import blas_report, common_arguments, interleaved_medians, peak_extra_memory  # noqa: E402
from pycore.vit import SGD, Adam, HeadTrainer, head_backward, train_head  # noqa: E402
from tests.test_explorer_limits import training_link  # noqa: E402  (the test's states, measured)

TARGET = 1.3


def minimal_forward_backward(h, W, y):
    """The same math in the fewest NumPy calls, with no checks (the yardstick)."""
    B = h.shape[0]
    rows = np.arange(B)
    sigma = np.sqrt(h.var(axis=1, keepdims=True) + 1e-6)
    h_hat = (h - h.mean(axis=1, keepdims=True)) / sigma
    logits = h_hat @ W
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    probs = e / total
    loss = np.mean(np.log(total[:, 0]) - shifted[rows, y])
    d_logits = probs.copy()
    d_logits[rows, y] -= 1.0
    d_logits /= B
    dW = h_hat.T @ d_logits
    d_hat = d_logits @ W.T
    dh = (d_hat - d_hat.mean(axis=1, keepdims=True)
          - h_hat * (d_hat * h_hat).mean(axis=1, keepdims=True)) / sigma
    return loss, logits, probs, dW, dh


def _check_same(h, W, y):
    g = head_backward(h, W, y)
    loss, logits, probs, dW, dh = minimal_forward_backward(h, W, y)
    assert abs(g.loss - loss) <= 1e-12 * max(1.0, abs(loss))
    for ours, theirs in ((g.logits, logits), (g.probs, probs), (g.dW_head, dW),
                         (g.dh_cls, dh)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12 * np.abs(theirs).max())


def _per_call(func, rounds, clock):
    """Median seconds of ``func`` over ``rounds`` calls (after a warm-up)."""
    return interleaved_medians([func], rounds, warmup=5, clock=clock)[0]


MEMORY_SIZES = (
    ("ViT-B/16, B = 2, D = 768, C = 1000", dict(B=2, D=768)),
    ("B = 64, D = 1024, C = 1000", dict()),
    ("the same with the largest inputs, 64 × 32 × 1024", dict(tokens=32)),
    ("the same, input scale 2 (five heads)", dict(tokens=32, input_scale=2.0)),
)
"""The rows of the memory table: a name, and :func:`training_link`'s sizes."""


def training_memory(link, requests=3):
    """(peak MB over ``requests`` ``train`` requests of 500 steps, MB held after them, heads
    trained): tracemalloc runs from before the session, so the state is included."""
    from pycore.explorer.session import Session
    tracemalloc.start()
    try:
        s = Session()
        assert s.handle({"op": "load", "fragment": link})["ok"]
        tracemalloc.reset_peak()
        for _ in range(requests):
            answer = s.handle({"op": "train", "n": 500})
            assert answer["ok"], answer["error"]
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    heads = sum(1 for c in s.finetune.run.curves() if c.trainer is not None)
    return peak / 1e6, held / 1e6, heads


def memory_table():
    """Print the memory table, without and with the pre-training MLP open in "Other heads"
    (the answer that needs the most); returns whether every peak is within the budget."""
    from pycore.explorer.finetune.memory import MEMORY_MB
    ok = True
    for variant in (None, "mlp_gelu"):
        print("Python memory of three train requests (tracemalloc, the state included){}, MB: "
              "peak, held after (heads trained)".format(
                  ", the MLP head open" if variant else ""))
        print("| sizes | SGD | momentum | Adam |\n|---|---|---|---|")
        for name, sizes in MEMORY_SIZES:
            cells = []
            for optimizer in ("sgd", "momentum", "adam"):
                peak, held, heads = training_memory(training_link(optimizer, variant=variant,
                                                                  **sizes))
                ok = ok and peak < MEMORY_MB
                cells.append("{:.0f}, {:.0f} ({})".format(peak, held, heads))
            print("| {} | {} |".format(name, " | ".join(cells)), flush=True)
    print("every peak under {:.0f} MB: {}".format(MEMORY_MB, "PASS" if ok else "FAIL"))
    return ok


REQUEST_SIZES = (
    ("ViT-B/16, B = 2, D = 768, C = 1000", dict(B=2, D=768)),
    ("B = 64, D = 1024, C = 1000", dict()),
    ("the largest inputs, 64 × 32 × 1024, input scale 2", dict(tokens=32, input_scale=2.0)),
)
"""The rows of the request table: a name, and :func:`training_link`'s sizes."""

REQUEST_KINDS = ("start (Play)", "next", "later", "Step, new run")


def request_times(link, clock, later=3):
    """One session's ``train`` requests, in the order the page sends them: Play's first
    request (n = 500: at the largest sizes it only starts the run), the next, ``later`` more,
    then Reset and Step (n = 1) on a new run. Returns {kind: [(ms, steps taken, estimated
    page ms)]} (:data:`REQUEST_KINDS`)."""
    from pycore.explorer.finetune import panel as finetune
    from pycore.explorer.session import Session
    s = Session()
    assert s.handle({"op": "load", "fragment": link})["ok"]
    st = s.state
    out = dict((kind, []) for kind in REQUEST_KINDS)

    def timed(kind, request):
        fresh = s.finetune.current_run(st) is None
        start = clock()
        answer = s.handle(request)
        ms = (clock() - start) * 1e3
        assert answer["ok"], answer["error"]
        run = s.finetune.run
        heads = sum(1 for c in run.curves() if c.trainer is not None)
        taken = answer["finetune"]["trained"]["taken"]
        optimizer = run.train["optimizer"]
        estimate = finetune.request_overhead_ms(st.B, st.D, st.C, optimizer, heads, fresh) \
            + taken * finetune.step_cost_ms(st.B, st.D, st.C, optimizer, heads)
        out[kind].append((ms, taken, estimate))

    timed("start (Play)", {"op": "train", "n": 500})
    timed("next", {"op": "train", "n": 500})
    for _ in range(later):
        timed("later", {"op": "train", "n": 500})
    assert s.handle({"op": "train_reset"})["ok"]
    timed("Step, new run", {"op": "train", "n": 1})
    return out


def request_table(clock, sessions=3):
    """Print the request table: for each size and optimizer, each kind of request's median
    and largest time over ``sessions`` sessions (the first of a process also makes its memory
    for the first time), the steps it took and the estimate for the page; returns whether
    every estimate and every measured time times PAGE_SLOWER are within the budget, but for
    the one step a request cannot do without."""
    from pycore.explorer.finetune.panel import PAGE_SLOWER, REQUEST_WORK_MS
    ok = True
    print("train requests, {} ms per request (median, largest of {} sessions; steps taken; "
          "the page's estimate); budget {:.0f} ms in the page, about {:.0f} ms in CPython "
          "(x {} for the page)".format("wall" if clock is time.perf_counter else
                                       "thread CPU", sessions, REQUEST_WORK_MS,
                                       REQUEST_WORK_MS / PAGE_SLOWER, PAGE_SLOWER))
    print("| sizes | optimizer | " + " | ".join(REQUEST_KINDS) + " |")
    print("|---|---|" + "---|" * len(REQUEST_KINDS))
    for name, sizes in REQUEST_SIZES:
        for optimizer in ("sgd", "momentum", "adam"):
            link = training_link(optimizer, **sizes)
            runs = [request_times(link, clock) for _ in range(sessions)]
            cells = []
            for kind in REQUEST_KINDS:
                rows = [row for r in runs for row in r[kind]]
                times = sorted(ms for ms, _, _ in rows)
                taken, estimate = rows[0][1], rows[0][2]
                cells.append("{:.0f}, {:.0f} ms ({} step{}; est. {:.0f})".format(
                    times[len(times) // 2], times[-1], taken, "" if taken == 1 else "s",
                    estimate))
                if taken > 1 or kind == "start (Play)":   # work it could have left out
                    ok = ok and estimate <= REQUEST_WORK_MS \
                        and times[len(times) // 2] * PAGE_SLOWER <= REQUEST_WORK_MS * 1.25
            print("| {} | {} | {} |".format(name, optimizer, " | ".join(cells)), flush=True)
    print("every request that could take fewer steps within the budget (median): {}".format(
        "PASS" if ok else "FAIL"))
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 benchmarks/training_bench.py",
                                     description=__doc__.split("\n\n")[0])
    common_arguments(parser, rounds=200)
    parser.add_argument("--page-rounds", type=int, default=2000)
    parser.add_argument("--memory", action="store_true",
                        help="measure the training requests' Python memory instead")
    parser.add_argument("--requests", action="store_true",
                        help="time the page's train requests at the largest sizes instead")
    args = parser.parse_args(argv)
    if args.memory:
        return 1 if (not memory_table() and args.strict) else 0
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    if args.requests:
        return 1 if (not request_table(clock) and args.strict) else 0

    rs = np.random.RandomState(args.seed)
    h = rs.standard_normal((args.B, args.D))
    W = rs.standard_normal((args.D, args.C)) * 0.02
    y = rs.randint(0, args.C, args.B)
    _check_same(h, W, y)

    print("training step of the ViT head: B={}, D={}, C={}; W_head {:.1f} MB".format(
        args.B, args.D, args.C, W.nbytes / 1e6))
    print("Python {}, NumPy {}, {}".format(platform.python_version(), np.__version__,
                                            platform.machine()))
    print(blas_report())
    if hasattr(os, "getloadavg"):
        load = os.getloadavg()[0]
        print("load average before timing (other processes share the CPUs): {:.2f}".format(load))
        if load > 0.5 * (os.cpu_count() or 1):
            print("WARNING: the machine is busy; the ratio mostly measures waiting for CPUs "
                  "(try again when idle, or with OPENBLAS_NUM_THREADS=1 --clock thread)")
    h_hat = (h - h.mean(axis=1, keepdims=True)) / np.sqrt(h.var(axis=1, keepdims=True) + 1e-6)
    d_logits = rs.standard_normal((args.B, args.C))
    t_ours, t_min, t_bare = interleaved_medians(
        [lambda: head_backward(h, W, y), lambda: minimal_forward_backward(h, W, y),
         lambda: (h_hat @ W, h_hat.T @ d_logits, d_logits @ W.T)],
        args.rounds, clock=clock)
    print("median {} of {} interleaved rounds: head_backward {:.3f} ms | minimal NumPy "
          "expression {:.3f} ms | its three bare matrix products {:.3f} ms".format(
              "wall time" if args.clock == "wall" else "thread CPU time", args.rounds,
              t_ours * 1e3, t_min * 1e3, t_bare * 1e3))
    mem_ours = peak_extra_memory(lambda: head_backward(h, W, y))
    mem_min = peak_extra_memory(lambda: minimal_forward_backward(h, W, y))
    returned = (2 * args.B * args.C + args.D * args.C + args.B * args.D) * 8
    print("peak extra memory of one call: head_backward {:.2f} MB, minimal expression {:.2f} MB "
          "(each includes the {:.2f} MB of arrays returned: logits, probs, dW_head, "
          "dh_cls)".format(mem_ours / 1e6, mem_min / 1e6, returned / 1e6))
    ratio = t_ours / t_min
    ok = ratio <= TARGET
    print("{:<36} {:>9}  target <= {:<6} {}".format("time / minimal expression",
                                                    "{:.3f}x".format(ratio), TARGET,
                                                    "PASS" if ok else "FAIL"))

    # What the page calls per step, at its size: 64 samples, 64 features, 10 classes.
    pB, pD, pC = 64, 64, 10
    ph = rs.standard_normal((pB, pD))
    py = np.arange(pB) % pC
    pW = np.zeros((pD, pC))
    sgd = HeadTrainer(ph, pW, py, SGD(0.1))
    adam = HeadTrainer(ph, pW, py, Adam(0.01))
    rounds = args.page_rounds
    t_backward = _per_call(lambda: head_backward(ph, pW, py), rounds, clock)
    t_sgd = _per_call(sgd.step, rounds, clock)
    t_adam = _per_call(adam.step, rounds, clock)
    start = clock()
    train_head(ph, pW, py, steps=50, lr=0.1)
    t_run = (clock() - start) / 50
    print("page size B={}, D={}, C={}, per step (median of {}): HeadTrainer.step with SGD "
          "{:.1f} us, with Adam {:.1f} us; head_backward alone {:.1f} us; train_head, 50 steps: "
          "{:.1f} us per step".format(pB, pD, pC, rounds, t_sgd * 1e6, t_adam * 1e6,
                                       t_backward * 1e6, t_run * 1e6))
    return 1 if (not ok and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
