"""The EER tagger end to end on the fixtures with the tiny local encoder."""

import json
from pathlib import Path

import pytest
import torch
from conftest import FIXTURES, REPO, hyper

# cbl_* configs are run by `allennlp cbl` (tests/training/test_cbl.py)
CONFIGS = sorted(c for c in (REPO / "training_configs").glob("*.jsonnet") if not c.name.startswith("cbl_"))


def train(config: str, serialization_dir: Path, overrides: str = ""):
    from allennlp.commands.train import train_model_from_file

    return train_model_from_file(str(REPO / "training_configs" / config), str(serialization_dir), overrides=overrides)


def trained_run(tmp_path_factory, tiny_encoder, config: str, epochs: int, overrides: dict = None):
    mp = pytest.MonkeyPatch()
    mp.setenv("EER_ENCODER", tiny_encoder)
    mp.setenv("EER_MAX_LENGTH", "128")
    directory = tmp_path_factory.mktemp(config.split(".")[0])
    yield train(config, directory, json.dumps({"trainer.num_epochs": epochs, **(overrides or {})})), directory
    mp.undo()


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_encoder):
    """One EER model trained a few epochs on the partial fixture, archived."""
    yield from trained_run(tmp_path_factory, tiny_encoder, "eer_short.jsonnet", 3)


@pytest.mark.integration
@pytest.mark.parametrize("config", [c.name for c in CONFIGS])
def test_every_config_trains_on_the_fixtures(config, tiny_env, monkeypatch, tmp_path):
    train(config, tmp_path / "out", hyper(config, EER_EPOCHS=1))
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["epoch"] == 0 and "test_f1-measure-overall" in metrics


def test_configs_default_to_the_paper_settings(monkeypatch):
    from allennlp.common import Params

    eer = Params.from_file(str(REPO / "training_configs" / "eer_short.jsonnet")).as_dict()
    assert eer["trainer"]["num_epochs"] == 50
    assert eer["trainer"]["optimizer"]["lr"] == 2e-5
    assert eer["trainer"]["learning_rate_scheduler"] == {"type": "slanted_triangular", "cut_frac": 0.1, "ratio": 16}
    assert (eer["model"]["entity_ratio"], eer["model"]["ratio_margin"], eer["model"]["ratio_loss_weight"]) == (
        0.15,
        0.05,
        10,
    )
    assert eer["dataset_reader"]["variant"] == "short" and not eer["dataset_reader"]["assume_complete"]
    assert eer["trainer"]["validation_metric"] == "+f1-measure-overall"
    # evaluation files are read as they are: gold CoNLL/OntoNotes documents are complete, a partial
    # .jsonl stays partial (scored by the partial-* metrics, tests/models/test_partial_dev.py)
    assert not eer["validation_dataset_reader"]["assume_complete"]
    raw = Params.from_file(str(REPO / "training_configs" / "raw_all.jsonnet")).as_dict()
    assert raw["trainer"]["num_epochs"] == 20 and raw["model"]["ratio_loss_weight"] == 0
    assert raw["dataset_reader"]["assume_complete"]


@pytest.mark.integration
def test_metrics_and_archive_round_trip(trained):
    from allennlp.models.archival import load_archive

    model, directory = trained
    metrics = json.loads((directory / "metrics.json").read_text())
    for key in ("training_rho_hat", "validation_f1-measure-overall", "validation_rho_hat", "test_f1-measure-overall"):
        assert key in metrics, key
    assert 0.0 <= metrics["training_rho_hat"] <= 1.0
    archive = load_archive(str(directory / "model.tar.gz"))
    loaded = archive.model
    loaded.eval()
    model.eval()
    reader = archive.validation_dataset_reader
    instances = list(reader.read(str(FIXTURES / "conll2003_tiny_dev.txt")))
    before = model.forward_on_instances(instances)
    after = loaded.forward_on_instances(instances)
    for a, b in zip(before, after):
        assert a["predicted_tags"].tolist() == b["predicted_tags"].tolist()
        assert a["word_spans"] == b["word_spans"]
        torch.testing.assert_close(torch.as_tensor(a["emissions"]), torch.as_tensor(b["emissions"]))


@pytest.mark.integration
def test_eer_loss_differs_from_supervised_on_partial_data(trained):
    from allennlp.data import Batch

    model, directory = trained
    from allennlp.models.archival import load_archive

    archive = load_archive(str(directory / "model.tar.gz"))
    reader = archive.dataset_reader
    instances = list(reader.read(str(FIXTURES / "conll2003_tiny_partial.jsonl")))[:4]
    for instance in instances:
        reader.apply_token_indexers(instance)
    batch = Batch(instances)
    batch.index_instances(model.vocab)
    tensors = batch.as_tensor_dict()
    assert (tensors["tags"] == model.vocab.get_token_index("_", "labels")).any()  # partial data
    model.train()
    torch.manual_seed(0)
    model.dropout.p = 0.0
    eer = model(**tensors)["loss"].item()
    model.ratio_loss_weight = 0.0
    partial_only = model(**tensors)["loss"].item()
    # the supervised (Raw) view of the same chunks: unmarked subwords observed as O
    latent = model.vocab.get_token_index("_", "labels")
    tensors["tags"] = torch.where(
        tensors["tags"] == latent, model.vocab.get_token_index("O", "labels"), tensors["tags"]
    )
    supervised = model(**tensors)["loss"].item()
    model.ratio_loss_weight = 10.0
    assert supervised != pytest.approx(partial_only)
    assert supervised > partial_only  # more observed tags: a smaller likelihood
    assert eer >= partial_only


@pytest.fixture(scope="module")
def raw_trained(tmp_path_factory, tiny_encoder):
    """A Raw model (unmarked words observed as O): it under-predicts entities, the Raw+CD setting."""
    yield from trained_run(tmp_path_factory, tiny_encoder, "raw_all.jsonnet", 10, {"trainer.optimizer.lr": 1e-3})


@pytest.mark.integration
def test_o_cost_increases_recall_monotonically(raw_trained):
    from allennlp.models.archival import load_archive

    model, directory = raw_trained
    archive = load_archive(str(directory / "model.tar.gz"))
    reader = archive.validation_dataset_reader
    instances = list(reader.read(str(FIXTURES / "conll2003_tiny_dev.txt")))
    recalls, counts = [], []
    for cost in [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]:
        model.o_cost = cost
        model.get_metrics(reset=True)
        outputs = model.forward_on_instances(instances)
        recalls.append(model.get_metrics(reset=True)["recall-overall"])
        # subword O tags on the best path: non-increasing in the cost (exchange argument)
        counts.append(sum(int((o["predicted_tags"][o["mask"]] == 0).sum()) for o in outputs))
    model.o_cost = 0.0
    assert all(a <= b + 1e-12 for a, b in zip(recalls, recalls[1:])), recalls
    assert all(a >= b for a, b in zip(counts, counts[1:])), counts
    assert counts[-1] < counts[0] and recalls[-1] > recalls[0]


@pytest.mark.integration
def test_predictor_raw_text_offsets_and_conll_output(trained):
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    _, directory = trained
    archive = load_archive(str(directory / "model.tar.gz"))
    predictor = Predictor.from_archive(archive, "eer_tagger")
    model = predictor._model
    model.o_cost = 50.0  # force entities so spans exist
    text = "John Smith visited New York.  He met the mayor of London!\nThen he left."
    out = predictor.predict_json({"id": "x", "text": text})
    assert out["tokens"][:4] == ["John", "Smith", "visited", "New"]
    assert out["spans"], out
    for span in out["spans"]:
        assert text[span["char_start"] : span["char_end"]] == span["text"]
        assert (
            " ".join(out["tokens"][span["start"] : span["end"]]).replace(" .", ".").startswith(span["text"].split()[0])
        )
        assert 0.0 <= span["probability"] <= 1.0
    assert len(out["tags"]) == len(out["tokens"])
    long_doc = {"tokens": ["word"] * 400, "sentence_ends": list(range(20, 401, 20))}
    long_out = predictor.predict_json(long_doc)
    assert len(long_out["tags"]) == 400
    conll = Predictor.from_archive(archive, "eer_tagger", extra_args={"output_format": "conll"})
    lines = conll.dump_line(out).strip().split("\n")
    assert lines[:3] == ["-DOCSTART- O", "# id = x", ""] and lines[3].split()[0] == "John"
    model.o_cost = 0.0


@pytest.mark.integration
def test_tune_o_cost_is_deterministic_and_stored(raw_trained, tmp_path):
    import argparse

    from allennlp.models.archival import load_archive

    from eer_plugin.commands.tune_o_cost import tune_o_cost

    _, directory = raw_trained
    dev = str(FIXTURES / "conll2003_tiny_dev.txt")
    args = argparse.Namespace(
        archive_file=str(directory / "model.tar.gz"),
        dev_file=dev,
        test_file=dev,
        n_calls=12,
        low=1e-4,
        high=1e2,
        seed=0,
        batch_size=8,
        cuda_device=-1,
        output_archive=str(tmp_path / "cd.tar.gz"),
    )
    first, second = tune_o_cost(args), tune_o_cost(args)
    assert first["evaluations"] == second["evaluations"] and len(first["evaluations"]) == 12
    assert first["dev_f1"] == max(e["dev_f1"] for e in first["evaluations"])
    assert first["dev_f1"] >= first["dev_f1_without_cost"] - 1e-12 or first["o_cost"] > 0
    assert json.loads((directory / "o_cost.json").read_text())["o_cost"] == first["o_cost"]
    assert load_archive(str(tmp_path / "cd.tar.gz")).model.o_cost == pytest.approx(first["o_cost"])
