"""Issue 50: models and training settings refused with one line, at load or before training starts.

* an archive of another model type, or with another dataset reader (a relabelled ``config.json``), through the
  archive loader every command shares (``predict``, ``evaluate``, ``eer-export-model``, ``Tagger.load``);
* an export with missing or edited encoder files, non-finite weights or a non-finite ``o_cost``;
* non-finite weights in an archive; a GPU index without a GPU;
* training settings AllenNLP would answer with a traceback, checked wherever a training config is read
  (``eer_plugin/runtime/config_checks.py``), and ``-s`` (``eer_plugin/training/settings_checks.py``)."""

import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
import torch

from eer_plugin.common.errors import ArchiveError, UserError


def relabelled(archive: Path, directory: Path, name: str, edit) -> Path:
    """A copy of ``archive`` whose config.json went through ``edit``."""
    out = directory / f"{name}.tar.gz"
    with tarfile.open(archive) as source, tarfile.open(out, "w:gz") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            if member.name.lstrip("./") == "config.json":
                config = json.loads(data)
                edit(config)
                data = json.dumps(config).encode()
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    return out


EDITS = {
    "another model type": (
        lambda c: c["model"].update(type="simple_tagger"),
        "does not build its model (type 'simple_tagger'",
    ),
    "a baseline's type": (
        lambda c: c["model"].update(type="sns_tagger"),
        "does not build its model (type 'sns_tagger'",
    ),
    "an unknown type": (
        lambda c: c["model"].update(type="no_such_model"),
        "does not build its model (type 'no_such_model'",
    ),
    "another reader": (
        lambda c: c["dataset_reader"].update(type="sequence_tagging"),
        "does not build its dataset reader",
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_archive_of_another_model_is_one_archive_error(edit, archive, tmp_path):
    from eer_plugin.api import Tagger
    from eer_plugin.runtime.archive import load_model_archive

    change, message = EDITS[edit]
    path = relabelled(archive, tmp_path, "other", change)
    for load in (load_model_archive, Tagger.load):
        with pytest.raises(ArchiveError, match=f"^{path}: its config.json " + message.replace("(", r"\(")):
            load(path)


@pytest.mark.integration
@pytest.mark.parametrize("command", ["predict", "evaluate", "eer-export-model"])
def test_commands_refuse_an_archive_of_another_model_in_one_line(command, archive, tmp_path):
    from conftest import FIXTURES, eer_ner

    path = relabelled(archive, tmp_path, "other", EDITS["another model type"][0])
    (tmp_path / "in.jsonl").write_text('{"text": "Paris ."}\n')
    argv = {
        "predict": [path, tmp_path / "in.jsonl", "--predictor", "eer_tagger"],
        "evaluate": [path, FIXTURES / "conll2003_tiny.txt"],
        "eer-export-model": [path, tmp_path / "export"],
    }[command]
    shown = eer_ner(command, *argv, capture_output=True, text=True)
    assert shown.returncode == 1 and "Traceback" not in shown.stderr, shown.stderr[-3000:]
    assert (
        shown.stderr.strip()
        .splitlines()[-1]
        .startswith(f"eer-ner {command}: error: {path}: its config.json does not build its model")
    )


def test_non_finite_archive_weights_are_refused(archive, tmp_path):
    from eer_plugin.runtime.archive import load_model_archive

    for bad in (float("nan"), float("inf")):
        with tarfile.open(archive) as source:
            source.extractall(tmp_path / "model", filter="data")
        state = torch.load(tmp_path / "model" / "weights.th", weights_only=True)
        state["crf.transitions"][0, 0] = bad
        torch.save(state, tmp_path / "model" / "weights.th")
        with pytest.raises(ArchiveError, match=r"the weights 'crf.transitions' hold 1 value that is not finite"):
            load_model_archive(tmp_path / "model")
        shutil.rmtree(tmp_path / "model")


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    from eer_plugin.models.export import export_model as export

    directory = tmp_path_factory.mktemp("export") / "tagger"
    export(archive, directory)
    return directory


def _config(directory: Path, **changes) -> None:
    path = directory / "encoder" / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _non_finite_weights(directory: Path) -> None:
    from safetensors.torch import load_file, save_file

    weights = load_file(str(directory / "model.safetensors"))
    weights["crf.transitions"][0, 0] = float("nan")
    save_file(weights, str(directory / "model.safetensors"), metadata={"format": "eer-ner exported tagger"})


def _entity_types(directory: Path, types) -> None:
    """The settings edited consistently (types, their BILUO tags, a grammar of that size) to other entity types."""
    from eer_plugin.core.tags import BiluoScheme

    path = directory / "eer_tagger.json"
    settings = json.loads(path.read_text())
    scheme = BiluoScheme(types)
    settings.update(
        entity_types=list(types),
        tags=list(scheme.labels),
        allowed_transitions=scheme.allowed_transitions().tolist(),
        allowed_start=scheme.allowed_start().tolist(),
        allowed_end=scheme.allowed_end().tolist(),
    )
    path.write_text(json.dumps(settings))


EXPORT_EDITS = {
    "no encoder config": (lambda d: (d / "encoder" / "config.json").unlink(), "encoder/config.json: missing"),
    "no vocabulary": (
        lambda d: [(d / "encoder" / n).unlink() for n in ("tokenizer.json", "vocab.txt")],
        "encoder/tokenizer.json: missing: the export has no tokenizer",
    ),
    "config not JSON": (lambda d: (d / "encoder" / "config.json").write_text("{"), "config.json: not valid JSON"),
    "unknown encoder type": (lambda d: _config(d, model_type="no_such_type"), "cannot be read"),
    "edited hidden size": (lambda d: _config(d, hidden_size=64), "the weights do not fit the encoder"),
    "edited vocabulary size": (lambda d: _config(d, vocab_size=10), "the weights do not fit the encoder"),
    "edited layer count": (lambda d: _config(d, num_hidden_layers=5), "the weights do not fit the encoder"),
    "unknown tokenizer": (
        lambda d: (d / "encoder" / "tokenizer_config.json").write_text('{"tokenizer_class": "Nope"}'),
        "cannot be read",
    ),
    "o_cost NaN": (
        lambda d: (d / "eer_tagger.json").write_text(
            json.dumps(json.loads((d / "eer_tagger.json").read_text())).replace('"o_cost": -2.0', '"o_cost": NaN')
        ),
        "'o_cost' is nan, not a finite number",
    ),
    "one entity type more": (
        lambda d: _entity_types(d, ["LOC", "PER", "ORG"]),
        "eer_tagger.json: 13 tags .entity types LOC, PER, ORG., but .*model.safetensors scores 9",
    ),
    "one entity type less": (
        lambda d: _entity_types(d, ["PER"]),
        "eer_tagger.json: 5 tags .entity types PER., but .*model.safetensors scores 9",
    ),
    "non-finite weights": (_non_finite_weights, "the weights 'crf.transitions' hold values that are not finite"),
}


@pytest.mark.parametrize("edit", sorted(EXPORT_EDITS))
def test_an_edited_export_is_one_archive_error(edit, exported, tmp_path):
    from eer_plugin.api import Tagger

    change, message = EXPORT_EDITS[edit]
    copy = tmp_path / "tagger"
    shutil.copytree(exported, copy)
    Tagger.load(copy)  # the copy loads
    change(copy)
    with pytest.raises(ArchiveError, match=message.replace("(", r"\(")):
        Tagger.load(copy)


def test_an_export_missing_any_files_tags_the_same_or_names_a_missing_file(exported, tmp_path):
    """Every set of up to two files removed from an export (not both of its own): it still tags exactly as before (transformers rebuilds
    the tokenizer from the files left), or the ArchiveError names one of the removed files' paths."""
    import itertools

    from eer_plugin.api import Tagger

    text = "John Smith met the mayor of London. Then he left for New York."
    expected = Tagger.load(exported)(text)
    files = sorted(str(path.relative_to(exported)) for path in exported.rglob("*") if path.is_file())
    assert {"eer_tagger.json", "model.safetensors", "encoder/tokenizer.json"} <= set(files)
    for removed in itertools.chain(itertools.combinations(files, 1), itertools.combinations(files, 2)):
        if {"eer_tagger.json", "model.safetensors"} <= set(removed):
            continue  # no export left (a directory holding encoder/ only): Tagger.load says it is no model
        copy = tmp_path / "-".join(removed).replace("/", "_")
        shutil.copytree(exported, copy)
        for name in removed:
            (copy / name).unlink()
        try:
            tagged = Tagger.load(copy)(text)
        except ArchiveError as error:
            message = str(error)
            assert "\n" not in message and "export the model again" in message, (removed, message)
            assert any(message.startswith(f"{copy / name}: missing") for name in removed), (removed, message)
        else:
            assert tagged == expected, removed
        shutil.rmtree(copy)


def test_a_transformers_model_directory_is_named_as_such_not_as_a_run(tiny_encoder, exported):
    """The encoder's own directory (config.json, weights, tokenizer) or an export's encoder/ given as the model: one
    line saying it is a transformers model, not a training run's directory or a damaged export."""
    from eer_plugin.api import Tagger
    from eer_plugin.inference.exported import ExportedTagger

    for directory in (Path(tiny_encoder), exported / "encoder"):
        for load in (Tagger.load, ExportedTagger.load):
            with pytest.raises(ArchiveError) as raised:
                load(directory)
            assert str(raised.value).startswith(
                f"{directory}: the directory of a transformers model (its config.json has model_type 'bert'), not an "
                "eer-ner tagger; load the model.tar.gz that eer-ner train wrote"
            )


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the machine without a GPU")
def test_a_gpu_index_without_a_gpu_is_one_line(archive, exported):
    from eer_plugin.api import Tagger

    for path in (archive, exported):
        with pytest.raises(UserError, match="no GPU is available to this process"):
            Tagger.load(path, cuda_device=0)


# ------------------------------------------------------------------------------------ training settings
@pytest.mark.parametrize(
    "overrides,message",
    [
        ("[1, 2]", ": a JSON list, not an object of config keys and values, e.g. -o '{\"trainer.num_epochs\": 5}'"),
        ('{"a": ', '-o/--overrides {"a":: not valid JSON ('),
        ('{"trainer.num_epochs": 0}', "trainer.num_epochs must be an integer of at least 1, got 0"),
        ('{"trainer.num_epochs": -3}', "trainer.num_epochs must be an integer of at least 1, got -3"),
        ('{"trainer.num_epochs": "x"}', "trainer.num_epochs must be an integer of at least 1, got 'x'"),
        ('{"trainer.num_epochs": 1.5}', "trainer.num_epochs must be an integer of at least 1, got 1.5"),
        (
            '{"data_loader.batch_sampler.batch_size": 0}',
            "data_loader.batch_sampler.batch_size must be an integer of at least 1, got 0",
        ),
        (
            '{"data_loader.batch_sampler.batch_size": "4"}',
            "data_loader.batch_sampler.batch_size must be an integer of at least 1",
        ),
        ('{"model.entity_ratio": 1.5}', "model.entity_ratio must be a number in (0, 1)"),
        ('{"model.entity_ratio": -0.1}', "model.entity_ratio must be a number in (0, 1)"),
        ('{"model.entity_ratio": "0.1"}', "model.entity_ratio must be a number in (0, 1)"),
        ('{"model.ratio_margin": -1}', "model.ratio_margin must be a number of at least 0"),
        (
            '{"model.entity_ration": 0.1}',
            "model.entity_ration is not a setting of the model 'eer_tagger' (did you mean model.entity_ratio?)",
        ),
        (
            '{"dataset_reader.max_lenght": 64}',
            "dataset_reader.max_lenght is not a setting of the dataset reader 'eer_documents'",
        ),
        (
            '{"dataset_reader.model_name": "no/such-encoder"}',
            "dataset_reader.model_name 'no/such-encoder': no such directory",
        ),
    ],
)
def test_training_settings_that_cannot_work_are_one_line_before_anything_is_built(
    overrides, message, tiny_env, monkeypatch
):
    from conftest import FIXTURES

    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    read_config("eer_short.jsonnet", "")  # the settings as given work
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        read_config("eer_short.jsonnet", overrides)


def read_config(config: str, overrides: str):
    """What every training command does before it builds anything: ``-o`` read once (``eer-ner train``'s example in
    its message), then the config read with it by ``Params.from_file``, which checks it (``runtime.config_checks``)."""
    from allennlp.common import Params

    from eer_plugin.commands.overrides import check_overrides
    from eer_plugin.runtime.config_overrides import TRAINING_EXAMPLE

    return Params.from_file(config, check_overrides(overrides, example=TRAINING_EXAMPLE))


def test_a_serialization_directory_that_holds_files_is_one_line(tmp_path):
    from eer_plugin.training.settings_checks import check_serialization_dir

    (tmp_path / "run").mkdir()
    check_serialization_dir(str(tmp_path / "run"), False, False)  # empty: fine
    for name in ("config.json", "meta.json", "out.log"):  # what a run that failed on its data leaves
        (tmp_path / "run" / name).write_text("{}")
    with pytest.raises(UserError) as info:
        check_serialization_dir(str(tmp_path / "run"), False, False)
    assert str(info.value) == (
        f"-s {tmp_path / 'run'} holds a run without a checkpoint (config.json, meta.json, out.log): it stopped before "
        "its first epoch ended (out.log says why), so there is nothing to --recover. Add --force to start it again, "
        "or choose a new directory"
    )
    (tmp_path / "run" / "model_state_e1_b0.th").write_text("")
    with pytest.raises(UserError, match="already holds files .*--recover .*--force"):
        check_serialization_dir(str(tmp_path / "run"), False, False)
    check_serialization_dir(str(tmp_path / "run"), True, False)
    with pytest.raises(UserError, match="a file, not a directory"):
        check_serialization_dir(str(tmp_path / "run" / "config.json"), False, False)


@pytest.mark.integration
def test_a_run_that_failed_on_its_data_is_named_when_it_is_run_again(tiny_env, tmp_path, monkeypatch, capsys):
    """A wrong training file (a dictionary) stops before -s is created (its first bad line, checked before training);
    a wrong dev file stops once AllenNLP has created -s, leaving config.json, meta.json and out.log; the second try
    with the right file says that run has no checkpoint and that --force restarts it, not "add --recover" (which
    would compare the configs and find the old data path)."""
    from conftest import FIXTURES

    from eer_plugin import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EER_TEST_DATA", raising=False)
    (tmp_path / "names.tsv").write_text("Loyola de Palacio\tPER\nBrussels\tLOC\n")
    monkeypatch.setenv("EER_TRAIN_DATA", "names.tsv")
    assert cli.main(["train", "eer_short.jsonnet", "-s", "model"]) == 1
    assert "names.tsv:1: " in capsys.readouterr().err
    assert not os.path.exists("model")
    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.setenv("EER_DEV_DATA", "names.tsv")
    assert cli.main(["train", "eer_short.jsonnet", "-s", "model"]) == 1
    assert "names.tsv:1: " in capsys.readouterr().err
    assert not [name for name in os.listdir("model") if name.endswith(".th") or name == "model.tar.gz"]
    monkeypatch.delenv("EER_DEV_DATA")
    assert cli.main(["train", "eer_short.jsonnet", "-s", "model"]) == 1
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("eer-ner train: error: -s model holds a run without a checkpoint (") and "Add --force" in err
    ), err
    assert len(err.splitlines()) == 1


#: the numbers of RULES that the packaged configs leave at their class's default (no key to find in them), and the
#: config whose classes take them
DEFAULTED = {
    **dict.fromkeys(
        (
            "dataset_reader.sentences_per_document",
            "model.o_cost",
            "trainer.num_gradient_accumulation_steps",
            "trainer.checkpointer.save_every_num_seconds",
            "trainer.checkpointer.save_every_num_batches",
            "trainer.checkpointer.keep_most_recent_by_age",
            "data_loader.batch_size",
            "validation_data_loader.batch_size",
            "validation_data_loader.batch_sampler.batch_size",
        ),
        "eer_short.jsonnet",
    ),
    "model.hidden_dim": "sns_short.jsonnet",
}


def _override(config: dict, path: str, value) -> dict:
    """The ``-o`` that sets ``path``: dotted, or an object of its own where the config has no object to set it in
    (``validation_data_loader``)."""
    top, _, rest = path.partition(".")
    if not rest or top in config:
        return {path: value}
    nested = value
    for key in reversed(rest.split(".")):
        nested = {key: nested}
    return {top: nested}


def test_every_number_range_refuses_what_it_cannot_use_and_takes_what_it_can(
    tiny_env, configs_evaluated_once, monkeypatch
):
    """Each number a run reads (a rule of :data:`RULES` with bounds) against generated values, in the config of the
    EER tagger or of the span model: a value out of range (or of the wrong type, or null where null means nothing) is
    one line naming the setting, what is expected and the value; one in range passes. Every path is a real setting of
    a packaged config (a misspelt path would check nothing), but for the few the configs leave at their default
    (:data:`DEFAULTED`). The values are set on the evaluated config as ``Params.from_file`` sets an ``-o``; the first
    refused value of each goes through ``Params.from_file`` whole (the one line its checks give)."""
    from allennlp.common import params
    from allennlp.common.params import with_overrides
    from conftest import FIXTURES

    from eer_plugin.runtime.config_checks import _ABSENT, _rule_problems, _value_at
    from eer_plugin.runtime.setting_values import RULES

    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # the overrides are JSON (json.dumps below), which jsonnet evaluates to itself: 58 ms a call with the
    # environment as external variables, one call per setting
    monkeypatch.setattr(
        params, "evaluate_snippet", lambda filename, snippet, ext_vars=None: json.dumps(json.loads(snippet))
    )
    bind = '{"model.ratio_control": "bind"}'
    configs = {name: read_config(name, bind if name == "eer_short.jsonnet" else "").as_dict(quiet=True) for name in ("eer_short.jsonnet", "sns_short.jsonnet")}  # fmt: skip
    numbers = {path: rule for path, rule in RULES.items() if rule.bounds is not None and "[" not in path}
    assert len(numbers) >= 30
    for path, rule in numbers.items():
        holders = [name for name, config in configs.items() if _value_at(config, path) is not _ABSENT]
        assert holders or path in DEFAULTED, path
        config = holders[0] if holders else DEFAULTED[path]
        taken, refused = [], []
        for value in (-1, -0.5, 0, 0.2, 1, 1.5, 7, "0.1", True, [1], 10**400, None):  # 10**400: no float holds it
            overrides = {
                **(json.loads(bind) if config == "eer_short.jsonnet" else {}),
                **_override(configs[config], path, value),
            }
            problems = list(_rule_problems(with_overrides(configs[config], overrides)))
            if rule.takes(value):
                assert problems == [], (path, value)
                taken.append(value)
            else:
                assert problems == [f"{path} must be {rule.describe()}, got {value!r}"], (path, value)
                refused.append((overrides, value))
        assert taken and len(refused) >= 3, path  # "0.1", True and [1] at least
        with pytest.raises(UserError) as raised:
            read_config(config, json.dumps(refused[0][0]))
        assert str(raised.value) == f"{path} must be {rule.describe()}, got {refused[0][1]!r}"
    for group_lr in (-1, 0, "fast", None):  # the heads' rate, in the optimizer's parameter groups
        overrides = json.dumps({"trainer.optimizer.parameter_groups.0.1.lr": group_lr})
        with pytest.raises(UserError, match=r"^trainer\.optimizer\.parameter_groups\.0\.1\.lr must be a learning rate"):
            read_config("eer_short.jsonnet", overrides)
    read_config("eer_short.jsonnet", '{"trainer.optimizer.parameter_groups.0.1.lr": 0.01}')
    with pytest.raises(UserError, match=r"^trainer\.cuda_device \(EER_CUDA_DEVICE\) 7: "):
        read_config("eer_short.jsonnet", '{"trainer.cuda_device": 7}')
