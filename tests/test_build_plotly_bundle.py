"""build.py's heatmap-only Plotly.js (buildtools/javascript/plotly_bundle.py): pinned, checked, cached,
and replaced by the official bundle, with the reason said, wherever it cannot be made.

No network and no real esbuild: the tarballs are tiny fakes, and the "esbuild" in them is a
shell script that writes a known file where esbuild would write the bundle.
"""
import hashlib
import io
import json
import os
import sys
import tarfile

import pytest

from buildtools.artifacts import manifest
from buildtools.javascript import plotly_bundle
from buildtools.errors import BuildError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = plotly_bundle.esbuild_platform()  # before any test pretends to be another machine
BUNDLE = b"var Plotly={};\n"
FAKE_ESBUILD = b"""#!/bin/sh
for a in "$@"; do
  case "$a" in --outfile=*) printf 'var Plotly={};\\n' > "${a#--outfile=}";; esac
done
"""


def tgz(files, modes=None):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo("package/" + path)
            info.size = len(data)
            info.mode = (modes or {}).get(path, 0o644)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class FakeCache:
    """Cache.npm_tarball and root, serving tarballs written to tmp_path; counts the calls."""

    def __init__(self, root, tarballs):
        self.root = str(root)
        self.tarballs = tarballs
        self.calls = 0

    def npm_tarball(self, art):
        self.calls += 1
        if art.spec not in self.tarballs:
            raise BuildError("%s is not in the cache and --offline was given" % art.spec, "")
        path = os.path.join(self.root, art.tarball_name)
        with open(path, "wb") as f:
            f.write(self.tarballs[art.spec])
        return path


# The licences file the fake packages give (plotly.js ships one, tinycolor2 none)
LICENCES = ("plotly.js 3.4.0 (MIT)\n" + "=" * 72 + "\nThe plotly licence\n\n\n"
            "tinycolor2 1.6.0 (MIT)\n" + "=" * 72 + "\n(the package ships no licence file; "
            "its package.json says MIT)\n").encode("utf-8")


def spec(sha256=None, licenses_sha256=None):
    pin = {"integrity": "sha512-" + "A" * 86 + "==", "license": "MIT"}
    return {"version": "3.4.0", "license": "MIT",
            "sha256": sha256 or hashlib.sha256(BUNDLE).hexdigest(),
            "licenses_sha256": licenses_sha256 or hashlib.sha256(LICENCES).hexdigest(),
            "esbuild": {HERE: dict(pin, package="@esbuild/fake", version="0.1.0")},
            "packages": [dict(pin, package="plotly.js", version="3.4.0"),
                         dict(pin, package="tinycolor2", version="1.6.0")]}


def fake_tarballs():
    return {"plotly.js@3.4.0": tgz({"lib/core.js": b"", "LICENSE": b"The plotly licence"}),
            "tinycolor2@1.6.0": tgz({"index.js": b""}),
            "@esbuild/fake@0.1.0": tgz({"bin/esbuild": FAKE_ESBUILD})}


@pytest.mark.skipif(sys.platform == "win32", reason="the fake esbuild is a shell script")
def test_a_bundle_is_made_checked_and_then_reused(tmp_path):
    cache, said = FakeCache(tmp_path, fake_tarballs()), []
    folder = plotly_bundle.bundle(spec(), cache, said.append)
    with open(os.path.join(folder, plotly_bundle.FILE_NAME), "rb") as f:
        assert f.read() == BUNDLE
    with open(os.path.join(folder, plotly_bundle.LICENSES), encoding="utf-8") as f:
        licences = f.read()
    assert "plotly.js 3.4.0 (MIT)" in licences and "The plotly licence" in licences
    assert "tinycolor2 1.6.0 (MIT)" in licences and "ships no licence file" in licences
    calls = cache.calls
    assert plotly_bundle.bundle(spec(), cache, said.append) == folder
    assert cache.calls == calls  # the second build takes it from the cache, offline too


@pytest.mark.skipif(sys.platform == "win32", reason="the fake esbuild is a shell script")
def test_a_bundle_with_another_hash_is_not_used(tmp_path):
    said = []
    cache = FakeCache(tmp_path, fake_tarballs())
    assert plotly_bundle.bundle(spec("0" * 64), cache, said.append) is None
    assert any("official cartesian bundle" in s and "sha256" in s for s in said), said
    assert not os.listdir(os.path.join(tmp_path, "bundles"))  # nothing half-made is kept


def test_without_a_pinned_esbuild_for_this_machine_the_official_one_is_used(tmp_path, monkeypatch):
    monkeypatch.setattr(plotly_bundle, "esbuild_platform", lambda: "plan9-mips")
    said = []
    assert plotly_bundle.bundle(spec(), FakeCache(tmp_path, fake_tarballs()), said.append) is None
    assert any("no esbuild binary is pinned for plan9-mips" in s for s in said), said


def test_offline_without_the_packages_the_official_bundle_is_used(tmp_path):
    said = []
    assert plotly_bundle.bundle(spec(), FakeCache(tmp_path, {}), said.append) is None
    assert any("--offline" in s for s in said), said


def test_the_repository_pins_the_bundle_with_the_official_plotly_version():
    m = manifest.load(os.path.join(ROOT, "artifacts.json"))
    b = m.plotly_bundle
    plotly = [p for p in b["packages"] if p["package"] == "plotly.js"]
    assert plotly and plotly[0]["version"] == b["version"] == m.artifact("plotly").version
    assert "linux-x64" in b["esbuild"]
    assert len(b["packages"]) == len({p["package"] for p in b["packages"]})


@pytest.mark.parametrize("change, words", [
    ({"sha256": "abc"}, "plotly_bundle: sha256"),
    ({"packages": [{"package": "x", "version": "1", "integrity": "sha1-x"}]}, "x's integrity"),
    ({"esbuild": {"linux-x64": {"package": "@esbuild/linux-x64", "version": "1"}}},
     "integrity is missing"),
])
def test_a_broken_bundle_entry_is_named(change, words):
    with open(os.path.join(ROOT, "artifacts.json"), encoding="utf-8") as f:
        data = json.load(f)
    data["plotly_bundle"].update(change)
    with pytest.raises(BuildError) as err:
        manifest.parse(data)
    assert words in str(err.value)
