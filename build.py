#!/usr/bin/env python3
"""Build the ViT classification-head explorer into a self-contained static site.

    python build.py                      # dist/, the best host this machine can build
    python build.py --serve              # build, then serve dist/ on http://127.0.0.1:8000/
    python build.py --runtime fallback   # force a host: auto | pyscript | fallback | cdn

The site is web/ (the page) + pycore/ (the NumPy library, run in the browser) + pinned,
hash-checked third-party files (artifacts.json) from a local download cache. Which runtime host
is built, and why, is printed and written to <out>/build-info.json. See README.md.
"""
import argparse
import os
import sys
import time

from buildtools import hosts, manifest as manifest_mod, serve as serve_mod, site
from buildtools.cache import MIRROR_ENV, Cache, default_cache_dir
from buildtools.errors import BuildError

ROOT = os.path.dirname(os.path.abspath(__file__))


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Build the ViT head explorer into a static site (see README.md).")
    p.add_argument("--runtime", choices=("auto", "pyscript", "fallback", "cdn"), default="auto",
                   help="auto (default): PyScript + Pyodide 314 when its NumPy wheel can be "
                        "obtained, else the offline Pyodide 0.17 fallback; cdn: a small site "
                        "that loads PyScript, Pyodide and NumPy from public CDNs")
    p.add_argument("--numpy-wheel", metavar="PATH",
                   help="the NumPy wheel for the pinned Pyodide (file name and sha256 in "
                        "artifacts.json), for machines that cannot download it")
    p.add_argument("--without-numpy", action="store_true",
                   help="with --runtime pyscript: build without the NumPy wheel, so the page "
                        "shows its 'no NumPy' error (used by the tests)")
    p.add_argument("--cache-dir", default=default_cache_dir(),
                   help="download cache (default: %(default)s)")
    p.add_argument("--mirror", metavar="DIR", default=os.environ.get(MIRROR_ENV) or None,
                   help="a folder holding pinned files under their own names (npm tarballs, "
                        "the NumPy wheel), checked against artifacts.json like a download; "
                        "for machines that cannot reach Pyodide's CDN (default: $%s)"
                        % MIRROR_ENV)
    p.add_argument("--offline", action="store_true",
                   help="use the cache only; fail instead of downloading")
    p.add_argument("--out", default=os.path.join(ROOT, "dist"),
                   help="output folder, replaced only when the build succeeds (default: dist)")
    p.add_argument("--serve", action="store_true", help="serve the output after building")
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default: 8000)")
    p.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)  # the tests build fakes
    return p.parse_args(argv)


def build(args, log=print):
    """Build the site; returns build-info. Raises BuildError with what to do on failure."""
    manifest = manifest_mod.load(os.path.join(args.root, "artifacts.json"))
    cache = Cache(args.cache_dir, log=log, offline=args.offline, mirror=args.mirror)
    host = hosts.choose(args.runtime, manifest, cache, numpy_wheel=args.numpy_wheel,
                        without_numpy=args.without_numpy, log=log)
    log("host: %s (%s)" % (host.name, host.reason))
    return site.replace_atomically(
        args.out, lambda folder: site.assemble(args.root, folder, host, manifest, cache, log))


def folder_size(path):
    total = 0
    for dirpath, _, filenames in os.walk(path):
        total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in filenames)
    return total


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    start = time.monotonic()
    try:
        info = build(args)
    except BuildError as exc:
        print("\nbuild failed: %s" % exc.what, file=sys.stderr)
        if exc.todo:
            print("what to do: %s" % exc.todo, file=sys.stderr)
        if os.path.isdir(args.out):
            print("%s was left as it was." % args.out, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nbuild interrupted; %s was left as it was." % args.out, file=sys.stderr)
        return 130
    rt = info["runtime"]
    print("built %s in %.1f s: %s host, Pyodide %s (Python %s, NumPy %s), %.1f MB"
          % (args.out, time.monotonic() - start, info["host"], rt["pyodide"], rt["python"],
             rt["numpy"] or "missing", folder_size(args.out) / 1e6))
    if args.serve:
        try:
            server = serve_mod.make_server(args.out, port=args.port)
        except OSError as exc:
            print("cannot serve on port %d (%s): pass another --port" % (args.port, exc),
                  file=sys.stderr)
            return 1
        print("serving %s at http://127.0.0.1:%d/ (Ctrl+C stops)"
              % (args.out, server.server_address[1]), flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
