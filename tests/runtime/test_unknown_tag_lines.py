"""Evaluation data with a tag the model lacks, generated: a type the model never saw in the k-th of n documents of
a CoNLL file, a partially annotated document (tagged ``_`` where unannotated) at line k of JSON lines for a model
trained on complete data only. ``evaluate`` and ``tune-o-cost`` say so in one line naming the file and the line
where that document starts (``evaluate`` named the file only, after AllenNLP's two log lines ``Namespace: labels``
and ``Token: U-ORG``; ``tune-o-cost`` on the partial document ended in a ``KeyError`` traceback)."""

import json
import random

import pytest

WORDS = [("John", "B-PER"), ("Smith", "L-PER"), ("visited", "O"), ("London", "U-LOC"), (".", "O")]


def _conll(path, documents: int, odd_one: int, tag: str) -> int:
    """``documents`` CoNLL documents, ``tag`` in document ``odd_one``; returns the line of its ``-DOCSTART-``."""
    lines, start = [], 0
    for index in range(documents):
        if index == odd_one:
            start = len(lines) + 1
        lines += ["-DOCSTART- -X- -X- O", ""]
        for word, label in WORDS:
            lines.append(f"{word} NNP B-NP {tag if index == odd_one and word == 'London' else label}")
        lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return start


def _jsonl(path, documents: int, odd_one: int) -> int:
    """``documents`` complete JSON-lines documents but line ``odd_one + 1``, which is partial; returns that line."""
    lines = []
    for index in range(documents):
        line = {"id": f"d{index}", "tokens": [w for w, _ in WORDS], "spans": [[0, 2, "PER"]]}
        if index != odd_one:
            line.update(spans=[[0, 2, "PER"], [3, 4, "LOC"]], is_complete=True)
        lines.append(json.dumps(line))
    path.write_text("\n".join(lines) + "\n")
    return odd_one + 1


def _run(argv, capsys):
    from eer_plugin import cli

    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exit:  # the plugin's own subcommands (tune-o-cost) exit with their status
        status = exit.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip() and not line.lstrip().startswith(("loading", "0it"))]
    return status, lines, err


@pytest.mark.integration
@pytest.mark.parametrize("command", ["evaluate", "tune-o-cost"])
def test_a_tag_the_model_lacks_names_the_file_and_line(command, archive, tmp_path, capsys):
    rng = random.Random(command)
    for case in range(2):
        documents = rng.randint(2, 5)
        odd_one = rng.randrange(documents)
        if case == 0:
            path, line = tmp_path / f"typed-{case}.txt", None
            line = _conll(path, documents, odd_one, rng.choice(["U-ORG", "U-WEAPON"]))
            expected = "is not known to the model"
        else:
            path = tmp_path / f"partial-{case}.jsonl"
            line = _jsonl(path, documents, odd_one)
            expected = "a partially annotated document (not marked is_complete"
        argv = [command, archive, path] + (
            ["--n-calls", "1", "--output-archive", tmp_path / "o.tar.gz"] if command == "tune-o-cost" else []
        )
        status, lines, err = _run(argv, capsys)
        assert status == 1 and "Traceback" not in err, err[-3000:]
        assert (
            len(lines) == 1
            and lines[0].startswith(f"eer-ner {command}: error: {path}:{line}: ")
            and expected in lines[0]
        ), (
            lines,
            line,
        )
    assert not (tmp_path / "o.tar.gz").exists()
