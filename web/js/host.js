// The one meeting point between a runtime host and the page.
//
// build.py puts a host's boot glue into index.html (PyScript + Pyodide 314, or the offline
// Pyodide 0.17 fallback). Whatever the host, its glue reports through these calls:
//   vitHost.status(stage, text, fraction)  progress while the runtime boots (stage: "runtime" |
//                                "python" | "numpy" | "explorer"; fraction, when known: how much
//                                of the boot's downloads has arrived, 0 to 1), shown in the page
//   vitHost.started()            the runtime no longer needs the page's main thread to start:
//                                the page may now spend it on its own scripts (Plotly.js)
//                                without delaying the boot (said once its worker exists, or,
//                                on the PyScript host, once Pyodide's WebAssembly is compiled:
//                                WebKit delivers a worker's downloads through the main thread)
//   vitHost.ready(bridge)        once NumPy and pycore are imported: an object whose
//                                call(request) resolves to web/py/bridge.py's answer, with the
//                                matrices it names attached (js/answers.js makes it where
//                                Python runs: the fallback host's worker, the PyScript page),
//                                and whose warmUp(edits) resolves once Python has answered that
//                                many practice edits (bridge.py's warm-up, js/runtime/warmup.js)
//   vitHost.fail(message)        the runtime could not start; message is plain words for a person
//   vitHost.blocked(violation)   a Content-Security-Policy violation seen in a worker
//                                ({directive, blocked, source}, see boot.violation): if it stops
//                                the boot, the alert says what the policy must allow, and no
//                                later failure (its consequence) replaces that; one that is not
//                                of the site's own files is said only if the boot then fails
// and finds shared helpers in vitHost.boot (download and missing-file watches, a
// worker's messages, the one file's payloads).
// The same helpers serve the three workers Python runs in, which load this script too
// (boot/pyodide-worker.mjs imports it, boot/fallback-worker.js calls importScripts, the one
// file's worker carries it in its blob): the advice a failure ends with (FIX), the WebAssembly
// probe, policy violations passed to the page, bytes counted as they arrive, a traceback's last
// line, the bridge's import. In a worker vitHost has no page to report to: only `boot` is used.
// vitHost.unable is why the page cannot start Python where it is (no origin, a browser too old,
// WebAssembly refused), or null: the glue then starts nothing.
// Calls made before the page's own script has loaded are queued, so load order never matters.
// Where the page's own script cannot run at all (a page without an origin, a module that did
// not load), this script shows the failure itself.
(function () {
  "use strict";
  var queue = [];
  var sink = null;
  function send(kind, args) {
    if (sink) sink(kind, args);
    else queue.push([kind, args]);
  }
  // What every host's boot glue (web/boot/*) needs, on the page and in the workers, in one place.
  var tools = /** @type {VitBootTools} */ ({
    // Megabytes with one decimal, as the boot's progress says them.
    MB: function (n) { return (n / 1e6).toFixed(1); },
    // The last line of a Python traceback (or the whole message), for a one-sentence summary.
    summary: function (error) {
      var text = String((error && error.message) || error).trim();
      var lines = text.split("\n").filter(function (l) { return l.trim(); });
      return lines.length ? lines[lines.length - 1].trim() : text;
    },
    // A promise of the SHA-256 of the bytes (an ArrayBuffer), in hex: a pinned file's check.
    sha256hex: function (buffer) {
      return crypto.subtle.digest("SHA-256", buffer).then(function (digest) {
        return Array.prototype.map.call(new Uint8Array(digest), function (b) {
          return (b < 16 ? "0" : "") + b.toString(16);
        }).join("");
      });
    },
    // The response, its body counted as it streams in: onBytes(bytes so far) after each chunk,
    // onEnd(bytes in all), if given, once the body is whole.
    counting: function (response, onBytes, onEnd) {
      if (!response.body) return response;
      var count = 0;
      var counter = new TransformStream({
        transform: function (chunk, controller) {
          count += chunk.byteLength;
          onBytes(count);
          controller.enqueue(chunk);
        },
        flush: function () { if (onEnd) onEnd(count); },
      });
      return new Response(response.body.pipeThrough(counter), {
        status: response.status, statusText: response.statusText, headers: response.headers });
    },
    // In a worker: each Content-Security-Policy violation there is handed to post(violation)
    // (tools.violation's form), for the page's vitHost.blocked: the page never sees a worker's
    // violations itself. A report-only policy blocked nothing.
    forwardViolations: function (post) {
      self.addEventListener("securitypolicyviolation", function (event) {
        if (event.disposition !== "report") post(tools.violation(event));
      });
    },
    // In every worker, once Pyodide is loaded: the explorer's folder `dir` (made, if its files
    // are yet to come) first on Python's path, and no bytecode written (the build ships it; a
    // module without it is compiled, and a .pyc written into the in-memory file system would
    // only cost time). boot/pyodide-worker.mjs calls it before PyScript writes the files and
    // runs py/worker.py, which then imports the bridge.
    pythonPath: function (pyodide, dir) {
      pyodide.runPython([
        "import os, sys",
        "os.makedirs(" + JSON.stringify(dir) + ", exist_ok=True)",
        "sys.dont_write_bytecode = True",
        "if " + JSON.stringify(dir) + " not in sys.path:",
        "    sys.path.insert(0, " + JSON.stringify(dir) + ")",
      ].join("\n"));
    },
    // In a worker that runs Pyodide itself (the fallback's, the one file's): web/py/bridge.py,
    // imported from `dir`, the folder the explorer's Python files were written to.
    importBridge: function (pyodide, dir) {
      tools.pythonPath(pyodide, dir);
      return pyodide.runPython("import bridge\nbridge");
    },
    // (the one file has no site to rebuild: it is downloaded again)
    FIX: self.document && document.documentElement.hasAttribute("data-one-file") ?
      " This copy may be damaged or incomplete: download vit-head-explorer.html again (or copy " +
      "it again, whole) and open the new copy." :
      " The site's files may be incomplete: rebuild it with `python build.py` and copy all " +
      "of dist/, then reload the page.",
    // callback() once every named file has downloaded (resource timing): Python is starting.
    whenDownloaded: function (names, callback) {
      if (!self.PerformanceObserver) return;
      var seen = {};
      var observer = new PerformanceObserver(function (list) {
        list.getEntries().forEach(function (entry) {
          names.forEach(function (n) { if (entry.name.slice(-n.length) === n) seen[n] = true; });
        });
        if (names.every(function (n) { return seen[n]; })) {
          observer.disconnect();
          callback();
        }
      });
      try { observer.observe({ type: "resource", buffered: true }); } catch (e) { /* no hint */ }
    },
    // onMissing(error) (error.status: the HTTP status) for the first response with HTTP status
    // >= 400 whose URL matches `pattern`: a missing runtime file can stop the boot without any
    // error event (a missing .wasm just hangs), but resource timing reports every status.
    watchMissing: function (pattern, onMissing) {
      if (!self.PerformanceObserver) return;
      var observer = new PerformanceObserver(function (list) {
        list.getEntries().forEach(function (e) {
          var entry = /** @type {PerformanceResourceTiming} */ (e);
          if (entry.responseStatus >= 400 && pattern.test(entry.name)) {
            observer.disconnect();
            var error = /** @type {Error & {status?: number}} */ (new Error(entry.name + ": HTTP " + entry.responseStatus));
            error.status = entry.responseStatus;
            onMissing(error);
          }
        });
      });
      try { observer.observe({ type: "resource", buffered: true }); } catch (e) { /* no watch */ }
    },
    // The page's side of a Python worker's messages (boot/fallback-worker.js lists them; the
    // one file's worker speaks the same): returns the handler of the worker's messages.
    // post(message) sends one to the worker. The bridge handed to ready(bridge) posts "call" and
    // "warm" messages and resolves to their answers; progress and policy violations go to the
    // page (vitHost), fail(message, damaged) and ready(bridge) to the glue, which knows when its
    // boot has settled (damaged: the one file's worker found its copy damaged).
    workerLink: function (post, fail, ready) {
      var waiting = new Map(); // request id -> {resolve, reject}
      var next = 0;
      function ask(message) {
        return new Promise(function (resolve, reject) {
          next += 1;
          waiting.set(next, { resolve: resolve, reject: reject });
          message.id = next;
          post(message);
        });
      }
      var bridge = {
        call: function (request) { return ask({ kind: "call", request: request }); },
        warmUp: function (edits) { return ask({ kind: "warm", edits: edits }); },
      };
      return function (event) {
        var m = event.data;
        if (m.kind === "answer") {
          var w = waiting.get(m.id);
          waiting.delete(m.id);
          if (m.error) w.reject(new Error(m.error));
          else w.resolve(m.answer);
        } else if (m.kind === "status") {
          self.vitHost.status(m.stage, m.text, m.fraction); // said while the boot goes on
        } else if (m.kind === "started") {
          document.documentElement.dataset.pyodide = m.version;
        } else if (m.kind === "fail") {
          fail(m.message, Boolean(m.damaged));
        } else if (m.kind === "blocked") {
          self.vitHost.blocked(m.violation); // the cause of what fails next: said even after a failure
        } else if (m.kind === "ready") {
          ready(bridge);
        }
      };
    },
    // The one file's payloads (buildtools/onefile/page.py), on the page and in its worker: base64 of
    // gzip, decompressed (a promise of its bytes, rejected if it cannot be), and a payload's
    // files ({path: bytes}: a JSON index line [[path, offset, length], ...], then the bytes).
    gunzipBase64: function (text) {
      try {
        var bytes;
        if (Uint8Array.fromBase64) {
          bytes = Uint8Array.fromBase64(text);
        } else {
          var binary = atob(text);
          bytes = new Uint8Array(binary.length);
          for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
        }
        // a stream of the bytes (WebKit fails to read a Blob's stream in a page opened from a file)
        var stream = new ReadableStream({ start: function (c) { c.enqueue(bytes); c.close(); } });
        return new Response(stream.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer()
          .then(function (buffer) { return new Uint8Array(buffer); });
      } catch (e) {
        return Promise.reject(e);
      }
    },
    unpack: function (bytes) {
      var newline = bytes.indexOf(10);
      var index = JSON.parse(new TextDecoder().decode(bytes.subarray(0, newline)));
      var files = {};
      index.forEach(function (e) { files[e[0]] = bytes.subarray(newline + 1 + e[1], newline + 1 + e[1] + e[2]); });
      return files;
    },
  });
  // ---- the page's Content-Security-Policy -------------------------------------------------
  // What a policy must allow for Python to start: scripts, workers and downloads. A violation of
  // another directive (a style, a font) costs looks, not the boot; an inline script or style
  // blocked is never the page's (it has none), but a browser extension's.
  var BOOT_DIRECTIVES = /^(script-src|worker-src|child-src|connect-src|default-src)/;
  var EXTENSION = /^(chrome|moz|safari|safari-web)-extension:/;

  tools.violation = function (event) {
    return {
      directive: String(event.effectiveDirective || event.violatedDirective || "")
        .replace(/-(elem|attr)$/, ""), // script-src-elem: what a policy names script-src
      blocked: String(event.blockedURI || ""),
      source: String(event.sourceFile || ""),
    };
  };

  tools.stopsBoot = function (v) {
    return BOOT_DIRECTIVES.test(v.directive) && v.blocked !== "inline" &&
      !EXTENSION.test(v.blocked) && !EXTENSION.test(v.source);
  };

  // The alert for a violation that stopped the boot: what was blocked, and what to allow where.
  tools.policyMessage = function (v) {
    var blocked = v.blocked;
    var what;
    var allow;
    if (blocked === "wasm-eval") {
      what = "WebAssembly, which Python runs on";
      allow = "'wasm-unsafe-eval'";
    } else if (blocked === "eval") {
      what = "JavaScript made from text (eval)";
      allow = "'unsafe-eval'";
    } else if (/^(blob|data)(:|$)/.test(blocked)) {
      what = "a " + blocked.split(":")[0] + ": URL";
      allow = blocked.split(":")[0] + ":";
    } else {
      var url = null;
      try { url = new URL(blocked, location.href); } catch (e) { /* named as it came */ }
      what = url ? url.href.split("?")[0] : blocked || "a file the page needs";
      allow = !url ? "it" : url.origin === location.origin ? "'self'" : url.origin;
    }
    if (v.directive === "worker-src" || v.directive === "child-src") {
      what = "the worker that runs Python (" + what + ")";
    }
    return "The page's Content-Security-Policy blocked " + what + ": the server or the " +
      "embedding page must allow " + allow + " in " + v.directive + ".";
  };

  // ---- where the page cannot start Python at all -----------------------------------------
  // What the page needs of a browser (this script is ES5 so that a browser too old for the rest
  // can still say so): WebAssembly, allowed by 'wasm-unsafe-eval', module workers (PyScript's)
  // and the JavaScript of 2020 that the page's modules are written in.
  var MINIMUM = "Chrome or Edge 97, Firefox 114, Safari 16 or newer";
  function missingFeatures() {
    var missing = [];
    if (typeof WebAssembly !== "object" || typeof WebAssembly.Module !== "function") {
      missing.push("WebAssembly");
    }
    if (typeof Worker !== "function") {
      missing.push("Web Workers");
    } else {
      // A browser reads the worker's options before it looks at the URL; an URL that cannot be
      // parsed then stops the constructor before anything is fetched or checked by the policy.
      var modules = false;
      try {
        new Worker("http://[", { get type() { modules = true; return /** @type {WorkerType} */ ("module"); } });
      } catch (e) { /* expected: the URL is invalid */ }
      if (!modules) missing.push("module workers");
    }
    if (typeof BigInt64Array !== "function" || typeof Promise.allSettled !== "function" ||
        typeof globalThis !== "object") {
      missing.push("the JavaScript of 2020 (BigInt, Promise.allSettled, globalThis)");
    }
    // the one file decompresses what it carries in the browser
    if (self.document && document.documentElement.hasAttribute("data-one-file") &&
        typeof DecompressionStream !== "function") {
      missing.push("DecompressionStream");
    }
    return missing;
  }
  // The smallest WebAssembly module (its magic number and version): compiling it tells at once
  // whether this page (or worker) may run WebAssembly, which a policy without
  // 'wasm-unsafe-eval' (or a browser that does not know that keyword) refuses; Python would
  // otherwise wait forever.
  function wasmRefused() {
    try {
      // WebKit compiles it, and refuses only to instantiate it
      new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])));
      return false;
    } catch (e) {
      return true;
    }
  }
  tools.wasmRefused = wasmRefused;
  tools.WASM_REFUSED = { directive: "script-src", blocked: "wasm-eval", source: "" };
  var unable = null;
  if (self.document) {
    var missing = missingFeatures();
    // The one file (dist/vit-head-explorer.html) carries everything and starts from a file too.
    var oneFile = document.documentElement.hasAttribute("data-one-file");
    if (location.protocol === "file:" && !oneFile) {
      unable = "This page needs a web server: Python cannot start from a file:// address. In the " +
               "site's folder run `python3 -m http.server`, then open http://localhost:8000/.";
    } else if (self.origin === "null" && !oneFile) {
      // A sandboxed iframe without allow-same-origin: the page has no origin, and without one
      // the browser refuses its module scripts (they are fetched with CORS) and its workers.
      unable = "The explorer cannot start in this frame: it is a sandboxed iframe without " +
               "allow-same-origin, where the browser blocks the scripts and the worker that run " +
               "Python. The embedding page must allow both: <iframe sandbox=\"allow-scripts " +
               "allow-same-origin\" …>.";
    } else if (missing.length) {
      unable = "This browser is too old for the explorer: it lacks " + missing.join(", ") +
               ". The explorer needs " + MINIMUM + ".";
    } else if (wasmRefused()) {
      unable = tools.policyMessage(tools.WASM_REFUSED) +
               " (A browser older than " + MINIMUM + " refuses it too: it does not know " +
               "'wasm-unsafe-eval'.)";
    }
  }

  // The failure, shown by this script when the page's own (js/app.js) cannot run: the same
  // words and signals as js/runtime/boot-status.js.
  var shownHere = false;
  function showHere(message) {
    shownHere = true;
    function show() {
      var box = document.getElementById("alert");
      var status = document.getElementById("boot-status");
      var boot = document.getElementById("boot");
      var said = document.getElementById("alert-said"); // js/page/alert.js: shown, and said
      if (box) { box.textContent = message; box.hidden = false; }
      if (said) { said.textContent = message; said.hidden = false; }
      if (status) status.textContent = "The Python runtime could not start.";
      if (boot) boot.classList.add("failed");
      document.documentElement.dataset.bootFailed = "true";
    }
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", show);
    else show();
  }

  var state = "booting"; // "ready" | "failed" | "blocked" (by the policy: said, and final)
  var failure = null;
  var pageScriptFailed = false;
  function failWith(message) {
    failure = message;
    send("fail", [message]);
    if (!sink && (pageScriptFailed || unable)) showHere(message);
  }

  // Only what stopped the boot is reported. A violation of the page's own files (a worker, a
  // script or a download of this site, WebAssembly) stops it for sure, so it is said at once,
  // even after a failure it caused. Any other (an eval, a request elsewhere: the page makes
  // neither, but an extension or an automation tool may) is remembered as a suspect: said if
  // the boot then fails, or makes no progress for STALL_MS; forgotten if Python starts. The
  // wait is long because one stage (compiling the runtime, importing NumPy) can take 20 s or
  // more in WebKit on a busy 2-CPU machine: a boot that is slow must not be called blocked.
  var STALL_MS = 60000;
  var suspect = null;
  var stallTimer = 0;
  function ownFile(v) {
    if (v.blocked === "wasm-eval" || /^(blob|data)(:|$)/.test(v.blocked)) return true;
    // "eval", "inline": no file (and no URL: resolved, they would name this page's folder)
    if (!/^[a-z][a-z0-9+.-]*:/i.test(v.blocked)) return false;
    try {
      return new URL(v.blocked, location.href).origin === location.origin;
    } catch (e) {
      return false;
    }
  }
  function watchStall() {
    if (!suspect) return;
    clearTimeout(stallTimer);
    stallTimer = setTimeout(function () {
      if (state === "booting") blockBy(suspect);
    }, STALL_MS);
  }
  function blockBy(violation) {
    clearTimeout(stallTimer);
    state = "blocked";
    failWith(tools.policyMessage(violation));
  }

  // `self`: the page's window, or the fallback host's worker, which uses only `boot`.
  self.vitHost = {
    boot: tools,
    unable: unable,
    status: function (stage, text, fraction) {
      if (state !== "booting") return;
      send("status", [stage, text, fraction]);
      watchStall();
    },
    started: function () {
      if (state === "booting") send("started", []);
    },
    ready: function (bridge) {
      if (state !== "booting") return; // a blocked boot that came through anyway stays said
      state = "ready";
      clearTimeout(stallTimer);
      send("ready", [bridge]);
    },
    // The first failure is the one said (the boot's glue and its worker may both see it).
    fail: function (message) {
      if (state !== "booting") return;
      if (suspect && state === "booting") return blockBy(suspect);
      state = "failed";
      failWith(String(message));
    },
    blocked: function (violation) {
      if (state === "blocked" || state === "ready" || !tools.stopsBoot(violation)) return;
      if (ownFile(violation)) return blockBy(violation);
      if (state !== "booting" || suspect) return;
      suspect = violation;
      watchStall();
    },
    // The URL of one of the site's files the page loads as a script (the one file's glue
    // answers with a blob: URL of the copy it carries).
    asset: function (path) { return path; },
    // The page calls this once; queued calls are replayed in order.
    connect: function (handler) {
      sink = handler;
      var pending = queue;
      queue = [];
      pending.forEach(function (item) { handler(item[0], item[1]); });
    },
  };

  if (!self.document) return;
  // This script has run: the one file's notice for a copy whose scripts never ran stays hidden.
  document.documentElement.classList.add("scripted");
  if (unable) self.vitHost.fail(unable);
  // The one file's scripts are all inline, each allowed by its hash in the file's own policy:
  // one of them blocked means that its text changed since the build (a damaged copy).
  var damagedCopy = function (v) {
    return document.documentElement.hasAttribute("data-one-file") && v.directive === "script-src" &&
      v.blocked === "inline" && !EXTENSION.test(v.source);
  };
  // Violations on the page (a worker reports its own through its glue: vitHost.blocked).
  document.addEventListener("securitypolicyviolation", function (event) {
    if (event.disposition === "report") return;
    var v = tools.violation(event);
    if (damagedCopy(v)) {
      if (state === "blocked") return; // said already, and final
      pageScriptFailed = true; // the page's own module may be the script refused: said here
      state = "blocked"; // what fails next (a script the refused one would have loaded) is its echo
      self.vitHost.damaged = true;
      failWith("This file is damaged: one of its scripts was changed after it was built, and " +
        "the browser refuses to run it (it no longer matches the checksum the file carries). " +
        "Download vit-head-explorer.html again (or copy it again, whole) and open the new copy.");
    } else {
      self.vitHost.blocked(v);
    }
  });
  // The page's own script not loading (blocked, missing, refused for want of an origin) leaves
  // nothing to show the boot's progress or failure: this script says so.
  self.addEventListener("error", function (event) {
    var el = /** @type {HTMLScriptElement} */ (event.target);
    if (!el || el.tagName !== "SCRIPT" || !/\/js\/app\.js$/.test(el.src) || sink) return;
    pageScriptFailed = true;
    if (state === "booting") {
      self.vitHost.fail("The page's script could not be loaded (" + el.src + ")." + tools.FIX);
    } else if (!shownHere && failure) {
      showHere(failure);
    }
  }, true);
})();
