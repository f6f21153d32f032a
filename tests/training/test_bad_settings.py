"""Generated bad settings of the training path: every value a config, an ``-o`` override or an ``EER_*`` variable
gives that a component cannot use is one line naming the setting (a :class:`SettingError`, also a ``ValueError``),
never a traceback from inside AllenNLP's ``from_params``; ``eer-ner train`` stops with status 1 before it trains."""

import json

import pytest
from conftest import FIXTURES, REPO

from eer_plugin.common.errors import SettingError, UserError

EER = str(REPO / "training_configs" / "eer_short.jsonnet")

#: ``(-o key, bad value, what the one line names)``: each refused by the class that takes it
BAD_MODEL_SETTINGS = [
    *(("model.entity_ratio", v, "model.entity_ratio") for v in (None, 0, 1, -0.5)),
    *(("model.ratio_margin", v, "model.ratio_margin") for v in (None, -0.05)),
    *(("model.ratio_loss_weight", v, "model.ratio_loss_weight") for v in (None, -1)),
    *(("model.ratio_control", v, "model.ratio_control") for v in ("foo", "")),
    ("model.o_cost", None, "model.o_cost"),
]
BAD_BIND_SETTINGS = [
    *(("model.price_rate", v, "model.price_rate") for v in (-1, None)),
    *(("model.price_penalty", v, "model.price_penalty") for v in (0, None)),
]
BAD_READER_SETTINGS = [
    ("dataset_reader.variant", "longest", "dataset_reader.variant"),
    *(("dataset_reader.max_length", v, "EER_MAX_LENGTH") for v in (2, 0, -5)),
]


def _build(part: str, overrides: dict):
    """The ``part`` (``model`` or ``dataset_reader``) of the EER config with ``overrides``, as ``train`` builds it."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model

    params = Params.from_file(EER, json.dumps(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    if part == "dataset_reader":
        return reader
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES / "partial_tiny.jsonl")))
    return Model.from_params(vocab=vocab, params=params.pop("model"))


@pytest.mark.parametrize(
    "key, value, named",
    [*BAD_MODEL_SETTINGS, *BAD_BIND_SETTINGS, *BAD_READER_SETTINGS],
    ids=lambda v: repr(v)[:20],
)
def test_a_bad_setting_is_a_setting_error_naming_it(key, value, named, tiny_env):
    overrides = {key: value}
    if (key, value, named) in BAD_BIND_SETTINGS:
        overrides["model.ratio_control"] = "bind"
    with pytest.raises(SettingError) as raised:
        _build(key.split(".")[0], overrides)
    assert isinstance(raised.value, UserError) and isinstance(raised.value, ValueError)
    assert named in str(raised.value) and "\n" not in str(raised.value)


def _wrong_types(value):
    """Values of every JSON type but ``value``'s (a string for a number, a number for a string, ...; an int and a
    float are both numbers)."""
    kind = type(value) if isinstance(value, (bool, str)) else float
    samples = [7, True, "text", [1], {"a": 1}, None]
    return [v for v in samples if v is not None and (type(v) if isinstance(v, (bool, str)) else float) is not kind]


@pytest.mark.integration  # a sweep of every model and reader setting, each given every other JSON type (14 s)
def test_every_model_and_reader_setting_of_the_wrong_type_is_one_line(tiny_env, configs_evaluated_once):
    """Generated from the EER config itself: each scalar setting of ``model`` and ``dataset_reader`` given a value
    of another JSON type is one line naming the setting and what it must be, before anything is built (AllenNLP's
    ``from_params`` raised a ``TypeError`` traceback: ``Expected price_rate to be numeric.``)."""
    from allennlp.common import Params

    config = Params.from_file(EER, '{"model.ratio_control": "bind"}').as_dict(quiet=True)
    checked = 0
    for part in ("model", "dataset_reader"):
        for key, value in config[part].items():
            if key == "type" or not isinstance(value, (str, int, float, bool)):
                continue
            for wrong in _wrong_types(value):
                overrides = json.dumps({"model.ratio_control": "bind", f"{part}.{key}": wrong})
                with pytest.raises(UserError, match=rf"^{part}\.{key} must be ") as raised:
                    Params.from_file(EER, overrides)  # its checks (runtime.config_checks), before anything is built
                assert repr(wrong) in str(raised.value)
                checked += 1
    assert checked > 50


def test_training_data_without_an_entity_is_a_setting_error_in_every_model(tiny_env, tmp_path):
    """A vocabulary with no entity tag: the CRF tagger has no tags to learn, the span model a loss of 0 (it trained
    silently before, to a model that finds nothing): both refuse it in one line."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model

    data = tmp_path / "none.jsonl"
    data.write_text(json.dumps({"id": "a", "tokens": ["no", "names", "here"], "is_complete": True}) + "\n")
    for config in ("eer_all.jsonnet", "raw_all.jsonnet", "sns_all.jsonnet"):
        params = Params.from_file(str(REPO / "training_configs" / config))
        vocab = Vocabulary.from_instances(DatasetReader.from_params(params.pop("dataset_reader")).read(str(data)))
        with pytest.raises(SettingError, match="no entity types: .* holds no annotated entity"):
            Model.from_params(vocab=vocab, params=params.pop("model"))


#: ``(environment, -o overrides, what the one line of eer-ner train starts with or holds)``
BAD_RUNS = [
    ({"EER_MAX_LENGTH": "2"}, {}, "EER_MAX_LENGTH"),
    ({"EER_PRECISION": "fp16"}, {}, "EER_PRECISION"),
    ({"EER_SEED": "-1"}, {}, "random_seed must be an integer in [0, 2**32 - 1] (EER_SEED)"),
    ({"EER_CUDA_DEVICE": "7"}, {}, "trainer.cuda_device (EER_CUDA_DEVICE) 7: "),
    ({}, {"model.entity_ratio": None}, "model.entity_ratio must be"),
    ({}, {"model.ratio_control": "foo"}, "model.ratio_control must be one of fixed, bind, got 'foo'"),
    # in range, but the loss overflows to inf: the run stopped at its first batch (it trained on to NaN weights)
    ({}, {"model.ratio_loss_weight": 1e308}, "epoch 1, batch 1: the training loss is inf: the run diverged"),
    ({}, {"trainer.optimizer.lr": 1e30, "trainer.num_epochs": 3}, "the run diverged"),
    ({}, {"dataset_reader.variant": "longest"}, "dataset_reader.variant must be"),
    ({}, {"trainer.optimizer.parameter_groups.0.1.lr": -1}, "trainer.optimizer.parameter_groups.0.1.lr must be"),
    ({}, {"trainer.checkpointer.keep_most_recent_by_count": 0}, "trainer.checkpointer.keep_most_recent_by_count"),
    ({}, {"trainer.num_gradient_accumulation_steps": 0}, "trainer.num_gradient_accumulation_steps must be"),
]


@pytest.mark.integration
@pytest.mark.parametrize("environment, overrides, message", BAD_RUNS, ids=lambda v: repr(v)[:40])
def test_eer_ner_train_stops_with_one_line_naming_the_setting(
    environment, overrides, message, tiny_env, tmp_path, monkeypatch, capsys
):
    from eer_plugin import cli

    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.delenv("EER_DEV_DATA", raising=False)
    monkeypatch.delenv("EER_TEST_DATA", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    run = {"trainer.num_epochs": 1, "trainer.callbacks": [], "data_loader.batch_sampler.batch_size": 1, **overrides}
    status = cli.main(["train", "eer_short.jsonnet", "-s", str(tmp_path / "run"), "-o", json.dumps(run)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("eer-ner train: error: ")]
    assert status == 1 and len(lines) == 1 and message in lines[0], err[-2000:]
    # no checkpoint was written: a run again with the fix needs --force or a new directory, as the message of
    # check_serialization_dir says (nothing to --recover)
    assert not list((tmp_path / "run").glob("*.th")) if (tmp_path / "run").exists() else True


def test_a_config_that_is_a_directory_is_one_line_or_the_packaged_config(tmp_path, monkeypatch):
    """jsonnet aborted the whole process (SIGABRT, no message of ours) on a directory given as the config; a directory
    named like a packaged config (a run's -s called eer_short) no longer hides the packaged one."""
    from eer_plugin.runtime.config_files import CONFIG_DIR, resolve_config

    monkeypatch.chdir(tmp_path)
    for name in ("configs", "configs/", str(tmp_path)):
        (tmp_path / "configs").mkdir(exist_ok=True)
        with pytest.raises(UserError, match=r"is a directory, not a config file: give a \.jsonnet file"):
            resolve_config(name)
    (tmp_path / "eer_short").mkdir()
    assert resolve_config("eer_short") == str(CONFIG_DIR / "eer_short.jsonnet")


#: JSON lines without an annotated entity, as the EER config's short variant reads them (it keeps no document)
NO_ENTITY = [
    [{"id": "a", "tokens": ["no", "names", "here"]}],
    [{"id": "a", "tokens": ["no", "names"]}, {"id": "b", "tokens": ["x"], "negative_spans": [[0, 1]]}],
    [{"id": "a", "tokens": ["complete", "without", "names"], "is_complete": True}],
]


@pytest.mark.integration
@pytest.mark.parametrize("documents", NO_ENTITY, ids=range(len(NO_ENTITY)))
def test_training_data_without_an_entity_is_one_line_naming_the_file(
    documents, tiny_env, tmp_path, monkeypatch, capsys
):
    from eer_plugin import cli

    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(d) + "\n" for d in documents))
    monkeypatch.setenv("EER_TRAIN_DATA", str(data))
    monkeypatch.delenv("EER_DEV_DATA", raising=False)
    monkeypatch.delenv("EER_TEST_DATA", raising=False)
    for config in ("eer_short.jsonnet", "raw_all.jsonnet", "sns_all.jsonnet"):
        assert cli.main(["train", config, "-s", str(tmp_path / "run")]) == 1
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.startswith("eer-ner train: error: ")]
        assert len(lines) == 1 and lines[0].startswith(f"eer-ner train: error: {data}: no annotated entity in "), err[
            -2000:
        ]
        assert "Traceback" not in err and not (tmp_path / "run").exists()  # stopped before -s was created


def test_overrides_that_replace_an_object_and_set_a_key_under_it_are_one_line(monkeypatch):
    """``-o '{"trainer": {...}, "trainer.num_epochs": 1}'``: AllenNLP's ``ValueError`` traceback (``overrides dict
    contains unused keys``) is one line naming the keys and the fix, generated over the config's objects."""
    from allennlp.common import Params

    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    for parent, child in (("trainer", "num_epochs"), ("model", "entity_ratio"), ("trainer.optimizer", "lr")):
        overrides = json.dumps({parent: {}, f"{parent}.{child}": 1})
        with pytest.raises(
            UserError, match=rf"^-o/--overrides .*: \['{parent}\.{child}'\] are not applied.*dotted keys"
        ):
            Params.from_file(EER, overrides)


@pytest.mark.parametrize("loss", [float("inf"), float("-inf"), float("nan")])
def test_a_training_loss_that_is_not_finite_stops_the_run_before_its_step(loss, monkeypatch):
    """The eer trainer's check of every training batch (no training here: AllenNLP's batch_outputs stubbed): a loss
    that is not finite is one line naming the epoch, the batch, the rates and the ratio weight; a finite one and a
    validation batch's pass through."""
    import torch
    from allennlp.training import GradientDescentTrainer

    from eer_plugin.training.trainer import EERTrainer

    outputs = {"loss": torch.tensor(loss)}
    monkeypatch.setattr(GradientDescentTrainer, "batch_outputs", lambda self, batch, for_training: outputs)
    trainer = EERTrainer.__new__(EERTrainer)
    trainer._epochs_completed, trainer._batches_in_epoch_completed = 2, 6
    trainer.model = type("Model", (), {"ratio_loss_weight": 10.0})()
    trainer.optimizer = type("Optimizer", (), {"param_groups": [{"lr": 1e-3}, {"lr": 2e-5}]})()
    with pytest.raises(UserError) as raised:
        trainer.batch_outputs({}, for_training=True)
    message = str(raised.value)
    assert message.startswith(f"epoch 3, batch 7: the training loss is {loss}: the run diverged")
    assert "now 2e-05, 0.001" in message and "model.ratio_loss_weight (now 10)" in message and "--force" in message
    assert trainer.batch_outputs({}, for_training=False) is outputs  # validation: reported, not stopped
    outputs["loss"] = torch.tensor(3.5)
    assert trainer.batch_outputs({}, for_training=True) is outputs
