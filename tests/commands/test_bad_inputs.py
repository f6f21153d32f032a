"""Issue 32: whatever a careless user types, every command gives either correct output or a one-line
error naming the file, line and fix; never a traceback; never a changed input or previous output.

Commands that read user files: ``eer-simulate``, ``eer-import``, ``eer-export``, ``eer-estimate-ratio``, ``predict``
(``tune-o-cost``'s checks are here too; ``evaluate``'s are in test_reliability.py). Generated cases use
hypothesis: a few examples in the default run, larger sweeps under ``integration``.
"""

import argparse
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eer_plugin.commands import eer_export, eer_import, estimate_ratio, simulate, split
from eer_plugin.corpus.formats import read_jsonl

GOLD = FIXTURES / "conll2003_tiny.txt"
DOCCANO = FIXTURES / "import" / "doccano.jsonl"
DOCCANO_IMPORTED = FIXTURES / "partial_tiny.jsonl"  # partial JSON lines, as eer-import writes them
QUICK = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
SWEEP = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


def snapshot(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def one_line_error(err: str, *names: str) -> None:
    """``err`` is one ``NAME: error:`` line (the command's name, as argparse's usage errors; plus optional
    ``warning:`` lines) naming each of ``names``, no traceback."""
    assert "Traceback" not in err and "error:" in err, err
    errors = [line for line in err.splitlines() if re.match(r"[\w-]+: error: ", line)]
    assert len(errors) == 1, err
    assert all(name in errors[0] for name in names), err


def run(main, argv, capsys) -> tuple:
    """``(exit status, stderr)`` of a command's ``main`` run in this process."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exit:
        status = exit.code
    return status, capsys.readouterr().err


# ------------------------------------------------------------------------------------ same-path outputs
@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_simulate_never_writes_over_its_gold_input(spelling, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(GOLD, "gold.txt")
    output = {"same": "gold.txt", "dot": "./gold.txt"}.get(spelling, "out.txt")
    if spelling == "symlink":
        os.symlink("gold.txt", "out.txt")
    if spelling == "hardlink":
        os.link("gold.txt", "out.txt")
    before = snapshot(tmp_path)
    status, err = run(simulate.main, ["ee", "gold.txt", output, "--budget", "5"], capsys)
    assert status == 1 and snapshot(tmp_path) == before
    one_line_error(err, output, "gold.txt", "same file")


def test_import_refuses_output_equal_to_input_or_to_complete_output(tmp_path, capsys):
    shutil.copy(DOCCANO, tmp_path / "d.jsonl")
    (tmp_path / "ids.txt").write_text("1\n3\n")
    before = snapshot(tmp_path)
    for argv in (
        ["d.jsonl", "d.jsonl"],
        ["d.jsonl", "out.jsonl", "--complete-output", "out.jsonl"],
        ["d.jsonl", "out.jsonl", "--complete-ids", "ids.txt", "--report", "ids.txt"],
    ):
        status, err = run(
            eer_import.main, ["doccano", *[tmp_path / a if a.endswith((".jsonl", ".txt")) else a for a in argv]], capsys
        )
        assert status == 1 and snapshot(tmp_path) == before, argv
        one_line_error(err, "same file")


@pytest.mark.parametrize(
    "outputs", [["d.jsonl", "dev.jsonl"], ["train.jsonl", "./d.jsonl"], ["same.jsonl", "same.jsonl"]]
)
def test_split_refuses_an_output_that_is_its_data_or_the_other_output(outputs, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(DOCCANO_IMPORTED, "d.jsonl")
    before = snapshot(tmp_path)
    status, err = run(split.main, ["d.jsonl", *outputs], capsys)
    assert status == 1 and snapshot(tmp_path) == before
    one_line_error(err, "same file")


def test_import_keeps_complete_documents_apart(tmp_path, capsys):
    status, _ = run(
        eer_import.main,
        [
            "doccano",
            DOCCANO,
            tmp_path / "p.jsonl",
            "--complete-ids",
            FIXTURES / "import" / "doccano_complete_ids.txt",
            "--complete-output",
            tmp_path / "c.jsonl",
        ],
        capsys,
    )
    assert status == 0
    assert [d.id for d in read_jsonl(tmp_path / "c.jsonl")] == ["1", "3", "5"] and len(
        read_jsonl(tmp_path / "p.jsonl")
    ) == 3


def test_estimate_ratio_refuses_output_equal_to_its_data(tmp_path, capsys, tiny_encoder):
    shutil.copy(FIXTURES / "conll2003_tiny_dev.txt", tmp_path / "dev.txt")
    before = snapshot(tmp_path)
    status, err = run(
        estimate_ratio.main, [tmp_path / "dev.txt", "--encoder", tiny_encoder, "--output", tmp_path / "dev.txt"], capsys
    )
    assert status == 1 and snapshot(tmp_path) == before
    one_line_error(err, "dev.txt", "same file as DATA")


# ------------------------------------------------------------------------------------ lone surrogates, control characters
SURROGATE_DOC = (
    '{"id": "x", "tokens": ["Bad\\ud800", "\\u0000", "Paris"], "spans": [[2, 3, "LOC"]], "is_complete": true}\n'
)


def test_simulate_and_estimate_ratio_normalise_surrogates(tmp_path, capsys, tiny_encoder):
    (tmp_path / "in.jsonl").write_text(SURROGATE_DOC)
    status, err = run(simulate.main, ["gold", tmp_path / "in.jsonl", tmp_path / "out.jsonl"], capsys)
    assert status == 0, err
    assert read_jsonl(tmp_path / "out.jsonl")[0].tokens == ["Bad\ufffd", "\ufffd", "Paris"]
    status, err = run(
        estimate_ratio.main,
        [tmp_path / "in.jsonl", "--encoder", tiny_encoder, "--resamples", "20", "--output", tmp_path / "ratio.json"],
        capsys,
    )
    assert (
        status == 0 and "Traceback" not in err and json.loads((tmp_path / "ratio.json").read_text())["documents"] == 1
    )


@pytest.mark.parametrize(
    "line",
    [
        {"text": "Bad \ud800 Paris \u0007 here", "label": [[6, 11, "LOC"]]},
        {"text": "Paris", "label": [[0, 5, "LOC\ud800"]]},
    ],
)
def test_import_normalises_surrogates_and_keeps_offsets(line, tmp_path, capsys):
    (tmp_path / "in.jsonl").write_text(json.dumps(line) + "\n")  # json.dumps writes the surrogate as \ud800
    status, err = run(eer_import.main, ["doccano", tmp_path / "in.jsonl", tmp_path / "out.jsonl"], capsys)
    assert status == 0, err
    doc = read_jsonl(tmp_path / "out.jsonl")[0]
    assert [doc.tokens[s:e] for s, e, _ in doc.spans] == [["Paris"]]
    assert all("\ud800" not in t for t in doc.tokens + [doc.spans[0][2]])


# ------------------------------------------------------------------------------------ generated inputs
ALPHABET = st.characters(codec=None, exclude_categories=())
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.floats(allow_nan=False) | st.text(ALPHABET, max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["id", "text", "tokens", "spans", "label", "sentence_ends", "is_complete", "negative_spans", "x"]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)
LINES = st.one_of(
    JSON_VALUES.map(lambda v: json.dumps(v, ensure_ascii=True)),  # \ud800 and \u0000 escapes included
    st.text(ALPHABET.filter(lambda c: c not in "\r\n"), max_size=30),  # not JSON, raw control characters
)
FILES = st.one_of(
    st.lists(LINES, max_size=6).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass")),
    st.binary(max_size=60),  # not UTF-8
)


def check_generated(
    main, argv, data: bytes, tmp_path: Path, capsys, output: str = "out.jsonl", validate=read_jsonl
) -> None:
    """One generated file through a command: correct output or a one-line error naming the file; input untouched."""
    for leftover in tmp_path.iterdir():
        leftover.unlink() if leftover.is_file() else shutil.rmtree(leftover)
    source = tmp_path / "in.jsonl"
    source.write_bytes(data)
    status, err = run(
        main, [{"IN": source, "OUT": tmp_path / output, "DEV": tmp_path / "dev.jsonl"}.get(a, a) for a in argv], capsys
    )
    assert source.read_bytes() == data
    if status == 0:
        assert "Traceback" not in err
        validate(tmp_path / output)  # whatever was written is valid
    else:
        one_line_error(err, str(source))
        assert not (tmp_path / output).exists()


def _sweep(main, argv, tmp_path_factory, capsys, examples, **options):
    tmp_path = tmp_path_factory.mktemp("generated")

    @examples
    @given(FILES)
    def check(data):
        check_generated(main, argv, data, tmp_path, capsys, **options)

    check()


COMMANDS = {
    "simulate-gold": (simulate.main, ["gold", "IN", "OUT"]),
    "simulate-ee": (simulate.main, ["ee", "IN", "OUT", "--budget", "2", "--format", "jsonl"]),
    "import-doccano": (eer_import.main, ["doccano", "IN", "OUT"]),
    "import-prodigy": (eer_import.main, ["prodigy", "IN", "OUT"]),
    "split": (split.main, ["IN", "OUT", "DEV", "--dev-fraction", "0.5"]),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_generated_files_give_output_or_one_line_errors(command, tmp_path_factory, capsys):
    main, argv = COMMANDS[command]
    _sweep(main, argv, tmp_path_factory, capsys, QUICK)


def test_generated_files_through_estimate_ratio(tmp_path_factory, capsys, tiny_encoder):
    argv = ["IN", "--encoder", tiny_encoder, "--resamples", "20", "--output", "OUT"]
    _sweep(
        estimate_ratio.main,
        argv,
        tmp_path_factory,
        capsys,
        QUICK,
        output="ratio.json",
        validate=lambda path: json.loads(path.read_text()),
    )


@pytest.mark.parametrize("format", ["prodigy", "label-studio"])
def test_generated_predictions_through_export(format, tmp_path_factory, capsys):
    _sweep(
        eer_export.main,
        [format, "IN", "OUT"],
        tmp_path_factory,
        capsys,
        QUICK,
        output="out.json",
        validate=lambda path: json.loads(path.read_text()) if format == "label-studio" else read_jsonl_values(path),
    )


def read_jsonl_values(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.integration
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_generated_files_sweep(command, tmp_path_factory, capsys):
    main, argv = COMMANDS[command]
    _sweep(main, argv, tmp_path_factory, capsys, SWEEP)


@pytest.mark.parametrize("output", ["archive", "dev"])
def test_tune_o_cost_refuses_an_output_archive_that_is_an_input(output, tmp_path):
    from eer_plugin.commands.tune_o_cost import tune_o_cost
    from eer_plugin.common.errors import UserError

    (tmp_path / "model.tar.gz").write_bytes(b"the model")  # checked before the archive is opened
    shutil.copy(FIXTURES / "conll2003_tiny_dev.txt", tmp_path / "dev.txt")
    before = snapshot(tmp_path)
    args = argparse.Namespace(
        archive_file=str(tmp_path / "model.tar.gz"),
        dev_file=str(tmp_path / "dev.txt"),
        test_file=None,
        n_calls=3,
        low=1e-4,
        high=1e2,
        seed=0,
        batch_size=8,
        cuda_device=-1,
        output_archive=str(tmp_path / ("model.tar.gz" if output == "archive" else "dev.txt")),
    )
    with pytest.raises(UserError, match="is the same file as"):
        tune_o_cost(args)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("output", ["--output-file", "--predictions-output-file"])
def test_evaluate_refuses_an_output_that_is_its_data(output, tmp_path, monkeypatch):
    from allennlp.commands import evaluate

    from eer_plugin.common.errors import UserError

    monkeypatch.setattr(evaluate, "evaluate_from_archive", lambda **kwargs: pytest.fail("the model was loaded"))
    shutil.copy(FIXTURES / "conll2003_tiny_dev.txt", tmp_path / "test.txt")
    (tmp_path / "model.tar.gz").write_bytes(b"the model")
    before = snapshot(tmp_path)
    args = argparse.Namespace(
        archive_file=str(tmp_path / "model.tar.gz"),
        input_file=f"{tmp_path}/other.txt,{tmp_path}/test.txt",
        weights_file=None,
        output_file=None,
        predictions_output_file=None,
    )
    setattr(args, output.lstrip("-").replace("-", "_"), f"{tmp_path}/m1.json,{tmp_path}/./test.txt")
    with pytest.raises(UserError, match=f"{output} .*test.txt is the same file as the evaluation data"):
        evaluate.evaluate_from_args(args)
    assert snapshot(tmp_path) == before


def _evaluate_args(tmp_path: Path) -> argparse.Namespace:
    (tmp_path / "model.tar.gz").write_bytes(b"the model")
    shutil.copy(FIXTURES / "conll2003_tiny_dev.txt", tmp_path / "test.txt")
    return argparse.Namespace(
        archive_file=str(tmp_path / "model.tar.gz"),
        input_file=str(tmp_path / "test.txt"),
        weights_file=None,
        output_file=str(tmp_path / "metrics.json"),
        predictions_output_file=str(tmp_path / "predictions.jsonl"),
        auto_names="NONE",
        batch_size=None,
        overrides="",
        cuda_device=-1,
        embedding_sources_mapping=None,
        extend_vocab=False,
        file_friendly_logging=False,
        batch_weight_key=None,
    )


def _writes_then(fail: bool):
    """An ``evaluate_from_archive`` that writes both outputs as AllenNLP does, then fails or returns."""

    def evaluate_from_archive(metrics_output_file, predictions_output_file, **kwargs):
        Path(predictions_output_file).write_text('{"tags": ["O"]}\n')
        if fail:
            raise KeyboardInterrupt  # Ctrl-C half-way
        Path(metrics_output_file).write_text('{"f1": 0.5}')
        return {"f1": 0.5}

    return evaluate_from_archive


def test_evaluate_outputs_replace_the_old_ones_only_when_it_finishes(tmp_path, monkeypatch):
    """An interrupted ``evaluate`` leaves the earlier metrics and predictions as they were and no temporary
    file; a finished one replaces them whole."""
    from allennlp.commands import evaluate

    args = _evaluate_args(tmp_path)
    (tmp_path / "metrics.json").write_text('{"f1": 0.9}')
    (tmp_path / "predictions.jsonl").write_text("the earlier predictions\n")
    before = snapshot(tmp_path)
    monkeypatch.setattr(evaluate, "evaluate_from_archive", _writes_then(fail=True))
    with pytest.raises(KeyboardInterrupt):
        evaluate.evaluate_from_args(args)
    assert snapshot(tmp_path) == before and sorted(os.listdir(tmp_path)) == sorted(before)

    monkeypatch.setattr(evaluate, "evaluate_from_archive", _writes_then(fail=False))
    assert evaluate.evaluate_from_args(args) == {"f1": 0.5}
    assert (tmp_path / "metrics.json").read_text() == '{"f1": 0.5}'
    assert (tmp_path / "predictions.jsonl").read_text() == '{"tags": ["O"]}\n'
    assert sorted(os.listdir(tmp_path)) == sorted(before)
