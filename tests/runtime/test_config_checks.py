"""A training config is checked where it is read: ``Params.from_file`` of a training config (``.jsonnet`` or JSON)
(``eer_plugin/runtime/config_checks.py``). Plain ``allennlp train --include-package eer_plugin`` outside the repository
(AllenNLP's own ``train``: it builds its parser before it imports the plugin, so ``eer-ner train``'s subcommand is not
the one that runs), ``eer-ner train`` and ``cbl`` stop with the same one line naming the key, before ``-s`` is
created; AllenNLP's plain ``train`` ended with ``TypeError: Expected entity_ratio to be numeric.`` and an ``-s`` made.
The bad values are generated from the rules (:data:`RULES`, the edges of their ranges: ``tests/setting_edges.py``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO
from setting_edges import NO_NUMBER, outside

from eer_plugin.common.errors import SettingError, UserError
from eer_plugin.runtime.config_checks import _ABSENT, _arguments, _value_at
from eer_plugin.runtime.setting_values import RULES

#: the configs whose classes take every setting of RULES (the span model's hidden_dim, max_width, ...: sns_short)
CONFIGS = ("eer_short.jsonnet", "sns_short.jsonnet")


def refused(rule) -> list:
    """The values ``rule`` refuses, generated from it: just outside each end of its range, numbers no computation can
    use and other JSON types (``setting_edges.outside``); for a rule without a range (a set of choices, a flag, a
    name), a string no set holds and every other JSON type."""
    candidates = outside(rule.bounds) if rule.bounds is not None else ["no-such-value", 7, *NO_NUMBER]
    return [value for value in candidates if not rule.takes(value)]


def _path(config: dict, key: str) -> list:
    """The dotted parts of the RULES ``key`` in ``config``: ``callbacks[eer_ratio_init]`` -> ``callbacks``, the index
    of that callback."""
    parts, node = [], config
    for part in key.split("."):
        name, _, of_type = part.rstrip("]").partition("[")
        parts.append(name)
        node = node.get(name) if isinstance(node, dict) else None
        if of_type:
            index = next(
                i for i, item in enumerate(node or []) if isinstance(item, dict) and item.get("type") == of_type
            )
            parts.append(str(index))
            node = node[index]
    return parts


def overrides_for(config: dict, key: str, value) -> dict:
    """The ``-o`` that sets the RULES ``key`` to ``value`` in ``config``: dotted down to the deepest object the config
    has on the way, the rest an object of its own (``validation_data_loader``, which the configs leave out)."""
    parts = _path(config, key)
    depth = len(parts) - 1
    while depth > 0 and not isinstance(_value_at(config, ".".join(parts[:depth])), dict):
        depth -= 1
    nested = value
    for name in reversed(parts[depth + 1 :]):
        nested = {name: nested}
    return {".".join(parts[: depth + 1]): nested}


def config_for(configs: dict, key: str) -> str:
    """The config that holds ``key``, or whose class of its part takes it, else the EER one."""
    from allennlp.data import DatasetReader
    from allennlp.models import Model

    for name, config in configs.items():
        if _value_at(config, key) is not _ABSENT:
            return name
    part, _, argument = key.partition(".")
    for name, config in configs.items():
        registrable = {"model": Model, "dataset_reader": DatasetReader}.get(part)
        if registrable is not None and argument in _arguments(registrable, config[part])[1]:
            return name
    return CONFIGS[0]


@pytest.fixture
def training_env(tiny_env, monkeypatch):
    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.delenv("EER_DEV_DATA", raising=False)
    monkeypatch.delenv("EER_TEST_DATA", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tiny_env


def test_every_rule_is_checked_where_a_training_config_is_read(training_env, configs_evaluated_once):
    """Every key of RULES, each value its rule refuses: ``Params.from_file`` raises the rule's one line (what any
    command reading the config prints after ``error:``); the configs as given pass."""
    from allennlp.common import Params

    configs = {name: Params.from_file(name).as_dict(quiet=True) for name in CONFIGS}  # as given: no error
    checked = 0
    for key, rule in RULES.items():
        name = config_for(configs, key)
        values = refused(rule)
        assert values, key
        for value in values:
            with pytest.raises(SettingError) as raised:
                Params.from_file(name, overrides_for(configs[name], key, value))
            assert str(raised.value) == rule.problem(key, value), (key, value)
            checked += 1
    assert checked > 10 * len(RULES) // 2


def test_misspelt_keys_and_wrong_types_are_checked_where_a_training_config_is_read(
    training_env, configs_evaluated_once
):
    from allennlp.common import Params

    with pytest.raises(UserError, match=r"^model\.entity_ration is not a setting of the model 'eer_tagger' \(did you mean model\.entity_ratio\?\)"):  # fmt: skip
        Params.from_file("eer_short.jsonnet", {"model.entity_ration": 0.1})
    with pytest.raises(UserError, match=r"^dataset_reader\.max_length must be an integer, got 'x'"):
        Params.from_file("eer_short.jsonnet", {"dataset_reader.max_length": "x"})


def test_a_models_config_is_not_checked_as_a_training_config(tmp_path):
    """A model's ``config.json`` (beside its vocabulary) is checked by the archive checks
    (``runtime/archive_contents.py``) when the model is built, not as a training config: its data may be long gone."""
    from allennlp.common import Params

    (tmp_path / "vocabulary").mkdir()
    config = {"model": {"type": "eer_tagger", "entity_ratio": "x"}, "train_data_path": str(tmp_path / "gone.jsonl")}
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert Params.from_file(str(tmp_path / "config.json")).as_dict() == config


def test_a_training_config_written_as_json_is_checked_the_same(training_env, tmp_path, capsys):
    """A training config in plain JSON (the EER config evaluated and saved, as a user may keep one): the same one
    line from ``Params.from_file`` and from ``eer-ner train``, before ``-s``; a file named ``config.json`` without a
    model beside it is a training config too."""
    from allennlp.common import Params

    from eer_plugin import cli

    evaluated = Params.from_file("eer_short.jsonnet").as_dict(quiet=True)
    expected = RULES["model.entity_ratio"].problem("model.entity_ratio", "x")
    for name in ("eer_short.json", "config.json"):
        config = tmp_path / name
        config.write_text(json.dumps(evaluated))
        assert Params.from_file(str(config)).as_dict(quiet=True) == evaluated  # as given: no error
        with pytest.raises(SettingError) as raised:
            Params.from_file(str(config), {"model.entity_ratio": "x"})
        assert str(raised.value) == expected
        config.write_text(json.dumps({**evaluated, "model": {**evaluated["model"], "entity_ration": 0.1}}))
        with pytest.raises(UserError, match=r"^model\.entity_ration is not a setting of the model 'eer_tagger'"):
            Params.from_file(str(config))
        run = tmp_path / f"run-{name}"
        try:
            status = cli.main(["train", str(config), "-s", str(run)])
        except SystemExit as ended:  # the plugin's own subcommands exit with their status
            status = ended.code
        err = capsys.readouterr().err
        assert status == 1 and "eer-ner train: error: model.entity_ration is not a setting" in err, err[-2000:]
        assert not run.exists()


def test_cbl_and_eer_ner_train_give_the_line_before_making_their_directory(training_env, tmp_path, capsys):
    from eer_plugin import cli

    expected = RULES["model.entity_ratio"].problem("model.entity_ratio", "x")
    configs = REPO / "eer_plugin" / "training_configs"
    for command, config in (("train", "eer_short.jsonnet"), ("cbl", "cbl_bert_shortest.jsonnet")):
        run = tmp_path / command
        try:
            status = cli.main([command, str(configs / config), "-s", str(run), "-o", '{"model.entity_ratio": "x"}'])
        except SystemExit as ended:  # the plugin's own subcommands exit with their status
            status = ended.code
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if "error:" in line or "Traceback" in line]
        assert status == 1 and lines == [f"eer-ner {command}: error: {expected}"], err[-3000:]
        assert not run.exists()


def _as_typed(value) -> bool:
    """Whether ``value`` reaches the config as it is when given in an ``-o`` text: jsonnet writes a whole float as an
    int (``2.0`` -> ``2``), and JSON has no NaN, infinities or numbers beyond a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return value == value and abs(value) < 1e300 and not (isinstance(value, float) and value.is_integer())


def _plain_train_cases(config: dict) -> list:
    """``(-o, the line after error:)`` for the EER ``config``: the issue's value; for each top-level part of RULES
    (the reader, the model, the trainer, the loaders, the seeds), its first key with the last value its rule refuses
    (an edge of its range, or another JSON type) that an ``-o`` text can give; a misspelt key."""
    cases = [({"model.entity_ratio": "x"}, RULES["model.entity_ratio"].problem("model.entity_ratio", "x"))]
    firsts = {}
    for key in RULES:
        firsts.setdefault(key.split(".")[0] if "." in key else "seeds", key)
    for key in firsts.values():
        value = [v for v in refused(RULES[key]) if _as_typed(v)][-1]
        cases.append((overrides_for(config, key, value), RULES[key].problem(key, value)))
    misspelt = "dataset_reader.max_lenght is not a setting of the dataset reader 'eer_documents' (did you mean dataset_reader.max_length?)"  # fmt: skip
    return cases + [({"dataset_reader.max_lenght": 64}, misspelt)]


@pytest.mark.integration  # starts AllenNLP's own command once per case
def test_plain_allennlp_train_outside_the_repository_gives_one_line(training_env, tmp_path):
    """The issue's command, from a directory without ``.allennlp_plugins``, the tested code on the path."""
    from allennlp.common import Params

    config = REPO / "eer_plugin" / "training_configs" / "eer_short.jsonnet"
    cases = _plain_train_cases(Params.from_file(str(config)).as_dict(quiet=True))
    assert len(cases) >= 7
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    assert not (tmp_path / ".allennlp_plugins").exists()
    allennlp = Path(sys.executable).parent / "allennlp"
    for index, (overrides, message) in enumerate(cases):
        run = tmp_path / f"run{index}"
        argv = [str(allennlp), "train", str(config), "-s", run.name, "-o", json.dumps(overrides)]
        proc = subprocess.run(
            argv + ["--include-package", "eer_plugin"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        lines = [line for line in proc.stderr.splitlines() if "error:" in line or "Traceback" in line]
        said = f"allennlp train: error: {message}"
        assert proc.returncode == 1 and len(lines) == 1, (overrides, proc.stderr[-3000:])
        assert lines[0] == said or lines[0].startswith(said + "; "), (overrides, lines)  # "; its settings are ..."
        assert not run.exists(), overrides


def test_cbl_finds_a_packaged_config_by_name_from_any_directory(training_env, tmp_path, monkeypatch, capsys):
    """``eer-ner cbl cbl_bert_shortest`` outside the repository reads the packaged config (as ``train`` does): its
    settings are checked (the bad ``-o`` is the line); a name that is neither a file nor packaged is the one
    "not found" line; neither makes ``-s``."""
    from eer_plugin import cli

    monkeypatch.chdir(tmp_path)
    assert not (tmp_path / "cbl_bert_shortest.jsonnet").exists()
    expected = RULES["model.entity_ratio"].problem("model.entity_ratio", "x")
    for name, said in (
        ("cbl_bert_shortest", expected),
        ("cbl_bert_shortest.jsonnet", expected),
        ("no_such_config.jsonnet", "config 'no_such_config.jsonnet' not found"),
    ):
        run = tmp_path / "run"
        try:
            status = cli.main(["cbl", name, "-s", str(run), "-o", '{"model.entity_ratio": "x"}'])
        except SystemExit as ended:
            status = ended.code
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if "error:" in line or "Traceback" in line]
        assert status == 1 and len(lines) == 1 and lines[0].startswith(f"eer-ner cbl: error: {said}"), err[-2000:]
        assert not run.exists()
