"""``eer-ner`` and ``eer-ner --help``: the commands by purpose, printed without importing AllenNLP or torch, and
in step with what eer-ner registers: every registered subcommand named once, each of eer-ner's own with the
description its ``--help`` shows."""

import os
import subprocess
import sys
from pathlib import Path

from eer_plugin.commands.overview import ALLENNLP_COMMANDS, GROUPS, WRAPPED, commands, overview


def test_the_overview_names_every_registered_command_once_with_its_own_description():
    from allennlp.commands.subcommand import Subcommand

    import eer_plugin.allennlp_plugin  # noqa: F401  (registers every command, the plugins' too)

    registered = set(Subcommand.list_available())
    described = commands()
    grouped = [name for _, names in GROUPS for name in names]
    assert len(grouped) == len(set(grouped)) and not set(grouped) & set(ALLENNLP_COMMANDS)
    assert set(described) | set(ALLENNLP_COMMANDS) == registered, set(described) ^ (registered - set(ALLENNLP_COMMANDS))
    assert set(grouped) == set(described)  # no command of eer-ner falls to "More"
    for name, description in described.items():
        if name not in WRAPPED:
            assert Subcommand.by_name(name).__doc__ == description, name
    text = overview(100)
    for name in registered:
        assert text.count(f"  {name} ") + text.count(f" {name},") + text.count(f"  {name}\n") >= 1, name
    assert all(len(line) <= 100 for line in text.splitlines())


def test_eer_ner_alone_or_with_help_prints_it_without_allennlp_or_torch(tmp_path):
    env = {**os.environ, "COLUMNS": "100"}
    for argv in ([], ["--help"], ["-h"]):
        shown = subprocess.run(
            [str(Path(sys.executable).parent / "eer-ner"), *argv], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        assert shown.returncode == 0 and shown.stdout == overview(100) + "\n" and shown.stderr == "", shown.stderr
    code = "import sys; from eer_plugin.cli import main; main(['--help']); print(sorted({'allennlp', 'torch'} & set(sys.modules)))"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert shown.stdout.splitlines()[-1] == "[]", shown.stderr
