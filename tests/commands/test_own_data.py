"""The own-data path (issue 33): the user's data only (no fixture fallback), packaged configs found by
name from any directory, the settings listed where users look, a warning on too few steps, Label
Studio tasks nobody annotated, and English clitics in the raw-text tokenizer."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from allennlp.common import Params
from conftest import FIXTURE_DATA, FIXTURES

from eer_plugin import cli
from eer_plugin.commands import split
from eer_plugin.common.errors import UserError
from eer_plugin.corpus import dev_split
from eer_plugin.corpus.documents import DataFileError, Document, DocumentError
from eer_plugin.corpus.formats import read_jsonl
from eer_plugin.corpus.importers import import_documents
from eer_plugin.corpus.tokenizer import tokenize_text
from eer_plugin.runtime.config_files import CONFIG_DIR, resolve_config
from eer_plugin.runtime.settings import SETTINGS
from eer_plugin.training.trainer import FEW_STEPS, warn_about_run

NAMES = [s.name for s in SETTINGS]


def without_fixture_data(monkeypatch) -> None:
    for name in FIXTURE_DATA:
        monkeypatch.delenv(name, raising=False)


# ------------------------------------------------------------------------------------------ settings
def test_train_help_lists_every_setting_and_config(capsys):
    """Every environment setting with its default; every hyperparameter with its -o key and default."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["train", "--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse's epilog re-wrapped: compare words
    for setting in SETTINGS:
        default = repr(setting.default) if setting.default == "" else setting.default
        if setting.is_hyperparameter:
            assert f"{setting.path} " in out and f"(default {default}; plans: {setting.name})" in out, setting.name
        else:
            assert f"{setting.name} (default {default})" in out, setting.name
    assert (
        "trainer.optimizer.parameter_groups.0.1.lr (cbl_lstm: trainer.optimizer.lr) (default 1e-3; plans: EER_HEAD_LEARNING_RATE)"
        in out
    )
    assert "eer_short.jsonnet" in out and "eer-settings" in out


def test_eer_settings_command_shows_values_set_here(monkeypatch, capsys):
    monkeypatch.setenv("EER_SEED", "2")
    monkeypatch.setenv("EER_BATCH_SIZE", "2")  # a hyperparameter: no config reads it from the environment
    assert cli.main(["eer-settings"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "EER_SEED (default 0; set here: 2)" in out and "trainer.min_steps (default 0; plans: EER_MIN_STEPS)" in out
    assert (
        "data_loader.batch_sampler.batch_size (default 4; plans: EER_BATCH_SIZE; EER_BATCH_SIZE IS SET HERE, which no config reads: give -o instead)"
        in out
    )


# ------------------------------------------------------------------------------------------ configs
def test_packaged_config_by_name_from_any_directory(tmp_path, monkeypatch):
    without_fixture_data(monkeypatch)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.jsonl").write_text((FIXTURES / "conll2003_tiny_partial.jsonl").read_text())
    monkeypatch.setenv("EER_TRAIN_DATA", "mine.jsonl")
    for name in ("eer_short.jsonnet", "eer_short", "training_configs/eer_short.jsonnet"):
        params = Params.from_file(name).as_dict(quiet=True)
        assert params["train_data_path"] == "mine.jsonl"
        # no dev or test set given: none is used (the fixtures never are)
        assert "validation_data_path" not in params and "test_data_path" not in params
        assert params["evaluate_on_test"] is False
        assert params["trainer"]["num_epochs"] == 50 and params["data_loader"]["batch_sampler"]["batch_size"] == 4
    assert "fixtures" not in json.dumps(params)
    # a local file of the same name wins, and its import of common.libsonnet resolves to the packaged one
    (tmp_path / "eer_short.jsonnet").write_text("(import 'common.libsonnet').experiment('raw', 'short')\n")
    assert resolve_config("eer_short.jsonnet") == "eer_short.jsonnet"
    assert Params.from_file("eer_short.jsonnet").as_dict(quiet=True)["model"]["ratio_loss_weight"] == 0
    monkeypatch.setenv("EER_DEV_DATA", "dev.jsonl")  # named, so used
    shutil.copy(tmp_path / "mine.jsonl", tmp_path / "dev.jsonl")
    assert (
        Params.from_file(str(CONFIG_DIR / "eer_all.jsonnet")).as_dict(quiet=True)["validation_data_path"] == "dev.jsonl"
    )


def test_missing_paths_are_one_line_errors(tmp_path, monkeypatch):
    without_fixture_data(monkeypatch)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        UserError, match=r"config 'eer_shrot.jsonnet' not found: no such file in .*packaged: .*eer_short.jsonnet"
    ):
        Params.from_file("eer_shrot.jsonnet")
    with pytest.raises(
        UserError, match=r"^eer_short.jsonnet: EER_TRAIN_DATA is not set: name your training data"
    ) as info:
        Params.from_file("eer_short.jsonnet")
    assert "\n" not in str(info.value)
    monkeypatch.setenv("EER_TRAIN_DATA", "typo.jsonl")
    with pytest.raises(DataFileError, match=r"train_data_path 'typo.jsonl' not found .*EER_TRAIN_DATA"):
        Params.from_file("eer_short.jsonnet")
    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "conll2003_tiny_partial.jsonl"))
    monkeypatch.setenv("EER_TEST_DATA", "test.txt")
    with pytest.raises(DataFileError, match=r"test_data_path 'test.txt' not found .*EER_TEST_DATA"):
        Params.from_file("eer_short.jsonnet")
    assert cli.main(["train", "nope.jsonnet", "-s", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()


def test_reader_missing_file_is_one_line(tmp_path, tiny_encoder):
    from eer_plugin.data.reader import PartialDocumentReader

    with pytest.raises(DataFileError, match=r"data file '.*nothing.txt' not found"):
        PartialDocumentReader(model_name=tiny_encoder).read_documents(str(tmp_path / "nothing.txt"))


# ------------------------------------------------------------------------------------------ trainer warnings
def test_few_steps_and_no_dev_set_warn_with_the_fix(caplog):
    small = {"data_loader": [0, 1], "num_epochs": 50, "validation_data_loader": None}
    warnings = warn_about_run(small)
    assert len(warnings) == 2 and "no dev set" in warnings[0] and "eer-ner eer-split" in warnings[0]
    assert "only 100 optimizer steps" in warnings[1] and f'-o \'{{"trainer.min_steps": {FEW_STEPS}' in warnings[1]
    assert '"trainer.min_steps": 150' in caplog.text
    assert warn_about_run({"data_loader": [0] * 10, "num_epochs": 20, "validation_data_loader": object()}) == []


# ------------------------------------------------------------------------------------------ dev split
def _docs(n: int, complete=()) -> list:
    return [Document(id=str(i), tokens=["w", str(i)], sentence_ends=[2], is_complete=i in complete) for i in range(n)]


def test_split_by_document_is_seeded_and_documented():
    docs = _docs(10, complete=(1, 4))
    train, dev = dev_split.split_documents(docs, 0.2, seed=0)
    assert (
        len(dev) == 2 and len(train) == 8 and {d.id for d in train} | {d.id for d in dev} == {str(i) for i in range(10)}
    )
    assert [d.id for d in dev] == sorted((d.id for d in dev), key=int)  # the input's order
    assert dev_split.split_documents(docs, 0.2, seed=0)[1] == dev  # reproducible
    assert {tuple(d.id for d in dev_split.split_documents(docs, 0.2, seed=s)[1]) for s in range(10)} != {
        tuple(d.id for d in dev)
    }
    _, complete_dev = dev_split.split_documents(docs, 0.5, seed=3, complete_only=True)
    assert sorted(d.id for d in complete_dev) == ["1", "4"]
    assert len(dev_split.split_documents(_docs(2), 0.9)[0]) == 1  # at least one document stays for training
    with pytest.raises(DocumentError, match="between 0 and 1"):
        dev_split.split_documents(docs, 1.0)
    with pytest.raises(DocumentError, match="cannot split 1 document:"):
        dev_split.split_documents(_docs(1), 0.5)


def test_split_command_writes_both_files(tmp_path, capsys):
    train, dev = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    split.main(
        [str(FIXTURES / "conll2003_tiny_partial.jsonl"), str(train), str(dev), "--dev-fraction", "0.5", "--seed", "1"]
    )
    original = read_jsonl(FIXTURES / "conll2003_tiny_partial.jsonl")
    assert sorted(d.id for d in read_jsonl(train) + read_jsonl(dev)) == sorted(d.id for d in original)
    assert f"EER_TRAIN_DATA={train} EER_DEV_DATA={dev}" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------ Label Studio
def _label_studio(tmp_path: Path) -> Path:
    result = {"type": "labels", "value": {"start": 0, "end": 7, "labels": ["LOC"]}}
    tasks = [
        {"id": 1, "data": {"text": "Germany's exports rose."}, "annotations": [{"id": 1, "result": [result]}]},
        {
            "id": 2,
            "data": {"text": "Merkel spoke in Paris."},
            "annotations": [],  # never annotated, only a model's guess
            "predictions": [{"result": [{"type": "labels", "value": {"start": 0, "end": 6, "labels": ["PER"]}}]}],
        },
        {
            "id": 3,
            "data": {"text": "Nobody was there."},
            "annotations": [{"id": 3, "result": []}],
        },  # annotated: no entity
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(tasks))
    return path


@pytest.mark.parametrize("options", [{"complete": True}, {"complete_ids": ["1", "2", "3"]}])
def test_label_studio_task_without_annotation_is_never_complete(tmp_path, options):
    docs, report = import_documents("label-studio", _label_studio(tmp_path), tokenize_text, **options)
    by_id = {d.id: d for d in docs}
    assert by_id["2"].spans == [] and not by_id["2"].is_complete  # predictions are no annotation
    assert by_id["1"].is_complete and by_id["3"].is_complete
    assert report.unannotated_documents == 1 and report.to_json()["unannotated_documents"] == 1
    assert "1 unannotated (never complete)" in report.summary()
    assert any("without any human annotation ('2')" in w for w in report.warnings)


# ------------------------------------------------------------------------------------------ clitics
@pytest.mark.parametrize(
    "text,words",
    [
        ("Germany's exports", ["Germany", "'s", "exports"]),
        ("the European Commission’s plan", ["the", "European", "Commission", "’s", "plan"]),
        ("don't can't isn't", ["do", "n't", "ca", "n't", "is", "n't"]),
        (
            "they're we've I'll she'd I'm GERMANY'S",
            ["they", "'re", "we", "'ve", "I", "'ll", "she", "'d", "I", "'m", "GERMANY", "'S"],
        ),
        ("O'Neill's aujourd'hui l'homme", ["O'Neill", "'s", "aujourd'hui", "l'homme"]),  # inner apostrophes stay
    ],
)
def test_tokenizer_splits_english_clitics(text, words):
    got, offsets, _ = tokenize_text(text)
    assert got == words and [text[a:b] for a, b in offsets] == words


def test_entity_before_a_possessive_is_not_snapped(tmp_path):
    docs, report = import_documents("label-studio", _label_studio(tmp_path), tokenize_text)
    assert docs[0].spans == [(0, 1, "LOC")] and docs[0].tokens[:2] == ["Germany", "'s"]
    assert report.snapped_spans == 0 and not any("snapped" in w for w in report.warnings)


# ------------------------------------------------------------------------------------------ end to end
def _run(args, cwd, env, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "eer_plugin.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.integration
def test_own_data_without_dev_set_from_any_directory(tmp_path, tiny_encoder):
    """A user's file, no dev or test set, a packaged config by name, outside the checkout: the run uses
    the user's data only (no fixture path in its config or metrics) and says once that it has no dev set."""
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(FIXTURES / "conll2003_tiny_partial.jsonl", work / "my_docs.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EER_")}
    env.update(
        EER_TRAIN_DATA="my_docs.jsonl",
        EER_ENCODER=tiny_encoder,
        EER_MAX_LENGTH="128",
        EER_PRECISION="fp32",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    done = _run(["train", "eer_short.jsonnet", "-s", "model", "-o", '{"trainer.num_epochs": 2}'], work, env)
    assert done.returncode == 0, done.stderr[-3000:]
    log = done.stdout + done.stderr  # AllenNLP logs to stdout
    assert log.count("no dev set (EER_DEV_DATA is not set)") == 1
    assert (
        "only 6 optimizer steps" in log and '"trainer.min_steps": 150' in log
    )  # 2 epochs of 3 batches: the warning and its fix
    config = (work / "model" / "config.json").read_text()
    metrics_text = (work / "model" / "metrics.json").read_text()
    for text in (config, metrics_text):
        assert str(FIXTURES) not in text and "conll2003_tiny" not in text
    assert json.loads(config)["train_data_path"] == "my_docs.jsonl"
    metrics = json.loads(metrics_text)
    assert not [k for k in metrics if k.startswith(("validation_", "best_validation_", "test_"))], sorted(metrics)
    assert (work / "model" / "model.tar.gz").exists()
    # a wrong input path is one line, not a traceback
    (work / "docs.jsonl").write_text('{"text": "Fischler met Loyola de Palacio in Brussels."}\n')
    for args in (
        ["predict", "model/model.tar.gz", "missing.jsonl", "--predictor", "eer_tagger", "--output-file", "p.jsonl"],
        ["evaluate", "model/model.tar.gz", "missing.txt"],
    ):
        failed = _run(args, work, env)
        assert failed.returncode == 1 and "Traceback" not in failed.stderr, failed.stderr[-3000:]
        assert (
            failed.stderr.strip().splitlines()[-1].startswith(f"eer-ner {args[0]}: error: ")
            and "missing." in failed.stderr
        )


@pytest.mark.integration
def test_importing_the_plugin_writes_no_settings_into_the_environment():
    env = {k: v for k, v in os.environ.items() if not k.startswith("EER_")}
    code = "import os, eer_plugin; print(sorted(k for k in os.environ if k.startswith('EER_')))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr[-2000:]
