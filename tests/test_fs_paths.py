"""web/boot/fs-paths.mjs: PATH.dirname and PATH.basename without regular expressions give what
Emscripten's own give (the regular expressions below are Emscripten's PATH.splitPath and
PATH.basename, as Pyodide 314's pyodide.asm.mjs holds them), for every path made of up to four
pieces from a set that covers roots, repeated and trailing slashes, dots and names."""
import json
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = r"""
import { dirname, basename, usePlainPaths } from "%(module)s";
const splitPath = (f) => /^(\/?|)([\s\S]*?)((?:\.{1,2}|[^\/]+?|)(\.[^.\/]*|))(?:[\/]*)$/.exec(f).slice(1);
const emscriptenDirname = (path) => {
  const r = splitPath(path);
  let root = r[0], dir = r[1];
  if (!root && !dir) return ".";
  if (dir) dir = dir.slice(0, -1);
  return root + dir;
};
const emscriptenBasename = (path) => path && path.match(/([^\/]+|\/)\/*$/)[1];
const pieces = ["", "/", "//", "a", "b.c", ".", "..", "...", ".x", "lib", "python3.14"];
let paths = [""];
const all = [];
for (let depth = 1; depth <= 4; depth++) {
  paths = paths.flatMap((p) => pieces.map((q) => p + q));
  all.push(...paths);
}
const differ = all.filter((p) => dirname(p) !== emscriptenDirname(p) || basename(p) !== emscriptenBasename(p));
const PATH = { dirname: emscriptenDirname, basename: emscriptenBasename };
usePlainPaths(PATH);
console.log(JSON.stringify({ checked: new Set(all).size, differ: differ.slice(0, 5),
                             placed: PATH.dirname === dirname && PATH.basename === basename,
                             samples: ["/home/pyodide/explorer/pycore/vit/head.py", "/", "a/", ""].map((p) => [dirname(p), basename(p)]) }));
"""


def test_plain_dirname_and_basename_match_emscriptens():
    node = shutil.which("node") or pytest.fail("Node.js is needed (the build needs it too)")
    module = "file://" + os.path.join(ROOT, "web", "boot", "fs-paths.mjs")
    done = subprocess.run([node, "--input-type=module", "-e", PROBE % {"module": module}],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["checked"] > 8000  # distinct paths (pieces may join into the same one)
    assert got["differ"] == []
    assert got["placed"]
    assert got["samples"] == [["/home/pyodide/explorer/pycore/vit", "head.py"], ["/", "/"], [".", "a"], [".", ""]]
