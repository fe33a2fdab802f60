// What the workers' scripts (web/js/answers.js, web/boot/*-worker.js, the PyScript host's
// interpreter module) use that no script of the repository declares: js/answers.js's two
// globals, and how Pyodide is loaded (0.17 in the fallback worker, 314 in the one file's); the
// calls made to Pyodide (PyProxy, PyodideRuntime) are in host.d.ts, whose boot kit takes them.

/** js/answers.js: Python's answers in the thread that runs it. */
interface VitAnswers {
  answer(request: import("../web/js/protocol.js").Request): import("../web/js/protocol.js").Answer;
  /** `edits` practice edits; the milliseconds they took */
  warmUp(edits: number): number;
}

/** js/answers.js: the worker's side of the page's messages. */
interface VitWorkerTools {
  reply(answers: VitAnswers, message: { kind: string; id?: number; request?: import("../web/js/protocol.js").Request; edits?: number }): boolean;
}

/** The bridge module (web/py/bridge.py) as a PyProxy. */
declare var vitAnswers: (bridge: PyProxy) => VitAnswers;
declare var vitWorker: VitWorkerTools;
/** Pyodide 0.17's pyodide.js, once importScripts has run it (the fallback worker) */
declare var loadPyodide: (options: { indexURL: string }) => Promise<PyodideRuntime>;
/** Pyodide 314's two modules as classic scripts in the one file's worker (buildtools/onefile/page.py) */
declare var vitPyodide: {
  loadPyodide(options: object): Promise<PyodideRuntime>;
  createPyodideModule: unknown;
};

// Content-Security-Policy violations reach a worker's global scope too (WebWorker's lib leaves
// the event out of its map).
interface WorkerGlobalScopeEventMap {
  securitypolicyviolation: SecurityPolicyViolationEvent;
}
