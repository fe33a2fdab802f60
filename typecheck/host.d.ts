// js/host.js, as the page and the workers see it (the classic script defines self.vitHost).
// It is written here, not inferred from host.js, because the boot glue (web/boot) replaces some
// of its members (onefile.js: asset, damaged) and the workers read it without host.js's DOM.
// The page's project checks host.js against it (its boot kit is cast to VitBootTools); the
// workers' project sees only this file, not host.js (typecheck/tsconfig.worker.json says why).

/** A Content-Security-Policy violation, as vitHost.boot.violation reduces one. */
interface VitViolation {
  directive: string;
  blocked: string;
  source: string;
}

/** What vitHost.ready hands the page: Python's answers, with their matrices attached. */
interface VitBridge {
  call(request: import("../web/js/protocol.js").Request): Promise<import("../web/js/protocol.js").Answer>;
  /** `edits` practice edits; resolves to the milliseconds they took. */
  warmUp(edits: number): Promise<number>;
}

/** A worker's message to the page (boot/fallback-worker.js lists them). */
interface VitWorkerMessage {
  kind: "status" | "started" | "ready" | "fail" | "blocked" | "answer";
  id?: number;
  stage?: string;
  text?: string;
  fraction?: number;
  version?: string;
  message?: string;
  damaged?: boolean;
  violation?: VitViolation;
  answer?: any;
  error?: string;
}

/** A Python object handed to JavaScript (Pyodide's PyProxy): the calls the workers make. */
interface PyProxy {
  (...args: any[]): any;
  destroy(): void;
  [name: string]: any;
}

/** Pyodide's runtime, as loadPyodide resolves to it. */
interface PyodideRuntime {
  version: string;
  runPython(code: string): any;
  loadPackage(names: string[], onMessage?: (message: string) => void,
              onError?: (message: string) => void): Promise<void>;
  unpackArchive(buffer: Uint8Array | ArrayBuffer, format: string, options?: { extractDir?: string }): void;
  /** Emscripten's module (its file system: FS) */
  _module: any;
}

/** vitHost.boot: the boot kit that every host's glue shares, on the page and in the three
 * workers Python runs in (the members marked "in a worker" are used there only). */
interface VitBootTools {
  /** Megabytes with one decimal ("12.3"), as the boot's progress says them. */
  MB(bytes: number): string;
  /** The last line of a Python traceback (or the whole message) of whatever was thrown. */
  summary(error: any): string;
  /** The SHA-256 of the bytes, in hex. */
  sha256hex(bytes: BufferSource): Promise<string>;
  /** The response, its body counted as it streams in (the response itself if it has none). */
  counting(response: Response, onBytes: (bytesSoFar: number) => void,
           onEnd?: (bytesInAll: number) => void): Response;
  /** In a worker: each Content-Security-Policy violation there handed to post. */
  forwardViolations(post: (violation: VitViolation) => void): void;
  /** In a worker: the explorer's folder first on Python's path, no bytecode written. */
  pythonPath(pyodide: PyodideRuntime, dir: string): void;
  /** In a worker that runs Pyodide itself: web/py/bridge.py, imported from `dir`. */
  importBridge(pyodide: PyodideRuntime, dir: string): PyProxy;
  /** The advice a failure ends with. */
  FIX: string;
  whenDownloaded(names: string[], callback: () => void): void;
  watchMissing(pattern: RegExp, onMissing: (error: Error & { status?: number }) => void): void;
  workerLink(post: (message: object) => void, fail: (message: string, damaged: boolean) => void,
             ready: (bridge: VitBridge) => void): (event: MessageEvent<VitWorkerMessage>) => void;
  gunzipBase64(text: string): Promise<Uint8Array>;
  unpack(bytes: Uint8Array): { [path: string]: Uint8Array };
  violation(event: SecurityPolicyViolationEvent): VitViolation;
  stopsBoot(violation: VitViolation): boolean;
  policyMessage(violation: VitViolation): string;
  wasmRefused(): boolean;
  WASM_REFUSED: VitViolation;
}

interface VitHost {
  boot: VitBootTools;
  /** Why the page cannot start Python where it is, or null. */
  unable: string | null;
  status(stage: string, text: string, fraction?: number): void;
  started(): void;
  ready(bridge: VitBridge): void;
  fail(message: string): void;
  blocked(violation: VitViolation): void;
  asset(path: string): string;
  connect(handler: (kind: string, args: any[]) => void): void;
  /** Set by the one file's glue when its copy is damaged. */
  damaged?: boolean;
}

declare var vitHost: VitHost;

// Base64 decoding built in (js/host.js's gunzipBase64 uses it where the browser has it: Chrome
// 140, Firefox 133, Safari 18.2; older browsers the page supports lack it, hence optional).
interface Uint8ArrayConstructor {
  fromBase64?(text: string): Uint8Array<ArrayBuffer>;
}
