"""``eer-ner``'s commands that need no AllenNLP (``cli.LIGHT_COMMANDS``) run without importing it or torch: the
same parser, help and result as through AllenNLP's command line, in a fraction of the start-up time (0.36 s
against 8.6 s for ``eer-ner eer-dictionary --help`` beside a training)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from eer_plugin import cli
from eer_plugin.commands import subcommand

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _without_include_package(text: str) -> str:
    """AllenNLP's parser adds ``--include-package`` to every subcommand (its usage line, and the option with its
    help line); the light path sends a line with it to AllenNLP, so its own help leaves it out."""
    text = re.sub(r"\n *\[--include-package INCLUDE_PACKAGE\]", "", text)
    return re.sub(r"\n  --include-package INCLUDE_PACKAGE\n *additional packages to include", "", text).rstrip("\n")


@pytest.mark.parametrize("name", sorted(cli.LIGHT_COMMANDS))
def test_the_light_path_has_the_allennlp_commands_parser(name, capsys, monkeypatch):
    import importlib

    from allennlp.commands import ArgumentParserWithDefaults
    from allennlp.commands.subcommand import Subcommand

    import eer_plugin.allennlp_plugin  # noqa: F401  (registers the plugin's subcommands)

    monkeypatch.setenv("COLUMNS", "100")
    importlib.import_module(cli.LIGHT_COMMANDS[name])
    with pytest.raises(SystemExit) as exited:
        subcommand.main_of(name)(["--help"], prog=f"eer-ner {name}")
    assert exited.value.code == 0
    light = capsys.readouterr().out
    parsers = ArgumentParserWithDefaults(prog="eer-ner").add_subparsers()
    full = Subcommand.by_name(name)().add_subparser(parsers).format_help()
    assert _without_include_package(full) == light.rstrip("\n")
    assert "--include-package" not in _without_include_package(full)


SCRIPT = """
import json, sys
from eer_plugin.cli import LIGHT_COMMANDS, main
for name in sorted(LIGHT_COMMANDS):
    try:
        main([name, "--help"])
    except SystemExit as exited:
        assert exited.code == 0, (name, exited.code)
statuses = [main(["eer-dictionary", sys.argv[1], sys.argv[2], "--dictionary", sys.argv[3]])]
try:  # the documents given as the dictionary: one error line, status 1
    main(["eer-dictionary", sys.argv[1], sys.argv[2] + ".bad", "--dictionary", sys.argv[1]])
except SystemExit as exited:
    statuses.append(exited.code)
print(json.dumps({"statuses": statuses, "imported": [m for m in ("allennlp", "torch", "transformers") if m in sys.modules]}))
"""


@pytest.mark.integration
def test_light_commands_import_neither_allennlp_nor_torch(tmp_path):
    """Every light command's help, a labelling run and a bad dictionary's error, in a fresh interpreter: nothing
    heavy imported, the output as through AllenNLP's path (``--include-package`` takes that one)."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        json.dumps({"id": "a", "text": "Angela Merkel visited Siemens in Berlin."}) + "\n", encoding="utf-8"
    )
    names = tmp_path / "names.tsv"
    names.write_text("Angela Merkel\tPER\nSiemens\tORG\n", encoding="utf-8")
    light, full = tmp_path / "light.jsonl", tmp_path / "full.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(docs), str(light), str(names)], capture_output=True, text=True, check=True
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"statuses": [0, 1], "imported": []}, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("eer-ner eer-dictionary: error: "), done.stderr
    subprocess.run(
        [sys.executable, "-m", "eer_plugin.cli", "eer-dictionary", str(docs), str(full), "--dictionary", str(names)]
        + ["--include-package", "eer_plugin"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert light.read_text(encoding="utf-8") == full.read_text(encoding="utf-8")
    spans = json.loads(light.read_text(encoding="utf-8"))["spans"]
    assert spans == [[0, 2, "PER"], [3, 4, "ORG"]]
