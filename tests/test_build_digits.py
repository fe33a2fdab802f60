"""build.py writes the digit panel's held-out digits (digits.json) out of the pinned wheel, and
builds on, saying why in one line, when the wheel cannot be had.

No network: the fake checkout of test_build_site.py, built --offline, with a fake wheel (as in
test_build_pypi_files.py) in the cache and a weights file that holds only the held-out indices."""
import json

import numpy as np
import pytest

import build
from buildtools.assembly import site
from test_build_site import checkout, pin_pypi_wheel, read  # noqa: F401 (a fixture)
from test_build_pypi_files import fake_wheel

# 40 images: image i has label i % 10 and pixels (i + j) % 17
ROWS = [[(i + j) % 17 for j in range(64)] + [i % 10] for i in range(40)]
# held out, in this order: images 35, 5, 25, 15 (all of digit 5), then 0..39 by tens, without
# 7 and 37: each digit has 4 held-out images but 7, which has 2 (17, 27)
HELD_OUT = [35, 5, 25, 15] + [i for i in range(40) if i % 10 != 5 and i not in (7, 37)]


@pytest.fixture(autouse=True)
def no_first_view(monkeypatch):
    monkeypatch.setattr(site, "first_view", lambda root, log=print: None)


def with_digits(tmp, wheel=True, weights=True):
    """The fake checkout with a pinned fake scikit-learn wheel (in the cache if `wheel`) and
    a weights file naming the held-out images (if `weights`)."""
    pin_pypi_wheel(tmp, "scikit-learn", "scikit_learn-9.9-py3-none-any.whl", fake_wheel(ROWS),
                   in_cache=wheel)
    if weights:
        (tmp / "repo" / "pycore" / "vit" / "tiny").mkdir(parents=True)
        np.savez(str(tmp / "repo" / "pycore" / "vit" / "tiny" / "weights.npz"),
                 test_indices=np.array(HELD_OUT))


def run_build(tmp):
    said = []
    args = build.parse_args(["--root", str(tmp / "repo"), "--cache-dir", str(tmp / "cache"),
                             "--out", str(tmp / "dist"), "--offline", "--runtime", "fallback"])
    return build.build(args, log=said.append), said


def test_the_first_held_out_images_of_each_digit_are_written_with_their_attribution(checkout):
    with_digits(checkout)
    info, said = run_build(checkout)
    page = json.loads(read(checkout, "digits.json"))
    assert page["available"] is True
    chosen = [d["index"] for d in page["digits"]]
    # per digit, in held-out order, at most 3: digit 5 is 35, 5, 25 (not 15); digit 7 has two
    assert chosen == [0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23, 4, 14, 24, 35, 5, 25,
                      6, 16, 26, 17, 27, 8, 18, 28, 9, 19, 29]
    for d in page["digits"]:
        assert d["label"] == d["index"] % 10 and d["pixels"] == ROWS[d["index"]][:64]
    data_set = page["data_set"]
    assert data_set["authors"] == "E. Alpaydin and C. Kaynak" and data_set["license"] == "CC BY 4.0"
    assert "Optical Recognition of Handwritten Digits" in data_set["name"]
    assert info["digits"]["available"] and info["digits"]["count"] == 29
    assert info["digits"]["data_set"] == data_set
    assert info["digits"]["source"]["file_name"] == "scikit_learn-9.9-py3-none-any.whl"
    assert json.loads(read(checkout, "build-info.json"))["digits"] == info["digits"]
    assert [line for line in said if line.startswith("digits:")] == [
        "digits: 29 held-out digits for the page, from scikit_learn-9.9-py3-none-any.whl "
        "(Optical Recognition of Handwritten Digits, CC BY 4.0)"]


def test_the_weights_and_the_data_ship_as_binary_files_next_to_the_model(checkout):
    with_digits(checkout)
    run_build(checkout)
    files = json.loads(read(checkout, "py-files.json"))["files"]
    weights = [f for f in files if f["path"].endswith(".npz")]
    assert weights == [{"url": "pycore/vit/tiny/weights.npz",
                        "path": "pycore/vit/tiny/weights.npz", "binary": True}]
    assert all("binary" not in f for f in files if f["path"].endswith(".py"))
    with open(str(checkout / "dist" / "pycore" / "vit" / "tiny" / "weights.npz"), "rb") as f:
        shipped = f.read()
    with open(str(checkout / "repo" / "pycore" / "vit" / "tiny" / "weights.npz"), "rb") as f:
        assert shipped == f.read()


@pytest.mark.parametrize("missing, words", [
    ("wheel", "scikit_learn-9.9-py3-none-any.whl is not in the cache"),
    ("weights", "pycore/vit/tiny/weights.npz is missing"),
])
def test_without_the_wheel_the_site_offers_drawing_only_and_says_why(checkout, missing, words):
    with_digits(checkout, wheel=missing != "wheel", weights=missing != "weights")
    info, said = run_build(checkout)
    page = json.loads(read(checkout, "digits.json"))
    assert page["available"] is False and words in page["reason"] and "digits" not in page
    assert page["data_set"]["license"] == "CC BY 4.0"
    assert info["digits"]["available"] is False and info["digits"]["count"] == 0
    lines = [line for line in said if "digits" in line and "drawing only" in line]
    assert len(lines) == 1 and words in lines[0] and "\n" not in lines[0]
