"""The output folder is swapped in so that its name always holds a complete site: one atomic
exchange (renameat2 RENAME_EXCHANGE) on Linux; elsewhere two renames, with an interrupt between
them undone at once, and a kill between them repaired by the next build.
"""
import ctypes
import os

import pytest

from buildtools.artifacts import atomic
from buildtools.assembly import output
from buildtools.errors import BuildError


def site_folder(path, text):
    """A minimal earlier build: build-info.json and one page."""
    os.makedirs(str(path), exist_ok=True)
    (path / "build-info.json").write_text("{}")
    (path / "index.html").write_text(text)


def fill_with(text):
    def fill(folder):
        with open(os.path.join(folder, "build-info.json"), "w") as f:
            f.write("{}")
        with open(os.path.join(folder, "index.html"), "w") as f:
            f.write(text)
        return text
    return fill


def exchange_works(tmp_path):
    a, b = tmp_path / "probe-a", tmp_path / "probe-b"
    a.mkdir()
    b.mkdir()
    try:
        return atomic.exchange(str(a), str(b))
    finally:
        a.rmdir()
        b.rmdir()


def test_exchange_swaps_two_folders_in_one_step(tmp_path):
    if not exchange_works(tmp_path):
        pytest.skip("no renameat2 RENAME_EXCHANGE here: the fallback is tested below")
    site_folder(tmp_path / "a", "A")
    site_folder(tmp_path / "b", "B")
    assert atomic.exchange(str(tmp_path / "a"), str(tmp_path / "b"))
    assert (tmp_path / "a" / "index.html").read_text() == "B"
    assert (tmp_path / "b" / "index.html").read_text() == "A"


def test_the_system_call_works_without_the_c_library_function(tmp_path):
    if not exchange_works(tmp_path):
        pytest.skip("no renameat2 RENAME_EXCHANGE here")
    call = atomic._raw_syscall(ctypes.CDLL(None, use_errno=True))
    if call is None:
        pytest.skip("no system call number known for this architecture")
    site_folder(tmp_path / "a", "A")
    site_folder(tmp_path / "b", "B")
    assert call(os.fsencode(str(tmp_path / "a")), os.fsencode(str(tmp_path / "b")),
                atomic.RENAME_EXCHANGE) == 0
    assert (tmp_path / "a" / "index.html").read_text() == "B"


def test_exchange_of_a_missing_path_is_an_error_not_a_fallback(tmp_path):
    if not exchange_works(tmp_path):
        pytest.skip("no renameat2 RENAME_EXCHANGE here")
    (tmp_path / "a").mkdir()
    with pytest.raises(FileNotFoundError):
        atomic.exchange(str(tmp_path / "a"), str(tmp_path / "missing"))


def test_the_new_output_is_exchanged_with_the_old_one(tmp_path, monkeypatch):
    if not exchange_works(tmp_path):
        pytest.skip("no renameat2 RENAME_EXCHANGE here")
    calls, renames, real, real_replace = [], [], atomic.exchange, os.replace
    monkeypatch.setattr(atomic, "exchange", lambda a, b: calls.append(b) or real(a, b))
    monkeypatch.setattr(os, "replace", lambda a, b: renames.append(b) or real_replace(a, b))
    out = tmp_path / "dist"
    site_folder(out, "old")
    (out / "only-in-old.txt").write_text("x")
    assert output.replace_atomically(str(out), fill_with("new")) == "new"
    assert calls == [str(out)] and renames == []  # one exchange, no rename
    assert sorted(os.listdir(str(out))) == ["build-info.json", "index.html"]
    assert (out / "index.html").read_text() == "new"
    assert os.listdir(str(tmp_path)) == ["dist"]  # no temporary folder left


def test_without_the_exchange_two_renames_do_the_same(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "exchange", lambda a, b: False)
    out = tmp_path / "dist"
    site_folder(out, "old")
    output.replace_atomically(str(out), fill_with("new"))
    assert (out / "index.html").read_text() == "new"
    assert os.listdir(str(tmp_path)) == ["dist"]


def test_the_exchange_falls_back_where_the_system_refuses_it(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_call", [lambda a, b, flags: -1])
    monkeypatch.setattr(atomic.ctypes, "get_errno", lambda: atomic.errno.EINVAL)
    assert atomic.exchange(str(tmp_path), str(tmp_path)) is False
    out = tmp_path / "dist"
    site_folder(out, "old")
    output.replace_atomically(str(out), fill_with("new"))
    assert (out / "index.html").read_text() == "new"


def test_an_interrupt_between_the_two_renames_puts_the_old_output_back(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "exchange", lambda a, b: False)
    out = tmp_path / "dist"
    site_folder(out, "old")
    real, renames = os.replace, []

    def interrupted_second(src, dst):
        renames.append(dst)
        if len(renames) == 2:
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", interrupted_second)
    with pytest.raises(KeyboardInterrupt):
        output.replace_atomically(str(out), fill_with("new"))
    monkeypatch.setattr(atomic.os, "replace", real)
    assert (out / "index.html").read_text() == "old"
    assert os.listdir(str(tmp_path)) == ["dist"]


def test_the_next_build_repairs_a_swap_killed_between_the_renames(tmp_path):
    out = tmp_path / "dist"
    site_folder(tmp_path / ".dist.old-older", "older")
    os.utime(str(tmp_path / ".dist.old-older"), (1, 1))
    site_folder(tmp_path / ".dist.old-k1ll3d", "old")  # the kill left this, and no dist/
    said = []
    assert output.check_output(str(out), said.append) == str(out)
    assert (out / "index.html").read_text() == "old"  # the newest one is back
    assert len(said) == 1 and "restored it from .dist.old-k1ll3d" in said[0]
    output.replace_atomically(str(out), fill_with("new"), log=said.append)
    assert (out / "index.html").read_text() == "new"
    assert os.listdir(str(tmp_path)) == ["dist"]  # the older leftover was an hour old


def test_a_repaired_output_stays_when_the_build_then_fails(tmp_path):
    out = tmp_path / "dist"
    site_folder(tmp_path / ".dist.old-k1ll3d", "old")

    def failing(folder):
        raise BuildError("boom", "")

    with pytest.raises(BuildError):
        output.replace_atomically(str(out), failing, log=lambda *a: None)
    assert (out / "index.html").read_text() == "old"


def test_a_leftover_that_is_not_a_build_is_not_restored(tmp_path):
    (tmp_path / ".dist.old-x").mkdir()
    (tmp_path / ".dist.old-x" / "notes.txt").write_text("mine")
    assert not output.restore_interrupted(str(tmp_path / "dist"))
    assert not (tmp_path / "dist").exists()


def test_a_folder_that_is_not_a_build_is_never_replaced(tmp_path):
    out = tmp_path / "dist"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(BuildError) as err:
        output.replace_atomically(str(out), fill_with("new"))
    assert "not a build output" in err.value.what
    assert os.listdir(str(out)) == ["notes.txt"]
    assert os.listdir(str(tmp_path)) == ["dist"]


def test_a_symlinked_output_updates_the_folder_it_points_to(tmp_path):
    real = tmp_path / "www" / "vit"
    site_folder(real, "old")
    os.symlink(str(real), str(tmp_path / "dist"))
    output.replace_atomically(str(tmp_path / "dist"), fill_with("new"))
    assert os.path.islink(str(tmp_path / "dist"))
    assert (real / "index.html").read_text() == "new"
    assert os.listdir(str(tmp_path / "www")) == ["vit"]
