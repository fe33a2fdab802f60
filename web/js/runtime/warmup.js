// Practice for Python once the page is ready. The browser compiles Python's WebAssembly into
// fast code only for functions that have run long enough, so the first edits of a visit take
// about twice as long in Python as later ones (web/py/bridge.py's warm-up says more). While the
// person is not using the page, it asks its host for practice edits, one per call, until Python
// has answered PRACTICE of them: a person's own request waits at most for one.
// <html data-warm-up>: how many so far ("12 of 48"), then "done" (or "stopped" if one failed).
// Then the page's own practice, in the same quiet moments: each task of `ahead` (a figure made
// before it is first shown, say), one at a time; <html data-ahead> counts them ("done" at the end).
import { setData } from "../page/dom.js";

const PRACTICE = 48; // practice requests in all: by then an edit's Python runs at its fastest
const START_MS = 300; // after the page is ready: its first redraws settle first
const PAUSE_MS = 25; // between two practice calls
const QUIET_MS = 250; // after a request of the page's own, before practice resumes

// The bridge the page uses (call(request) as the host's), watched for the page's own requests,
// and start(): begins the practice, if the host can (bridge.warmUp); `ahead`: functions, each
// returning a promise, run one per quiet moment once Python's practice is over.
/**
 * @param {VitBridge} bridge
 * @param {Array<() => Promise<unknown>>} [ahead]
 */
export function keepWarm(bridge, ahead = []) {
  let inFlight = 0;
  let lastCall = -Infinity;
  const root = document.documentElement;
  const call = (request) => {
    inFlight += 1;
    lastCall = performance.now();
    return bridge.call(request).finally(() => {
      inFlight -= 1;
      lastCall = performance.now();
    });
  };
  // Resolves once the page has made no request for QUIET_MS (and PAUSE_MS at least has passed).
  async function quietMoment() {
    for (;;) {
      await sleep(Math.max(PAUSE_MS, lastCall + QUIET_MS - performance.now()));
      if (!inFlight && performance.now() - lastCall >= QUIET_MS) return;
    }
  }
  async function practise() {
    let done = 0;
    while (done < PRACTICE) {
      await quietMoment();
      try {
        await bridge.warmUp(1);
      } catch (err) {
        console.warn("Python's warm-up stopped:", err);
        setData(root, "warmUp", "stopped");
        return;
      }
      done += 1;
      setData(root, "warmUp", done < PRACTICE ? `${done} of ${PRACTICE}` : "done");
    }
    await quietly(ahead);
  }
  // The page's own tasks, after a quiet moment each; one that fails is not retried.
  async function quietly(tasks) {
    let done = 0;
    if (tasks.length) setData(root, "ahead", `0 of ${tasks.length}`);
    while (done < tasks.length) {
      await quietMoment();
      try {
        await tasks[done]();
      } catch (err) {
        console.warn("A task made ahead failed:", err);
      }
      done += 1;
      setData(root, "ahead", done < tasks.length ? `${done} of ${tasks.length}` : "done");
    }
  }
  const start = () => {
    if (typeof bridge.warmUp !== "function") return;
    setData(root, "warmUp", `0 of ${PRACTICE}`);
    setTimeout(practise, START_MS);
  };
  return { call, start };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
