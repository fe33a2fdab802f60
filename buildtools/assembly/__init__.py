"""A site folder assembled from web/, pycore/ and the vendored files, for one runtime host, and
swapped in for the output only once complete (buildtools/__init__.py says more)."""
