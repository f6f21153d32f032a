"""Whole files of other kinds on top of the one atomic write (:func:`eer_plugin.common.outputs.replacing`
and :func:`~eer_plugin.common.outputs.writing`: a temporary file in the same directory, flushed to disk, then
renamed over the final name): torch saves, text, JSON, hard links. A kill at any moment leaves either the old
file or the new one, never a truncated one; the temporary files of a killed writer
(``.<name>.eer-tmp-<pid>-<random>``) are removed by :func:`remove_temporary_files`.
"""

import glob
import json
import logging
import os
import shutil
from typing import Any

from eer_plugin.common.outputs import TEMPORARY_MARK, PathLike, replacing, writing

logger = logging.getLogger(__name__)


def atomic_torch_save(obj: Any, path: PathLike) -> None:
    """``torch.save(obj, path)``, atomically (torch is imported here: the module's other writers need none)."""
    import torch

    with replacing(path) as temporary, open(temporary, "wb") as handle:
        torch.save(obj, handle)


def atomic_write_text(path: PathLike, text: str) -> None:
    """``text`` (UTF-8) as the whole content of ``path``, atomically (its directories are created)."""
    with writing(path) as handle:
        handle.write(text)


def write_json(data: Any, path: PathLike) -> None:
    """``data`` as indented JSON in ``path``, atomically (its directories are created)."""
    atomic_write_text(path, json.dumps(data, indent=1))


def atomic_link_or_copy(source: str, path: PathLike) -> None:
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
