"""Model selection without a complete dev set (issue 12, part 3): the tagger's partial-* metrics."""

import json
import logging

import pytest
from conftest import FIXTURES, REPO


def _evaluate(model, reader, path):
    model.eval()
    model.get_metrics(reset=True)
    model.forward_on_instances(list(reader.read(str(path))))
    return model.get_metrics(reset=True)


@pytest.fixture(scope="module")
def partial_dev_run(tmp_path_factory, tiny_encoder):
    """EER trained on the partial fixture, selecting its checkpoint on *partial* dev data."""
    from allennlp.commands.train import train_model_from_file

    mp = pytest.MonkeyPatch()
    for key, value in {
        "EER_ENCODER": tiny_encoder,
        "EER_MAX_LENGTH": "128",
        "EER_DEV_DATA": str(FIXTURES / "conll2003_tiny_partial.jsonl"),
    }.items():
        mp.setenv(key, value)
    directory = tmp_path_factory.mktemp("partial-dev")
    overrides = '{"trainer.num_epochs": 2, "trainer.validation_metric": "+partial-f1"}'
    model = train_model_from_file(
        str(REPO / "training_configs" / "eer_short.jsonnet"), str(directory), overrides=overrides
    )
    yield model, directory
    mp.undo()


@pytest.mark.integration
def test_training_selects_on_partial_f1(partial_dev_run):
    _, directory = partial_dev_run
    metrics = json.loads((directory / "metrics.json").read_text())
    assert "best_validation_partial-f1" in metrics and "validation_partial-recall" in metrics
    assert not any(key.startswith("training_partial-") for key in metrics)  # evaluation batches only
    epochs = [json.loads(p.read_text()) for p in sorted(directory.glob("metrics_epoch_*.json"))]
    best = max(range(len(epochs)), key=lambda i: epochs[i]["validation_partial-f1"])
    assert metrics["best_epoch"] == best


@pytest.mark.integration
def test_partial_dev_data_is_scored_as_annotated_and_said_so(partial_dev_run, caplog):
    from allennlp.models.archival import load_archive

    _, directory = partial_dev_run
    archive = load_archive(str(directory / "model.tar.gz"))
    model, reader = archive.model, archive.validation_dataset_reader
    model.o_cost = 30.0  # tag plenty, so that spans are found and unmarked words are tagged too
    with caplog.at_level(logging.WARNING):
        partial = _evaluate(model, reader, FIXTURES / "conll2003_tiny_partial.jsonl")
    assert "partially annotated" in caplog.text
    assert partial["partial-annotated-spans"] == 20  # the fixture's 20 annotated entities
    assert partial["partial-recall"] > 0
    assert partial["partial-complete-chunks"] == 0 and partial["precision-overall"] == 0  # nothing complete to score
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        gold = _evaluate(model, reader, FIXTURES / "conll2003_tiny_dev.txt")
    assert "partially annotated" not in caplog.text
    assert gold["partial-uses-complete-precision"] == 1.0
    assert gold["partial-f1"] == pytest.approx(gold["f1-measure-overall"])
    assert gold["partial-recall"] == pytest.approx(gold["recall-overall"])
