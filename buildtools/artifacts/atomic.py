"""Putting a new folder under a name that may already hold one, so that the name is never empty.

Replacing a folder takes two renames (old one aside, new one in), and a build killed between them
leaves nothing under the name. Linux can exchange two names in one system call (renameat2 with
RENAME_EXCHANGE), so the name holds the old folder or the new one at every instant. Where it
cannot (another system, a kernel older than 3.15, a file system that refuses), the two renames
are the fallback: an interrupt between them puts the old folder back, and the next build repairs
what a kill left (buildtools/assembly/output.py).
"""
import ctypes
import errno
import os
import platform
import sys
import tempfile

RENAME_EXCHANGE = 2  # linux/fs.h
AT_FDCWD = -100  # fcntl.h: paths relative to the working directory
# The system call's number, for a C library without the renameat2 function (glibc before 2.28,
# some others); Linux numbers differ by architecture, and a wrong one would be another call.
SYSCALL_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}  # as platform.machine() names them
# What renameat2 answers when it cannot exchange here, as opposed to a real failure: no such
# call (ENOSYS), a file system without the flag (EINVAL, EOPNOTSUPP), a sandbox's filter (EPERM).
UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM}

_call = []  # the function found by _renameat2(), looked up once


def _renameat2():
    """A function (a, b, flags) -> 0 or -1 with errno set, or None where there is none."""
    if not _call:
        libc = None
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
            except OSError:
                pass
        _call.append(libc and (_libc_function(libc) or _raw_syscall(libc)))
    return _call[0]


def _libc_function(libc):
    """renameat2 as the C library has it (glibc 2.28 and later), or None."""
    if not hasattr(libc, "renameat2"):
        return None
    fn = libc.renameat2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return lambda a, b, flags: fn(AT_FDCWD, a, AT_FDCWD, b, flags)


def _raw_syscall(libc):
    """renameat2 through syscall(2) with this architecture's number, or None."""
    number = SYSCALL_RENAMEAT2.get(platform.machine().lower())
    if number is None or ctypes.sizeof(ctypes.c_void_p) != 8 or not hasattr(libc, "syscall"):
        return None
    call = libc.syscall
    call.restype = ctypes.c_long
    return lambda a, b, flags: call(ctypes.c_long(number), ctypes.c_int(AT_FDCWD),
                                    ctypes.c_char_p(a), ctypes.c_int(AT_FDCWD),
                                    ctypes.c_char_p(b), ctypes.c_uint(flags))


def exchange(a, b):
    """Swap the names of the existing paths a and b in one step. True when done; False where
    this system or file system cannot (nothing changed then); OSError for a real failure."""
    call = _renameat2()
    if call is None:
        return False
    if call(os.fsencode(a), os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in UNSUPPORTED:
        return False
    raise OSError(code, "cannot exchange %s and %s: %s" % (a, b, os.strerror(code)), a)


def put_in_place(new, target, aside):
    """Move the folder `new` to the name `target`; return where the previous target now is (for
    the caller to delete), or None when there was none.

    With an existing target the two are exchanged where the system can (the previous folder then
    has the name `new`); elsewhere the target is first renamed to `aside` (a free name in the same
    folder), and put back if anything, an interrupt included, stops the second rename.
    """
    if not os.path.lexists(target):
        os.replace(new, target)
        return None
    if exchange(new, target):
        return new
    os.replace(target, aside)
    try:
        os.replace(new, target)
    except BaseException:
        if not os.path.lexists(target):
            os.replace(aside, target)
        raise
    return aside


def free_name(folder, prefix):
    """A path in `folder` starting with `prefix` that nothing has: where put_in_place may set a
    previous folder aside (named like the caller's temporary folders, so stale ones are found)."""
    path = tempfile.mkdtemp(dir=folder, prefix=prefix)
    os.rmdir(path)
    return path
