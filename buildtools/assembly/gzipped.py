"""The PyScript host's largest runtime files, served gzip-compressed and decompressed in its
worker (boot/pyodide-worker.mjs, DecompressionStream), as the one file carries them.

A plain static server sends files as they are; without HTTP compression a cold boot transferred
21.7 MB, 9.6 MB of it Pyodide's WebAssembly (3.5 MB gzipped). The site holds `<name>.gz` in
place of each file below; pyscript.json's `vit.gzipped` names them, and the worker answers
Pyodide's loader's request for `<name>` with `<name>.gz`, decompressed as it arrives. Pyodide's
own standard library zip, which the build's bytecode zip replaces, is not in the site at all:
no boot asks for it.
"""
import gzip
import os
import shutil

# In Pyodide's folder; the bytecode standard library zip (buildtools/assembly/bytecode.py) is added.
PYODIDE_FILES = ("pyodide.asm.wasm", "pyodide-lock.json")
REPLACED = "python_stdlib.zip"  # Pyodide's, in its folder: the bytecode zip is served instead


def compress(site, pyodide_dest, stdlib_url):
    """Write <name>.gz beside each file to serve compressed; returns their site URLs (without
    .gz). The originals stay until remove_originals (the one file reads them)."""
    urls = [pyodide_dest.rstrip("/") + "/" + name for name in PYODIDE_FILES] + [stdlib_url]
    for url in urls:
        path = os.path.join(site, *url.split("/"))
        with open(path, "rb") as src, open(path + ".gz", "wb") as raw:
            # no name and no time in the header: the same input gives the same bytes
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9,
                               mtime=0) as out:
                shutil.copyfileobj(src, out)
    return urls


def served_size(path):
    """Bytes a boot downloads for the site file at `path`: its .gz when it is served so."""
    return os.path.getsize(path + ".gz") if os.path.isfile(path + ".gz") else os.path.getsize(path)


def remove_originals(site, urls, pyodide_dest):
    """Remove what no boot requests: each compressed file's original, and Pyodide's own
    standard library zip."""
    for url in urls + [pyodide_dest.rstrip("/") + "/" + REPLACED]:
        os.remove(os.path.join(site, *url.split("/")))
