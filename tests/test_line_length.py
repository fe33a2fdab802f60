"""Hand-written Python stays within 100 characters a line, so that a module reads without
scrolling sideways in a review or a terminal. Files a tool writes whole are named in GENERATED
and left out (pycore/explorer/shared.py's generated block is within the limit, so it counts)."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 100
FOLDERS = ("pycore", "buildtools")
GENERATED = frozenset()
"""Paths (from the repository's root) of .py files written whole by a tool: none at present."""

FILES = sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")
               if "__pycache__" not in p.parts
               and p.relative_to(ROOT).as_posix() not in GENERATED)


def long_lines(text):
    """(line number, length) of each line of ``text`` past LIMIT characters."""
    return [(n, len(line)) for n, line in enumerate(text.splitlines(), 1) if len(line) > LIMIT]


def test_the_check_sees_a_long_line():
    assert long_lines("x = 1\n" + "y" * LIMIT + "\n" + "z" * (LIMIT + 1) + "\n") == [
        (3, LIMIT + 1)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_line_is_past_100_characters(path):
    assert long_lines(path.read_text(encoding="utf-8")) == []
