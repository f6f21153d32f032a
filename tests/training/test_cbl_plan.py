"""The edges of ``cbl``'s input: a config without a ``cbl`` block given to ``cbl``, a CBL config given to ``train``, and a
``cbl.step`` so small that the plan would train a model for tens of thousands of rounds. Each is one line, status 1,
before ``-s`` is created or anything in it removed (``--force``) or changed (``--recover``); through ``eer-ner``, the
Python API (``run_cbl_file`` / ``run_cbl``, ``train_model``) and, in the repository root, ``allennlp``."""

import json
import math
import os
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from eer_plugin.annotation import cbl
from eer_plugin.common.errors import SettingError, UserError

CBL_CONFIG = str(REPO / "training_configs" / "cbl_bert_all.jsonnet")
TINY_STEP = {"cbl.step": 1e-6}
#: the held run that --force must not remove and --recover must not change
HELD = {"round_0/best.th": b"weights", "cbl_state.json": b'{"rounds_done": 0}'}


def _held(directory: Path) -> Path:
    for name, data in HELD.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)
    return directory


def _files(directory: Path) -> dict:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def _eer_ner(capsys, *argv):
    """``eer-ner ARGV`` in this process: (status, the non-blank lines of stderr)."""
    from eer_plugin import cli

    try:
        status = cli.main(list(argv))
    except SystemExit as ended:
        status = ended.code
    return status, [line for line in capsys.readouterr().err.splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------------ the plan of rounds
def test_the_plan_on_generated_ratios_and_steps_is_its_rounds_or_one_line_with_a_step_that_fits():
    """Annotated ratios, targets and steps drawn over their ranges (steps log-uniform down to 1e-15, billions of
    rounds): a plan of at most MAX_ROUNDS is the schedule, rising to the target; a longer one is one line naming the
    count and the step, and its suggested step plans at most MAX_ROUNDS, within a few percent of the least that
    does. No plan is listed to be counted (a billion-round list would not end here)."""
    draw = random.Random(20261207)
    refused = 0
    for _ in range(1000):
        start, target = draw.uniform(0, 0.99), draw.uniform(1e-3, 0.999)
        step = 10 ** draw.uniform(-15, math.log10(0.99))
        settings = {**cbl.DEFAULTS, "entity_ratio": target, "step": step}
        count = cbl.round_count(start, target, step)
        if count <= cbl.MAX_ROUNDS:
            plan = cbl.round_plan(start, settings)
            assert len(plan) == count and plan[-1] == target and plan == sorted(plan)
            continue
        refused += 1
        with pytest.raises(SettingError) as raised:
            cbl.round_plan(start, settings)
        line = str(raised.value)
        said = re.fullmatch(
            rf"cbl\.step {re.escape(repr(step))} plans {count} binary rounds \(from the training data's annotated "
            rf"ratio {start:.4f} to cbl\.entity_ratio {re.escape(repr(target))}\), each training a model for 5 epochs: "
            rf"a run plans at most {cbl.MAX_ROUNDS}; give a cbl\.step of at least (\S+) \(the default is 0\.02\)",
            line,
        )
        assert said, line
        suggested = float(said.group(1))
        least = (target - start) / cbl.MAX_ROUNDS
        assert cbl.round_count(start, target, suggested) <= cbl.MAX_ROUNDS and least <= suggested <= least * 1.1
    assert 300 < refused < 950  # both sides drawn


def test_the_limit_is_exact_and_the_default_step_reaches_any_ratio_within_it():
    settings = {**cbl.DEFAULTS, "entity_ratio": 0.5}
    assert len(cbl.round_plan(0.0, {**settings, "step": 0.01})) == cbl.MAX_ROUNDS
    with pytest.raises(SettingError, match=rf"plans {cbl.MAX_ROUNDS + 1} binary rounds"):
        cbl.round_plan(0.0, {**settings, "step": 0.5 / (cbl.MAX_ROUNDS + 1)})
    assert len(cbl.round_plan(0.0, {**cbl.DEFAULTS, "entity_ratio": 0.999})) == cbl.MAX_ROUNDS
    assert cbl.round_plan(0.3, {**cbl.DEFAULTS, "step": 1e-15}) == [0.2]  # reached already: one round at the target


def test_a_tiny_step_is_one_line_before_the_serialization_directory_is_touched(tiny_env, tmp_path, capsys):
    """The line is the plan's for the training data's annotated ratio (read here on its own); ``eer-ner cbl`` says it
    and writes nothing; ``run_cbl`` with ``--force`` removes nothing and with ``--recover`` changes nothing."""
    from allennlp.common import Params

    from eer_plugin.corpus.formats import read_documents
    from eer_plugin.training.cbl_rounds import run_cbl

    ratio = cbl.annotated_ratio(read_documents(os.environ["EER_TRAIN_DATA"]))
    with pytest.raises(SettingError) as planned:
        cbl.round_plan(ratio, {**cbl.DEFAULTS, "step": 1e-6})
    status, lines = _eer_ner(capsys, "cbl", CBL_CONFIG, "-s", str(tmp_path / "new"), "-o", json.dumps(TINY_STEP))
    assert status == 1 and lines == [f"eer-ner cbl: error: {planned.value}"]
    assert not (tmp_path / "new").exists()
    params = Params.from_file(CBL_CONFIG, json.dumps(TINY_STEP))
    held = _held(tmp_path / "held")
    for options in ({"force": True}, {"recover": True}):
        with pytest.raises(SettingError) as raised:
            run_cbl(params.duplicate(), str(held), ["eer_plugin"], **options)
        assert str(raised.value) == str(planned.value) and _files(held) == HELD


# --------------------------------------------------------------------------------- a config of the other command
def test_a_config_without_a_cbl_block_is_one_line_before_the_serialization_directory_is_touched(
    tiny_env, tmp_path, capsys
):
    """``eer-ner cbl eer_short.jsonnet``: the line names the config, the packaged CBL configs and the block to add;
    nothing is created, a held run is not removed by ``--force``; the Python API raises the same line."""
    from eer_plugin.training.cbl_rounds import run_cbl_file

    line = (
        "eer_short.jsonnet has no cbl block, so it is no CBL config (cbl trains its binary relabelling rounds, then "
        "the final tagger): give a packaged CBL config (cbl_bert_all, cbl_bert_short, cbl_bert_shortest, "
        "cbl_lstm_all, cbl_lstm_short, cbl_lstm_shortest), or add to yours a top-level block "
        '"cbl": {"entity_ratio": 0.2, "step": 0.02, "clip": 0.5, "round_epochs": 5} (a key left out gets the value '
        "shown)"
    )
    status, lines = _eer_ner(capsys, "cbl", "eer_short.jsonnet", "-s", str(tmp_path / "new"))
    assert status == 1 and lines == [f"eer-ner cbl: error: {line}"] and not (tmp_path / "new").exists()
    held = _held(tmp_path / "held")
    status, lines = _eer_ner(capsys, "cbl", "eer_short.jsonnet", "-s", str(held), "--force")
    assert status == 1 and lines == [f"eer-ner cbl: error: {line}"] and _files(held) == HELD
    with pytest.raises(UserError) as raised:
        run_cbl_file("eer_short.jsonnet", str(held), recover=True)
    assert str(raised.value) == line and _files(held) == HELD


def train_line(config: str = "", command: str = "") -> str:
    """The line of a CBL config given to ``train``: ``config`` as the command named it ("": params not read from a
    file), ``command`` the config as the suggested ``eer-ner cbl`` spells it (quoted for the shell)."""
    return (
        f"{config or 'the config'} has a top-level cbl block, so it is a CBL config: its binary relabelling rounds and "
        f"final tagger are trained by eer-ner cbl {command or config or 'CONFIG'} -s DIR (allennlp cbl in the "
        "repository root), not by train; to train one tagger, give a config without a cbl block (eer_short, "
        "raw_short, ...)"
    )


#: configs as a user names them: a packaged one by name (with and without .jsonnet), a file of the checkout
NAMED = ["cbl_bert_short.jsonnet", "cbl_lstm_shortest", CBL_CONFIG]


@pytest.mark.parametrize("config", NAMED)
def test_a_cbl_config_given_to_train_is_one_line_naming_it_and_pointing_at_cbl(config, tiny_env, tmp_path, capsys):
    """``eer-ner train cbl_bert_short.jsonnet``: AllenNLP's own answer (``Extra parameters passed to TrainModel``)
    came after it had written ``config.json``, ``meta.json`` and ``out.log`` into ``-s``; now nothing is created, and
    ``--force`` / ``--recover`` leave a held run as it is, also through ``train_model``. The line names the config
    as it was given (before: "the config"), through the one check of every training."""
    from allennlp.commands.train import train_model
    from allennlp.common import Params

    status, lines = _eer_ner(capsys, "train", config, "-s", str(tmp_path / "new"))
    assert status == 1 and lines == [f"eer-ner train: error: {train_line(config)}"] and not (tmp_path / "new").exists()
    held = _held(tmp_path / "held")
    status, lines = _eer_ner(capsys, "train", config, "-s", str(held), "--force")
    assert status == 1 and lines == [f"eer-ner train: error: {train_line(config)}"] and _files(held) == HELD
    for options in ({"force": True}, {"recover": True}):
        with pytest.raises(UserError) as raised:
            train_model(Params.from_file(config), str(held), **options)
        assert str(raised.value) == train_line(config) and _files(held) == HELD
    with pytest.raises(UserError) as raised:  # params built in Python: no file to name
        train_model(Params(Params.from_file(config).as_dict()), str(held), force=True)
    assert str(raised.value) == train_line() and _files(held) == HELD


def test_a_config_name_the_shell_would_split_is_quoted_in_the_command_shown(tiny_env, tmp_path, capsys):
    config = tmp_path / "my cbl's.jsonnet"
    config.write_text(Path(CBL_CONFIG).read_text())  # its import of common.libsonnet: the packaged one
    status, lines = _eer_ner(capsys, "train", str(config), "-s", str(tmp_path / "new"))
    assert status == 1 and lines == [f"eer-ner train: error: {train_line(str(config), shlex.quote(str(config)))}"]


@pytest.mark.integration  # starts AllenNLP's own command, once per case
def test_allennlp_in_the_repository_root_says_the_same_lines(tiny_env, tmp_path):
    """``allennlp cbl`` / ``allennlp train`` where ``.allennlp_plugins`` registers the plugin: one line each, no
    ``-s``."""
    assert (REPO / ".allennlp_plugins").is_file()
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    allennlp = Path(sys.executable).parent / "allennlp"
    from eer_plugin.corpus.formats import read_documents

    rounds = cbl.round_count(cbl.annotated_ratio(read_documents(os.environ["EER_TRAIN_DATA"])), 0.2, 1e-6)
    cases = [
        (
            ["cbl", "eer_short.jsonnet"],
            "allennlp cbl: error: eer_short.jsonnet has no cbl block, so it is no CBL config",
        ),
        (
            ["cbl", CBL_CONFIG, "-o", json.dumps(TINY_STEP)],
            f"allennlp cbl: error: cbl.step 1e-06 plans {rounds} binary",
        ),
        (["train", "cbl_bert_short.jsonnet"], f"allennlp train: error: {train_line('cbl_bert_short.jsonnet')}"),
    ]
    elsewhere = tmp_path / "elsewhere"  # no .allennlp_plugins: the plugin by --include-package
    elsewhere.mkdir()
    plain = ["train", CBL_CONFIG, "--include-package", "eer_plugin"]
    for index, (argv, said, cwd) in enumerate(
        [(argv, said, REPO) for argv, said in cases]
        + [(plain, f"allennlp train: error: {train_line(CBL_CONFIG)}", elsewhere)]  # fmt: skip
    ):
        run = tmp_path / f"run{index}"
        proc = subprocess.run(
            [str(allennlp), *argv, "-s", str(run)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
        )
        lines = [line for line in proc.stderr.splitlines() if "error:" in line or "Traceback" in line]
        assert proc.returncode == 1 and len(lines) == 1 and lines[0].startswith(said), (argv, proc.stderr[-3000:])
        assert not run.exists(), argv
