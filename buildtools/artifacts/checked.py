"""Files on disk checked by their hashes: digests, checked copies, and removal that survives a
file another process holds (the build's cache, buildtools/artifacts/cache.py, and the site it
writes).
"""
import base64
import hashlib
import os
import shutil
import time


def file_digest(path, algorithm):
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h


def sri_sha512(path):
    """The npm-style integrity string of a file."""
    return "sha512-" + base64.b64encode(file_digest(path, "sha512").digest()).decode("ascii")


def sha256_hex(path):
    return file_digest(path, "sha256").hexdigest()


def matches(path, check):
    """check(path), with a file that cannot be read (gone, a folder, no permission) failing it."""
    try:
        return check(path)
    except OSError:
        return False


def remove(path):
    """Delete a file or a folder, if there is one: damaged cache entries can be either."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def discard(path):
    """remove(path) for a clean-up, which must not turn a success, or the error being reported,
    into another error (a leftover is removed later by remove_stale)."""
    try:
        remove(path)
    except OSError:
        pass


def remove_stale(folder, prefixes, age_s=3600):
    """Delete temporary entries that a killed build left in `folder` (an hour old or more;
    younger ones may belong to a build running right now)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.startswith(tuple(prefixes)):
            continue
        path = os.path.join(folder, name)
        try:
            if time.time() - os.lstat(path).st_mtime > age_s:
                remove(path)
        except OSError:
            pass  # another build removed it first, or it is not ours to remove


def write_hashed(source, dest):
    """Copy the open binary file `source` to the path `dest`; return its (sha256 hex, size)."""
    h, size = hashlib.sha256(), 0
    with open(dest, "wb") as out:
        for block in iter(lambda: source.read(1 << 20), b""):
            h.update(block)
            out.write(block)
            size += len(block)
    return h.hexdigest(), size


def copy_checked(src, dest, sha256, size=None):
    """Copy src to dest, hashing the bytes on their way; None when they are the expected ones,
    else why not (and dest is removed). What reaches dest is exactly what was hashed, in one
    read of src: a site is never filled from a file checked before it was copied. A file that
    cannot be read is a reason; one that cannot be written is an OSError (the site's problem).
    """
    try:
        source = open(src, "rb")
    except FileNotFoundError:
        return "is missing"
    except OSError as exc:
        return "cannot be read (%s)" % (exc.strerror or exc)
    h, got_size, why = hashlib.sha256(), 0, None
    with source, open(dest, "wb") as out:
        while True:
            try:
                block = source.read(1 << 20)
            except OSError as exc:
                why = "cannot be read (%s)" % (exc.strerror or exc)
                break
            if not block:
                break
            h.update(block)
            out.write(block)
            got_size += len(block)
    if why is None and size is not None and got_size != size:
        why = "has %d bytes, not the %d recorded" % (got_size, size)
    elif why is None and h.hexdigest() != sha256:
        why = "has sha256 %s, not the expected %s" % (h.hexdigest(), sha256)
    if why:
        os.remove(dest)
    return why
