"""One ``.th`` file read without running code from it, and why it could not be read: the reading shared by model
archives (:func:`eer_plugin.runtime.archive.load_weights`) and a training's checkpoints
(:func:`eer_plugin.training.checkpoint_files.load_file`), each caller wrapping :class:`UnloadableFile` in its own
error (an archive's one line, or a checkpoint the run may pass over)."""

import os
import zipfile
from typing import Any

import torch

from eer_plugin.common.errors import one_line

#: how a zip archive (what ``torch.save`` writes) begins
_ZIP_START = b"PK\x03\x04"


class UnloadableFile(Exception):
    """A ``.th`` file that ``torch.load(weights_only=True)`` refused; ``reason`` says why in words (empty, cut short,
    not a torch file, objects beyond plain values)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


def read_file(path: str, map_location: Any = "cpu", mmap: bool = False) -> Any:
    """What the ``.th`` file ``path`` holds, read with ``torch.load(..., weights_only=True)`` (tensors and plain
    values: no code from the file runs, even with ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` set; ``mmap``: its tensors
    mapped, not read). An ``OSError`` (missing, not readable) propagates for the caller to word; any other failure is
    :class:`UnloadableFile`."""
    with open(path, "rb"):  # a missing or unreadable file is the OSError, not a reason
        pass
    zipped = zipfile.is_zipfile(path)
    try:
        return torch.load(path, map_location=map_location, weights_only=True, mmap=mmap and zipped)
    except Exception as error:  # noqa: BLE001  (every way a file is not a torch file becomes its reason)
        raise UnloadableFile(path, why_not_loaded(path, error)) from None


def why_not_loaded(path: str, error: Exception) -> str:
    """Why ``torch.load(path, weights_only=True)`` raised ``error``, in words."""
    if os.path.getsize(path) == 0:
        return "empty (0 bytes)"
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as handle:
            cut = handle.read(len(_ZIP_START)) == _ZIP_START
        if cut:
            return "incomplete (a torch file cut short: truncated, or damaged)"
        return "not a torch file (damaged, or another file saved under this name)"
    text = one_line(error)
    if "weights only load failed" in text.lower():
        return (
            "holds objects other than tensors and plain values, which torch.load(weights_only=True) refuses "
            "(loading them would run code from the file)"
        )
    if "central directory" in text or "zip archive" in text or isinstance(error, (EOFError, zipfile.BadZipFile)):
        return "incomplete (its zip archive is damaged or truncated)"
    return f"cannot be loaded ({text[:200]})"
