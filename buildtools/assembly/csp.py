"""The Content-Security-Policy each host's page ships with, and why each directive is there.

build.py writes the policy into index.html as a <meta http-equiv> (which every static server
delivers) and into build-info.json, from which `build.py --serve` sends it as a header too
(buildtools/serve.py), so the two always agree. Each source below was found by serving a built
site with the policy as a header and watching for CSP violations, in the page and in its
workers, while it booted, edited cells and drew the ViT-B/16-sized heatmaps (the browser test
tests/browser/test_csp.py does the same for every build).

Nothing in the page is run from text: no 'unsafe-eval' and no 'unsafe-inline' scripts on any
host. The two places that would need 'unsafe-eval' are avoided on purpose:

* PyScript serializes the JavaScript hooks its plugins register for a worker and rebuilds them
  with Function() on the page and in the worker; boot/pyscript.js clears those hooks (the only
  one registered is for pyscript.fs, which the explorer does not use) before it starts the
  worker;
* Pyodide 0.17 makes every callable Python object it hands to JavaScript from `new Function()`
  (empty); boot/fallback-worker.js gives it an empty function made without eval instead.

docs/hosts.md tells the same story for people deploying the site.
"""
import base64
import hashlib

from . import hosts

# Plotly.js (3.x) writes this exact style attribute on a heatmap's <image> to draw its cells as
# sharp squares (src/constants/pixelated_image.js: STYLE). A style attribute needs 'unsafe-inline'
# or, stricter, 'unsafe-hashes' with the hash of its exact text, which is what the policy allows.
PLOTLY_PIXELATED_STYLE = (
    "image-rendering: optimizeSpeed; image-rendering: -moz-crisp-edges; "
    "image-rendering: -o-crisp-edges; image-rendering: -webkit-optimize-contrast; "
    "image-rendering: optimize-contrast; image-rendering: crisp-edges; "
    "image-rendering: pixelated; ")
# Plotly.js adds its own style rules through an empty <style> element that it fills with
# CSSStyleSheet.insertRule (which CSP does not restrict); the element itself needs the hash of its
# (empty) text.
PLOTLY_STYLE_ELEMENT = ""


def source_hash(text):
    """A CSP hash source for an inline script or style whose text is exactly `text`.

    Examples
    --------
    >>> source_hash("")
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
    """
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-%s'" % base64.b64encode(digest).decode("ascii")


def directives(host, manifest, inline_scripts=()):
    """The policy of `host`'s page: [(directive, [sources], why), ...] in the order written.

    Parameters
    ----------
    host : buildtools.assembly.hosts.Host
    manifest : buildtools.artifacts.manifest.Manifest
        Only read for a CDN build, whose page loads PyScript and Pyodide from the CDN's URLs.
    inline_scripts : sequence of str, optional
        The texts of inline scripts the page holds (a CDN build's import map), allowed by hash.

    Returns
    -------
    list of (str, list of str, str)
    """
    pyscript_dir, pyodide_dir = hosts.pyscript_urls(host, manifest) if host.uses_pyscript \
        else ("", "")
    cdn = [pyscript_dir, pyodide_dir] if host.name == "cdn" else []
    cdn_pyodide = [pyodide_dir] if host.name == "cdn" else []
    worker = (["blob:", "'self'"], "PyScript starts its worker from a blob: URL, which imports "
              "the site's boot/pyodide-worker.mjs and the modules it imports: Firefox checks a "
              "module worker's imports against worker-src, Chromium and WebKit against "
              "script-src") \
        if host.uses_pyscript else (["'self'"], "boot/fallback.js starts boot/fallback-worker.js")
    return [
        ("default-src", ["'none'"], "anything not named below is refused"),
        ("script-src", ["'self'", "'wasm-unsafe-eval'"] + cdn
         + [source_hash(text) for text in inline_scripts],
         "the site's own scripts (and the CDN's PyScript and Pyodide, and the CDN build's import "
         "map of their pinned hashes, by its own hash); 'wasm-unsafe-eval' lets Pyodide compile "
         "its WebAssembly, and nothing more: no eval, no other inline script"),
        ("worker-src", worker[0] + cdn, worker[1] + " (and the CDN's, for a CDN build)"),
        ("connect-src", ["'self'"] + cdn_pyodide,
         "the runtime's files, the NumPy wheel and the explorer's Python files are fetched"),
        ("img-src", ["data:"],
         "the page's icon is a data: URL, and Plotly.js draws any visible heatmap trace as a "
         "data: PNG (the page paints its heatmaps' cells itself, on canvases)"),
        ("font-src", ["'self'"], "KaTeX's fonts, for the equations"),
        ("style-src", ["'self'", source_hash(PLOTLY_STYLE_ELEMENT)],
         "the site's stylesheets, and the empty <style> that Plotly.js fills with insertRule"),
        ("style-src-attr", ["'unsafe-hashes'", source_hash(PLOTLY_PIXELATED_STYLE)],
         "the one style attribute Plotly.js writes: sharp heatmap cells (css/pipeline.css says "
         "the same, for browsers without 'unsafe-hashes')"),
        ("base-uri", ["'none'"], "no <base> may move the site's relative URLs"),
        ("form-action", ["'none'"], "the page has no form"),
    ]


def policy(host, manifest, inline_scripts=()):
    """The policy of `host`'s page as one header value.

    Examples
    --------
    >>> from buildtools.assembly.hosts import Host
    >>> text = policy(Host("fallback", "a test"), None)
    >>> text.split("; ")[:3]
    ["default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "worker-src 'self'"]
    """
    return "; ".join("%s %s" % (name, " ".join(sources))
                     for name, sources, _ in directives(host, manifest, inline_scripts))


def meta_tag(text):
    """The <meta http-equiv> that delivers the policy `text` inside the page.

    Examples
    --------
    >>> meta_tag("default-src 'none'")
    '<meta http-equiv="Content-Security-Policy" content="default-src \\'none\\'">'
    """
    return '<meta http-equiv="Content-Security-Policy" content="%s">' % text.replace(
        "&", "&amp;").replace('"', "&quot;")
