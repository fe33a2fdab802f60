"""The pieces of build.py, one idea per module.

errors    BuildError: what failed and what the person should do about it
manifest  reads and checks artifacts.json, the one pinned list of third-party files
cache     the download cache: npm look-ups, downloads with progress, integrity checks
hosts     the runtime hosts (fallback, pyscript, cdn): which artifacts, which boot tags
site      assembles a site folder from web/ and pycore/, atomically replaces the output
serve     a static server with the MIME types Pyodide needs (also used by the tests)
"""
