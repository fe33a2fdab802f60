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
import errno
import os
import sys
import time

from buildtools.assembly import hosts, output, site
from buildtools.artifacts import manifest as manifest_mod
from buildtools import serve as serve_mod
from buildtools.artifacts.cache import MIRROR_ENV, Cache, default_cache_dir
from buildtools.errors import BuildError

ROOT = os.path.dirname(os.path.abspath(__file__))


class _Parser(argparse.ArgumentParser):
    """argparse, whose complaints end like every other failure: build failed / what to do."""

    def error(self, message):
        raise BuildError(message, "see `python3 build.py --help`")


def parse_args(argv):
    p = _Parser(
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


def _inside(path, folder):
    """True when `path` is `folder` or lies inside it (both real paths)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_args(args):
    """Refuse, before any work, the values argparse lets through that would end in a traceback
    or undo something: a port that is none, an output that overlaps the cache or the sources."""
    if not 0 <= args.port <= 65535:
        raise BuildError("--port %d is not a TCP port (0 to 65535)" % args.port,
                         "pass a port such as 8000 (0 picks a free one)")
    out, cache = os.path.realpath(args.out), os.path.realpath(args.cache_dir)
    if _inside(out, cache) or _inside(cache, out):
        raise BuildError("the output %s and the cache %s overlap: replacing the output would "
                         "delete cached files, or ship them" % (out, cache),
                         "pass separate folders with --out and --cache-dir")
    for source in ("web", "pycore"):
        folder = os.path.realpath(os.path.join(args.root, source))
        if _inside(out, folder):
            raise BuildError("the output %s is inside %s/, which is copied into it" % (out, source),
                             "pass an --out outside the sources (the default is dist/)")


def build(args, log=print):
    """Build the site; returns build-info. Raises BuildError with what to do on failure."""
    try:
        return _build(args, log)
    except OSError as exc:  # a full disk, a missing source file: said, not a traceback
        raise BuildError("%s" % exc, _os_todo(exc))


def _os_todo(exc):
    """What to do about an OSError that no step of the build turned into a BuildError."""
    path = exc.filename or "the output and cache folders"
    if isinstance(exc, FileNotFoundError):
        return ("%s is missing: build from a full checkout (`git status` shows deleted files)"
                % path)
    if exc.errno == errno.ENOSPC:
        return "free some space on the disk that holds %s, then build again" % path
    return "check that %s can be read and written, then build again" % path


def _build(args, log):
    output.check_output(args.out, log)
    manifest = manifest_mod.load(os.path.join(args.root, "artifacts.json"))
    cache = Cache(args.cache_dir, log=log, offline=args.offline, mirror=args.mirror)
    host = hosts.choose(args.runtime, manifest, cache, numpy_wheel=args.numpy_wheel,
                        without_numpy=args.without_numpy, log=log)
    log("host: %s (%s)" % (host.name, host.reason))
    return output.replace_atomically(
        args.out, lambda folder: site.assemble(args.root, folder, host, manifest, cache, log),
        log=log)


def bind(args):
    """The server for --serve, bound before building so a busy port fails in a second."""
    try:
        return serve_mod.make_server(os.path.abspath(args.out), port=args.port)
    except (OSError, OverflowError) as exc:
        raise BuildError("cannot serve on port %d: %s" % (args.port, exc),
                         "pass another --port (0 picks a free one), or stop what uses it")


def folder_size(path):
    total = 0
    for dirpath, _, filenames in os.walk(path):
        total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in filenames)
    return total


def main(argv=None):
    start, args, server = time.monotonic(), None, None
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        check_args(args)
        server = bind(args) if args.serve else None
        info = build(args)
    except BuildError as exc:
        print("\nbuild failed: %s" % exc.what, file=sys.stderr)
        if exc.todo:
            print("what to do: %s" % exc.todo, file=sys.stderr)
        if args and os.path.isdir(args.out):
            print("%s was left as it was." % args.out, file=sys.stderr)
        if server:
            server.server_close()
        return 1
    except KeyboardInterrupt:
        print("\nbuild interrupted; %s was left as it was." % (args.out if args else "the output"),
              file=sys.stderr)
        if server:
            server.server_close()
        return 130
    rt = info["runtime"]
    print("built %s in %.1f s: %s host, Pyodide %s (Python %s, NumPy %s), %.1f MB"
          % (args.out, time.monotonic() - start, info["host"], rt["pyodide"], rt["python"],
             rt["numpy"] or "missing", folder_size(args.out) / 1e6))
    if server:
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
