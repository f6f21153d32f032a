"""The output policy of every eer-ner command that writes a file (no AllenNLP or torch import): the one
same-path check and the one atomic write.

1. **Check first.** :func:`check_outputs` runs before anything is opened for writing: an output
   that is the same file as any input (paths resolved and inodes compared, so ``./a`` and ``a``,
   symbolic and hard links all count; for an input directory, any file in it), two outputs that
   are the same file, an output that is a directory, or an existing output this process may not write (read-only,
   ``chmod a-w``: a rename would replace it all the same) is an :class:`OutputError` naming both
   paths and the fix, and nothing is touched.
2. **Write whole or not at all.** :func:`replacing` / :func:`writing` write to a temporary file in
   the target directory (``.<name>.eer-tmp-<pid>-<process mark><random>``) and rename it over the output when
   the write is complete (``os.replace``, atomic). An error, Ctrl-C or a kill leaves the previous
   output file exactly as it was; a temporary file left by a killed writer is removed by the next
   write of the same output (:func:`remove_stale_temporaries`).
3. **Links and streams.** An output that is a symbolic link writes the link's *target* (resolved, also
   a dangling link), atomically in the target's directory: the link stays a link (:func:`target_of`).
   An output that is not a regular file (a character device such as ``/dev/null`` or ``/dev/full``,
   a FIFO, a socket, ``/dev/stdout``, ``/dev/fd/N``) is a *stream*
   (:func:`is_stream`): written directly, no temporary file, no rename, the device node stays.
4. **Write errors are one line.** A write that fails (a full disk, ``/dev/full``, a quota) is an
   :class:`OutputError` naming the output and the reason (:func:`write_failure`); for a regular file the
   temporary file is removed first, so the disk is not left full and the previous file is unchanged.
"""

import errno
import glob
import os
import re
import stat
import tempfile
import uuid
from contextlib import contextmanager
from typing import IO, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from eer_plugin.common.errors import UserError

PathLike = Union[str, "os.PathLike[str]"]
TEMPORARY_MARK = ".eer-tmp-"
#: the errors of a write that failed because of where it writes (full disk, quota, file size, read-only, I/O)
WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO)
#: this process's mark in its temporary names: a PID alone repeats (every container's first process is PID 1)
_PROCESS = uuid.uuid4().hex[:8]


class OutputError(UserError, ValueError):
    """An output path that would destroy an input or cannot be written; nothing was touched (a user error)."""


def is_stream(path: PathLike) -> bool:
    """Whether ``path`` is written as a stream: it exists (links followed) and is not a regular file or a
    directory (a character or block device, a FIFO, a socket), or it names an open file descriptor
    (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/proc/<pid>/fd/N``: whatever file it stands for is
    already open, maybe by the shell's redirection). A regular file under ``/dev/shm`` is a regular file."""
    path = os.path.abspath(os.fspath(path))
    if path in ("/dev/stdout", "/dev/stderr") or path.startswith("/dev/fd/") or re.match(r"/proc/[^/]+/fd/", path):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def target_of(path: PathLike) -> str:
    """The file that writing ``path`` replaces: the target of a symbolic link (followed to the end, also
    when it dangles), else ``path`` itself."""
    path = os.fspath(path)
    return os.path.realpath(path) if os.path.islink(path) else path


def write_failure(path: PathLike, error: OSError, stream: bool = False) -> "OutputError":
    """The one-line :class:`OutputError` of a write to ``path`` that failed with ``error``."""
    reason = error.strerror or str(error)
    if stream:
        return OutputError(f"{path}: cannot write to it ({reason}); the output is incomplete")
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return OutputError(
            f"{path}: {reason} while writing it; the partial temporary file was removed and {path} is as it was "
            "before this run: free space (or choose another disk) and run again"
        )
    return OutputError(f"{path}: cannot write it ({reason}); {path} is as it was before this run")


def temporary_name(path: PathLike) -> str:
    directory, name = os.path.split(target_of(path))
    return os.path.join(directory, f".{name}{TEMPORARY_MARK}{os.getpid()}-{_PROCESS}{uuid.uuid4().hex[:8]}")


def _identity(path: str) -> Optional[Tuple[int, int]]:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _files_under(directory: str) -> Iterator[str]:
    for root, _, names in os.walk(directory):
        for name in names:
            yield os.path.join(root, name)


def same_file(output: PathLike, input: PathLike) -> bool:
    """Whether writing ``output`` would overwrite ``input`` (or, for an input directory, a file in it)."""
    output, input = os.fspath(output), os.fspath(input)
    if os.path.realpath(output) == os.path.realpath(input):
        return True
    target = _identity(output)
    if target is None:
        return False
    if os.path.isdir(input):
        return any(_identity(path) == target for path in _files_under(input))
    return _identity(input) == target


def _existing_parent(directory: str) -> str:
    """``directory`` or its nearest existing ancestor (the one the output's directories would be made in)."""
    while not os.path.exists(directory) and os.path.dirname(directory) != directory:
        directory = os.path.dirname(directory)
    return directory


def check_outputs(
    inputs: Iterable[Tuple[str, Optional[PathLike]]], outputs: Sequence[Tuple[str, Optional[PathLike]]]
) -> None:
    """:class:`OutputError` unless every output can be written without touching an input.

    ``inputs`` and ``outputs`` are ``(what, path)`` pairs, ``what`` naming the argument for the
    message (``"INPUT"``, ``"--output-file"``); pairs whose path is None are skipped."""
    inputs = [(what, path) for what, path in inputs if path is not None]
    outputs = [(what, path) for what, path in outputs if path is not None]
    for index, (what, path) in enumerate(outputs):
        if is_stream(path):  # a device, FIFO or /dev/stdout: written directly, never the same file as an input
            if os.path.exists(path) and not os.access(path, os.W_OK):
                raise OutputError(f"{what} {path}: not writable; choose a file or stream you can write to")
            continue
        if os.path.isdir(path):
            raise OutputError(f"{what} {path} is a directory; give a file name for the output")
        target = target_of(path)
        if os.path.isfile(target) and not os.access(target, os.W_OK):  # replacing it would work all the same
            raise OutputError(
                f"{what} {path} is read-only (no write permission), so it is left as it is: make it writable "
                f"(chmod u+w) to replace it, or choose another output file"
            )
        parent = _existing_parent(os.path.dirname(os.path.abspath(target)))
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
            raise OutputError(f"{what} {path}: cannot write in {parent}; choose a directory you can write to")
        for input_what, input_path in inputs:
            if same_file(path, input_path):
                raise OutputError(
                    f"{what} {path} is the same file as {input_what} {input_path}: writing it would destroy the input. "
                    "Nothing was written; choose another output file"
                )
        for other_what, other in outputs[:index]:
            if same_file(path, other):
                raise OutputError(
                    f"{what} {path} is the same file as {other_what} {other}: one would overwrite the other. "
                    "Nothing was written; give them different names"
                )


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process
        return True
    return True


def stale_temporaries(path: PathLike) -> List[str]:
    """The temporary files of ``path`` whose writer process no longer runs (a killed run's), largest first: their
    PID runs no process, or it is this process's PID but another process's mark (a container's PID 1 again)."""
    directory, name = os.path.split(target_of(path))
    stale = []
    for temporary in glob.glob(os.path.join(glob.escape(directory or "."), f".{glob.escape(name)}{TEMPORARY_MARK}*")):
        pid, _, mark = temporary.rsplit(TEMPORARY_MARK, 1)[1].partition("-")
        if not pid.isdigit():
            continue
        if (not mark.startswith(_PROCESS)) if int(pid) == os.getpid() else not _pid_alive(int(pid)):
            stale.append(temporary)
    return sorted(stale, key=lambda t: -os.path.getsize(t) if os.path.exists(t) else 0)


def abandon(temporary: str) -> str:
    """Renames this process's ``temporary`` so that it counts as a stale one (a killed run's), kept for a later
    ``--resume`` even by this same process; returns the new name."""
    head, _, _ = temporary.rpartition(TEMPORARY_MARK)
    mark = uuid.uuid4().hex
    while mark.startswith(_PROCESS):  # pragma: no cover - one chance in 4 billion
        mark = uuid.uuid4().hex
    abandoned = f"{head}{TEMPORARY_MARK}{os.getpid()}-{mark[:16]}"
    os.replace(temporary, abandoned)
    return abandoned


def remove_stale_temporaries(path: PathLike) -> None:
    """Removes the temporary files of ``path`` whose writer process no longer runs."""
    for temporary in stale_temporaries(path):
        try:
            os.remove(temporary)
        except OSError:  # pragma: no cover - removed meanwhile
            pass


def fsync_directory(directory: str) -> None:
    try:
        descriptor = os.open(directory or ".", os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. platforms without directory descriptors
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(descriptor)


def publish(temporary: str, path: PathLike, sync: bool = False) -> None:
    """Renames ``temporary`` over ``path`` (its target, for a symbolic link; ``sync``: flush the file's data
    to disk first)."""
    path = target_of(path)
    if sync:
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
    os.replace(temporary, path)
    fsync_directory(os.path.dirname(path))


@contextmanager
def replacing(path: PathLike, publisher: Optional[Callable[[str, PathLike], None]] = None) -> Iterator[str]:
    """Yields a temporary path next to ``path`` (its target, for a symbolic link); what the block writes
    there replaces ``path`` (``publisher(temporary, path)``, by default :func:`publish` with the data
    flushed to disk first) when the block ends without an error, else it is removed. A stream
    (:func:`is_stream`) is yielded itself: the block writes it directly. A write that fails with an
    ``OSError`` is :func:`write_failure`'s :class:`OutputError`, after the temporary file is removed."""
    if is_stream(path):
        try:
            yield os.fspath(path)
        except OSError as error:
            if error.errno not in WRITE_ERRORS:
                raise
            raise write_failure(path, error, stream=True) from error
        return
    temporary = temporary_name(path)
    try:
        yield temporary
        if publisher is None:
            publish(temporary, path, sync=True)
        else:
            publisher(temporary, path)
    except OSError as error:
        if os.path.exists(temporary):
            os.remove(temporary)
        if error.errno in WRITE_ERRORS:
            raise write_failure(path, error) from error
        raise
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


@contextmanager
def spooling(path: PathLike) -> Iterator[IO[bytes]]:
    """An anonymous temporary file (binary, read and written) for a command that must see all its input before
    it writes ``path``: on the disk ``path`` is written to (its nearest existing directory; the system's
    temporary directory for a stream), never in memory, and gone when the block ends, or the process with it."""
    directory = None if is_stream(path) else _existing_parent(os.path.dirname(os.path.abspath(target_of(path))))
    with tempfile.TemporaryFile(dir=directory) as spool:
        yield spool


@contextmanager
def writing(path: PathLike, mode: str = "w") -> Iterator[IO]:
    """An open file whose content replaces ``path`` when the block ends without an error (the
    parent directories are created; stale temporary files of ``path`` are removed). A stream
    (:func:`is_stream`) is opened and written directly."""
    if is_stream(path):
        with replacing(path) as stream, open(stream, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
        return
    path = target_of(path)
    with _directories_of(path):
        remove_stale_temporaries(path)
        with replacing(path) as temporary:
            with open(temporary, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
                yield handle


@contextmanager
def _directories_of(path: str) -> Iterator[None]:
    """``path``'s missing parent directories, made for the block; removed again if the block fails (a write that
    streams its input leaves no trace of an input that turns out bad, as one that read it first)."""
    made = []
    directory = os.path.dirname(path)
    while directory and not os.path.exists(directory):
        made.append(directory)
        directory = os.path.dirname(directory)
    for directory in reversed(made):
        os.makedirs(directory, exist_ok=True)
    try:
        yield
    except BaseException:
        for directory in made:  # the deepest first
            try:
                os.rmdir(directory)
            except OSError:  # not empty (another writer's file), or gone
                break
        raise
