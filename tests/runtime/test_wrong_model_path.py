"""The model path of a command (predict, evaluate, eer-export-model) that is the wrong kind of model file:
an exported model's directory, a truncated archive. One error naming the path and the fix; nothing written."""

import pytest

from eer_plugin.common.errors import ArchiveError


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    from eer_plugin.models.export import export_model

    directory = tmp_path_factory.mktemp("export") / "tagger"
    export_model(str(archive), str(directory))
    return directory


def test_an_exported_model_given_to_a_command_names_tagger_load_and_the_archive(exported):
    from eer_plugin.runtime.archive import load_model_archive

    with pytest.raises(ArchiveError) as raised:
        load_model_archive(exported)
    message = str(raised.value)
    assert message.startswith(f"{exported}: an exported model (eer-ner eer-export-model)")
    assert f"Tagger.load({str(exported)!r})" in message and "needs the model.tar.gz it was exported from" in message


def test_the_predict_command_refuses_an_export_before_writing(exported, tmp_path, capsys):
    from eer_plugin.cli import main

    (tmp_path / "docs.jsonl").write_text('{"text": "Paris ."}\n')
    status = main(
        ["predict", str(exported), str(tmp_path / "docs.jsonl"), "--predictor", "eer_tagger", "--silent"]
        + ["--output-file", str(tmp_path / "out.jsonl")]
    )
    assert status == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"eer-ner predict: error: {exported}: an exported model") and len(err) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]


def test_a_truncated_archive_says_damaged_and_how_to_get_a_whole_one(archive, tmp_path):
    from eer_plugin.runtime.archive import load_model_archive

    truncated = tmp_path / "model.tar.gz"
    truncated.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(ArchiveError) as raised:
        load_model_archive(truncated)
    message = str(raised.value)
    assert message.startswith(f"{truncated}: damaged model archive (") and "copy it again" in message
    assert "\n" not in message


def _with_broken_config(archive, directory):
    """``archive`` extracted into ``directory`` with a config.json that is no longer JSON (a hand edit gone wrong)."""
    import tarfile

    with tarfile.open(archive) as source:
        source.extractall(directory, filter="data")
    config = directory / "config.json"
    config.write_text(config.read_text().replace("{", "{{", 2))
    return directory


def test_a_model_config_that_is_not_json_names_the_archive_not_a_temporary_directory(archive, tmp_path):
    import tarfile

    from eer_plugin.runtime.archive import load_model_archive

    extracted = _with_broken_config(archive, tmp_path / "extracted")
    broken = tmp_path / "model.tar.gz"
    with tarfile.open(broken, "w:gz") as target:
        for path in sorted(extracted.iterdir()):
            target.add(path, arcname=path.name)
    with pytest.raises(ArchiveError) as raised:
        load_model_archive(broken)
    message = str(raised.value)
    assert (
        message.startswith(f"{broken}: its config.json: not valid JSON (line:column ") and "eer-archive-" not in message
    )
    assert message.endswith("use the model.tar.gz (or serialization directory) that eer-ner train wrote")
    with pytest.raises(ArchiveError, match=f"^{extracted / 'config.json'}: not valid JSON"):
        load_model_archive(extracted)  # a serialization directory (weights beside its config)


def test_a_training_directory_without_best_th_says_the_training_is_not_done_and_names_its_checkpoint(archive, tmp_path):
    """A serialization directory whose training has not finished an epoch (config.json, vocabulary, no best.th)
    says so and how to continue it, not "archive a trained model again"; its latest checkpoint, once there,
    is named, and tagging with it as the weights file works."""
    import shutil
    import tarfile

    from eer_plugin.runtime.archive import MissingWeightsError, load_model_archive

    run = tmp_path / "run"
    with tarfile.open(archive) as source:
        source.extractall(run, filter="data")
    weights = run / "weights.th"
    shutil.move(weights, tmp_path / "weights.th")
    with pytest.raises(MissingWeightsError) as raised:
        load_model_archive(run)
    message = str(raised.value)
    assert message.startswith(f"{run}: a training's serialization directory without best.th")
    assert f"eer-ner train CONFIG -s {run} --recover" in message and "--weights-file" not in message
    shutil.copy(tmp_path / "weights.th", run / "model_state_e0.th")
    with pytest.raises(MissingWeightsError, match=f"latest checkpoint: --weights-file {run / 'model_state_e0.th'}$"):
        load_model_archive(run)
    assert load_model_archive(run, weights_file=str(run / "model_state_e0.th")).model is not None


def test_a_folder_of_models_or_a_run_copied_without_its_vocabulary_is_named(archive, tmp_path):
    """A directory given as the model that is no model: a folder holding archives names them, a serialization
    directory whose vocabulary/ is missing says so (not AllenNLP's "file .../vocabulary not found"), any other
    folder lists the three kinds of model."""
    import shutil
    import tarfile

    from eer_plugin.runtime.archive import load_model_archive

    models = tmp_path / "models"
    (models / "conll").mkdir(parents=True)
    shutil.copy(archive, models / "conll" / "model.tar.gz")
    with pytest.raises(ArchiveError, match=f"^{models}: a folder that holds model archives, not one model: give one "):
        load_model_archive(models)
    assert str(models / "conll" / "model.tar.gz") in str(pytest.raises(ArchiveError, load_model_archive, models).value)
    run = tmp_path / "run"
    with tarfile.open(archive) as source:
        source.extractall(run, filter="data")
    shutil.rmtree(run / "vocabulary")
    with pytest.raises(ArchiveError, match=f"^{run}: a serialization directory without its vocabulary/ folder"):
        load_model_archive(run)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArchiveError) as raised:
        load_model_archive(tmp_path / "empty")
    assert "nor a serialization directory (no config.json) nor an exported model (no eer_tagger.json)" in str(
        raised.value
    )
