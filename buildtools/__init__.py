"""The pieces of build.py, one idea per module.

errors    BuildError: what failed and what the person should do about it
manifest  reads and checks artifacts.json, the one pinned list of third-party files
cache     the download cache: npm look-ups, downloads with progress, integrity checks, and
          the records against which every file copied out of it into a site is checked
hosts     the runtime hosts (fallback, pyscript, cdn): which artifacts, which boot tags
plotly_bundle  Plotly.js with heatmaps only, bundled from pinned npm sources, cached and checked
site      assembles a site folder from web/ and pycore/, atomically replaces the output
atomic    swaps a new folder in under a name in one step (renameat2 exchange on Linux)
serve     a static server with the MIME types Pyodide needs, no folder listings (also used
          by the tests)
"""
