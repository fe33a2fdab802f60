"""Benchmark of the head at ViT-B/16 scale: ``python3 benchmarks/pycore_bench.py``.

Times :func:`pycore.vit.head.classification_head` side by side (interleaved, in one run)
with the minimal NumPy expression of the same math and with the bare matrix product
``h_hat @ W_head``, reports the median of each and the ratios, and the peak extra
memory of one call (tracemalloc). Targets: at most 1.1x the minimal expression, at
most 1.4x the bare product, peak extra memory under a quarter of the encoder output.
It also says which BLAS NumPy uses and with how many threads. A script, not a test:
``--strict`` makes it exit 1 when a target is missed.
"""

import argparse
import ctypes
import os
import platform
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pycore.vit.head import classification_head  # noqa: E402  (the checkout's pycore)


def minimal_head(encoder_output, W_head):
    """The same math in the fewest NumPy calls, with no checks (the yardstick)."""
    h = encoder_output[:, 0, :]
    h_hat = (h - h.mean(axis=-1, keepdims=True)) / np.sqrt(h.var(axis=-1, keepdims=True) + 1e-6)
    return h_hat @ W_head


def _blas_library():
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "blas" in os.path.basename(path).lower() and ".so" in path:
                    return path
    except (OSError, IndexError):
        pass
    return None


def _call(lib, names, restype):
    for name in names:
        func = getattr(lib, name, None)
        if func is not None:
            func.restype = restype
            return func()
    return None


def blas_report():
    """One line on the BLAS in use: name, version, core type, threads, environment."""
    info = "unknown BLAS"
    try:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        info = "{} {}".format(config.get("name"), config.get("version"))
    except Exception:     # NumPy < 1.26 has no mode="dicts"
        libraries = getattr(np.__config__, "blas_opt_info", {}).get("libraries")
        if libraries:
            info = " ".join(sorted(set(libraries)))
    threads, core = None, None
    path = _blas_library()
    if path:
        try:
            lib = ctypes.CDLL(path)
            threads = _call(lib, ("scipy_openblas_get_num_threads64_",
                                  "openblas_get_num_threads64_", "openblas_get_num_threads"),
                            ctypes.c_int)
            core = _call(lib, ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                               "openblas_get_corename"), ctypes.c_char_p)
            build = _call(lib, ("scipy_openblas_get_config64_", "openblas_get_config64_",
                                "openblas_get_config"), ctypes.c_char_p)
            if build:
                info += " ({})".format(build.decode().strip())
        except OSError:
            pass
    env = ", ".join("{}={}".format(k, os.environ.get(k, "unset")) for k in (
        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_CORETYPE"))
    return "BLAS: {}{}; threads used by BLAS: {} (CPUs: {}); {}".format(
        info, ", core {}".format(core.decode()) if core else "",
        threads if threads is not None else "unknown", os.cpu_count(), env)


def interleaved_medians(funcs, rounds, warmup=10, clock=time.perf_counter):
    """Median seconds of each function, timed one call at a time in rotating order so
    that machine noise hits all of them alike."""
    for _ in range(warmup):
        for f in funcs:
            f()
    times = [[] for _ in funcs]
    order = list(range(len(funcs)))
    for r in range(rounds):
        order = order[1:] + order[:1]
        for i in order:
            start = clock()
            funcs[i]()
            times[i].append(clock() - start)
    return [float(np.median(t)) for t in times]


def peak_extra_memory(func):
    """Peak bytes allocated during one call (tracemalloc sees NumPy's buffers),
    including the returned array."""
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def common_arguments(parser, rounds):
    """The options every CPython benchmark here takes: the head's sizes (B, D, C at ViT-B/16
    scale), timed rounds, seed, --strict and the clock. Returns `parser`."""
    parser.add_argument("--B", type=int, default=64)
    parser.add_argument("--D", type=int, default=768)
    parser.add_argument("--C", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall",
                        help="wall time (default), or this thread's CPU time, which other "
                             "processes do not inflate: use it with OPENBLAS_NUM_THREADS=1")
    return parser


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 benchmarks/pycore_bench.py", description=__doc__.split(
        "\n\n")[0])
    common_arguments(parser, rounds=300)
    parser.add_argument("--N", type=int, default=196)
    args = parser.parse_args(argv)

    rs = np.random.RandomState(args.seed)
    z = rs.standard_normal((args.B, args.N + 1, args.D))
    W = rs.standard_normal((args.D, args.C)) * 0.02
    h = z[:, 0, :]
    h_hat = np.ascontiguousarray(
        (h - h.mean(axis=-1, keepdims=True)) / np.sqrt(h.var(axis=-1, keepdims=True) + 1e-6))
    np.testing.assert_allclose(classification_head(z, W), minimal_head(z, W),
                               rtol=1e-10, atol=1e-12)

    print("ViT-B/16 head: B={}, N+1={}, D={}, C={}; encoder output {:.1f} MB, W_head {:.1f} "
          "MB".format(args.B, args.N + 1, args.D, args.C, z.nbytes / 1e6, W.nbytes / 1e6))
    print("Python {}, NumPy {}, {}".format(platform.python_version(), np.__version__,
                                            platform.machine()))
    print(blas_report())
    if hasattr(os, "getloadavg"):
        load = os.getloadavg()[0]
        print("load average before timing (other processes share the CPUs): {:.2f}".format(load))
        if load > 0.5 * (os.cpu_count() or 1):
            print("WARNING: the machine is busy; a multi-threaded BLAS then waits for CPUs and "
                  "the ratios mostly measure that wait (try again when idle, or compare with "
                  "OPENBLAS_NUM_THREADS=1)")
    t_head, t_min, t_bare = interleaved_medians(
        [lambda: classification_head(z, W), lambda: minimal_head(z, W), lambda: h_hat @ W],
        args.rounds, clock=time.perf_counter if args.clock == "wall" else time.thread_time)
    print("median {} of {} interleaved rounds: classification_head {:.3f} ms | minimal NumPy "
          "expression {:.3f} ms | bare h_hat @ W_head {:.3f} ms".format(
              "wall time" if args.clock == "wall" else "thread CPU time", args.rounds,
              t_head * 1e3, t_min * 1e3, t_bare * 1e3))
    mem_head = peak_extra_memory(lambda: classification_head(z, W))
    from pycore.vit import head as head_module  # the workspace the head keeps counts too
    kept = getattr(getattr(head_module, "_workspace", None), "buf", None)
    kept_bytes = kept.nbytes if kept is not None else 0
    mem_head += kept_bytes
    mem_min = peak_extra_memory(lambda: minimal_head(z, W))
    logits_bytes = args.B * args.C * 8
    checks = [
        ("time / minimal expression", t_head / t_min, 1.1, "{:.3f}x"),
        ("time / bare matrix product", t_head / t_bare, 1.4, "{:.3f}x"),
        ("peak extra memory / encoder output", mem_head / z.nbytes, 0.25, "{:.4f}"),
    ]
    print("peak extra memory of one call: classification_head {:.2f} MB (with the {:.2f} MB "
          "workspace it keeps between calls), minimal expression {:.2f} MB (each includes the "
          "{:.2f} MB of logits returned)".format(mem_head / 1e6, kept_bytes / 1e6,
                                                 mem_min / 1e6, logits_bytes / 1e6))
    failed = False
    for name, value, target, fmt in checks:
        ok = value <= target
        failed = failed or not ok
        print("{:<36} {:>9}  target <= {:<6} {}".format(name, fmt.format(value), target,
                                                        "PASS" if ok else "FAIL"))
    return 1 if (failed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
