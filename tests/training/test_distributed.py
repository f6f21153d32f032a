"""Distributed training (issue 30): no parameter without a gradient, old archives, two CPU workers.

PyTorch's DistributedDataParallel fails in the second training batch when a parameter gets no
gradient. The pretrained encoders (MiniLM and mpnet, BERT and MPNet) load with a pooler the taggers
never use; the models drop it (eer_plugin/models/encoder_pooler.py). The tiny encoders here are built
with a pooler, like the real ones.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import FIXTURES, REPO, build_tiny_encoder, hyper

#: one config of every approach that trains with `allennlp train` (EER, Raw, Gold, SNS, Gold-SNS); the variants
#: all / short / shortest differ in their reader only. CBL's rounds are `eer-ner cbl` (see docs/scale-out.md).
APPROACHES = ["eer_short.jsonnet", "raw_short.jsonnet", "gold.jsonnet", "sns_short.jsonnet", "gold_sns.jsonnet"]


def build_tiny_mpnet(directory: Path) -> Path:
    """A 2-layer MPNet (the architecture of all-mpnet-base-v2, pooler included) with the tiny BERT's
    character-level WordPiece tokenizer."""
    from transformers import MPNetConfig, MPNetModel

    build_tiny_encoder(directory)
    vocab_size = len((directory / "vocab.txt").read_text().split())
    (directory / "model.safetensors").unlink()
    torch.manual_seed(0)
    config = MPNetConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=520,
        pad_token_id=0,
    )
    MPNetModel(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_mpnet(tmp_path_factory) -> str:
    return str(build_tiny_mpnet(tmp_path_factory.mktemp("tiny-mpnet")))


def saved_weight_names(encoder: str):
    from safetensors import safe_open

    with safe_open(str(Path(encoder) / "model.safetensors"), "pt") as weights:
        return list(weights.keys())


def params_of(config: str) -> dict:
    from allennlp.common import Params

    return Params.from_file(str(REPO / "training_configs" / config)).as_dict(quiet=True)


def build(config: str):
    """The config's reader, training instances (indexed) and model, as `allennlp train` builds them."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model

    params = Params(params_of(config))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))
    vocab = Vocabulary.from_instances(instances)
    for instance in instances:
        reader.apply_token_indexers(instance)
        instance.index_fields(vocab)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    return vocab, instances, model


def one_backward(model, instances) -> None:
    from allennlp.data import Batch

    model.train()
    torch.manual_seed(0)
    model(**Batch(instances).as_tensor_dict())["loss"].backward()


@pytest.mark.parametrize("config", APPROACHES)
@pytest.mark.parametrize("encoder", ["bert", "mpnet"])
def test_every_parameter_gets_a_gradient(config, encoder, tiny_env, tiny_mpnet, monkeypatch):
    """What DDP needs without find_unused_parameters: one backward reaches every trainable parameter."""
    path = tiny_env if encoder == "bert" else tiny_mpnet
    monkeypatch.setenv("EER_ENCODER", path)
    assert any(name.startswith("pooler.") for name in saved_weight_names(path))  # like the real encoders
    _, instances, model = build(config)
    one_backward(model, instances[:2])
    without = [name for name, p in model.named_parameters() if p.requires_grad and p.grad is None]
    assert not without, f"{config}: parameters without a gradient: {without}"
    assert not any(".pooler." in name for name, _ in model.named_parameters())


def test_an_archive_saved_with_the_pooler_still_loads(tiny_env, tmp_path, monkeypatch):
    """Archives trained before the pooler was dropped hold its weights: they load, to the same model."""
    from allennlp.models.archival import archive_model, load_archive

    import eer_plugin.models.tagger as tagger_module

    with monkeypatch.context() as old_code:
        old_code.setattr(tagger_module, "drop_unused_pooler", lambda embedder: 0)
        vocab, instances, old_model = build("eer_short.jsonnet")
    state = old_model.state_dict()
    assert any(".pooler." in key for key in state)
    run = tmp_path / "old_run"
    vocab.save_to_files(str(run / "vocabulary"))
    torch.save(state, run / "best.th")
    (run / "config.json").write_text(json.dumps(params_of("eer_short.jsonnet")))
    archive_model(str(run))
    loaded = load_archive(str(run / "model.tar.gz")).model
    assert not any(".pooler." in key for key in loaded.state_dict())
    for name, value in loaded.state_dict().items():
        torch.testing.assert_close(value, state[name], msg=name)
    old_model.eval()
    loaded.eval()
    before, after = old_model.forward_on_instances(instances[:2]), loaded.forward_on_instances(instances[:2])
    for a, b in zip(before, after):
        torch.testing.assert_close(torch.as_tensor(a["emissions"]), torch.as_tensor(b["emissions"]))


def init_one_process_group(tmp_path: Path) -> None:
    torch.distributed.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)


def test_a_worker_leaves_its_process_group_when_it_has_trained(tmp_path, monkeypatch):
    """The worker ``mp.spawn`` runs is AllenNLP's, followed by ``destroy_process_group()`` (without it,
    gloo's threads are torn down at interpreter exit: now and then a SIGABRT after training)."""
    import pickle

    from allennlp.commands import train as train_command

    from eer_plugin.training import distributed

    assert train_command._train_worker is distributed.train_worker
    # mp.spawn pickles the function by name: the spawned worker finds the same function
    assert pickle.loads(pickle.dumps(train_command._train_worker)) is distributed.train_worker

    def allennlp_worker(process_rank, params):
        init_one_process_group(tmp_path)
        return ("trained", process_rank, params)

    monkeypatch.setattr(distributed, "_ALLENNLP_TRAIN_WORKER", allennlp_worker)
    assert distributed.train_worker(0, {"p": 1}) == ("trained", 0, {"p": 1})
    assert not torch.distributed.is_initialized()
    # a run of one process (no group) is untouched
    monkeypatch.setattr(distributed, "_ALLENNLP_TRAIN_WORKER", lambda rank: rank)
    assert distributed.train_worker(3) == 3


def test_a_failed_worker_keeps_its_group(tmp_path, monkeypatch):
    """A worker that raises is left as AllenNLP leaves it (destroying could wait for peers that are gone)."""
    from eer_plugin.training import distributed

    def failing_worker(process_rank):
        init_one_process_group(tmp_path)
        raise RuntimeError("training failed")

    monkeypatch.setattr(distributed, "_ALLENNLP_TRAIN_WORKER", failing_worker)
    try:
        with pytest.raises(RuntimeError, match="training failed"):
            distributed.train_worker(0)
        assert torch.distributed.is_initialized()
    finally:
        distributed.leave_process_group()


def test_worker_0_evaluates_the_test_data_outside_the_group(tmp_path):
    """``TrainModel.finish`` (worker 0's test evaluation) runs after the group is gone: the metrics do not
    wait for the other workers' counts, and the reader does not shard the test data."""
    from allennlp.commands.train import TrainModel

    from eer_plugin.training import distributed

    assert getattr(TrainModel.finish, "eer_leaves_process_group", False)
    seen = []
    finish = distributed._leaving_first(lambda train_model, metrics: seen.append(torch.distributed.is_initialized()))
    init_one_process_group(tmp_path)
    finish(object(), {})
    assert seen == [False] and not torch.distributed.is_initialized()


def train_distributed(config: str, out: Path, settings: dict, timeout: int = 600) -> subprocess.CompletedProcess:
    """``eer-ner train`` on two CPU workers; ``settings`` by their ``EER_*`` names (environment settings in
    the environment, hyperparameters as ``-o``). The test data (``EER_TEST_DATA``) is evaluated by worker 0
    after training, as in a run of one process."""
    from eer_plugin.runtime.settings import BY_NAME

    eer_ner = Path(sys.executable).parent / "eer-ner"
    env = {k: v for k, v in settings.items() if not BY_NAME[k].is_hyperparameter}
    overrides = {"distributed": {"cuda_devices": [-1, -1]}, **json.loads(hyper(config, **settings))}
    return subprocess.run(
        [str(eer_ner), "train", f"training_configs/{config}", "-s", str(out), "-o", json.dumps(overrides)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=REPO,
        timeout=timeout,
    )


@pytest.mark.integration
@pytest.mark.parametrize("config, ratio_control", [("eer_short.jsonnet", "bind"), ("sns_short.jsonnet", "fixed")])
def test_distributed_training_on_two_cpu_workers(config, ratio_control, tiny_env, tmp_path):
    """AllenNLP's own distributed training (gloo, two CPU processes) with a pooler-bearing encoder:
    batch size 1 gives each worker several training batches (DDP fails in the second one when a
    parameter got no gradient in the first). EER with the binding control all-reduces rho_hat."""
    assert any(name.startswith("pooler.") for name in saved_weight_names(tiny_env))
    env = {"EER_EPOCHS": "1", "EER_BATCH_SIZE": "1", "EER_RATIO_CONTROL": ratio_control}
    result = train_distributed(config, tmp_path / "dist", env)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "dist" / "metrics.json").read_text())
    assert "validation_f1-measure-overall" in metrics and (tmp_path / "dist" / "model.tar.gz").is_file()
    if config.startswith("eer"):
        assert 0.0 <= metrics["training_rho_hat"] <= 1.0
    assert sorted(p.name for p in (tmp_path / "dist").glob("out_worker*.log")) == ["out_worker0.log", "out_worker1.log"]
    for rank in (0, 1):
        assert f"worker {rank} left the process group" in (tmp_path / "dist" / f"out_worker{rank}.log").read_text()


@pytest.mark.integration
def test_the_readme_command_trains_with_the_packaged_minilm(tmp_path, monkeypatch):
    """Issue 30's command as a user runs it: the packaged all-MiniLM-L6-v2, no dev or test setting
    beyond the fixtures' data, two CPU workers."""
    env = {
        "EER_EPOCHS": "2",
        "EER_ENCODER": "all-MiniLM-L6-v2",
        "EER_TRAIN_DATA": str(FIXTURES / "conll2003_tiny_partial.jsonl"),
        "EER_DEV_DATA": str(FIXTURES / "conll2003_tiny_dev.txt"),
        "EER_TEST_DATA": "",
    }
    result = train_distributed("eer_short.jsonnet", tmp_path / "dist", env)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "dist" / "metrics.json").read_text())
    assert metrics["epoch"] == 1 and 0.0 <= metrics["training_rho_hat"] <= 1.0
    assert (tmp_path / "dist" / "model.tar.gz").is_file()


@pytest.mark.integration
def test_distributed_training_evaluates_the_test_data_like_one_process(tiny_env, tmp_path):
    """With EER_TEST_DATA, worker 0 evaluates the whole test file after training (it waited forever for
    the finished workers before): the test metrics equal ``eer-ner evaluate`` of the archive."""
    test_file = FIXTURES / "conll2003_tiny_dev.txt"
    env = {
        "EER_EPOCHS": "1",
        "EER_TRAIN_DATA": str(FIXTURES / "conll2003_tiny_partial.jsonl"),
        "EER_DEV_DATA": str(test_file),
        "EER_TEST_DATA": str(test_file),
    }
    result = train_distributed("eer_short.jsonnet", tmp_path / "dist", env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "dist" / "metrics.json").read_text())
    evaluated = subprocess.run(
        [
            str(Path(sys.executable).parent / "eer-ner"),
            "evaluate",
            str(tmp_path / "dist" / "model.tar.gz"),
            str(test_file),
            "--output-file",
            str(tmp_path / "evaluated.json"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    alone = json.loads((tmp_path / "evaluated.json").read_text())
    for key in ("f1-measure-overall", "precision-overall", "recall-overall"):
        assert metrics[f"test_{key}"] == pytest.approx(alone[key], abs=1e-6)
    assert metrics["test_f1-measure-overall"] == pytest.approx(metrics["best_validation_f1-measure-overall"], abs=1e-6)
