"""The output policy of every eer-ner command that writes a file (no AllenNLP or torch import): the one
same-path check and the one atomic write.

1. **Check first.** :func:`check_outputs` runs before anything is opened for writing: an output
   that is the same file as any input (paths resolved and inodes compared, so ``./a`` and ``a``,
   symbolic and hard links all count; for an input directory, any file in it), two outputs that
   are the same file, or an output that is a directory is an :class:`OutputError` naming both
   paths and the fix, and nothing is touched.
2. **Write whole or not at all.** :func:`replacing` / :func:`writing` write to a temporary file in
   the target directory (``.<name>.eer-tmp-<pid>-<random>``) and rename it over the output when
   the write is complete (``os.replace``, atomic). An error, Ctrl-C or a kill leaves the previous
   output file exactly as it was; a temporary file left by a killed writer is removed by the next
   write of the same output (:func:`remove_stale_temporaries`).
"""
import glob
import os
import uuid
from contextlib import contextmanager
from typing import IO, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from eer_plugin.common.errors import UserError

PathLike = Union[str, "os.PathLike[str]"]
TEMPORARY_MARK = ".eer-tmp-"


class OutputError(UserError, ValueError):
    """An output path that would destroy an input or cannot be written; nothing was touched (a user error)."""


def temporary_name(path: PathLike) -> str:
    directory, name = os.path.split(os.fspath(path))
    return os.path.join(directory, f".{name}{TEMPORARY_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}")


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


def check_outputs(inputs: Iterable[Tuple[str, Optional[PathLike]]], outputs: Sequence[Tuple[str, Optional[PathLike]]]) -> None:
    """:class:`OutputError` unless every output can be written without touching an input.

    ``inputs`` and ``outputs`` are ``(what, path)`` pairs, ``what`` naming the argument for the
    message (``"INPUT"``, ``"--output-file"``); pairs whose path is None are skipped."""
    inputs = [(what, path) for what, path in inputs if path is not None]
    outputs = [(what, path) for what, path in outputs if path is not None]
    for index, (what, path) in enumerate(outputs):
        if os.path.isdir(path):
            raise OutputError(f"{what} {path} is a directory; give a file name for the output")
        parent = _existing_parent(os.path.dirname(os.path.abspath(path)))
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
    """The temporary files of ``path`` whose writer process no longer runs (a killed run's), largest first."""
    directory, name = os.path.split(os.fspath(path))
    stale = []
    for temporary in glob.glob(os.path.join(glob.escape(directory or "."), f".{glob.escape(name)}{TEMPORARY_MARK}*")):
        pid = temporary.rsplit(TEMPORARY_MARK, 1)[1].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
            stale.append(temporary)
    return sorted(stale, key=lambda t: -os.path.getsize(t) if os.path.exists(t) else 0)


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
    """Renames ``temporary`` over ``path`` (``sync``: flush the file's data to disk first)."""
    if sync:
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
    os.replace(temporary, path)
    fsync_directory(os.path.dirname(os.fspath(path)))


@contextmanager
def replacing(path: PathLike, publisher: Optional[Callable[[str, PathLike], None]] = None) -> Iterator[str]:
    """Yields a temporary path next to ``path``; what the block writes there replaces ``path``
    (``publisher(temporary, path)``, by default :func:`publish` with the data flushed to disk
    first) when the block ends without an error, else it is removed."""
    temporary = temporary_name(path)
    try:
        yield temporary
        if publisher is None:
            publish(temporary, path, sync=True)
        else:
            publisher(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


@contextmanager
def writing(path: PathLike, mode: str = "w") -> Iterator[IO]:
    """An open file whose content replaces ``path`` when the block ends without an error (the
    parent directories are created; stale temporary files of ``path`` are removed)."""
    directory = os.path.dirname(os.fspath(path))
    if directory:
        os.makedirs(directory, exist_ok=True)
    remove_stale_temporaries(path)
    with replacing(path) as temporary:
        with open(temporary, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as handle:
            yield handle
