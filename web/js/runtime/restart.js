// When Python's runtime stops. The bridge (web/py/bridge.py) turns every error of Python's into
// an answer, so a call that fails across the crossing means the runtime or its worker is broken
// (Pyodide's fatal error, a worker gone): no later request would be answered. The page says so,
// answers every request from then on as refused (nothing changes), and starts again: it reloads
// itself, which boots a new runtime and loads the link in the address, the last valid state (a
// refused request never changes it). A model file's state is not in a link: the message says
// it must be chosen again. A second stop within RESTART_GUARD_MS of a restart is only said (its
// cause may be in the state itself): reloading again would loop.
// <html data-python-stopped>: "restarting" while the page reloads, "stopped" if it does not.
// The page it reloads into says that Python was started again (restarted()).

const RESTART_AFTER_MS = 1200; // the message is seen before the page reloads (and said after)
const RESTART_GUARD_MS = 60000;

// history.state outlives a reload of the same tab and needs no storage permission (an embed in
// a sandboxed frame may have none): the time of the last restart is kept there.
function lastRestart() {
  const s = history.state;
  return s && typeof s.vitRestartedAt === "number" ? s.vitRestartedAt : -Infinity;
}

// Whether this page was reloaded by a restart a moment ago: `note(text)` then says so.
/**
 * @param {(text: string) => void} note
 */
export function restarted(note) {
  if (Date.now() - lastRestart() < RESTART_GUARD_MS) {
    note("Python had stopped working, and was started again with the last valid state.");
  }
}

// `bridge` ({call}) as the page uses it; `say(message)` shows the page's alert.
/**
 * @param {{call: (request: import("../protocol.js").Request) => Promise<import("../protocol.js").Answer>}} bridge
 * @param {(message: string) => void} say
 */
export function restarting(bridge, say) {
  let stopped = null; // the refusal every request gets once the runtime stopped
  const stop = (err) => {
    if (stopped) return stopped;
    const why = String((err && err.message) || err).split("\n").filter((l) => l.trim()).pop() || "no answer";
    const root = document.documentElement;
    const modelFile = root.dataset.modelFile === "loaded" ? " Your model file will have to be chosen again." : "";
    const again = Date.now() - lastRestart() < RESTART_GUARD_MS;
    const message = again
      ? `Python stopped again (${why}). Reload the page to start over, or open the worked example.`
      : `Python stopped working (${why}). The page is starting it again with the last valid state ` +
        `(the link in the address bar).${modelFile}`;
    stopped = { ok: false, error: { message, key: null, index: null } };
    root.dataset.pythonStopped = again ? "stopped" : "restarting";
    say(message);
    if (!again) {
      setTimeout(() => {
        history.replaceState(Object.assign({}, history.state, { vitRestartedAt: Date.now() }), "");
        location.reload();
      }, RESTART_AFTER_MS);
    }
    return stopped;
  };
  return {
    call: (request) => (stopped ? Promise.resolve(stopped) : bridge.call(request).catch(stop)),
  };
}
