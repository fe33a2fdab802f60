"""The output folder (dist/ or --out) is only ever replaced by a complete, checked build:
everything is written to a temporary sibling folder, which is swapped in at the end
(buildtools/artifacts/atomic.py: one atomic exchange where the system has it, so the output's name
always holds a complete site). A failure removes the temporary folder and leaves the previous output
exactly as it was.
"""
import os
import tempfile

from ..artifacts import atomic
from ..artifacts.checked import discard, remove_stale
from ..errors import BuildError


def _prefixes(out):
    """The names of the output's temporary siblings: (being built, set aside by a swap)."""
    base = "." + os.path.basename(out)
    return base + ".building-", base + ".old-"


def restore_interrupted(out, log=print):
    """Put back an output that the two-rename swap (where no atomic exchange exists) left only
    under .NAME.old-*, because the build was killed between the renames: the newest such folder
    that is a build comes back under its name. True when one was restored."""
    parent = os.path.dirname(out)
    if os.path.lexists(out) or not os.path.isdir(parent):
        return False
    found = []
    for name in os.listdir(parent):
        path = os.path.join(parent, name)
        if name.startswith(_prefixes(out)[1]) and os.path.isfile(
                os.path.join(path, "build-info.json")):
            try:
                found.append((os.stat(path).st_mtime, path))
            except OSError:
                pass  # removed meanwhile
    if not found:
        return False
    path = max(found)[1]
    os.rename(path, out)
    log("output: %s was missing after a build interrupted while swapping it in; restored it "
        "from %s" % (out, os.path.basename(path)))
    return True


def check_output(out, log=print):
    """Before anything else: repair an interrupted swap, then make sure `out` may be replaced and
    its folder written, so that a bad --out fails at once rather than after the downloads.

    If `out` exists it must be a folder that looks like an earlier build (it has
    build-info.json), so a mistyped --out never deletes someone's folder. Returns the output's
    real path: for a symlink, its target is the folder that is replaced.
    """
    out = os.path.realpath(out)
    restore_interrupted(out, log)
    if os.path.lexists(out) and not os.path.isdir(out):
        raise BuildError("the output %s is a file, not a folder" % out,
                         "pass a folder with --out (it is created, or replaced when it holds "
                         "an earlier build)")
    if os.path.isdir(out) and os.listdir(out) and not os.path.isfile(
            os.path.join(out, "build-info.json")):
        raise BuildError("%s exists and is not a build output (it has no build-info.json); "
                         "refusing to replace it" % out, "choose another --out folder")
    parent = os.path.dirname(out)
    existing = parent
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise BuildError("the output %s cannot be made: %s is a file" % (out, existing),
                         "pass an --out whose folders are folders")
    try:
        os.makedirs(parent, exist_ok=True)
        atomic.free_name(parent, _prefixes(out)[0])  # makes and removes a folder: a probe
    except OSError as exc:
        raise BuildError("cannot write in %s, where the output %s goes: %s"
                         % (parent, os.path.basename(out), exc.strerror or exc),
                         "pass an --out in a folder you can write to, or fix its permissions")
    return out


def replace_atomically(out, fill, log=print):
    """Build into a temporary sibling of `out` with fill(folder); swap it in on success.

    The swap is an atomic exchange where the system has one (atomic.put_in_place), so at every
    instant `out` is the complete old site or the complete new one; the old one is then deleted.
    Temporary siblings that a killed build left are deleted once they are an hour old (younger
    ones may belong to a build running right now).
    """
    out = check_output(out, log)
    parent = os.path.dirname(out)
    building, aside = _prefixes(out)
    remove_stale(parent, (building, aside))
    tmp = tempfile.mkdtemp(dir=parent, prefix=building)
    try:
        result = fill(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a served site must be readable
        old = atomic.put_in_place(tmp, out, atomic.free_name(parent, aside))
    except BaseException:
        discard(tmp)
        raise
    if old:
        discard(old)
    return result
