"""The one settings table (eer_plugin/runtime/settings.py) against the packaged configs: environment settings
read with std.extVar, hyperparameters as literals at the table's config keys, overridden with -o; a
hyperparameter set as an environment variable stops a training with the -o to use instead."""

import json
import re

import _jsonnet
import pytest
from allennlp.common import Params
from allennlp.common.params import with_overrides
from conftest import FIXTURE_DATA

from eer_plugin import cli
from eer_plugin.common.errors import UserError
from eer_plugin.runtime.config_files import CONFIG_DIR
from eer_plugin.runtime.settings import (
    ENVIRONMENT,
    HYPERPARAMETERS,
    SETTINGS,
    config_approach,
    config_defaults,
    overrides,
    unset_defaults,
)
from eer_plugin.runtime.settings_environment import environment_values_error

CONFIGS = sorted(CONFIG_DIR.glob("*.jsonnet"))


def evaluated(config) -> dict:
    """The config as jsonnet evaluates it with the environment settings' defaults and the fixture data."""
    ext_vars = {**unset_defaults({}), **FIXTURE_DATA}
    return json.loads(_jsonnet.evaluate_file(str(config), ext_vars=ext_vars, jpathdir=[str(CONFIG_DIR)]))


def at(config: dict, path: str):
    for key in path.split("."):
        config = config[int(key)] if isinstance(config, list) else config[key]
    return config


def test_the_table_has_both_kinds_and_no_data_default():
    assert {s.name for s in ENVIRONMENT} >= {
        "EER_TRAIN_DATA",
        "EER_ENCODER",
        "EER_SEED",
        "EER_CUDA_DEVICE",
        "EER_PRECISION",
    }
    assert {s.name for s in HYPERPARAMETERS} >= {
        "EER_RATIO_LOSS_WEIGHT",
        "EER_EPOCHS",
        "EER_BATCH_SIZE",
        "EER_LEARNING_RATE",
    }
    assert config_defaults() == {s.name: s.default for s in SETTINGS}
    assert all(config_defaults()[name] == "" for name in FIXTURE_DATA)  # the bundled fixtures are never a default
    assert unset_defaults({"EER_SEED": "3"}) == {s.name: s.default for s in ENVIRONMENT if s.name != "EER_SEED"}


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.name)
def test_every_hyperparameter_is_a_literal_at_its_key_with_the_tables_default(config):
    params = evaluated(config)
    approach, variant = config_approach(config.name)
    held = 0
    for setting in HYPERPARAMETERS:
        path = setting.path_for(approach)
        if path is None:
            continue
        expected = setting.value(setting.default, approach, variant)
        value = at(params, path)
        assert value == expected and type(value) is type(expected), (
            f"{config.name}: {path} is {value!r}, the table says {expected!r}"
        )
        held += 1
    assert held >= 7  # CBL-LSTM's has no rho, gamma, encoder rate or grammar switches


def test_the_eer_config_writes_the_taggers_own_defaults():
    """jsonnet cannot read Python's constants, so the EER config's model literals (rho, gamma, lambda_u, the ratio
    control, eta, c, dropout, the ablation flags) are copies: each is the ``eer_tagger`` constructor's default, which
    for the maths' settings is :mod:`eer_plugin.core.ranges`' (the table's defaults are read from there too)."""
    import inspect

    from eer_plugin.core import ranges
    from eer_plugin.models.tagger import EERTagger

    defaults = {
        name: p.default
        for name, p in inspect.signature(EERTagger.__init__).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    model = evaluated(CONFIG_DIR / "eer_short.jsonnet")["model"]
    written = {key: value for key, value in model.items() if key in defaults and key != "precision"}  # EER_PRECISION
    assert {key: defaults[key] for key in written} == written and len(written) >= 10, written
    assert {key: defaults[key] for key in ranges.RANGES if key in defaults} == {
        key: getattr(ranges, "DEFAULT_" + key.upper()) for key in ranges.RANGES if key in defaults
    }
    table = {s.path: s.value(s.default, "eer", "short") for s in HYPERPARAMETERS if s.path.startswith("model.")}
    assert {path: defaults[path[len("model.") :]] for path in table} == table


def test_the_cbl_configs_write_cbls_own_defaults():
    """The ``cbl`` block of every CBL config (common.libsonnet's literals: jsonnet cannot read Python's constants) is
    :data:`eer_plugin.annotation.cbl.DEFAULTS`, the values ``allennlp cbl`` gives a block that leaves a key out, each in
    its declared range; the table's EER_CBL_ROUND_EPOCHS default is read from there too."""
    from eer_plugin.annotation import cbl
    from eer_plugin.runtime.settings import BY_NAME

    blocks = {config.name: evaluated(config).get("cbl") for config in CONFIGS}
    held = {name: block for name, block in blocks.items() if block is not None}
    assert sorted(held) == [c.name for c in CONFIGS if c.name.startswith("cbl_")] and len(held) == 6
    for name, block in held.items():
        assert block == cbl.DEFAULTS and all(type(block[k]) is type(v) for k, v in cbl.DEFAULTS.items()), name
        assert cbl.block_settings(block) == cbl.DEFAULTS
    assert BY_NAME["EER_CBL_ROUND_EPOCHS"].default == str(cbl.DEFAULTS["round_epochs"])


#: environment setting -> the argument of the reader (eer_documents) or the span model it fills in the configs
FILLED = {
    "EER_ENCODER": "dataset_reader.model_name",
    "EER_MAX_LENGTH": "dataset_reader.max_length",
    "EER_TAG_SCHEME": "dataset_reader.tag_scheme",
    "EER_FILE_ENCODING": "dataset_reader.file_encoding",
    "EER_TAG_COLUMN": "dataset_reader.tag_column",
    "EER_SEED": "model.seed",
}


def test_the_classes_defaults_are_the_tables():
    """A class built from a config that leaves a key out takes the same value as the packaged configs, which read the
    table's default: the reader's and the span model's arguments that an environment setting fills, and the trainer's
    min_steps, deterministic and dropout_seed (hyperparameters). The one difference, left as it is and named here: a
    model's ``precision`` is ``fp32`` when a config has none, where the packaged configs give ``EER_PRECISION``
    (default ``auto``)."""
    import inspect

    from eer_plugin.data.reader import PartialDocumentReader
    from eer_plugin.models.sns import SpanNegativeSampling
    from eer_plugin.runtime.settings import BY_NAME
    from eer_plugin.training.trainer import EERTrainer

    def defaults(function) -> dict:
        return {n: p.default for n, p in inspect.signature(function).parameters.items() if p.default is not p.empty}

    classes = {
        "dataset_reader": defaults(PartialDocumentReader.__init__),
        "model": defaults(SpanNegativeSampling.__init__),
        "trainer": defaults(EERTrainer.from_partial_objects),
    }
    pairs = {
        path: int(BY_NAME[name].default) if BY_NAME[name].kind == "int" else BY_NAME[name].default
        for name, path in FILLED.items()
    }
    own = ("trainer.min_steps", "trainer.deterministic", "trainer.dropout_seed")  # the rest are AllenNLP's
    pairs.update({s.path: s.value(s.default, "eer", "short") for s in HYPERPARAMETERS if s.path in own})
    held = {
        path: classes[path.split(".")[0]][path.split(".")[1]]
        for path in pairs
        if path.split(".")[1] in classes[path.split(".")[0]]
    }
    assert held == {path: pairs[path] for path in held} and len(held) == len(FILLED) + 3, held
    assert BY_NAME["EER_PRECISION"].default == "auto" != defaults(SpanNegativeSampling.__init__)["precision"]


def test_per_variant_defaults_stay_expressible():
    epochs = {c.name: evaluated(c)["trainer"]["num_epochs"] for c in CONFIGS}
    assert (
        epochs["eer_all.jsonnet"] == epochs["gold.jsonnet"] == 20
        and epochs["eer_short.jsonnet"] == epochs["sns_shortest.jsonnet"] == 50
    )
    assert epochs["cbl_lstm_all.jsonnet"] == 45
    assert [c.name for c in CONFIGS if evaluated(c)["trainer"]["callbacks"]] == [
        "eer_all.jsonnet",
        "eer_short.jsonnet",
        "eer_shortest.jsonnet",
    ]


def test_configs_read_the_environment_settings_and_no_other():
    read = set()
    for config in CONFIG_DIR.iterdir():
        code = "".join(line for line in config.read_text().splitlines(True) if not line.lstrip().startswith("//"))
        read |= set(re.findall(r"'(EER_[A-Z_]+)'", code))
        assert code.count("std.extVar") <= 1, config.name  # one `env(name)` helper reads them all
    assert read == {s.name for s in ENVIRONMENT}
    header = "".join(
        line for line in (CONFIG_DIR / "common.libsonnet").read_text().splitlines(True) if line.startswith("//")
    )
    assert {s.name for s in ENVIRONMENT} <= set(re.findall(r"EER_[A-Z_]+", header))


@pytest.mark.parametrize(
    "config", ["eer_short.jsonnet", "raw_all.jsonnet", "cbl_lstm_shortest.jsonnet", "sns_all.jsonnet"]
)
def test_overrides_of_a_runs_settings_land_at_their_keys(config):
    values = {
        "EER_EPOCHS": "3",
        "EER_RATIO_INIT": "all",
        "EER_HEAD_LEARNING_RATE": "5e-4",
        "EER_RATIO_LOSS_WEIGHT": "0",
        "EER_RATIO_BOOKENDS": "TRUE",
        "EER_ENTITY_RATIO": "0.2",
        "EER_CBL_ROUND_EPOCHS": "2",
    }
    approach, variant = config_approach(config)
    given = overrides(values, approach, variant)
    merged = with_overrides(evaluated(CONFIG_DIR / config), given)  # AllenNLP's -o
    for setting in HYPERPARAMETERS:
        path = setting.path_for(approach)
        if setting.name in values and path is not None:
            assert at(merged, path) == setting.value(values[setting.name], approach, variant) == given[path]
    assert at(merged, "trainer.num_epochs") == 3
    assert ("model.ratio_loss_weight" in given) == (approach == "eer")  # Raw's 0 is no setting
    assert at(merged, "trainer.callbacks") == ([] if approach == "sns" else [{"type": "eer_ratio_init"}])


def test_bad_hyperparameter_values_name_the_setting():
    with pytest.raises(ValueError, match="EER_BATCH_SIZE must be an integer, got 'x'"):
        overrides({"EER_BATCH_SIZE": "x"}, "eer", "short")
    with pytest.raises(ValueError, match="EER_RATIO_INIT must be eer, all or none"):
        overrides({"EER_RATIO_INIT": "some"}, "eer", "short")
    with pytest.raises(ValueError, match="EER_TRAIN_CONSTRAINTS must be true or false"):
        overrides({"EER_TRAIN_CONSTRAINTS": "yes"}, "eer", "short")


def test_a_hyperparameter_in_the_environment_stops_training_with_the_override_to_use(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("EER_RATIO_LOSS_WEIGHT", "100")
    with pytest.raises(UserError) as error:
        Params.from_file("eer_short.jsonnet")
    message = str(error.value)
    assert "\n" not in message and message.startswith(
        "eer_short.jsonnet: EER_RATIO_LOSS_WEIGHT=100 is set in the environment"
    )
    assert """unset EER_RATIO_LOSS_WEIGHT and give -o '{"model.ratio_loss_weight": 100}'""" in message
    assert cli.main(["train", "eer_short.jsonnet", "-s", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()
    assert capsys.readouterr().err.strip().endswith("(eer-ner eer-settings lists every setting)")
    # two of them, one not held by the config: one line, one -o
    monkeypatch.setenv("EER_CBL_ROUND_EPOCHS", "2")
    with pytest.raises(
        UserError,
        match=r"""give -o '\{"model.ratio_loss_weight": 100\}' \(EER_CBL_ROUND_EPOCHS: no key in this config\)""",
    ):
        Params.from_file("eer_short.jsonnet")
    monkeypatch.delenv("EER_RATIO_LOSS_WEIGHT")
    monkeypatch.delenv("EER_CBL_ROUND_EPOCHS")
    # the -o itself works, an archive's config.json is not checked
    assert (
        Params.from_file("eer_short.jsonnet", '{"model.ratio_loss_weight": 100}').as_dict()["model"][
            "ratio_loss_weight"
        ]
        == 100
    )
    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setenv("EER_EPOCHS", "3")
    assert Params.from_file(str(tmp_path / "config.json")).as_dict() == {}


#: for each kind of environment setting: texts the configs cannot use, and texts they can
UNUSABLE = {
    "int": ["x", "1.5", "1e3", " 7", "+3", "", "0x10", "٣"],
    "count": ["0", "-2", "ten", "2.0"],
    "tag_scheme": ["BMES", "IO", "bio2", "", "Auto"],
    "seconds": ["0", "-5", "abc", "inf", " "],
}
USABLE = {
    "int": ["0", "-1", "512", "007"],
    "count": ["1", "10"],
    "tag_scheme": ["auto", "IOB1", "iobes", "BIO"],
    "seconds": ["600", "0.5", "1e3"],
}


def test_an_environment_setting_the_configs_cannot_use_is_named_before_jsonnet_runs(monkeypatch, tmp_path, capsys):
    """Before, jsonnet's std.parseInt said only "eer_short.jsonnet: x is not a base 10 integer" (EER_SEED=x,
    EER_MAX_LENGTH=abc, ...), and a tag scheme or group size of 0 waited for a column file to be read."""
    checked = [s for s in ENVIRONMENT if s.kind != "text"]
    assert {s.kind for s in checked} == set(UNUSABLE) and len(checked) == 8  # every one the configs parse
    for setting in checked:
        for text in USABLE[setting.kind] + ([""] if setting.default == "" else []):
            assert environment_values_error({setting.name: text}) is None, (setting.name, text)
        for text in UNUSABLE[setting.kind]:
            if text == "" and setting.default == "":
                continue
            monkeypatch.setenv(setting.name, text)
            with pytest.raises(UserError) as error:
                Params.from_file("eer_short.jsonnet")
            assert str(error.value).startswith(f"eer_short.jsonnet: {setting.name}={text!r}: expected "), error.value
            assert str(error.value).endswith("(unset it for its default; eer-ner eer-settings lists every setting)")
            monkeypatch.delenv(setting.name)
    monkeypatch.setenv("EER_SEED", "x")
    monkeypatch.setenv("EER_MAX_LENGTH", "abc")
    assert cli.main(["train", "eer_short.jsonnet", "-s", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "eer-ner train: error: eer_short.jsonnet: EER_MAX_LENGTH='abc': expected a whole number, such as its default 512; "
        "EER_SEED='x': expected a whole number, such as its default 0 (unset a setting for its default; eer-ner "
        "eer-settings lists every setting)"
    )
