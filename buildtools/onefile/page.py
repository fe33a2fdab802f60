"""dist/vit-head-explorer.html: the whole explorer in one HTML file that opens from disk.

A page opened from a file (file://) has no origin: it cannot fetch a sibling file, import a
module file or start a module worker from a blob: URL, which is how PyScript starts its worker
(docs/hosts.md, "The one file"). So the one file runs the PyScript host's Pyodide 314, NumPy 2.4
and bridge without PyScript, in a classic worker made from a blob: URL, and everything a boot
reads is inside the file:

- the page's own JavaScript, bundled by the pinned esbuild into one module script, js/host.js
  and the boot glue (web/boot/onefile.js) as inline scripts, each allowed by its hash in the
  file's Content-Security-Policy; the stylesheets inline, KaTeX's fonts as data: URLs;
- payloads, each gzip-compressed and base64-encoded in a <script type="application/gzip">
  that the browser never runs, decompressed in the browser with DecompressionStream: the page's
  (Plotly.js, KaTeX, the JSON files it reads, the docs' pages), the runtime's (Pyodide's two
  modules made classic scripts, which the page appends to the worker's own script, and its lock
  file), Pyodide's WebAssembly, and Python's (only the standard library and NumPy modules the
  explorer imports, as bytecode: buildtools/onefile/python.py; the explorer's files).

The file's facts (every payload with its length, the versions, the worker script's length and
checksum) are written into the boot glue, whose hash the policy holds: a file that was cut short
says so instead of failing somewhere, and a changed byte anywhere says the copy is damaged (a
changed inline script is blocked by its hash, a changed payload fails its gzip CRC, a changed
worker script its checksum; web/boot/onefile.js).

The docs open in the file too: its links to docs/<name>.html become "#doc=<name>", which
js/page/docs-view.js shows in a dialog over the page, from the docs' pages in the page payload (no
file beside it is read, and no click leaves it).
"""
import base64
import gzip
import hashlib
import json
import os
import re
import subprocess
import tempfile
import zipfile

from ..assembly import csp, hosts
from . import python as onefile_python
from ..javascript import plotly_bundle
from ..errors import BuildError

FILE_NAME = "vit-head-explorer.html"
# Where index.html offers the one file (build.py writes the link, with its size, or nothing).
LINK_MARKER = "<!--ONE-FILE-->"
# Scripts the one file runs, in order (web/...): the worker's are concatenated into its blob.
WORKER_SOURCES = ("js/host.js", "js/answers.js", "boot/onefile-worker.js")
# The line of web/boot/onefile.js that the build replaces with the file's facts.
FACTS_LINE = ("var facts = { built: false }; // the file's facts: "
              "buildtools/onefile/page.py writes them")
FIXED_MTIME = 0  # gzip headers without the build's time: the same inputs give the same file


def _gzip(data):
    return gzip.compress(data, compresslevel=9, mtime=FIXED_MTIME)


def _read(path, mode="rb"):
    with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
        return f.read()


def _bundle_app(site, cache, manifest, work):
    """The site's js/app.js and every module it imports (js/shared.js, written by the build,
    among them), as one ES module (text), by the pinned esbuild that also bundles Plotly.js."""
    exe = plotly_bundle.esbuild_executable(manifest.plotly_bundle, cache, work)
    out = os.path.join(work, "app.bundle.js")
    done = subprocess.run([exe, os.path.join(site, "js", "app.js"), "--bundle",
                           "--format=esm", "--target=es2020", "--log-level=warning",
                           "--outfile=" + out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    if done.returncode != 0:
        raise BuildError("esbuild could not bundle js/app.js: %s" % done.stderr.strip()[-400:],
                         "fix the error it names")
    return _read(out, "r")


def _katex_css(site):
    """KaTeX's stylesheet with each font as a woff2 data: URL (every engine the page supports
    reads woff2; the woff and ttf copies are left out)."""
    folder = os.path.join(site, "vendor", "katex")
    css = _read(os.path.join(folder, "katex.min.css"), "r")

    def inline(match):
        name = match.group(1)
        data = base64.b64encode(_read(os.path.join(folder, "fonts", name + ".woff2"))).decode()
        return 'src:url(data:font/woff2;base64,%s) format("woff2")' % data
    css, count = re.subn(r'src:url\(fonts/([\w-]+)\.woff2\) format\("woff2"\)[^;}]*', inline, css)
    if not count:
        raise BuildError("KaTeX's stylesheet names no woff2 font", "check the pinned KaTeX")
    return css


def _inline_safe(text, what):
    if re.search(r"</script|<!--", text, re.IGNORECASE):
        raise BuildError("%s contains '</script' or '<!--', which would end its inline <script>"
                         % what, "write it as '<\\/script' in a string")
    return text


def payloads(root, site, manifest, files, compiled, plotly, work, log):
    """{name: {"files": {path: bytes}}} of what the one file carries, before compression."""
    pyodide = os.path.join(site, *manifest.artifact("pyodide").dest.split("/"))
    wheel = os.path.join(pyodide, manifest.numpy_wheel.file_name)
    digits = json.loads(_read(os.path.join(site, "digits.json"), "r"))
    made = onefile_python.build(pyodide, site, wheel, os.path.join(pyodide, "python_stdlib.zip"),
                                [[f["url"], f["path"]] for f in files],
                                onefile_python.requests(root, digits), work, log)
    explorer = {}
    for f in files + compiled.files:
        explorer[f["path"]] = _read(os.path.join(site, f["url"]))
    # what the page itself reads (the class names are Python's: in the explorer's payload)
    page_files = ["default-view.json", "digits.json", "vendor/katex/katex.min.js", plotly]
    page_files += doc_pages(site)  # shown in a dialog on the page (js/page/docs-view.js)
    page = {p: _read(os.path.join(site, p)) for p in page_files
            if os.path.isfile(os.path.join(site, p))}
    return {
        # in the order the page needs them: the runtime's scripts start the worker, the page's
        # files show the first view, and the worker's payloads follow
        "runtime": {"pyodide.js": classic_script(_read(os.path.join(pyodide, "pyodide.mjs"), "r"),
                                                 "pyodide.mjs"),
                    "pyodide.asm.js": classic_script(
                        _read(os.path.join(pyodide, "pyodide.asm.mjs"), "r"), "pyodide.asm.mjs"),
                    "pyodide-lock.json": _read(os.path.join(pyodide, "pyodide-lock.json"))},
        "page": page,
        "wasm": {"pyodide.asm.wasm": _read(os.path.join(pyodide, "pyodide.asm.wasm"))},
        "stdlib": {"python_stdlib.zip": _read(os.path.join(work, "stdlib.zip"))},
        "numpy": {"numpy.zip": _read(os.path.join(work, "numpy.zip"))},
        # stored uncompressed: the payload's gzip compresses it
        "explorer": {"explorer.zip": hosts.zip_bytes(explorer, zipfile.ZIP_STORED)},
    }, made


# Pyodide's two modules end in one export statement each; as classic scripts (importScripts),
# they hand their exports to the worker instead. WebKit refuses a classic worker's import() of a
# blob: URL in a page opened from a file ("Cross-origin script load denied"); importScripts of
# one it runs in every engine.
CLASSIC_EXPORTS = {
    "pyodide.mjs": (re.compile(r"export\{(\w+) as loadPyodide,(\w+) as version\};"),
                    r"self.vitPyodide={loadPyodide:\1,version:\2};"),
    "pyodide.asm.mjs": (re.compile(r"export default (_createPyodideModule);"),
                        r"self.vitPyodide.createPyodideModule=\1;"),
}


def classic_script(text, name):
    """Pyodide's module `name` as a classic script (bytes): its export statement assigns to
    self.vitPyodide, and import.meta.url (read only under Node.js or without locateFile, which
    Pyodide's loader passes) is the worker's own URL."""
    pattern, replacement = CLASSIC_EXPORTS[name]
    text, count = pattern.subn(replacement, text)
    text = text.replace("import.meta.url", "self.location.href")
    text = re.sub(r"\n//# sourceMappingURL=\S*\s*$", "\n", text)  # no map is shipped
    if count != 1 or re.search(
            r"\bimport\.meta\b|\bexport\s*(\{|\*|default\b)|\bimport\s*[{*]", text):
        raise BuildError("Pyodide's %s is not shaped as the one file expects (one export "
                         "statement at its end)" % name,
                         "check buildtools/onefile/page.py's CLASSIC_EXPORTS against the "
                         "pinned Pyodide")
    return text.encode("utf-8")


def doc_pages(site):
    """The docs' pages of the site (buildtools/assembly/docs_html.py): ["docs/math.html", ...]."""
    folder = os.path.join(site, "docs")
    return sorted("docs/" + n for n in os.listdir(folder) if n.endswith(".html")) \
        if os.path.isdir(folder) else []


def doc_links(html):
    """The page's links to docs/<name>.html (and a section: docs/<name>.html#<id>) as the
    one file's "#doc=<name>" (and "#doc=<name>:<id>"), which js/page/docs-view.js opens on the page.

    >>> doc_links('<a href="docs/math.html">math</a> <a href="docs/hosts.html#the-one-file">')
    '<a href="#doc=math">math</a> <a href="#doc=hosts:the-one-file">'
    """
    return re.sub(r'href="docs/([\w-]+)\.html(?:#([^"]+))?"', lambda m: 'href="#doc=%s%s"' % (
        m.group(1), ":" + m.group(2) if m.group(2) else ""), html)


def page_stylesheets(index_html):
    """The page's own stylesheets, as index.html links them, in its order (the cascade's).

    >>> page_stylesheets('<link rel="stylesheet" href="css/a.css">'
    ...                  '<link rel="stylesheet" href="vendor/k.css">')
    ['css/a.css']
    """
    return re.findall(r'<link rel="stylesheet" href="(css/[^"]+)">', index_html)


def _pack(files):
    """One payload's files as one blob: a JSON index line, then the bytes one after another."""
    index, parts, at = [], [], 0
    for name in sorted(files):
        data = files[name]
        index.append([name, at, len(data)])
        parts.append(data)
        at += len(data)
    head = json.dumps(index).encode("utf-8") + b"\n"
    return head + b"".join(parts)


def write(root, site, manifest, cache, files, compiled, index_html, log=print):
    """Write site/FILE_NAME from the built site; returns its facts for build-info.json."""
    with tempfile.TemporaryDirectory(prefix="one-file-") as work:
        plotly = re.search(r'id="plotly-js" href="([^"]+)"', index_html)
        if not plotly:
            raise BuildError("index.html has no <link id=\"plotly-js\">", "restore web/index.html")
        contents, made = payloads(root, site, manifest, files, compiled, plotly.group(1), work,
                                  log)
        app = _inline_safe(_bundle_app(site, cache, manifest, work), "the page's bundled script")
    web = os.path.join(root, "web")
    host_js = _inline_safe(_read(os.path.join(web, "js", "host.js"), "r"), "js/host.js")
    glue = _read(os.path.join(web, "boot", "onefile.js"), "r")
    worker = _inline_safe("\n".join(_read(os.path.join(web, p), "r") for p in WORKER_SOURCES),
                          "the worker's scripts")
    # the page's own stylesheets, in index.html's order (the cascade's), then KaTeX's
    own = page_stylesheets(index_html)
    if not own:
        raise BuildError("index.html links no stylesheet under css/", "restore web/index.html")
    styles = [_read(os.path.join(site, *path.split("/")), "r") for path in own] + [_katex_css(site)]
    if os.path.isfile(os.path.join(site, "css", "docs.css")):  # the docs' dialog
        styles.append(_read(os.path.join(site, "css", "docs.css"), "r"))

    encoded, listing = {}, {}
    for name, entries in contents.items():
        raw = _pack(entries)
        packed = base64.b64encode(_gzip(raw)).decode("ascii")
        encoded[name] = packed
        listing[name] = {"chars": len(packed), "bytes": len(raw),
                         "files": sorted(entries)}
    rt = manifest.artifact("pyodide")
    facts = {"pyodide": rt.version, "python": rt.extra.get("python"),
             "numpy": manifest.numpy_wheel.version, "python_dir": hosts.PYTHON_DIR,
             "site_packages": made["numpy"]["site_packages"], "payloads": listing,
             "worker": {"chars": len(worker), "fnv1a": fnv1a(worker)}}
    if glue.count(FACTS_LINE) != 1:
        raise BuildError("web/boot/onefile.js has no line %r for the file's facts" % FACTS_LINE,
                         "restore web/boot/onefile.js")
    glue = _inline_safe(glue.replace(FACTS_LINE, "var facts = %s;" % json.dumps(
        facts, sort_keys=True)), "boot/onefile.js")

    scripts = [host_js, glue, app]
    policy = one_file_policy(scripts, styles)
    html = _page(index_html, policy, host_js, glue, app, worker, styles, encoded)
    path = os.path.join(site, FILE_NAME)
    with open(path, "w", encoding="utf-8") as f:
        f.write(html)
    size = os.path.getsize(path)
    log("one file: %s, %.1f MB (payloads %s)" % (FILE_NAME, size / 1e6, ", ".join(
        "%s %.1f MB" % (n, listing[n]["chars"] / 1e6) for n in listing)))
    return {"file": FILE_NAME, "bytes": size,
            "sha256": hashlib.sha256(html.encode("utf-8")).hexdigest(),
            "content_security_policy": policy, "payloads": listing,
            "stdlib_modules": made["stdlib"]["modules"], "numpy_modules": made["numpy"]["modules"]}


def with_download_link(html, one_file):
    """index.html with its LINK_MARKER line replaced by a link to the one file and its size
    (`one_file`: what write() returned), or removed when there is none."""
    if one_file is None:
        return re.sub(r"[ \t]*%s\n?" % re.escape(LINK_MARKER), "", html)
    link = ('<p class="hint offline-file"><a id="offline-file" href="%s" download>Download for '
            'offline use</a> (one file, %.1f MB): it opens by double-click, without a server '
            'or a network.</p>' % (FILE_NAME, one_file["bytes"] / 1e6))
    return html.replace(LINK_MARKER, link)


def one_file_policy(scripts, styles):
    """The one file's own Content-Security-Policy: its inline scripts and styles by hash."""
    script_hashes = " ".join(csp.source_hash(s) for s in scripts)
    style_hashes = " ".join(csp.source_hash(s) for s in styles + [csp.PLOTLY_STYLE_ELEMENT])
    return "; ".join([
        "default-src 'none'",
        # its inline scripts by hash; blob: for the scripts the page unpacks (Plotly.js, KaTeX;
        # Pyodide's two are part of the worker's own blob: script); Pyodide's WebAssembly
        "script-src %s blob: 'wasm-unsafe-eval'" % script_hashes,
        "worker-src blob:",  # the worker is made from a blob: URL of its embedded script
        "connect-src 'none'",  # nothing is fetched: every file is in the page
        "img-src data:",
        "font-src data:",
        "style-src %s" % style_hashes,
        "style-src-attr 'unsafe-hashes' %s" % csp.source_hash(csp.PLOTLY_PIXELATED_STYLE),
        "base-uri 'none'",
        "form-action 'none'",
    ])


def fnv1a(text):
    """The 32-bit FNV-1a checksum of `text`'s UTF-16 code units, as web/boot/onefile.js
    computes it over a script element's text: it finds damage (a changed byte), not tampering
    (whoever edits the file can edit the glue that holds it, but the glue's hash is in the
    policy).

    >>> fnv1a("")
    2166136261
    >>> fnv1a("a")
    3826002220
    """
    h = 0x811C9DC5
    units = text.encode("utf-16-le")
    for k in range(0, len(units), 2):
        h = ((h ^ (units[k] | units[k + 1] << 8)) * 0x01000193) & 0xFFFFFFFF
    return h


def _page(index_html, policy, host_js, glue, app, worker, styles, encoded):
    """The built index.html, rewritten to hold everything it loads."""
    html = re.sub(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">',
                  lambda m: csp.meta_tag(policy), index_html, count=1)
    html = html.replace("<html ", '<html data-one-file="true" ', 1)
    html = with_download_link(html, None)  # the file does not offer itself
    html = html.replace('href="index.html"', 'href="%s"' % FILE_NAME)  # "Open the full page"
    html = doc_links(html)  # no docs/ folder beside the file: the docs open on the page
    head_end = "\n".join(
        ["<style>%s</style>" % s for s in styles] +
        ['<script type="text/plain" id="vit-worker-source">%s</script>' % worker,
         "<script>%s</script>" % host_js,
         "<script>%s</script>" % glue,
         '<script type="module">%s</script>' % app])
    html = re.sub(r'\s*<link rel="stylesheet" href="[^"]*">', "", html)
    html = re.sub(r'\s*<script[^>]*\bsrc="[^"]*"[^>]*></script>', "", html)
    html = re.sub(r'\s*<link rel="modulepreload" href="[^"]*"[^>]*>', "", html)
    html = re.sub(r'\s*<(m?py)-config[^>]*>.*?</\1-config>', "", html, flags=re.S)
    html = re.sub(r'<link rel="preload" as="script" id="plotly-js" href="([^"]*)">',
                  r'<link id="plotly-js" href="\1">', html)
    if "</head>" not in html or "</body>" not in html:
        raise BuildError("index.html has no </head> or </body>", "restore web/index.html")
    html = html.replace("</head>", head_end + "\n</head>", 1)
    data = "\n".join('<script type="application/gzip" id="vit-payload-%s">%s</script>'
                     % (name, text) for name, text in encoded.items())
    # the last element: its presence says the file was not cut short before it
    data += '\n<script type="application/json" id="vit-one-file-end">{}</script>'
    return html.replace("</body>", data + "\n</body>", 1)
