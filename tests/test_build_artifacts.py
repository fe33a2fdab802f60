"""build.py's artifacts: the manifest is checked, downloads are checked, bad files are rejected.

No network: the npm look-up and the download are replaced by functions that serve tiny fake
tarballs made in a temporary folder.
"""
import base64
import hashlib
import io
import os
import tarfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from buildtools.artifacts import cache as cache_mod, fetch, manifest, unpacked  # noqa: E402
from buildtools.assembly import hosts  # noqa: E402
from buildtools.errors import BuildError  # noqa: E402


def make_tgz(files):
    """An npm-style tarball (everything under package/) holding {path: bytes}."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo("package/" + path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def sri(data):
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def artifact(data, files=("lib.js",), **kw):
    entry = {"package": "@fake/lib", "version": "1.0.0", "integrity": sri(data),
             "dest": "vendor/lib", "files": list(files)}
    entry.update(kw)
    return manifest.parse({"npm": {"lib": entry}, "numpy_wheel": WHEEL}).artifact("lib")


WHEEL = {"for": "lib", "version": "2.0", "file_name": "numpy-2.0-fake.whl", "sha256": "0" * 64,
         "download": "https://example.invalid/{pyodide_version}/{file_name}"}


# ---- the manifest ---------------------------------------------------------------------------

def test_the_repository_manifest_pins_every_artifact_the_hosts_use():
    m = manifest.load(os.path.join(ROOT, "artifacts.json"))
    needed = set(hosts.PAGE_ARTIFACTS)
    for name in ("fallback", "pyscript", "cdn"):
        needed |= set(hosts.Host(name, "test").runtime_artifacts)
    assert needed <= set(m.npm)
    for art in m.npm.values():
        assert art.integrity.startswith("sha512-") and art.version[0].isdigit()
        assert not art.dest.startswith("/")
    assert m.numpy_wheel.file_name.startswith("numpy-%s-" % m.numpy_wheel.version)
    assert m.wheel_url().endswith("/" + m.numpy_wheel.file_name)
    assert m.artifact(m.numpy_wheel.for_artifact).package == "pyodide"


@pytest.mark.parametrize("change, words", [
    ({"integrity": "sha1-abc"}, "npm.lib: integrity"),
    ({"integrity": None}, "npm.lib: integrity is missing"),
    ({"files": "lib.js"}, "npm.lib: files must be a list"),
    ({"dest": "../outside"}, "npm.lib: dest"),
    ({"version": ""}, "npm.lib: version is missing"),
])
def test_a_broken_manifest_entry_is_named(change, words):
    entry = {"package": "x", "version": "1", "integrity": sri(b"x"), "dest": "vendor/x",
             "files": ["a"]}
    entry.update(change)
    with pytest.raises(BuildError) as err:
        manifest.parse({"npm": {"lib": entry}, "numpy_wheel": WHEEL})
    assert words in str(err.value)


def test_a_manifest_that_is_not_json_says_so(tmp_path):
    path = tmp_path / "artifacts.json"
    path.write_text("{ nope")
    with pytest.raises(BuildError) as err:
        manifest.load(str(path))
    assert "not valid JSON" in str(err.value)


# ---- downloads --------------------------------------------------------------------------------

@pytest.fixture
def fake_registry(monkeypatch):
    """npm view and the download serve `served` instead of the network; counts calls."""
    state = {"served": b"", "integrity": None, "views": 0, "downloads": 0}

    def npm_dist(spec):
        state["views"] += 1
        return {"tarball": "https://registry.invalid/lib.tgz",
                "integrity": state["integrity"]}

    def download(url, dest, label, timeout=60):
        state["downloads"] += 1
        with open(dest, "wb") as f:
            f.write(state["served"])

    monkeypatch.setattr(cache_mod, "npm_dist", npm_dist)
    monkeypatch.setattr(cache_mod, "download", download)
    return state


def test_a_download_is_checked_cached_and_reused(tmp_path, fake_registry):
    data = make_tgz({"lib.js": b"ok()", "README.md": b"r"})
    art = artifact(data)
    fake_registry.update(served=data, integrity=art.integrity)
    cache = cache_mod.Cache(str(tmp_path), log=lambda *a: None)
    first, records = cache.unpacked(art)
    assert sorted(os.listdir(first)) == [".complete.json", "lib.js"]
    assert records == {"lib.js": {"sha256": hashlib.sha256(b"ok()").hexdigest(), "size": 4}}
    again, _ = cache.unpacked(art)  # second build: no look-up, no download
    assert again == first and fake_registry["views"] == 1 and fake_registry["downloads"] == 1


def test_a_corrupted_download_is_rejected_and_named(tmp_path, fake_registry):
    good = make_tgz({"lib.js": b"ok()"})
    art = artifact(good)
    fake_registry.update(served=good[:-10] + b"tampered!!", integrity=art.integrity)
    cache = cache_mod.Cache(str(tmp_path), log=lambda *a: None)
    with pytest.raises(BuildError) as err:
        cache.npm_tarball(art)
    message = str(err.value)
    assert "@fake/lib@1.0.0" in message and "rejected" in message
    assert os.listdir(os.path.join(str(tmp_path), "npm")) == []  # nothing bad stays cached


def test_a_registry_that_disagrees_with_the_pin_stops_before_downloading(tmp_path, fake_registry):
    art = artifact(make_tgz({"lib.js": b"ok()"}))
    fake_registry.update(integrity=sri(b"something else"))
    with pytest.raises(BuildError) as err:
        cache_mod.Cache(str(tmp_path), log=lambda *a: None).npm_tarball(art)
    assert "@fake/lib@1.0.0" in str(err.value) and fake_registry["downloads"] == 0


def test_a_corrupted_cached_file_is_not_used(tmp_path):
    data = make_tgz({"lib.js": b"ok()"})
    art = artifact(data)
    os.makedirs(str(tmp_path / "npm"))
    (tmp_path / "npm" / art.tarball_name).write_bytes(data[:-1] + b"X")
    cache = cache_mod.Cache(str(tmp_path), log=lambda *a: None, offline=True)
    with pytest.raises(BuildError) as err:
        cache.npm_tarball(art)
    assert "@fake/lib@1.0.0 is not in the cache" in str(err.value)


def test_the_selection_must_match_the_package(tmp_path):
    data = make_tgz({"dist/lib.js": b"x", "dist/lib.js.map": b"m", "dist/fonts/a.woff2": b"f"})
    art = artifact(data, files=["dist/*.js", "dist/fonts/*", "dist/missing.css"],
                   strip="dist/", exclude=["dist/*.map"])
    tgz = tmp_path / "lib.tgz"
    tgz.write_bytes(data)
    with pytest.raises(BuildError) as err:
        unpacked.extract_selection(str(tgz), art, str(tmp_path / "out"))
    assert "dist/missing.css" in str(err.value) and "@fake/lib@1.0.0" in str(err.value)
    art.files.pop()
    written = unpacked.extract_selection(str(tgz), art, str(tmp_path / "out2"))
    assert sorted(written) == ["fonts/a.woff2", "lib.js"]
    assert written["lib.js"] == {"sha256": hashlib.sha256(b"x").hexdigest(), "size": 1}


def test_the_numpy_wheel_is_checked_by_sha256(tmp_path):
    wheel = tmp_path / "numpy-2.0-fake.whl"
    wheel.write_bytes(b"wheel bytes")
    spec = dict(WHEEL, sha256=hashlib.sha256(b"wheel bytes").hexdigest())
    m = manifest.parse({"npm": {"lib": {"package": "pyodide", "version": "9.0", "dest": "v",
                                        "integrity": sri(b"x"), "files": ["a"]}},
                        "numpy_wheel": spec})
    cache = cache_mod.Cache(str(tmp_path / "cache"), log=lambda *a: None, offline=True)
    path, why = cache.numpy_wheel(m, given=str(wheel))
    assert why is None and os.path.basename(path) == wheel.name
    assert cache.numpy_wheel(m) == (path, None)  # copied into the cache for later builds
    wheel.write_bytes(b"other bytes")
    with pytest.raises(BuildError) as err:
        cache.numpy_wheel(m, given=str(wheel))
    assert "sha256" in str(err.value) and "numpy-2.0-fake.whl" in str(err.value)


def test_a_failed_wheel_download_is_remembered(tmp_path, monkeypatch):
    calls = []

    def unreachable(url, dest, label, timeout=60):
        calls.append(url)
        raise OSError("name does not resolve")

    monkeypatch.setattr(cache_mod, "download", unreachable)
    m = manifest.parse({"npm": {"lib": {"package": "pyodide", "version": "9.0", "dest": "v",
                                        "integrity": sri(b"x"), "files": ["a"]}},
                        "numpy_wheel": WHEEL})
    cache = cache_mod.Cache(str(tmp_path), log=lambda *a: None)
    path, why = cache.numpy_wheel(m)
    assert path is None and "name does not resolve" in why
    assert calls == ["https://example.invalid/9.0/numpy-2.0-fake.whl"]
    path, why = cache.numpy_wheel(m)  # a second build does not try again
    assert path is None and "not retried" in why and len(calls) == 1
    cache.numpy_wheel(m, retry=True)  # --runtime pyscript does
    assert len(calls) == 2


def test_missing_npm_says_to_install_node(monkeypatch):
    monkeypatch.setattr(fetch.shutil, "which", lambda name: None)
    with pytest.raises(BuildError) as err:
        fetch.npm_dist("x@1")
    assert "npm is missing" in err.value.what and "Node.js 18" in err.value.todo
