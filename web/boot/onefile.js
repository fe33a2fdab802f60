// Boot glue of the one-file page (dist/vit-head-explorer.html, buildtools/onefile/page.py), inline
// after js/host.js. Everything the page reads is inside the file: no request leaves it, so it
// opens from disk (file://) as well as from any server.
//
// - The worker (js/host.js + js/answers.js + boot/onefile-worker.js, the text of
//   <script id="vit-worker-source">) starts from a blob: URL, a classic worker: a page opened from
//   a file may start one, but no module worker from a blob: URL (what PyScript starts).
// - Each payload (<script type="application/gzip" id="vit-payload-NAME">: base64 of gzip) goes to
//   the worker as text, as soon as the parser has read it; the worker decompresses it.
// - The page's own payload (Plotly.js, KaTeX, the JSON files js/app.js fetches) is decompressed
//   here: its scripts become blob: URLs (vitHost.asset), its JSON files answer the page's fetch.
// - A file cut short (a download or copy that stopped) is said as such, with what to do; so is a
//   damaged one (a changed byte): this script's hash is in the policy, and it holds the file's
//   facts, written by the build; payloads carry gzip's CRC; the worker's script a checksum here.
(function () {
  "use strict";
  var host = window.vitHost;
  if (host.unable) return;
  var facts = { built: false }; // the file's facts: buildtools/onefile/page.py writes them
  var AGAIN = " Download vit-head-explorer.html again (or copy it again, whole) and open the new copy.";
  // (vitHost says the first failure only, and no ready after it)
  var fail = host.fail;
  // A damaged or incomplete copy: what fails after it (Plotly.js, say) is its echo, not said.
  function damaged(message) {
    host.damaged = true;
    fail(message);
  }
  var MB = host.boot.MB;
  // The 32-bit FNV-1a checksum of a text's UTF-16 code units (buildtools/onefile/page.py's fnv1a):
  // a changed byte of the worker's script, which no hash in the policy covers, is found here.
  function fnv1a(text) {
    var h = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
    return h;
  }
  var total = 0;
  Object.keys(facts.payloads).forEach(function (n) { total += facts.payloads[n].chars; });

  // ---- the page's files ------------------------------------------------------------------------
  // A payload's files (vitHost.boot.unpack), once decompressed here.
  function gunzip(name, text) {
    return host.boot.gunzipBase64(text).then(function (bytes) {
      if (bytes.byteLength !== facts.payloads[name].bytes) throw new Error("wrong length");
      return bytes;
    }).catch(function (e) {
      throw new Error("This file is damaged: its " + name + " part could not be decompressed (" +
                      ((e && e.message) || e) + ")." + AGAIN);
    });
  }

  var resolvePage;
  var pageFiles = new Promise(function (resolve) { resolvePage = resolve; });
  var assets = {};
  host.asset = function (path) { return assets[path] || path; };
  var TYPES = { js: "text/javascript", json: "application/json", html: "text/html; charset=utf-8" };
  function servePage(files) {
    Object.keys(files).forEach(function (path) {
      var type = TYPES[path.split(".").pop()] || "application/octet-stream";
      if (type === "text/javascript") assets[path] = URL.createObjectURL(new Blob([files[path]], { type: type }));
    });
    resolvePage(files);
  }
  // js/app.js and its modules fetch a few JSON files of the site: answered from the file.
  var realFetch = window.fetch;
  window.fetch = function (input, init) {
    // (a URL object, which the page never passes, goes to the network)
    var url = typeof input === "string" ? input : input && /** @type {Request} */ (input).url;
    var path = url && new URL(url, document.baseURI).href.replace(/[?#].*$/, "");
    var base = document.baseURI.replace(/[?#].*$/, "").replace(/[^/]*$/, "");
    if (!path || path.indexOf(base) !== 0) return realFetch.apply(this, /** @type {any} */ (arguments));
    var name = path.slice(base.length);
    return pageFiles.then(function (files) {
      if (!files[name]) return new Response("not in this file: " + name, { status: 404 });
      return new Response(files[name], { headers: { "Content-Type": TYPES[name.split(".").pop()] || "" } });
    });
  };

  // ---- the worker ------------------------------------------------------------------------------
  // Its script is the text of #vit-worker-source followed by Pyodide's two scripts (the
  // "runtime" payload): WebKit runs no other script in a worker of a page opened from a file.
  var worker = null;
  var queued = []; // messages for the worker, until it exists
  function post(message) {
    if (worker) worker.postMessage(message);
    else queued.push(message);
  }
  function startWorker(runtime) {
    var source = document.getElementById("vit-worker-source").textContent;
    if (source.length !== facts.worker.chars || fnv1a(source) !== facts.worker.fnv1a) {
      damaged("This file is damaged: the script Python runs in was changed (its checksum does not " +
           "match)." + AGAIN);
      return;
    }
    try {
      worker = new Worker(URL.createObjectURL(new Blob(
        [source, "\n", runtime["pyodide.js"], "\n", runtime["pyodide.asm.js"]], { type: "text/javascript" })));
    } catch (e) {
      fail("This browser does not let a page opened from a file start the worker Python runs in (" +
           ((e && e.message) || e) + "). Open the file in Chrome, Edge, Firefox or Safari, or put it " +
           "on a web server (a learning platform, or `python3 -m http.server` in its folder).");
      return;
    }
    worker.onerror = function (event) {
      event.preventDefault();
      fail("Python could not start (" + (event.message || "the worker did not run") + "). Open the " +
           "file in Chrome, Edge, Firefox or Safari, or put it on a web server.");
    };
    worker.onmessage = onMessage;
    worker.postMessage({ kind: "facts", facts: facts,
                         lock: new TextDecoder().decode(runtime["pyodide-lock.json"]) });
    queued.forEach(function (m) { worker.postMessage(m); });
    queued = [];
    workerStarted();
  }
  var workerStarted;
  Promise.all([new Promise(function (resolve) { workerStarted = resolve; }), pageFiles])
    .then(function () { host.started(); });
  host.status("runtime", "Unpacking Python (Pyodide " + facts.pyodide + ")…", 0);

  var onMessage = host.boot.workerLink(post, function (message, isDamaged) {
    (isDamaged ? damaged : fail)(message);
  }, function (bridge) {
    pageFiles.then(function () { host.ready(bridge); });
  });

  // ---- the payloads, as the parser reaches them --------------------------------------------
  function payload(name) { return document.getElementById("vit-payload-" + name); }
  var sent = {};
  function sendReady(final) {
    Object.keys(facts.payloads).forEach(function (name) {
      if (sent[name]) return;
      var el = payload(name);
      // an element is whole once the parser has gone past it: its next sibling exists
      if (!el || !(final || el.nextSibling)) return;
      var text = el.textContent;
      if (text.length !== facts.payloads[name].chars) return;
      sent[name] = true;
      el.textContent = ""; // the worker has its own copy: 10 MB of text need not stay here
      if (name === "page" || name === "runtime") {
        gunzip(name, text).then(function (bytes) {
          (name === "page" ? servePage : startWorker)(host.boot.unpack(bytes));
        }, function (e) { damaged(e.message); });
      } else {
        post({ kind: "payload", name: name, text: text });
      }
    });
  }
  function incomplete() {
    var have = 0;
    Object.keys(facts.payloads).forEach(function (name) {
      var el = payload(name);
      have += sent[name] ? facts.payloads[name].chars : el ? Math.min(el.textContent.length, facts.payloads[name].chars) : 0;
    });
    damaged("This file is incomplete: it holds " + MB(have) + " of the " + MB(total) + " MB of Python, " +
         "NumPy and the page it should carry (a download or copy that stopped early)." + AGAIN);
  }
  var parsing = setInterval(function () { sendReady(false); }, 20);
  document.addEventListener("DOMContentLoaded", function () {
    clearInterval(parsing);
    sendReady(true);
    var missing = Object.keys(facts.payloads).some(function (name) { return !sent[name]; });
    if (missing || !document.getElementById("vit-one-file-end")) incomplete();
  });
})();
