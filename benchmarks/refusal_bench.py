#!/usr/bin/env python3
"""How long Python is held by input built to cost time, in CPython (this thread's CPU time,
which other processes on a loaded machine do not inflate):

    python3 benchmarks/refusal_bench.py

- links and cells holding absurdly long numbers (tests/test_explorer_bounds.py's cases), and
  requests holding a huge int in every field: each refused in far under a second (target 2 s
  for a case, 10 s for all the fields of all the requests);
- pastes with a million blank lines around the block (tests/test_explorer_hardening.py's):
  one pass, under 1 s each;
- every bad model file of tests/test_model_file_refusals.py: refused in under 1 s each, and the
  largest file a state allows, in requests of under 1 s each;
- model files, links and an edit request damaged as tests/test_input_fuzz.py damages them
  (seeded): under 1 s each.

The tests check what each answer says and that nothing changed; this prints the times and exits
with status 1 when a target is missed (the machine's load is printed first: on a busy machine
trust a miss only after a second run).
"""
import json
import os
import random
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

from model_files import npz_bytes, open_file, session_with_a_model  # noqa: E402
from pycore.explorer import encode_fragment  # noqa: E402
from pycore.explorer.session import Session  # noqa: E402
import test_explorer_bounds as bounds  # noqa: E402
import test_input_fuzz as fuzz  # noqa: E402
from test_model_file_refusals import CASES, CLS, W  # noqa: E402

clock = time.thread_time


def timed(fn, *args, **kwargs):
    t0 = clock()
    fn(*args, **kwargs)
    return clock() - t0


def worst(label, seconds, target, missed):
    top = max(seconds)
    print("%-58s %4d cases, %8.1f ms at most (target %.0f ms)" % (
        label, len(seconds), 1000 * top, 1000 * target))
    if top >= target:
        missed.append(label)


def main():
    print("load average: %.2f %.2f %.2f on %d CPUs" % (os.getloadavg() + (os.cpu_count(),)))
    missed = []
    links = [bounds.link_with("9" * n) for n in (1000000, 99000, bounds.NUMBER_MAX_CHARS + 1)]
    links += [bounds.link_with(t) for t in ("1." + "5" * 99000, "1e" + "9" * 99000, "-" + "7" * 99000)]
    worst("a link holding a very long number", [
        timed(Session().handle, {"op": "load", "fragment": f}) for f in links], 2.0, missed)
    worst("a cell typed 100,000 characters long", [timed(Session().handle, {
        "op": "edit", "key": "cls", "index": [0, 0], "text": "1" * 100000, "commit": True})],
        2.0, missed)
    fields = []
    for huge in bounds.HUGE:
        t0 = clock()
        for request in bounds.huge_int_requests(huge):
            Session().handle(request)
        fields.append(clock() - t0)
    worst("a huge int in every field of every request (all)", fields, 10.0, missed)
    pastes = ["\n" * 1000000 + "1\t2", "\r\n" * 300000 + "1 2\r\n3 4" + "\r\n" * 300000,
              " " * 3000000 + "[[1, 2], [3, 4]]"]
    worst("a paste with a million blank characters around it", [timed(Session().handle, {
        "op": "paste", "key": "W_head", "index": [0, 0], "text": t}) for t in pastes], 1.0, missed)
    loaded = session_with_a_model(W, CLS)
    worst("a bad model file (test_model_file_refusals.py)", [
        timed(open_file, loaded, name, data, target=target)
        for name, data, target, _ in CASES.values()], 1.0, missed)
    rng = np.random.RandomState(11)
    data = npz_bytes(W_head=rng.standard_normal((1024, 1000)),
                     encoder_output=rng.standard_normal((32, 64, 1024)))
    s, per_request = Session(), []
    handle = s.handle_json

    def measured(text):
        t0 = clock()
        try:
            return handle(text)
        finally:
            per_request.append(clock() - t0)
    s.handle_json = measured
    open_file(s, "largest.npz", data)
    worst("the largest file a state allows, per request", per_request, 1.0, missed)
    fuzzed = []
    for name in sorted(fuzz.FILES):
        r = random.Random("%s-%d" % (name, 1))
        target = "W_head" if name.endswith(".npy") else None
        for _ in range(fuzz.CASES_PER_FILE):
            fuzzed.append(timed(open_file, loaded, name, fuzz.mutate_bytes(fuzz.FILES[name], r),
                                target=target))
    worst("a damaged model file (test_input_fuzz.py)", fuzzed, 1.0, missed)
    bridge = fuzz.load_bridge()
    r = random.Random(7)
    link = "#" + encode_fragment(Session().state)
    texts = []
    for case in range(150):
        if case % 3 == 0:
            texts.append(json.dumps({"op": "load", "fragment": fuzz.mutate_text(link, r)}))
        else:
            texts.append(fuzz.mutate_text(json.dumps(
                {"op": "edit", "key": "cls", "index": [0, 1], "text": "2.5", "commit": True}), r))
    worst("a damaged link or request (test_input_fuzz.py)",
          [timed(bridge.answer, t) for t in texts], 1.0, missed)
    print("every target met" if not missed else "MISSED: " + "; ".join(missed))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
