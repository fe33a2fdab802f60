"""The few files a build takes out of an npm tarball (an artifact's selection, its globs in
artifacts.json), and the record that a folder of them is complete: each file's sha256 and size,
written while it was extracted from the checked tarball (STAMP), trusted only while its digest
(selection_digest) is the artifact's pinned ``files_sha256``. buildtools/artifacts/cache.py keeps
such folders; buildtools/javascript/plotly_bundle.py makes one of its own.
"""
import fnmatch
import gzip
import hashlib
import json
import os
import re
import tarfile
import zlib

from .checked import copy_checked, remove, write_hashed
from ..errors import BuildError


# The record that a cache folder is complete: {"version", "files": {path: {"sha256", "size"}}}
# plus what the folder was made from, which must still be what the build wants.
STAMP = ".complete.json"


STAMP_VERSION = 2


def _safe_relative(rel):
    """True for a plain relative path inside a folder (a record read back must not point out)."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


def _valid_records(files):
    return isinstance(files, dict) and bool(files) and all(
        _safe_relative(rel) and rel != STAMP and isinstance(rec, dict)
        and isinstance(rec.get("sha256"), str) and _SHA256_HEX.match(rec["sha256"])
        and type(rec.get("size")) is int and rec["size"] >= 0
        for rel, rec in files.items())


def read_stamp(folder, expect):
    """The file records of a cache folder, or (None, why not); why is None for a folder that was
    never completed, a sentence for a record that is damaged, outdated or about other inputs."""
    path = os.path.join(folder, STAMP)
    if not os.path.lexists(path):
        return None, ("its record %s is missing" % path) if os.path.lexists(folder) else None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        return None, "its record %s is unreadable (%s)" % (path, str(exc).splitlines()[0][:120])
    if not isinstance(data, dict):
        return None, "its record %s is damaged" % path
    if "version" not in data:
        return None, "its record %s has no file hashes (an older build.py wrote it)" % path
    if data["version"] != STAMP_VERSION:
        return None, "its record %s is of another version" % path
    for key, value in expect.items():
        if data.get(key) != value:
            return None, "its record %s is about another %s" % (path, key)
    if not _valid_records(data.get("files")):
        return None, "its record %s is damaged" % path
    return data["files"], None


def selection_digest(files):
    """The sha256 of a selection's file records, as artifacts.json pins it (``files_sha256``):
    of the JSON of ``{path: {"sha256", "size"}}`` with sorted keys and no spaces, so the pin
    covers each file's bytes, and which files there are.

    Examples
    --------
    >>> selection_digest({"a.js": {"sha256": "0" * 64, "size": 1}})[:16]
    '56ecbe201b2b365c'
    """
    canonical = {rel: {"sha256": rec["sha256"], "size": rec["size"]} for rel, rec in files.items()}
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_stamp(folder, made_from, files):
    with open(os.path.join(folder, STAMP), "w", encoding="utf-8") as f:
        json.dump(dict(made_from, version=STAMP_VERSION, files=files), f, indent=0,
                  sort_keys=True)


def copy_files(folder, files, dest):
    """Copy the recorded files of a cache folder into dest, each checked against its record.

    Returns None, or (path, why) for the first file that is not what was recorded; the files
    copied so far are removed then, so a retry or another source starts from a clean dest.
    """
    written = []
    for rel in sorted(files):
        out = os.path.join(dest, *rel.split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        why = copy_checked(os.path.join(folder, *rel.split("/")), out, files[rel]["sha256"],
                           files[rel]["size"])
        if why:
            for path in written:
                os.remove(path)
            return rel, why
        written.append(out)
    return None


def check_pin(art, files):
    """BuildError unless the records of a selection just unpacked from the checked tarball
    have the digest artifacts.json pins (when it pins one)."""
    if art.files_sha256 and selection_digest(files) != art.files_sha256:
        raise BuildError(
            "%s: the files selected from its tarball have the digest %s, not the files_sha256 %s "
            "that artifacts.json pins" % (art.spec, selection_digest(files), art.files_sha256),
            "if you changed its version, files, exclude or strip, paste the new digest into "
            "artifacts.json; otherwise do not build with it")


def covers(files, art):
    """True when every glob of the selection matches a recorded file (as extract_selection
    demands of the tarball), so a record that lost entries is not taken as complete."""
    names = list(files) + [art.strip + rel for rel in files]
    return all(any(fnmatch.fnmatchcase(n, p) for n in names) for p in art.files)


def extract_selection(tarball, art, dest):
    """Copy the files of an npm tarball that the artifact's globs select into dest.

    Returns {path relative to dest: {"sha256", "size"}} of what was written, hashed as it was
    written. Every glob must match at least one file: a package whose layout changed must stop
    the build, not produce a site missing a file.
    """
    written, matched = {}, {pattern: 0 for pattern in art.files}
    try:
        archive = tarfile.open(tarball, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise BuildError("%s: %s is not a readable tarball (%s)" % (art.spec, tarball, exc),
                         "delete it and build again")
    try:
        with archive:
            for member in archive:
                _extract_member(archive, member, art, dest, written, matched)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise BuildError("%s: %s is damaged (%s)" % (art.spec, tarball, exc),
                         "delete it and build again")
    missing = [p for p, n in matched.items() if n == 0]
    if missing:
        raise BuildError("%s: no file matches %s in the package"
                         % (art.spec, ", ".join(missing)),
                         "the package's layout differs from what artifacts.json expects: fix "
                         "the 'files' list of %r" % art.name)
    return written


def _extract_member(archive, member, art, dest, written, matched):
    if not member.isfile():
        return
    # npm tarballs keep everything under one top folder, normally "package/"
    rel = member.name.split("/", 1)[1] if "/" in member.name else member.name
    hits = [p for p in art.files if fnmatch.fnmatchcase(rel, p)]
    if not hits or any(fnmatch.fnmatchcase(rel, p) for p in art.exclude):
        return
    for p in hits:
        matched[p] += 1
    out_rel = rel[len(art.strip):] if art.strip and rel.startswith(art.strip) else rel
    parts = [part for part in out_rel.split("/") if part not in ("", ".")]
    if out_rel.startswith("/") or ".." in parts or not parts:
        raise BuildError("%s: refusing the unsafe path %r" % (art.spec, member.name),
                         "check the package; do not build with it")
    out = os.path.join(dest, *parts)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with archive.extractfile(member) as src:
        sha256, size = write_hashed(src, out)
    written["/".join(parts)] = {"sha256": sha256, "size": size}
