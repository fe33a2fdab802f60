"""The test-only third-party files pinned in artifacts.json (axe-core, pdf.js, TypeScript): each
unpacked by the build's cache, which checks the tarball against its integrity and the files
against their hashes, from npm or from the VIT_HEAD_MIRROR mirror; never part of a site."""

import functools
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=None)
def unpacked(name):
    """The folder holding artifacts.json's ``name`` (e.g. ``"axe-core"``), unpacked and checked."""
    from buildtools.artifacts import manifest
    from buildtools.artifacts.cache import MIRROR_ENV, Cache, default_cache_dir
    art = manifest.load(os.path.join(ROOT, "artifacts.json")).artifact(name)
    folder, _ = Cache(default_cache_dir(), log=lambda m: None,
                      mirror=os.environ.get(MIRROR_ENV) or None).unpacked(art)
    return folder
