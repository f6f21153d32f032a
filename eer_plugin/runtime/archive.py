"""Safe model archives: checked extraction and weights-only loading.

A ``model.tar.gz`` may come from someone else. AllenNLP 2.10.1 unpacks it with
``tarfile.extractall`` and no filter (``allennlp/models/archival.py``: on Python 3.11 every member
is trusted), so a member named ``../../.bashrc``, an absolute path, a symbolic or hard link or a
device node would be written wherever the user can write, before any weights are read. Here:

* :func:`check_members` refuses an archive with any member that is not a regular file or a
  directory, or whose name is absolute or contains ``..`` (or would land outside the
  destination): nothing at all is extracted from such an archive, and the :class:`ArchiveError`
  names the member and the reason;
* :func:`safe_extract` extracts the checked members with Python's ``data`` filter on top (which
  also drops set-user-id bits and the archive's owners);
* :func:`load_weights` reads a state dict with the package's one weights-only reader
  (:mod:`eer_plugin.runtime.weights_files`: tensors and plain containers only, no pickled code runs);
* :func:`load_model_archive` is the one way this package opens an archive (evaluation,
  ``tune-o-cost``, the benchmark's evaluation subprocess): a missing path or a file that is not a
  model archive is one clear :class:`ArchiveError`.

:func:`install` (called when the plugin is imported, so for every ``allennlp`` / ``eer-ner``
command) puts the checked versions into AllenNLP itself: ``archival.extracted_archive`` (used by
``load_archive``, hence ``evaluate``, ``predict``, ``Model.from_archive`` and the
``_pretrained`` initializer), the existence check before it (``archival.cached_path``), and
``nn.util.read_state_dict`` (the model weights of ``Model.load``). It also makes
``archival.archive_model`` atomic (``model.tar.gz`` appears whole or not at all, see
:mod:`eer_plugin.common.atomic`).
"""

import glob
import logging
import os
import shutil
import tarfile
import tempfile
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Union

import torch

from eer_plugin.common.errors import ArchiveError, check_cuda_device, one_line
from eer_plugin.common.member_paths import path_problem
from eer_plugin.common.outputs import replacing
from eer_plugin.common.wording import counted
from eer_plugin.corpus.formats.office import weights_file
from eer_plugin.runtime.archive_contents import (  # noqa: F401  (CONFIG_NAME, _EXTRACTED_FROM: this module's names too)
    _EXTRACTED_FROM,
    CONFIG_NAME,
    check_extracted,
    checked_cached_path,
    checked_load,
    report_missing_weights,
)
from eer_plugin.runtime.weights_files import UnloadableFile, read_file

logger = logging.getLogger(__name__)

PathLike = Union[str, os.PathLike]


def _problem(member: tarfile.TarInfo, destination: Optional[Path]) -> Optional[str]:
    """Why ``member`` must not be extracted, or None."""
    name = member.name
    if member.issym():
        return f"it is a symbolic link (to {member.linkname!r})"
    if member.islnk():
        return f"it is a hard link (to {member.linkname!r})"
    if member.ischr() or member.isblk():
        return "it is a device node"
    if member.isfifo():
        return "it is a named pipe"
    if not (member.isfile() or member.isdir()):
        return "it is not a regular file or directory"
    problem = path_problem(name)
    if problem is not None:
        return problem
    if destination is not None:
        target = (destination / name).resolve()
        if target != destination and destination not in target.parents:
            return "it would be written outside the extraction directory"
    return None


def check_members(
    archive: tarfile.TarFile, archive_path: PathLike, destination: Optional[PathLike] = None
) -> List[tarfile.TarInfo]:
    """Every member of ``archive`` if all are safe; else :class:`ArchiveError` naming the first bad one."""
    root = Path(destination).resolve() if destination is not None else None
    members = archive.getmembers()
    for member in members:
        reason = _problem(member, root)
        if reason is not None:
            raise ArchiveError(
                f"{archive_path}: unsafe model archive, refusing to extract it: member {member.name!r}: {reason} "
                "(a model archive holds only regular files and directories below its root)"
            )
    return members


def _open(archive_path: PathLike) -> tarfile.TarFile:
    path = Path(archive_path)
    if not path.exists():
        raise ArchiveError(f"{archive_path}: no such file (expected a model archive, model.tar.gz)")
    if path.is_dir():
        raise ArchiveError(f"{archive_path}: is a directory, not a model archive (model.tar.gz)")
    try:
        return tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError, EOFError):
        weights = _weights_file(path)
        if weights is not None:  # a checkpoint's .th or an encoder's model.safetensors, given as the model
            raise ArchiveError(
                f"{archive_path}: {weights}, not a model archive (model.tar.gz): give the model.tar.gz that training "
                "wrote beside it, or an exported model's directory"
            ) from None
        raise ArchiveError(
            f"{archive_path}: not a model archive (model.tar.gz): not a tar file (gzip, bz2, xz or plain)"
        ) from None


def _weights_file(path: Path) -> Optional[str]:
    try:
        with open(path, "rb") as handle:
            return weights_file(handle.read(16), handle)
    except OSError:
        return None


def safe_extract(archive_path: PathLike, destination: PathLike) -> None:
    """Extracts a model archive into ``destination`` after :func:`check_members` accepted every member."""
    with _open(archive_path) as archive:
        try:
            members = check_members(archive, archive_path, destination)
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 (3.12 everywhere)
                archive.extractall(destination, members=members, filter="data")
            else:  # pragma: no cover - the checks above already cover what the filter refuses
                archive.extractall(destination, members=members)
        except getattr(tarfile, "FilterError", ()) as error:
            raise ArchiveError(f"{archive_path}: unsafe model archive, refusing to extract it: {error}") from None
        except (tarfile.TarError, EOFError, OSError, ValueError) as error:
            raise ArchiveError(
                f"{archive_path}: damaged model archive ({one_line(error)}): truncated or corrupted in copying? copy it again, "
                "or use the model.tar.gz that eer-ner train wrote"
            ) from None


@contextmanager
def extracted_archive(resolved_archive_file: PathLike, cleanup: bool = True) -> Iterator[str]:
    """Drop-in replacement of ``allennlp.models.archival.extracted_archive`` (same signature and
    behaviour: a new temporary directory, removed on exit if ``cleanup``) with a checked extraction."""
    tempdir = tempfile.mkdtemp(prefix="eer-archive-")
    _EXTRACTED_FROM[tempdir] = str(resolved_archive_file)
    try:
        logger.info("extracting archive file %s to temp dir %s (checked)", resolved_archive_file, tempdir)
        try:
            safe_extract(resolved_archive_file, tempdir)
            check_extracted(tempdir, resolved_archive_file)
        except BaseException:
            shutil.rmtree(tempdir, ignore_errors=True)  # load_archive calls us with cleanup=False
            raise
        yield tempdir
    finally:
        if cleanup:
            shutil.rmtree(tempdir, ignore_errors=True)


class MissingWeightsError(ArchiveError, FileNotFoundError):
    """A model archive or weights path without the weights file (still a ``FileNotFoundError``)."""


def load_weights(path: PathLike, cuda_device: int = -1) -> Dict[str, torch.Tensor]:
    """A state dict read with ``weights_only=True`` (tensors and plain containers, no code); weights that are
    not finite (NaN, inf) are an :class:`ArchiveError` naming the tensor (a model that would tag everything ``O``)."""
    from allennlp.nn.util import device_mapping

    check_cuda_device(cuda_device)
    try:
        state = read_file(str(path), map_location=device_mapping(cuda_device))
    except FileNotFoundError:
        raise MissingWeightsError(_missing_weights(str(path))) from None
    except OSError as error:
        raise ArchiveError(
            f"{_weights_named(path)}: cannot be read ({error.strerror or error}): make it a file you may read, or use "
            "the model.tar.gz that eer-ner train wrote"
        ) from None
    except UnloadableFile as unloadable:
        raise ArchiveError(
            f"{_weights_named(path)}: not a weights file this package can load: {unloadable.reason}; damaged, or "
            "not saved by eer-ner train: use the model.tar.gz that eer-ner train wrote"
        ) from None
    if not isinstance(state, dict):
        raise ArchiveError(
            f"{_weights_named(path)}: not a state dict (found {type(state).__name__}); use the model.tar.gz that "
            "eer-ner train wrote"
        )
    check_finite(state, _EXTRACTED_FROM.get(os.path.dirname(str(path)), str(path)))
    return state


def _weights_named(path: PathLike) -> str:
    """A weights file as the user knows it: ``ARCHIVE: its weights.th`` inside an extracted archive, else its path."""
    directory, name = os.path.split(str(path))
    return f"{_EXTRACTED_FROM[directory]}: its {name}" if directory in _EXTRACTED_FROM else str(path)


def _missing_weights(path: str) -> str:
    """What a missing weights file means: an archive without weights, or a training that has not saved a best
    model yet (a serialization directory with ``config.json`` but no ``best.th``: its first epoch is not over)."""
    directory, name = os.path.split(path)
    if directory in _EXTRACTED_FROM or name != "best.th" or not os.path.isfile(os.path.join(directory, CONFIG_NAME)):
        where = _EXTRACTED_FROM.get(directory, path)
        return (
            f"{where}: no weights file ({name}): the model archive (or serialization directory) holds no weights "
            "(weights.th, or best.th); archive a trained model again, or pass the weights with --weights-file"
        )
    checkpoints = sorted(glob.glob(os.path.join(directory, "model_state_e*.th")), key=os.path.getmtime)
    latest = f"; or tag with its latest checkpoint: --weights-file {checkpoints[-1]}" if checkpoints else ""
    return (
        f"{directory}: a training's serialization directory without best.th: the training has not finished its first "
        f"epoch, or stopped before it did; let it finish, or continue it with eer-ner train CONFIG -s {directory} "
        f"--recover{latest}"
    )


def check_finite(state: Dict[str, Any], where: str) -> None:
    """:class:`ArchiveError` if a floating-point tensor of ``state`` holds NaN or an infinity."""
    for name, value in state.items():
        if isinstance(value, torch.Tensor) and value.is_floating_point() and not bool(torch.isfinite(value).all()):
            bad = int((~torch.isfinite(value)).sum())
            raise ArchiveError(
                f"{where}: the weights {name!r} hold {counted(bad, 'value')} that {'is' if bad == 1 else 'are'} not finite (NaN or inf): the model is "
                "damaged (a diverged training?) and would tag nothing; use an earlier checkpoint or train again"
            )


def read_state_dict(
    path: PathLike,
    strip_prefix: Optional[str] = None,
    ignore: Optional[List[str]] = None,
    strict: bool = True,
    cuda_device: int = -1,
) -> Dict[str, torch.Tensor]:
    """``allennlp.nn.util.read_state_dict`` (same arguments, same result) reading with :func:`load_weights`."""
    import re

    if ignore is not None and not isinstance(ignore, list):
        raise ValueError("'ignore' parameter should be a list")
    state = load_weights(path, cuda_device)
    out: Dict[str, torch.Tensor] = OrderedDict()
    prefix_used = False
    ignore_used = [False] * len(ignore or [])
    for key, value in state.items():
        matched = next((i for i, pattern in enumerate(ignore or []) if re.match(pattern, key)), None)
        if matched is not None:
            ignore_used[matched] = True
            logger.warning("ignoring %s from state dict", key)
            continue
        new_key = key
        if strip_prefix and key.startswith(strip_prefix):
            prefix_used = True
            new_key = key[len(strip_prefix) :]
            if not new_key:
                raise ValueError("'strip_prefix' resulted in an empty string for a key")
        out[new_key] = value
    if strict and strip_prefix is not None and not prefix_used:
        raise ValueError(f"'strip_prefix' of '{strip_prefix}' was never used")
    if strict:
        for pattern, used in zip(ignore or [], ignore_used):
            if not used:
                raise ValueError(f"'ignore' pattern '{pattern}' didn't have any matches")
    return out


def training_finished(serialization_dir: PathLike) -> bool:
    """Whether ``allennlp train`` finished in ``serialization_dir``: its ``metrics.json`` is there and a
    ``model.tar.gz`` written after it. AllenNLP writes the metrics, then the archive; an interrupted training
    archives its best epoch so far without metrics, so an archive older than the metrics is one left by an
    earlier interruption (the resumed training was stopped again while archiving), not the finished model."""
    metrics, archive = Path(serialization_dir) / "metrics.json", Path(serialization_dir) / "model.tar.gz"
    return metrics.is_file() and archive.is_file() and archive.stat().st_mtime >= metrics.stat().st_mtime


def load_model_archive(
    archive_path: PathLike, cuda_device: int = -1, overrides: str = "", weights_file: Optional[str] = None
):
    """AllenNLP's ``load_archive`` with the checks of this module (installed or not) and a clear
    :class:`ArchiveError` when the path is missing or is not a model archive."""
    from allennlp.models import archival

    install()
    check_cuda_device(cuda_device, "cuda_device")
    return archival.load_archive(
        str(archive_path), cuda_device=cuda_device, overrides=overrides, weights_file=weights_file
    )


def _atomic_archive_model(original):
    """``archival.archive_model`` writing ``model.tar.gz`` under a temporary name, then renaming it:
    a kill while archiving leaves no truncated archive (that would look like a finished run)."""

    def archive_model(serialization_dir, weights: str = "best.th", archive_path=None, include_in_archive=None) -> str:
        final = os.path.join(serialization_dir, "model.tar.gz") if archive_path is None else str(archive_path)
        if os.path.isdir(final):
            final = os.path.join(final, "model.tar.gz")
        with replacing(final) as temporary:
            original(serialization_dir, weights=weights, archive_path=temporary, include_in_archive=include_in_archive)
        return final

    archive_model.eer_atomic = True  # type: ignore[attr-defined]
    archive_model.__doc__ = original.__doc__
    return archive_model


def install() -> None:
    """Puts the checked extraction and weights loading into AllenNLP, and makes its model archives
    atomic (idempotent; see the module docstring)."""
    from allennlp import models
    from allennlp.commands import train
    from allennlp.models import archival
    from allennlp.nn import util as nn_util

    if not getattr(archival.archive_model, "eer_atomic", False):
        archival.archive_model = _atomic_archive_model(archival.archive_model)
    for module in (models, train):  # they imported the name
        module.archive_model = archival.archive_model

    if not getattr(archival._load_model, "eer_checked", False):
        archival._load_model = checked_load(archival._load_model, "model")
    if not getattr(archival._load_dataset_readers, "eer_checked", False):
        archival._load_dataset_readers = checked_load(archival._load_dataset_readers, "dataset_reader")
    report_missing_weights()
    if archival.extracted_archive is not extracted_archive:
        archival.extracted_archive = extracted_archive
    if not getattr(archival.cached_path, "eer_checked", False):
        archival.cached_path = checked_cached_path(archival.cached_path)
    if nn_util.read_state_dict is not read_state_dict:
        nn_util.read_state_dict = read_state_dict
    import sys

    transformer_module = sys.modules.get("allennlp.modules.transformer.transformer_module")
    if transformer_module is not None and getattr(transformer_module, "read_state_dict", None) is not read_state_dict:
        transformer_module.read_state_dict = read_state_dict  # type: ignore[attr-defined]
