// js/host.js, as the page and the workers see it (the classic script defines self.vitHost).
// It is written here, not inferred from host.js, because the boot glue (web/boot) replaces some
// of its members (onefile.js: asset, damaged) and the workers read it without host.js's DOM.

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

/** vitHost.boot: the helpers every host's boot glue shares. */
interface VitBootTools {
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
