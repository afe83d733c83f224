"""The one way the library writes a file.

Contract of :func:`write_bytes` / :func:`write_text` / :func:`replacing` (every report, CSV, JSON, export, plot
and store rewrite goes through them):

* the content goes to a temporary file in the target's folder (``.<name>.<pid>.<random>.tmp``, created
  exclusively, never through a symbolic link), is flushed and synced, and is renamed over the target: a reader,
  a signal or a full disk never leaves a cut or empty target, only the old file or the new one;
* an existing target keeps its mode; a new one gets the umask's (``0o666 & ~umask``);
* a target the user cannot write (a read-only file, ``0o444``) is refused with :class:`FileRefused` before
  anything is written; so is a folder, a device, a pipe or a socket;
* a symbolic link given as the target is followed on purpose (the file it points to is replaced, the link stays);
* the temporary file is removed on every exit: an exception, ``KeyboardInterrupt`` (SIGINT), and SIGTERM (turned
  into :class:`Terminated` while a write runs in the main thread). A SIGKILL cannot be caught: its temporary file
  is removed by the next write beside it (:func:`remove_stale_temporaries`, a dead writer's pid in the name).

:func:`create_exclusive` makes the files of the library's own naming (``<store>.lock``): ``O_CREAT | O_EXCL`` when
new, opened with ``O_NOFOLLOW`` otherwise, so a planted link is refused, never written through.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

TEMP_SUFFIX = ".tmp"
_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$")


class FileRefused(ValueError):
    """A file the library will not write (read-only, not a regular file, a planted link): the message says which
    and what to do."""


class Terminated(BaseException):
    """SIGTERM arrived while a file was being written: the temporary file is removed, the target is untouched."""


def new_file_mode() -> int:
    """The mode a new file gets under the process's umask (``0o666 & ~umask``)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def writable_target(path: str | os.PathLike) -> Path:
    """Where a write of ``path`` goes: a regular file (existing or new) the process may write. A symbolic link is
    followed (the file it points to is replaced); a folder, a device, a pipe, a socket (``FileRefused``), and an
    existing file without write permission (``FileRefused``, ``chmod u+w`` or another name) are refused."""
    path = Path(path)
    target = Path(os.path.realpath(path))
    shown = f"{path} (a link to {target})" if target != path.absolute() else str(path)
    if target.exists() and not target.is_file():
        what = "a folder" if target.is_dir() else "not a regular file (a device, a pipe or a socket)"
        raise FileRefused(f"cannot write {shown}: it is {what}; give the name of a regular file")
    if target.exists() and (not os.access(target, os.W_OK) or not target.stat().st_mode & 0o222):
        # the mode bits too: root may write any file, but a file nobody may write is the user's "do not touch"
        raise FileRefused(f"cannot write {shown}: the file is read-only; it is left as it is "
                          "(make it writable, or give another name)")
    return target


def _is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(target: Path) -> list[Path]:
    """Remove the temporary files of ``target`` left by writers that are no longer running (a SIGKILL during a
    write); the files removed. Only names of this module's pattern for this very target are touched."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(target.parent):
            match = _TEMP_NAME.match(entry.name)
            if (match and match["name"] == target.name and entry.is_file(follow_symlinks=False)
                    and not _is_alive(int(match["pid"]))):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


def _raise_terminated(signum, frame):  # noqa: ARG001 - the signal handler's signature
    raise Terminated("terminated (SIGTERM) during a write; the file being written was left as it was")


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` for the block's length (main thread, default handler only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (ValueError, OSError):
        previous = None
    if previous is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def create_exclusive(path: str | os.PathLike, mode: int = 0o666) -> int:
    """A file descriptor, open for reading and writing, of a file of the library's naming (``<store>.lock``): made
    with ``O_CREAT | O_EXCL`` when it does not exist, else opened with ``O_NOFOLLOW``; a symbolic link (or anything
    but a regular file) at ``path`` is refused (``FileRefused``) and left as it is."""
    path = Path(path)
    flags = os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            if path.is_symlink() or exc.errno == errno.ELOOP:
                raise FileRefused(f"{path} is a symbolic link; the library does not write through it: "
                                  "remove it (it is not one of the library's files)") from None
            raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FileRefused(f"{path} is not a regular file; remove it (it is not one of the library's files)")
    return fd


@contextlib.contextmanager
def replacing(path: str | os.PathLike, binary: bool = False, newline: str | None = None) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on a clean exit of the block it is flushed, synced and
    renamed over ``path`` (the rules of the module docstring); on any other exit it is removed and ``path`` is
    untouched. ``newline`` as :func:`open` (``""`` for :mod:`csv`)."""
    target = writable_target(path)
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else new_file_mode()
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    with _sigterm_raises():
        try:  # the open inside: a signal that comes just after it still finds the temporary file to remove
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                         0o600)
            with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline=newline)) as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except OSError as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            if exc.filename is None:  # a full disk: say which file (the target, left as it was)
                raise OSError(exc.errno, exc.strerror, str(target)) from exc
            raise
        except Terminated:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise Terminated(f"terminated (SIGTERM): {target} was left as it was (its new content was not "
                             "written)") from None
        except KeyboardInterrupt as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            if str(exc):  # the caller's own message (what it kept) stays
                raise
            raise KeyboardInterrupt(f"{target} was left as it was (its new content was not written)") from None
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` by :func:`replacing`; the file written (links resolved)."""
    with replacing(path, binary=True) as fh:
        fh.write(data)
    return writable_target(path)


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` by :func:`replacing`; the file written (links resolved)."""
    return write_bytes(path, text.encode("utf-8"))


def append_line(path: str | os.PathLike, line: str) -> None:
    """Append ``line`` (its newline included) to ``path``, flushed and synced; the file is never opened through a
    symbolic link (``FileRefused``), and a read-only file is refused before anything is written."""
    path = Path(path)
    if path.exists() and (not os.access(path, os.W_OK) or not path.stat().st_mode & 0o222):
        raise FileRefused(f"cannot append to {path}: the file is read-only; it is left as it is "
                          "(make it writable, or give another name)")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                     new_file_mode())
    except OSError as exc:
        if path.is_symlink():
            raise FileRefused(f"{path} is a symbolic link; the library does not append through it: remove it") \
                from None
        raise exc
    with os.fdopen(fd, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


class Locked(ValueError):
    """Another process holds the lock of a file (its pid is in the message)."""


class FileLock:
    """An exclusive ``fcntl.flock`` on ``<real file>.lock``, held until :meth:`release`.

    The lock goes by the real file: ``path`` is resolved (every symbolic link followed) before the lock file's name
    is made, so two names of one file take one lock; after the lock is taken, the lock file at that name must still
    be the very file locked (same device and inode), else it was replaced under us and the lock is taken again. The
    lock file is made by :func:`create_exclusive` (never through a link) and holds the holder's pid."""

    def __init__(self, path: str | os.PathLike, what: str = "file"):
        self.target = Path(os.path.realpath(path))
        self.path = self.target.with_name(self.target.name + ".lock")
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> FileLock:
        """Take the lock; :class:`Locked` (with the holder's pid) if another process holds it."""
        while True:
            fd = create_exclusive(self.path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise Locked(f"the {self.what} {self.target} is being written by another run (pid {holder}); "
                             "wait for it to end, or give another name") from None
            here = os.fstat(fd)
            try:
                there = os.stat(self.path, follow_symlinks=False)
            except FileNotFoundError:
                there = None
            if there is not None and (there.st_dev, there.st_ino) == (here.st_dev, here.st_ino):
                break
            os.close(fd)  # the lock file was removed or replaced between the open and the lock: again
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Release the lock (nothing if it is not held). The lock file stays: removing it would let a waiting
        process lock a file that a third one no longer sees."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
