"""web/boot/wheel-libraries.mjs, under Node.js: the WebAssembly libraries (*.so) of a wheel are
read from the zip as it arrives and compiled, and WebAssembly.instantiate gets the compiled module
for bytes equal to a library's, and the bytes themselves for anything else.

The wheels are zips made here with Python's zipfile (stored and deflated members, folders, files
that are not libraries) holding small valid WebAssembly modules, and NumPy's own wheel, the one
the PyScript host ships (from the folder VIT_HEAD_MIRROR names, as the build takes it).
"""
import glob
import json
import os
import shutil
import subprocess
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Node reads the wheel, compiles its libraries, then instantiates each library and each
# library with one byte changed; the engine's own instantiate is replaced by a recorder.
PROBE = r"""
import { readFileSync } from "node:fs";
const seen = [];
WebAssembly.instantiate = async (source, imports) => {
  seen.push(source instanceof WebAssembly.Module ? "module" : "bytes");
  return source instanceof WebAssembly.Module ? { instantiated: true } : { module: null, instance: null };
};
const { compileLibrariesOf, useCompiledLibraries, libraries } = await import("%(module)s");
let told = 0;
const loads = []; // the byte length of each module given as bytes, as it begins to load
useCompiledLibraries({ onLoad: (bytes) => { loads.push(bytes.byteLength); }, onUse: () => { told += 1; } });
const input = JSON.parse(readFileSync(0, "utf8"));
await compileLibrariesOf(new Response(readFileSync(input.wheel)));
seen.length = 0; // Node's own fetch instantiates its HTTP parser's WebAssembly on first use
loads.length = 0;
const answers = [];
for (const path of input.libraries) {
  const bytes = new Uint8Array(readFileSync(path));
  const changed = bytes.slice();
  changed[changed.length - 1] ^= 1;
  answers.push(await WebAssembly.instantiate(changed, {}));
  const view = new Uint8Array(bytes.length + 8);          // as a view into a larger buffer
  view.set(bytes, 8);
  answers.push(await WebAssembly.instantiate(view.subarray(8), {}));
}
console.log(JSON.stringify({ seen, libraries, told, loads,
                             shapes: answers.map((a) => Object.keys(a).sort().join(",")) }));
"""


def module_bytes(payload):
    """A valid WebAssembly module: the header and one custom section holding `payload`."""
    name = b"x"
    body = bytes([len(name)]) + name + payload
    size, leb = len(body), b""
    while True:
        byte, size = size & 0x7F, size >> 7
        leb += bytes([byte | (0x80 if size else 0)])
        if not size:
            break
    return b"\0asm\x01\0\0\0" + b"\0" + leb + body


def run(wheel, libraries, tmp_path):
    node = shutil.which("node") or pytest.fail("Node.js is needed (the build needs it too)")
    module = "file://" + os.path.join(ROOT, "web", "boot", "wheel-libraries.mjs")
    paths = []
    for i, data in enumerate(libraries):
        path = tmp_path / ("lib%d.so" % i)
        path.write_bytes(data)
        paths.append(str(path))
    done = subprocess.run([node, "--input-type=module", "-e", PROBE % {"module": module}],
                          input=json.dumps({"wheel": str(wheel), "libraries": paths}),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_each_library_of_a_wheel_is_compiled_once_and_given_for_its_own_bytes(tmp_path):
    libraries = [module_bytes(os.urandom(n)) for n in (3, 40000, 200000)]
    wheel = tmp_path / "made-1.0-py3-none-any.whl"
    with zipfile.ZipFile(str(wheel), "w") as z:
        z.writestr("made/__init__.py", "x = 1\n", compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("made/_core/a.cpython-314-wasm32-emscripten.so", libraries[0],
                   compress_type=zipfile.ZIP_STORED)
        z.writestr("made/b.so", libraries[1], compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("made/deep/c.so", libraries[2], compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("made/not-a-library.so.txt", b"\0asm", compress_type=zipfile.ZIP_STORED)
        z.writestr("made-1.0.dist-info/RECORD", "", compress_type=zipfile.ZIP_DEFLATED)
    got = run(wheel, libraries, tmp_path)
    # a changed byte is the engine's to compile; the library's own bytes get its early module,
    # once (a library is loaded once: its bytes are let go)
    assert got["seen"] == ["bytes", "module"] * 3
    assert got["shapes"] == ["instance,module", "instance,module"] * 3
    assert got["libraries"] == {"compiled": 3, "used": 3} and got["told"] == 3
    assert got["loads"] == [len(library) for library in libraries for _ in ("changed", "own")]


def test_a_file_that_is_not_a_wheel_compiles_nothing_and_changes_nothing(tmp_path):
    library = module_bytes(b"abc")
    wheel = tmp_path / "broken.whl"
    wheel.write_bytes(b"PK\x03\x04 not really a zip" + library)
    got = run(wheel, [library], tmp_path)
    assert got["seen"] == ["bytes", "bytes"]
    assert got["libraries"] == {"compiled": 0, "used": 0} and got["told"] == 0


def numpy_wheel():
    folder = os.environ.get("VIT_HEAD_MIRROR") or os.path.join(ROOT, "..", "shared", "mirror")
    found = glob.glob(os.path.join(folder, "numpy-*-pyemscripten_*.whl"))
    assert found, ("NumPy's Pyodide wheel is needed (the folder VIT_HEAD_MIRROR names, as for "
                   "the PyScript host's build)")
    return found[0]


def test_numpys_own_wheel_gives_every_library_early(tmp_path):
    wheel = numpy_wheel()
    with zipfile.ZipFile(wheel) as z:
        libraries = [z.read(n) for n in z.namelist() if n.endswith(".so")]
    assert len(libraries) >= 10  # numpy/_core/_multiarray_umath, linalg, random, fft, ...
    got = run(wheel, libraries, tmp_path)
    assert got["seen"] == ["bytes", "module"] * len(libraries)
    assert got["libraries"] == {"compiled": len(libraries), "used": len(libraries)}
