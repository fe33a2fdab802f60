"""benchmarks/model_file_bench.py's exit status says whether the page met its 2 s target (the
figures it prints are what a reader looks at; the status is what a script or CI step checks).
The page part (browsers, a built site) is replaced here by its verdict: only main's handling of
it is under test."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import model_file_bench  # noqa: E402


@pytest.mark.parametrize("met, status", [(True, 0), (False, 1)])
def test_the_exit_status_is_1_when_the_target_is_missed(monkeypatch, tmp_path, met, status):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>explorer</p>")
    seen = []
    monkeypatch.setattr(model_file_bench, "python_part", lambda paths, runs: None)
    monkeypatch.setattr(model_file_bench, "page_part",
                        lambda site, paths, runs, chromium: seen.append(site) or met)
    assert model_file_bench.main(["--site", str(site), "--runs", "1"]) == status
    assert seen == [site.resolve()]


def test_python_only_measures_no_target_and_exits_0(monkeypatch):
    monkeypatch.setattr(model_file_bench, "python_part", lambda paths, runs: None)
    monkeypatch.setattr(model_file_bench, "page_part", lambda *a: pytest.fail("no page part"))
    assert model_file_bench.main(["--python-only", "--runs", "1"]) == 0
