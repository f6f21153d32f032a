"""One form for every command's error line, argparse's: the command as argparse names it in its usage errors, then
``error: <message>`` (``eer-ner eer-split: error: data.jsonl: no such file ...``, beside argparse's own ``eer-ner
eer-split: error: unrecognized arguments: --bogus``), for every command the registry defines and AllenNLP's
``train``, ``evaluate`` and ``predict``, which eer-ner wraps. A script that runs several commands can tell from the
line alone which one failed."""

import sys

import pytest
from conftest import eer_ner

from eer_plugin.commands import subcommand

subcommand.define_all()  # every command module and the plugins' (eer-benchmark, eer-records, serve)

#: AllenNLP's model commands, wrapped by eer-ner (commands/train.py, predict.py, evaluate_checks.py)
ALLENNLP_COMMANDS = ["train", "evaluate", "predict"]
#: every command of the registry (and AllenNLP's) -> the arguments of an input error, run in an empty directory
#: but for ``records.jsonl`` (a records file that is no JSON)
BAD_INPUTS = {
    "cbl": ["missing.jsonnet", "-s", "run"],
    "eer-benchmark": ["missing.yaml", "-o", "bench"],
    "eer-dictionary": ["missing.jsonl", "out.jsonl", "--dictionary", "names.tsv"],
    "eer-estimate-ratio": ["missing.txt"],
    "eer-export": ["doccano", "missing.jsonl", "out.jsonl"],
    "eer-export-model": ["missing.tar.gz", "exported"],
    "eer-import": ["doccano", "missing.jsonl", "out.jsonl"],
    "eer-inspect": ["missing.txt", "--encoder", "none"],
    "eer-merge": ["missing.shards.json", "out.jsonl", "part0.jsonl"],
    "eer-records": ["restore", "records.jsonl", "restored"],
    "eer-shard": ["missing.jsonl", "shards", "--shards", "2"],
    "eer-simulate": ["ee", "missing.txt", "out.jsonl"],
    "eer-split": ["missing.jsonl", "train.jsonl", "dev.jsonl"],
    # without the serve extra: the extra's line; with it, --max-words 0, refused before a model loads
    "serve": ["missing.tar.gz", "--max-words", "0", "--work-dir", "work"],
    "tune-o-cost": ["missing.tar.gz", "missing.txt"],
    "train": ["missing.jsonnet", "-s", "run"],
    "evaluate": ["missing.tar.gz", "missing.txt"],
    "predict": ["missing.tar.gz", "missing.jsonl"],
}
#: commands left out: eer-settings takes no argument and reads no file; it lists the settings, showing an EER_*
#: value it cannot use as set rather than refusing it, so no input of it is an error
WITHOUT_BAD_INPUT = {"eer-settings"}
COMMANDS = [*subcommand.descriptions(), *ALLENNLP_COMMANDS]
CHECKED = sorted(set(COMMANDS) - WITHOUT_BAD_INPUT)


def _workplace(tmp_path):
    (tmp_path / "records.jsonl").write_text("not json\n", encoding="utf-8")
    return tmp_path


def test_every_command_has_its_input_error_here():
    """A command added to the registry gets an input error here (or a reason to be left out)."""
    assert set(BAD_INPUTS) == set(COMMANDS) - WITHOUT_BAD_INPUT and WITHOUT_BAD_INPUT <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(set(subcommand.descriptions()) - WITHOUT_BAD_INPUT))
def test_main_names_the_prog_it_was_given(name, tmp_path, monkeypatch, capsys):
    """``main(argv, prog)`` (``python -m``, a script) names its ``prog``, as argparse's usage errors there do."""
    monkeypatch.chdir(_workplace(tmp_path))
    monkeypatch.delenv("EER_TRACEBACK", raising=False)
    try:
        status = subcommand.main_of(name)(BAD_INPUTS[name], prog=f"tool {name}")
    except SystemExit as exited:
        status = exited.code
    err = capsys.readouterr().err.strip()
    assert status == 1 and len(err.splitlines()) == 1 and err.startswith(f"tool {name}: error: "), err[-3000:]


@pytest.mark.integration  # starts eer-ner once per command (about 10 s for one that loads AllenNLP)
@pytest.mark.parametrize("name", CHECKED)
def test_an_input_error_is_one_line_naming_the_command(name, tmp_path):
    done = eer_ner(name, *BAD_INPUTS[name], cwd=_workplace(tmp_path), capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert lines[-1].startswith(f"eer-ner {name}: error: ") and len(lines) == 1, done.stderr[-3000:]


@pytest.mark.integration  # a light command: no AllenNLP (1 s)
def test_python_m_names_the_module_it_ran(tmp_path):
    import subprocess

    module = "eer_plugin.commands.simulate"
    done = subprocess.run(
        [sys.executable, "-m", module, *BAD_INPUTS["eer-simulate"]], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 1 and done.stderr.startswith(f"python -m {module}: error: missing.txt: "), done.stderr
