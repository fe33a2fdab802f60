"""build.py's command line: every bad value ends in one `build failed: ...` and one `what to do:
...` line on stderr and a non-zero exit code, never a Python traceback; and where it can, before
any download or build (a busy --port is found before building, not after).

No network: the fake checkout of test_build_site.py, built --offline.
"""
import errno
import os
import socket

import pytest

import build
from buildtools.artifacts import atomic
from buildtools.assembly import site
from test_build_site import checkout  # noqa: F401 (a fixture)


@pytest.fixture(autouse=True)
def no_first_view(monkeypatch):
    """pycore's first view runs a child Python: not what these tests are about, and slow."""
    monkeypatch.setattr(site, "first_view", lambda root, log=print: None)


def run_main(tmp, *args, **paths):
    """build.main on the fake checkout, offline; `paths` replace --out or --cache-dir."""
    argv = ["--root", str(tmp / "repo"), "--offline", "--runtime", "fallback",
            "--cache-dir", paths.get("cache", str(tmp / "cache")),
            "--out", paths.get("out", str(tmp / "dist"))] + list(args)
    return build.main(argv)


def failed(capsys, code, *words):
    """Check the failure's exit code and its two lines on stderr; returns stderr."""
    err = capsys.readouterr().err
    assert code != 0, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line]
    assert lines[0].startswith("build failed: ") and lines[1].startswith("what to do: "), err
    for word in words:
        assert word in err, err
    return err


def test_a_port_that_is_none_fails_before_building(checkout, capsys):
    code = run_main(checkout, "--serve", "--port", "99999")
    failed(capsys, code, "--port 99999 is not a TCP port", "8000")
    assert not (checkout / "dist").exists()


def test_a_busy_port_fails_before_building(checkout, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code = run_main(checkout, "--serve", "--port", str(port))
    failed(capsys, code, "cannot serve on port %d" % port, "another --port")
    assert not (checkout / "dist").exists()


def test_a_port_that_is_no_number_is_said_the_same_way(checkout, capsys):
    code = run_main(checkout, "--serve", "--port", "http")
    failed(capsys, code, "argument --port: invalid int value: 'http'", "--help")


def test_an_unknown_option_is_said_the_same_way(checkout, capsys):
    code = run_main(checkout, "--runtime", "webassembly")
    failed(capsys, code, "argument --runtime: invalid choice", "--help")


def test_an_output_that_is_a_file(checkout, capsys):
    (checkout / "dist").write_text("a file")
    failed(capsys, run_main(checkout), "is a file, not a folder", "--out")
    assert (checkout / "dist").read_text() == "a file"


def test_an_output_inside_a_file(checkout, capsys):
    (checkout / "afile").write_text("x")
    failed(capsys, run_main(checkout, out=str(checkout / "afile" / "sub" / "dist")),
           "%s is a file" % (checkout / "afile"), "--out")


def test_an_output_folder_that_cannot_be_written(checkout, capsys, monkeypatch):
    # (as root, permissions do not stop anything: the refusal is simulated where it happens)
    def refused(folder, prefix):
        raise PermissionError(errno.EACCES, "Permission denied", folder)

    monkeypatch.setattr(atomic, "free_name", refused)
    err = failed(capsys, run_main(checkout), "cannot write in %s" % checkout,
                 "Permission denied", "folder you can write to")
    assert "downloading" not in err


def test_a_cache_dir_that_is_a_file(checkout, capsys):
    (checkout / "cachefile").write_text("x")
    failed(capsys, run_main(checkout, cache=str(checkout / "cachefile")),
           "the cache folder %s is a file" % (checkout / "cachefile"), "--cache-dir")


@pytest.mark.parametrize("kind", ["missing", "a file"])
def test_a_mirror_that_is_no_folder(checkout, capsys, kind):
    mirror = checkout / "mirror"
    if kind == "a file":
        mirror.write_text("x")
    failed(capsys, run_main(checkout, "--mirror", str(mirror)),
           "the mirror folder %s %s" % (mirror, "does not exist" if kind == "missing"
                                        else "is a file"), "--mirror")


def test_a_numpy_wheel_that_is_a_folder(checkout, capsys):
    failed(capsys, run_main(checkout, "--runtime", "pyscript", "--numpy-wheel", str(checkout)),
           "--numpy-wheel %s: a folder, not the wheel" % checkout)


@pytest.mark.parametrize("out, cache", [("cache/dist", "cache"), ("dist", "dist/cache")])
def test_an_output_that_overlaps_the_cache(checkout, capsys, out, cache):
    failed(capsys, run_main(checkout, out=str(checkout / out), cache=str(checkout / cache)),
           "overlap", "separate folders")


def test_an_output_inside_the_sources(checkout, capsys):
    failed(capsys, run_main(checkout, out=str(checkout / "repo" / "web" / "dist")),
           "inside web/", "outside the sources")
    assert not (checkout / "repo" / "web" / "dist").exists()


def test_a_full_disk_is_said_not_a_traceback(checkout, capsys, monkeypatch):
    def full(site_folder, name, data):
        raise OSError(errno.ENOSPC, "No space left on device", os.path.join(site_folder, name))

    monkeypatch.setattr(site, "write_json", full)
    failed(capsys, run_main(checkout), "No space left on device", "free some space")
    assert sorted(os.listdir(str(checkout))) == ["cache", "numpy.whl", "repo"]


def test_a_missing_source_file_is_said_not_a_traceback(checkout, capsys):
    os.remove(str(checkout / "repo" / "web" / "boot" / "fallback-worker.js"))
    failed(capsys, run_main(checkout), "fallback-worker.js", "is missing: build from a full")


def test_a_good_build_still_says_built(checkout, capsys):
    assert run_main(checkout) == 0
    out = capsys.readouterr().out
    assert "built %s" % (checkout / "dist") in out and "fallback host" in out
