"""The pieces of build.py, a package per concept (at most 14 modules each).

errors     BuildError: what failed and what the person should do about it
serve      a static server with the MIME types Pyodide needs, no folder listings (also used
           by the tests and benchmarks)
browser    how the tests and benchmarks start Chromium (its flags, a system Chromium)
artifacts/ the pinned third-party files: artifacts.json (manifest), the download cache
           (cache, fetch, checked, unpacked), PyPI files read, never installed (pypi_files),
           and a folder swapped in under a name in one step (atomic)
assembly/  a site folder from web/ and pycore/ (site), its page (page_html), its policy (csp),
           its runtime host (hosts), its docs' pages (docs_html), its first view (first_view),
           its Python as bytecode (bytecode), its gzipped runtime files (gzipped), and the
           output replaced only by a complete build (output)
data/      data read out of pinned wheels at build time: the 8x8 digits (digits, page_digits),
           ImageNet-1k's class names (class_names)
javascript/ JavaScript the build writes or bundles: js/shared.js (shared), web/js/protocol.js
           (protocol: `python3 -m buildtools.javascript.protocol`), Plotly.js with heatmaps only
           (plotly_bundle)
onefile/   dist/vit-head-explorer.html (page) and its Python as bytecode (python)
"""
