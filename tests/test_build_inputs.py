"""Careless inputs the build meets besides its command line: a hand-edited artifacts.json of the
wrong shape, a download cut off half-way, `npm pack` that cannot run, a file where the bundle
cache's folder should be. Each ends in a BuildError naming what to fix, or in the fallback the
build has for it with a log line; never in a traceback.

No network: urlopen and subprocess.run are replaced.
"""
import http.client
import io
import json
import os
import subprocess

import pytest

from buildtools.artifacts import cache as cache_mod, fetch, manifest
from buildtools.javascript import plotly_bundle
from buildtools.errors import BuildError
from test_build_artifacts import WHEEL, make_tgz, sri
from test_build_plotly_bundle import FakeCache, fake_tarballs, spec as bundle_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def real_manifest():
    with open(os.path.join(ROOT, "artifacts.json"), encoding="utf-8") as f:
        return json.load(f)


def put(path, value):
    """A change to artifacts.json: set the value at a path of keys (None: delete it)."""
    def change(data):
        for key in path[:-1]:
            data = data[key]
        if value is None:
            del data[path[-1]]
        else:
            data[path[-1]] = value
    return change


@pytest.mark.parametrize("change, words", [
    (put(["npm"], []), "npm must be an object"),
    (put(["npm", "katex"], "katex@0.16"), "npm.katex must be an object"),
    (put(["npm", "katex", "strip"], 5), "npm.katex: strip must be a string"),
    (put(["npm", "pyscript", "exclude"], "dist/*.map"), "npm.pyscript: exclude must be a list"),
    (put(["npm", "katex", "version"], 16), "npm.katex: version must be a string"),
    (put(["numpy_wheel"], []), "numpy_wheel must be an object"),
    (put(["plotly_bundle", "esbuild"], []), "plotly_bundle: esbuild must be an object"),
    (put(["plotly_bundle", "packages"], {"a": 1}), "plotly_bundle: packages must be a list"),
    (put(["plotly_bundle", "packages", 0], "plotly.js"), "a package must be an object"),
    (put(["plotly_bundle", "version"], None), "plotly_bundle: version is missing"),
    (put(["cdn"], []), "cdn must be an object"),
    (put(["cdn", "pyodide"], 3), "cdn.pyodide must be a string"),
])
def test_a_manifest_of_the_wrong_shape_names_the_entry(change, words):
    data = real_manifest()
    change(data)
    with pytest.raises(BuildError) as err:
        manifest.parse(data)
    assert words in err.value.what and "artifacts.json" in err.value.todo


class CutOff:
    """An HTTP response whose body stops before its Content-Length."""

    headers = {"Content-Length": "100"}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read(self, n=-1):
        raise http.client.IncompleteRead(b"partial", 93)


def test_a_download_cut_off_is_an_oserror_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(fetch.urllib.request, "urlopen", lambda *a, **kw: CutOff())
    with pytest.raises(OSError) as err:
        fetch.download("https://registry.invalid/x.tgz", str(tmp_path / "x.tgz"), "x")
    assert "broke off" in str(err.value) and "IncompleteRead" in str(err.value)
    assert os.listdir(str(tmp_path)) == []


def test_a_wheel_download_cut_off_is_remembered_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch.urllib.request, "urlopen", lambda *a, **kw: CutOff())
    m = manifest.parse({"npm": {"lib": {"package": "pyodide", "version": "9.0", "dest": "v",
                                        "integrity": sri(b"x"), "files": ["a"]}},
                        "numpy_wheel": WHEEL})
    path, why = cache_mod.Cache(str(tmp_path), log=lambda *a: None).numpy_wheel(m)
    assert path is None and "broke off" in why
    assert sorted(os.listdir(str(tmp_path / "wheels"))) == [WHEEL["file_name"] + ".unavailable"]


def test_npm_pack_that_cannot_run_is_named(tmp_path, monkeypatch):
    data = make_tgz({"lib.js": b"ok()"})
    art = manifest.parse({"npm": {"lib": {"package": "@fake/lib", "version": "1.0.0",
                                          "integrity": sri(data), "dest": "v",
                                          "files": ["lib.js"]}},
                          "numpy_wheel": WHEEL}).artifact("lib")

    def hangs(*a, **kw):
        raise subprocess.TimeoutExpired(a[0], kw.get("timeout"))

    monkeypatch.setattr(cache_mod, "npm_dist", lambda spec: {"integrity": art.integrity})
    monkeypatch.setattr(cache_mod, "npm_command", lambda: "npm")
    monkeypatch.setattr(fetch.subprocess, "run", hangs)
    with pytest.raises(BuildError) as err:
        cache_mod.Cache(str(tmp_path), log=lambda *a: None).npm_tarball(art)
    assert "could not download @fake/lib@1.0.0 with `npm pack`" in err.value.what
    assert os.listdir(str(tmp_path / "npm")) == []


def test_a_file_where_the_bundles_go_means_the_official_plotly(tmp_path):
    (tmp_path / "bundles").write_text("oops")
    said = []
    dest = tmp_path / "site"
    assert plotly_bundle.vendor(bundle_spec(), FakeCache(tmp_path, fake_tarballs()), str(dest),
                                said.append) is None
    assert any("official cartesian bundle" in s for s in said), said


def test_an_http_error_is_still_an_oserror(tmp_path, monkeypatch):
    def not_found(*a, **kw):
        raise fetch.urllib.error.HTTPError("https://x.invalid/", 404, "Not Found", {},
                                               io.BytesIO(b""))

    monkeypatch.setattr(fetch.urllib.request, "urlopen", not_found)
    with pytest.raises(OSError):
        fetch.download("https://x.invalid/", str(tmp_path / "x"), "x")
