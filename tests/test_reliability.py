"""Issue 13: safe archives, checkpoints that survive a kill, exact resume, clear failures, the eer-ner command."""
import io
import json
import os
import pickle
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest
import torch

from conftest import FIXTURES, REPO

DEV = str(FIXTURES / "conll2003_tiny_dev.txt")


def train(serialization_dir: Path, recover: bool = False, config: str = "eer_short.jsonnet"):
    from allennlp.commands.train import train_model_from_file

    return train_model_from_file(
        str(REPO / "training_configs" / config), str(serialization_dir), recover=recover, force=not recover
    )


@pytest.fixture(scope="module")
def archive(tmp_path_factory, tiny_encoder) -> Path:
    """A one-epoch EER model on the fixtures (tiny encoder), archived."""
    mp = pytest.MonkeyPatch()
    mp.setenv("EER_ENCODER", tiny_encoder)
    mp.setenv("EER_EPOCHS", "1")
    mp.setenv("EER_MAX_LENGTH", "128")
    directory = tmp_path_factory.mktemp("reliability-model")
    train(directory)
    yield directory / "model.tar.gz"
    mp.undo()


# ----------------------------------------------------------------------------------- 1. safe archives


def _member(archive: tarfile.TarFile, name: str, data: bytes = b"", **attributes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in attributes.items():
        setattr(info, key, value)
    archive.addfile(info, io.BytesIO(data) if info.isfile() else None)


def crafted_archive(path: Path, kind: str, outside: Path) -> Path:
    """A model-looking archive (config.json first) with one hostile member aimed at ``outside``."""
    with tarfile.open(path, "w:gz") as archive:
        _member(archive, "config.json", b"{}")
        if kind == "dotdot":
            _member(archive, "../" * 12 + str(outside).lstrip("/"), b"pwned")
        elif kind == "absolute":
            _member(archive, str(outside), b"pwned")
        elif kind == "symlink":
            _member(archive, "vocabulary", type=tarfile.SYMTYPE, linkname=str(outside))
        elif kind == "symlink-then-write":  # a link to a directory outside, then a file through it
            _member(archive, "vocabulary", type=tarfile.SYMTYPE, linkname=str(outside.parent))
            _member(archive, f"vocabulary/{outside.name}", b"pwned")
        elif kind == "hardlink":
            _member(archive, "weights.th", type=tarfile.LNKTYPE, linkname=str(outside))
        elif kind == "device":
            _member(archive, "weights.th", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
        elif kind == "fifo":
            _member(archive, "weights.th", type=tarfile.FIFOTYPE)
    return path


HOSTILE = ["dotdot", "absolute", "symlink", "symlink-then-write", "hardlink", "device", "fifo"]


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_archive_is_refused_and_nothing_is_written(kind, tmp_path, monkeypatch):
    from allennlp.models.archival import load_archive

    from eer_plugin.errors import ArchiveError

    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))  # where the extraction directories go
    outside = tmp_path / "outside" / "pwned"
    outside.parent.mkdir()
    path = crafted_archive(tmp_path / f"{kind}.tar.gz", kind, outside)
    with pytest.raises(ArchiveError, match=r"unsafe model archive, refusing to extract it: member .*: it"):
        load_archive(str(path))  # AllenNLP's own loader (evaluate, predict) goes through the check
    assert not outside.exists() and list(outside.parent.iterdir()) == []
    assert list(temp_root.iterdir()) == []  # the extraction directory is removed, nothing in it


def test_unsafe_member_names_are_refused_before_extraction(tmp_path):
    from eer_plugin.archive import safe_extract
    from eer_plugin.errors import ArchiveError

    for name in ["a/../../x", "/etc/x", "..", "C:/x", "\\x"]:
        path = tmp_path / "a.tar"
        with tarfile.open(path, "w") as archive:
            _member(archive, "ok.txt", b"fine")
            _member(archive, name, b"bad")
        destination = tmp_path / "out"
        destination.mkdir(exist_ok=True)
        with pytest.raises(ArchiveError):
            safe_extract(path, destination)
        assert list(destination.iterdir()) == []  # not even the good member: all checks come first


def test_normal_archive_still_loads(archive):
    from allennlp.models.archival import load_archive

    from eer_plugin.archive import load_model_archive

    for loaded in (load_archive(str(archive)), load_model_archive(archive)):
        assert type(loaded.model).__name__ == "EERTagger" or hasattr(loaded.model, "crf")
        assert loaded.model.vocab.get_vocab_size("labels") > 1


class _Payload:
    """Pickled with a __reduce__ that would run code on a plain torch.load."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_weights_are_loaded_weights_only(archive, tmp_path):
    """A weights.th holding a pickled callable is refused, and the callable never runs."""
    from allennlp.models.archival import load_archive

    from eer_plugin.errors import ArchiveError

    marker = tmp_path / "code-ran"
    hostile = tmp_path / "hostile.tar.gz"
    with tarfile.open(archive) as source, tarfile.open(hostile, "w:gz") as target:
        for member in source.getmembers():
            if member.name == "weights.th":
                data = pickle.dumps({"x": _Payload(str(marker))}, protocol=2)
                buffer = io.BytesIO()
                torch.save({"x": torch.zeros(1)}, buffer)  # a real state dict ...
                raw = buffer.getvalue()
                # ... whose pickle is replaced by one that calls open(): a zip with data.pkl swapped
                import zipfile

                out = io.BytesIO()
                with zipfile.ZipFile(io.BytesIO(raw)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
                    for item in zin.infolist():
                        zout.writestr(item, data if item.filename.endswith("data.pkl") else zin.read(item.filename))
                member.size = len(out.getvalue())
                target.addfile(member, io.BytesIO(out.getvalue()))
            else:
                target.addfile(member, source.extractfile(member) if member.isfile() else None)
    with pytest.raises(ArchiveError, match="weights_only=True"):
        load_archive(str(hostile))
    assert not marker.exists()


# ----------------------------------------------------------------------------------- 6. clear failures


def _with_unknown_type(tmp_path: Path) -> Path:
    text = Path(DEV).read_text().replace("I-PER", "I-WEAPON")
    path = tmp_path / "weapons.txt"
    path.write_text(text)
    return path


def test_evaluate_on_an_unknown_entity_type_names_type_and_file(archive, tmp_path):
    from allennlp.commands.evaluate import evaluate_from_archive

    from eer_plugin.errors import UnknownEntityTypeError

    data = _with_unknown_type(tmp_path)
    with pytest.raises(UnknownEntityTypeError) as caught:
        evaluate_from_archive(archive_file=str(archive), input_file=str(data))
    message = str(caught.value)
    assert str(data) in message and "'WEAPON'" in message and "not known to the model" in message
    assert "LOC, MISC, ORG, PER" in message


def test_document_counts_on_an_unknown_entity_type(archive, tmp_path):
    from eer_plugin.errors import UnknownEntityTypeError
    from eer_plugin.evaluation import document_counts

    data = _with_unknown_type(tmp_path)
    with pytest.raises(UnknownEntityTypeError, match=rf"{data}:\d+: entity type 'WEAPON' is not known to the model"):
        document_counts(str(archive), str(data))


def test_tune_o_cost_on_unknown_type_missing_or_broken_archive(archive, tmp_path):
    import argparse

    from eer_plugin.commands.tune_o_cost import tune_o_cost
    from eer_plugin.errors import ArchiveError, UnknownEntityTypeError, UserError

    def args(archive_file, dev=DEV):
        return argparse.Namespace(
            archive_file=str(archive_file), dev_file=str(dev), test_file=None, n_calls=3, low=1e-4, high=1e2,
            seed=0, batch_size=8, cuda_device=-1, output_archive=str(tmp_path / "cd.tar.gz"),
        )

    with pytest.raises(ArchiveError, match="no such file"):
        tune_o_cost(args(tmp_path / "missing.tar.gz"))
    (tmp_path / "text.tar.gz").write_text("not an archive\n")
    with pytest.raises(ArchiveError, match="not a model archive"):
        tune_o_cost(args(tmp_path / "text.tar.gz"))
    with pytest.raises(ArchiveError, match="is a directory"):
        tune_o_cost(args(tmp_path))
    with tarfile.open(tmp_path / "empty.tar.gz", "w:gz") as empty:
        _member(empty, "readme.txt", b"hello")
    with pytest.raises(ArchiveError, match="no config.json"):
        tune_o_cost(args(tmp_path / "empty.tar.gz"))
    with pytest.raises(UserError, match="no such dev file"):
        tune_o_cost(args(archive, tmp_path / "missing-dev.txt"))
    with pytest.raises(UnknownEntityTypeError, match="'WEAPON'"):
        tune_o_cost(args(archive, _with_unknown_type(tmp_path)))
    assert not (tmp_path / "cd.tar.gz").exists()


def test_user_errors_are_one_line_at_the_command_line(tmp_path):
    """`allennlp tune-o-cost` / `evaluate` on a missing or non-archive file: one line, no traceback."""
    (tmp_path / "text.tar.gz").write_text("not an archive\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    # tune-o-cost is found through the repository's .allennlp_plugins; evaluate runs elsewhere with --include-package
    for command, archive_file, cwd in (("tune-o-cost", "missing.tar.gz", REPO), ("evaluate", "text.tar.gz", tmp_path)):
        proc = subprocess.run(
            [sys.executable, "-m", "allennlp", command, str(tmp_path / archive_file), DEV, "--include-package", "eer_plugin"],
            capture_output=True, text=True, cwd=cwd, env=env, timeout=300,
        )
        assert proc.returncode == 1, proc.stderr[-2000:]
        lines = [line for line in proc.stderr.splitlines() if line.strip() and " - INFO - " not in line]
        assert lines == [lines[-1]] and lines[-1].startswith(f"error: {tmp_path / archive_file}: "), proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
