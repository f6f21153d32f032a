"""Files written whole or not at all: a temporary file in the same directory, flushed to disk,
then renamed over the final name (``os.replace`` is atomic on POSIX and Windows). A kill at any
moment leaves either the old file or the new one, never a truncated one; the temporary files of
a killed writer (``.<name>.eer-tmp-<pid>-<random>``) are removed by :func:`remove_temporary_files`.
The same-file checks and atomic writes of the commands' outputs are in :mod:`eer_plugin.runtime.outputs`.
"""
import glob
import logging
import os
import shutil
from contextlib import contextmanager
from typing import Any, Iterator

import torch

from eer_plugin.runtime import outputs
from eer_plugin.runtime.outputs import TEMPORARY_MARK, temporary_name  # noqa: F401  (public here too)

logger = logging.getLogger(__name__)


def publish(temporary: str, path: str, sync: bool = False) -> None:
    """Renames ``temporary`` over ``path`` (``sync``: flush the file's data to disk first)."""
    outputs.publish(temporary, path, sync)


@contextmanager
def replacing(path: str) -> Iterator[str]:
    """Yields a temporary path next to ``path``; what the block writes there replaces ``path``
    (data flushed to disk first) when the block ends without an error, else it is removed
    (:func:`eer_plugin.runtime.outputs.replacing`, publishing through this module's :func:`publish`)."""
    with outputs.replacing(path, lambda temporary, final: publish(temporary, final, sync=True)) as temporary:
        yield temporary


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
