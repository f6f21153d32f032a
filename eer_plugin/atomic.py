"""Files written whole or not at all: a temporary file in the same directory, flushed to disk,
then renamed over the final name (``os.replace`` is atomic on POSIX and Windows). A kill at any
moment leaves either the old file or the new one, never a truncated one; the temporary files of
a killed writer (``.<name>.eer-tmp-<pid>-<random>``) are removed by :func:`remove_temporary_files`.
"""
import glob
import logging
import os
import shutil
import uuid
from contextlib import contextmanager
from typing import Any, Iterator

import torch

logger = logging.getLogger(__name__)

TEMPORARY_MARK = ".eer-tmp-"


def temporary_name(path: str) -> str:
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}{TEMPORARY_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}")


def _fsync_directory(directory: str) -> None:
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


def publish(temporary: str, path: str, sync: bool = False) -> None:
    """Renames ``temporary`` over ``path`` (``sync``: flush the file's data to disk first)."""
    if sync:
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
    os.replace(temporary, path)
    _fsync_directory(os.path.dirname(path))


@contextmanager
def replacing(path: str) -> Iterator[str]:
    """Yields a temporary path next to ``path``; what the block writes there replaces ``path``
    (data flushed to disk first) when the block ends without an error, else it is removed."""
    temporary = temporary_name(path)
    try:
        yield temporary
        publish(temporary, path, sync=True)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def atomic_torch_save(obj: Any, path: str) -> None:
    """``torch.save(obj, path)``, atomically."""
    with replacing(path) as temporary, open(temporary, "wb") as handle:
        torch.save(obj, handle)


def atomic_write_text(path: str, text: str) -> None:
    with replacing(path) as temporary, open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)


def atomic_link_or_copy(source: str, path: str) -> None:
    """``path`` becomes a hard link to (or, across devices, a copy of) ``source``, atomically."""
    with replacing(path) as temporary:
        try:
            os.link(source, temporary)
        except OSError:
            shutil.copyfile(source, temporary)


def remove_temporary_files(directory: str) -> None:
    for path in glob.glob(os.path.join(glob.escape(directory), f".*{TEMPORARY_MARK}*")):
        try:
            os.remove(path)
            logger.info("removed %s (left by an interrupted write)", path)
        except OSError:  # pragma: no cover
            pass
