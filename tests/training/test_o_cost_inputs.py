"""``eer-ner tune-o-cost`` on generated settings and models: every search setting it cannot run with is one line
before the model loads (scikit-optimize answered -1, 0, NaN, a cost range that is empty or not positive, a seed
numpy refuses with a traceback after the encoding); a model given as its serialization directory, or whose
``config.json`` the copy cannot rewrite, is handled before the search, not with a traceback after it; the tuned
archive appears before ``o_cost.json`` and an interruption while writing leaves neither."""

import itertools
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from eer_plugin.common.errors import ArchiveError

DEV = "-DOCSTART- -X- -X- O\n\nJohn NNP B-NP B-PER\nSmith NNP I-NP I-PER\nvisited VBD B-VP O\nLondon NNP B-NP B-LOC\n. . O O\n"
GOOD = {"--n-calls": "1", "--low": "1e-4", "--high": "100", "--seed": "0", "--batch-size": "8"}
BAD = {
    "--n-calls": ["0", "-1", "-99999999999999999999"],
    "--low": ["0", "-1", "nan", "inf", "-inf", "100", "1e400"],
    "--high": ["0", "-1", "nan", "inf", "1e-4", "1e-5"],
    "--seed": ["-1", str(2**32), "99999999999999999999999"],
    "--batch-size": ["0", "-1", "-99999999999999999999"],
}


def _cli(argv, capsys) -> tuple:
    from eer_plugin import cli

    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exit:  # argparse's usage error
        status = exit.code
    return status, capsys.readouterr().err


def test_search_settings_it_cannot_run_with_are_one_line_before_the_model_loads(tmp_path, capsys):
    """The archive does not exist: each error below is the setting's, reached before the archive is opened."""
    (tmp_path / "dev.txt").write_text(DEV)
    cases = [(option, value) for option, values in BAD.items() for value in values]
    for option, value in cases:
        argv = ["tune-o-cost", tmp_path / "missing.tar.gz", tmp_path / "dev.txt"]
        argv += [f"{flag}={given}" for flag, given in {**GOOD, option: value}.items()]  # =: a value may start with -
        status, err = _cli(argv, capsys)
        lines = [line for line in err.splitlines() if line.strip()]
        assert status == 1 and len(lines) == 1 and "Traceback" not in err, (option, value, err)
        assert lines[0].startswith("eer-ner tune-o-cost: error: --") and option in lines[0], (option, value, lines)
    assert sorted(os.listdir(tmp_path)) == ["dev.txt"]


def test_search_settings_at_their_bounds_are_taken():
    from eer_plugin.training.o_cost_search import check_search

    for n_calls, low, high, seed, batch_size in [(1, 1e-300, 1e300, 0, 1), (10**6, 0.5, 0.6, 2**32 - 1, 10**9)]:
        check_search(n_calls, low, high, seed, batch_size)


def _tune(archive, dev, **options):
    from eer_plugin.training.o_cost_search import tune_o_cost

    return tune_o_cost(str(archive), str(dev), n_calls=1, **options)


def _run_directory(archive: Path, directory: Path) -> Path:
    """The serialization directory the archive would have come from (config.json, best.th, vocabulary/)."""
    with tarfile.open(archive) as source:
        source.extractall(directory, filter="data")
    os.replace(directory / "weights.th", directory / "best.th")
    return directory


@pytest.mark.integration
def test_a_serialization_directory_is_tuned_into_itself(archive, tmp_path):
    from eer_plugin.runtime.archive import load_model_archive

    (tmp_path / "dev.txt").write_text(DEV)
    run = _run_directory(archive, tmp_path / "run")
    report, report_path, output = _tune(run, tmp_path / "dev.txt")
    assert Path(report_path) == run / "o_cost.json" and Path(output) == run / "model_o_cost.tar.gz"
    assert json.loads(Path(report_path).read_text())["o_cost"] == report["o_cost"]
    tuned = load_model_archive(output).model
    assert tuned.o_cost == pytest.approx(report["o_cost"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.txt", "run"]


@pytest.mark.integration
@pytest.mark.parametrize("config", [b'{"model": {"type": "eer_tagger"', "latin-1 \xe9".encode("latin-1")])
def test_a_config_the_copy_cannot_rewrite_is_refused_before_the_search(config, archive, tmp_path, monkeypatch):
    """The loader reads config.json bytes as jsonnet does; the copy with the tuned cost must rewrite it as JSON."""
    from eer_plugin.training import o_cost_search

    (tmp_path / "dev.txt").write_text(DEV)
    run = _run_directory(archive, tmp_path / "run")
    text = (run / "config.json").read_text()
    if config.startswith(b"{"):
        monkeypatch.setattr(o_cost_search.strict_json, "loads", _refusing(o_cost_search.strict_json))
    else:
        (run / "config.json").write_bytes(
            text.replace('"unused"', '"' + config.decode("latin-1") + '"').encode("latin-1")
        )
    monkeypatch.setattr(o_cost_search, "search_o_cost", _never)
    with pytest.raises(
        ArchiveError,
        match=rf"^{run}: its config.json is no UTF-8 JSON \(.*\): edited by hand\? .*; use the model.tar.gz",
    ):
        _tune(run, tmp_path / "dev.txt")
    assert sorted(p.name for p in run.iterdir()) == ["best.th", "config.json", "vocabulary"]


def _refusing(strict_json):
    def loads(text):
        raise strict_json.JsonError("expected '}'")

    return loads


def _never(*args, **kwargs):
    raise AssertionError("the search ran")


@pytest.mark.integration
@pytest.mark.parametrize("stop_at", [1, 3])
def test_an_interrupted_copy_leaves_no_archive_no_report_and_no_temporary_file(stop_at, archive, tmp_path, monkeypatch):
    (tmp_path / "model").mkdir()
    shutil.copy(archive, tmp_path / "model" / "model.tar.gz")
    (tmp_path / "dev.txt").write_text(DEV)
    calls = itertools.count(1)
    addfile = tarfile.TarFile.addfile

    def interrupted(self, *args, **kwargs):
        if self.mode == "w" and next(calls) == stop_at:
            raise KeyboardInterrupt
        return addfile(self, *args, **kwargs)

    monkeypatch.setattr(tarfile.TarFile, "addfile", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _tune(tmp_path / "model" / "model.tar.gz", tmp_path / "dev.txt")
    assert sorted(os.listdir(tmp_path / "model")) == ["model.tar.gz"]
