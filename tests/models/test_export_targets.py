"""``eer-export-model`` never replaces what the model needs, even with ``--force``: generated targets inside the
serialization directory given as the model (its ``vocabulary/`` was replaced by the export, and the run no longer
loaded), the directory itself and its parent, the encoder directory the model's config names (replaced by the
export, the model no longer loaded) and the encoder's parent. Each is one line, and the model and the encoder
are left byte for byte; a new directory inside the run is still an export target."""

import hashlib
import os
import tarfile
from pathlib import Path

import pytest


def _snapshot(*roots: Path) -> dict:
    return {
        str(path): hashlib.sha256(path.read_bytes()).hexdigest()
        for root in roots
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _cli(argv, capsys):
    from eer_plugin import cli

    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exit:  # the subcommand's exit status
        status = exit.code
    err = capsys.readouterr().err
    return status, [line for line in err.splitlines() if line.strip()], err


@pytest.fixture
def run(archive, tiny_encoder, tmp_path):
    directory = tmp_path / "run"
    with tarfile.open(archive) as source:
        source.extractall(directory, filter="data")
    os.replace(directory / "weights.th", directory / "best.th")
    return directory


def test_an_export_never_replaces_a_part_of_the_model_or_its_encoder(run, tiny_encoder, tmp_path, capsys):
    encoder = Path(tiny_encoder)
    before = _snapshot(run, encoder)
    targets = [run / "vocabulary", run, run.parent, encoder, encoder.parent]
    for model in (run, run / "model.tar.gz"):
        for target in targets:
            if model.name == "model.tar.gz" and target == run / "vocabulary":
                continue  # the archive's own directory: "holds the model being exported"
            status, lines, err = _cli(["eer-export-model", model, target, "--force"], capsys)
            assert status == 1 and len(lines) == 1 and "Traceback" not in err, (model, target, err[-2000:])
            assert lines[0].startswith(f"eer-ner eer-export-model: error: {target}: ") and "choose a" in lines[0], lines
            assert _snapshot(run, encoder) == before, (model, target)
        if model == run:  # then the archive beside it, as train leaves it
            with tarfile.open(run / "model.tar.gz", "w:gz") as packed:
                for name in ("config.json", "vocabulary"):
                    packed.add(run / name, arcname=name)
                packed.add(run / "best.th", arcname="weights.th")
            before = _snapshot(run, encoder)


def test_a_new_directory_inside_the_run_is_an_export(run, capsys):
    from eer_plugin.api import Tagger

    status, lines, err = _cli(["eer-export-model", run, run / "exported"], capsys)
    assert status == 0, err[-2000:]
    assert Tagger.load(run / "exported").entity_types == Tagger.load(run).entity_types == ["LOC", "PER"]
