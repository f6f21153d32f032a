"""Training settings of issue 11: one head learning rate for every approach, the ratio-calibrated
start, step budgets, the ablation switches and the encoder's precision."""

import json
import os
import re

import pytest
import torch
from conftest import FIXTURES, REPO, hyper
from oracles import sequence_score

from eer_plugin.core.calibration import RatioBatch, calibrate_outside_shift, sample_ratio
from eer_plugin.core.crf import ConstrainedCRF
from eer_plugin.core.tags import BiluoScheme
from eer_plugin.training.trainer import apply_budget, batches_for_budget, epochs_for_budget

CONFIGS = sorted(c.name for c in (REPO / "training_configs").glob("*.jsonnet"))


def _scheme_and_crf(types=("PER", "LOC")):
    scheme = BiluoScheme(list(types))
    crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end())
    return scheme, crf


# ---------------------------------------------------------------- calibration (core)
@pytest.mark.parametrize("target", [0.05, 0.15, 0.3, 0.6])
def test_calibration_reaches_the_target_ratio_on_ragged_batches(target, monkeypatch):
    from eer_plugin.core import calibration

    evaluations = []
    counted = calibration.sample_ratio
    monkeypatch.setattr(calibration, "sample_ratio", lambda *a, **k: evaluations.append(1) or counted(*a, **k))
    scheme, crf = _scheme_and_crf()
    torch.manual_seed(0)
    batches = []
    for lengths in ([7, 3, 5], [9, 2]):
        n = max(lengths)
        mask = torch.arange(n) < torch.tensor(lengths).unsqueeze(1)
        ratio_mask = mask & (torch.arange(n) > 0) & (torch.arange(n) < torch.tensor(lengths).unsqueeze(1) - 1)
        emissions = torch.randn(len(lengths), n, scheme.num_tags) * 3
        batches.append(RatioBatch(emissions, mask, ratio_mask))
    entity_mask = scheme.entity_mask()
    result = calibrate_outside_shift(crf, batches, entity_mask, scheme.outside_index, target, tolerance=1e-4)
    assert abs(result.ratio_after - target) <= 1e-4
    assert len(evaluations) <= 15  # each evaluation is a pass over the whole sample: regula falsi, not bisection
    # the reported ratios are those of the sample, recomputed independently
    assert sample_ratio(crf, batches, entity_mask, scheme.outside_index) == pytest.approx(result.ratio_before)
    shifted = sample_ratio(crf, batches, entity_mask, scheme.outside_index, result.outside_shift)
    assert shifted == pytest.approx(result.ratio_after)
    assert result.positions == sum(int(b.ratio_mask.sum()) for b in batches)


def test_the_ratio_falls_as_the_outside_score_rises():
    scheme, crf = _scheme_and_crf(("A",))
    torch.manual_seed(1)
    mask = torch.ones(2, 6, dtype=torch.bool)
    batch = [RatioBatch(torch.randn(2, 6, scheme.num_tags), mask, mask)]
    ratios = [sample_ratio(crf, batch, scheme.entity_mask(), scheme.outside_index, b) for b in range(-6, 7)]
    assert all(a >= b for a, b in zip(ratios, ratios[1:])) and ratios[0] > 0.9 and ratios[-1] < 0.05


def test_calibration_rejects_impossible_targets():
    scheme, crf = _scheme_and_crf()
    mask = torch.ones(1, 4, dtype=torch.bool)
    batch = [RatioBatch(torch.zeros(1, 4, scheme.num_tags), mask, mask)]
    for target in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match=r"^target_ratio must be a number in \(0, 1\) \(rho: "):
            calibrate_outside_shift(crf, batch, scheme.entity_mask(), scheme.outside_index, target)
    with pytest.raises(ValueError, match="no counted position"):
        sample_ratio(crf, [RatioBatch(batch[0].emissions, mask, mask & False)], scheme.entity_mask(), 0)


# ---------------------------------------------------------------- models built from the configs
def _model_and_batches(
    config, tiny_encoder=None, data=FIXTURES / "conll2003_tiny_partial.jsonl", batch_size=4, overrides=""
):
    """The untrained model of ``config`` (with the ``-o`` ``overrides``) and its training data as tensor batches."""
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model

    params = Params.from_file(str(REPO / "training_configs" / config), overrides)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(str(data)))
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    batches = []
    for start in range(0, len(instances), batch_size):
        batch = Batch(instances[start : start + batch_size])
        batch.index_instances(vocab)
        batches.append(batch.as_tensor_dict())
    return model, batches


def test_an_untrained_eer_model_starts_at_rho(monkeypatch):
    """The packaged MiniLM's real initial scores: rho_hat of the model (evaluation forward, the
    tagger's own metric) equals rho within 0.01 after calibration; far from it before."""
    from eer_plugin.training.ratio_init import calibrate_tagger

    monkeypatch.setenv("EER_MAX_LENGTH", "128")
    model, batches = _model_and_batches("eer_short.jsonnet")

    def model_rho_hat():
        model.eval()
        model.get_metrics(reset=True)
        with torch.no_grad():
            for batch in batches:
                model(tokens=batch["tokens"], metadata=batch["metadata"])
        return model.get_metrics(reset=True)["rho_hat"]

    before = model_rho_hat()
    result = calibrate_tagger(model, batches)
    after = model_rho_hat()
    assert abs(before - model.entity_ratio) > 0.2  # an untrained BILUO tagger sits far from rho
    assert result.ratio_before == pytest.approx(before, abs=0.02)
    assert abs(result.ratio_after - model.entity_ratio) <= 1e-3
    assert abs(after - model.entity_ratio) <= 0.01, (before, after)
    assert not model.training  # calibrate_tagger restores the mode it found (evaluation here)


@pytest.mark.integration
def test_train_calibrates_once_and_logs_the_bias(tiny_env, monkeypatch, tmp_path):
    from allennlp.commands.train import train_model_from_file

    train_model_from_file(
        str(REPO / "training_configs" / "eer_short.jsonnet"),
        str(tmp_path / "out"),
        overrides=hyper("eer_short", EER_EPOCHS=1),
    )
    record = json.loads((tmp_path / "out" / "ratio_init.json").read_text())
    assert abs(record["ratio_after"] - 0.15) <= 1e-3 and record["entity_ratio"] == 0.15
    assert record["ratio_before"] > 0.5 and record["outside_shift"] > 0
    plain = hyper("eer_short", EER_EPOCHS=1, EER_RATIO_INIT="none")
    train_model_from_file(
        str(REPO / "training_configs" / "eer_short.jsonnet"), str(tmp_path / "plain"), overrides=plain
    )
    assert not (tmp_path / "plain" / "ratio_init.json").exists()


@pytest.mark.integration  # every config evaluated 3 times: a jsonnet evaluation costs 0.15 s at least
@pytest.mark.parametrize(
    "setting, calibrated", [("eer", {"eer"}), ("all", {"eer", "raw", "gold", "cbl_bert", "cbl_lstm"}), ("none", set())]
)
def test_ratio_init_setting_selects_the_approaches(setting, calibrated, monkeypatch):
    from allennlp.common import Params

    for config in CONFIGS:
        params = Params.from_file(
            str(REPO / "training_configs" / config), hyper(config, EER_RATIO_INIT=setting)
        ).as_dict()
        approach = re.sub(r"_(all|short|shortest)$", "", config[: -len(".jsonnet")])
        assert (params["trainer"]["callbacks"] == [{"type": "eer_ratio_init"}]) == (approach in calibrated), config


# ---------------------------------------------------------------- one head learning rate
@pytest.mark.parametrize("config", CONFIGS)
def test_one_head_learning_rate_reaches_every_fresh_parameter(config, tiny_env, monkeypatch):
    """Every parameter that is not the pretrained encoder learns at EER_HEAD_LEARNING_RATE, the
    encoder at EER_LEARNING_RATE, in every approach (the optimizer AllenNLP builds from the config)."""
    from allennlp.common import Params
    from allennlp.training.optimizers import Optimizer

    rates = hyper(config, EER_HEAD_LEARNING_RATE="7e-4", EER_LEARNING_RATE="3e-5")
    model, _ = _model_and_batches(config, overrides=rates)
    optimizer_params = Params.from_file(str(REPO / "training_configs" / config), rates).pop("trainer").pop("optimizer")
    named = [[n, p] for n, p in model.named_parameters() if p.requires_grad]
    optimizer = Optimizer.from_params(model_parameters=named, params=optimizer_params)
    rate = {id(p): group["lr"] for group in optimizer.param_groups for p in group["params"]}
    pretrained = "embedding" not in config and "lstm" not in config
    for name, parameter in named:
        if pretrained and name.startswith("text_field_embedder."):
            assert rate[id(parameter)] == 3e-5, name
        else:
            assert rate[id(parameter)] == 7e-4, name
    assert any(rate[id(p)] == 7e-4 for _, p in named)


# ---------------------------------------------------------------- step budgets
def test_epochs_and_batches_for_budget():
    assert epochs_for_budget(10, 0, 5) == 10
    assert epochs_for_budget(10, 30, 5) == 10
    assert epochs_for_budget(2, 30, 5) == 6
    assert epochs_for_budget(2, 31, 5) == 7
    assert epochs_for_budget(1, 10, 5, accumulation_steps=2) == 4  # 3 optimizer steps per epoch
    assert epochs_for_budget(3, 100, 0) == 3
    assert batches_for_budget(10, 0, 5) == batches_for_budget(10, 50, 5) == 5  # the data's own suffice
    assert batches_for_budget(10, 310, 4) == 31 and batches_for_budget(2, 31, 5) == 16
    assert batches_for_budget(2, 10, 3, accumulation_steps=2) == 10  # 5 optimizer steps of 2 batches per epoch
    assert batches_for_budget(3, 100, 0) == 0


def test_budget_lengthens_epochs_or_adds_them_without_batches_per_epoch():
    """apply_budget on the trainer's arguments: a loader with batches_per_epoch gets longer epochs (the
    epochs and patience stay); one without gets more epochs, and a patience that could never stop the
    configured run early cannot stop the longer one either; a budget the data meets changes nothing."""

    class Loader:  # AllenNLP's loaders: len() = batches per epoch
        def __init__(self, batches):
            self.batches = batches

        def __len__(self):
            return self.batches

    class CyclingLoader(Loader):
        batches_per_epoch = None

    cycling = {"data_loader": CyclingLoader(4), "num_epochs": 10, "patience": 10}
    apply_budget(310, cycling)
    assert cycling["data_loader"].batches_per_epoch == 31 and cycling["num_epochs"] == 10 and cycling["patience"] == 10
    plain = {"data_loader": Loader(4), "num_epochs": 10, "patience": 10, "num_gradient_accumulation_steps": 2}
    apply_budget(100, plain)
    assert plain["num_epochs"] == 50 == epochs_for_budget(10, 100, 4, 2) and plain["patience"] == 50
    impatient = {"data_loader": Loader(4), "num_epochs": 10, "patience": 3}
    apply_budget(100, impatient)
    assert impatient["num_epochs"] == 25 and impatient["patience"] == 3
    for met in (0, 40):
        unchanged = {"data_loader": Loader(4), "num_epochs": 10, "patience": 3}
        apply_budget(met, unchanged)
        assert unchanged == {"data_loader": unchanged["data_loader"], "num_epochs": 10, "patience": 3}


@pytest.mark.integration
def test_min_steps_lengthens_the_epochs_and_the_schedule(tiny_env, monkeypatch, tmp_path):
    """A budget above the data's steps: the same number of epochs (validations), each with more batches
    (the data cycled), so the run makes at least min_steps optimizer steps; the schedule spans them."""
    import allennlp.training.optimizers as optimizers
    from allennlp.commands.train import TrainModel
    from allennlp.common import Params

    budget = hyper("eer_short", EER_EPOCHS=2, EER_BATCH_SIZE=16, EER_MIN_STEPS=5, EER_RATIO_INIT="none")
    _, batches = _model_and_batches("eer_short.jsonnet", batch_size=16, overrides=budget)
    assert 2 * len(batches) < 5  # the data alone would make fewer steps
    steps = []
    step = optimizers.AdamWOptimizer.step
    monkeypatch.setattr(
        optimizers.AdamWOptimizer, "step", lambda self, *a, **k: (steps.append(1), step(self, *a, **k))[1]
    )
    params = Params.from_file(str(REPO / "training_configs" / "eer_short.jsonnet"), budget)
    for key in ("numpy_seed", "pytorch_seed", "random_seed"):  # read by allennlp train before it builds TrainModel
        params.pop(key, None)
    train = TrainModel.from_params(params=params, serialization_dir=str(tmp_path / "out"), local_rank=0)
    assert len(train.trainer.data_loader) == batches_for_budget(2, 5, len(batches)) == 3
    assert train.trainer._learning_rate_scheduler.num_steps_per_epoch == 3
    train.run()
    assert len(steps) == 2 * 3 and len(list(tmp_path.glob("out/metrics_epoch_*.json"))) == 2


@pytest.mark.parametrize("deterministic", [True, False])
def test_a_deterministic_trainer_asks_for_deterministic_kernels(deterministic, tiny_env, monkeypatch, tmp_path):
    """``trainer.deterministic`` (EER_DETERMINISTIC) turns on PyTorch's deterministic kernels (warnings, not
    failures, where an operation has none), cuBLAS's fixed workspace and no cuDNN autotuning; off by default."""
    from allennlp.commands.train import TrainModel
    from allennlp.common import Params

    calls = []
    monkeypatch.setattr(
        torch, "use_deterministic_algorithms", lambda mode, warn_only=False: calls.append((mode, warn_only))
    )
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", True)
    monkeypatch.setattr(torch.backends.cudnn, "deterministic", False)
    settings = {"EER_EPOCHS": 1, "EER_RATIO_INIT": "none"}
    if deterministic:
        settings["EER_DETERMINISTIC"] = "true"
    params = Params.from_file(str(REPO / "training_configs" / "eer_short.jsonnet"), hyper("eer_short", **settings))
    for key in ("numpy_seed", "pytorch_seed", "random_seed"):
        params.pop(key, None)
    TrainModel.from_params(params=params, serialization_dir=str(tmp_path / "out"), local_rank=0)
    if deterministic:
        assert calls == [(True, True)] and os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    else:
        assert calls == [] and "CUBLAS_WORKSPACE_CONFIG" not in os.environ and torch.backends.cudnn.benchmark


# ---------------------------------------------------------------- ablation switches and precision
def _tagger_batch(monkeypatch, **settings):
    """The untrained EER tagger and its first batch; ``settings`` by their ``EER_*`` names (environment
    settings in the environment, hyperparameters as ``-o``)."""
    from eer_plugin.runtime.settings import BY_NAME

    monkeypatch.setenv("EER_MAX_LENGTH", "128")
    for key, value in settings.items():
        if not BY_NAME[key].is_hyperparameter:
            monkeypatch.setenv(key, value)
    model, batches = _model_and_batches("eer_short.jsonnet", overrides=hyper("eer_short", **settings))
    model.dropout.p = 0.0
    return model, batches[0]


def test_training_without_constraints_uses_a_free_crf_with_shared_transitions(tiny_env, monkeypatch):
    from allennlp.nn import util

    from eer_plugin.core.losses import eer_objective

    model, batch = _tagger_batch(monkeypatch, EER_TRAIN_CONSTRAINTS="false")
    assert not model.train_constraints
    model.train()
    torch.manual_seed(0)  # the same dropout masks inside the encoder for both computations
    loss = model(**batch)["loss"]
    free = model.training_crf()
    assert free is not model.crf and free.transitions is model.crf.transitions and bool(free.allowed_transitions.all())
    assert not any(p is free.transitions for n, p in model.named_parameters() if not n.startswith("crf."))
    mask = util.get_text_field_mask(batch["tokens"])
    torch.manual_seed(0)
    emissions = model.emissions(batch["tokens"])
    allowed = model.observations(batch["tags"], mask)
    counted = model.ratio_mask(mask)
    expected = eer_objective(free, emissions, mask, allowed, model._entity_mask, counted, 0.15, 0.05, 10.0).loss
    constrained = eer_objective(model.crf, emissions, mask, allowed, model._entity_mask, counted, 0.15, 0.05, 10.0).loss
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert loss.item() != pytest.approx(constrained.item(), rel=1e-5)  # more taggings in Z without the grammar
    loss.backward()
    assert model.crf.transitions.grad is not None and model.crf.transitions.grad.abs().sum() > 0
    model.eval()  # decoding keeps the grammar: every predicted tagging is valid BILUO
    with torch.no_grad():
        predicted = model(tokens=batch["tokens"], metadata=batch["metadata"])["predicted_tags"]
    score = sequence_score(model.crf, torch.zeros_like(emissions), predicted, mask)
    assert bool((score > -1e3).all())


def test_bookends_counted_in_rho_hat_switch(tiny_env, monkeypatch):
    from allennlp.nn import util

    model, batch = _tagger_batch(monkeypatch, EER_RATIO_BOOKENDS="true")
    mask = util.get_text_field_mask(batch["tokens"])
    assert model.ratio_counts_bookends and torch.equal(model.ratio_mask(mask), mask.bool())
    model.ratio_counts_bookends = False
    assert int(model.ratio_mask(mask).sum()) == int(mask.sum()) - 2 * mask.shape[0]


def test_bf16_encoder_keeps_float32_scores(tiny_env, monkeypatch, caplog):
    from eer_plugin.inference import precision

    model, batch = _tagger_batch(monkeypatch)
    model.eval()
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: False)
    precision._warn_emulated_bf16.cache_clear()
    with torch.no_grad():
        full = model.emissions(batch["tokens"])
        assert "emulated" not in caplog.text
        model.precision = "bf16"
        half = model.emissions(batch["tokens"])
    assert "bfloat16 is emulated" in caplog.text  # a CPU without AVX-512 BF16 / AMX: the user is told
    assert full.dtype == half.dtype == torch.float32
    assert torch.allclose(full, half, atol=0.1, rtol=0.05) and not torch.equal(full, half)
    model.train()
    model(**batch)["loss"].backward()  # trains under autocast
    assert model.tag_scorer.weight.grad.dtype == torch.float32
    with pytest.raises(ValueError, match="EER_PRECISION"):
        _tagger_batch(monkeypatch, EER_PRECISION="fp16")


def test_auto_precision_is_bf16_only_where_native(tiny_env, monkeypatch, caplog):
    from eer_plugin.inference import precision

    cpu = torch.device("cpu")
    for native, chosen in ((True, "bf16"), (False, "fp32")):
        monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda native=native: native)
        assert precision.resolve_precision("auto", cpu) == chosen
        assert precision.resolve_precision("fp32", cpu) == "fp32"
        assert precision.resolve_precision("bf16", cpu) == "bf16"
    # on a CPU that would emulate bf16, an `auto` model computes exactly what an fp32 one does, unwarned
    model, batch = _tagger_batch(monkeypatch, EER_PRECISION="auto")
    model.eval()
    precision._warn_emulated_bf16.cache_clear()
    with torch.no_grad():
        automatic = model.emissions(batch["tokens"])
        model.precision = "fp32"
        full = model.emissions(batch["tokens"])
        monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: True)
        model.precision = "auto"
        native = model.emissions(batch["tokens"])  # where bf16 is native, `auto` autocasts
    assert torch.equal(automatic, full) and "bfloat16 is emulated" not in caplog.text  # no slowness warning
    assert native.dtype == torch.float32 and not torch.equal(native, full)


def test_a_dropout_seed_changes_the_dropout_stream_and_nothing_drawn_before(tiny_env, tmp_path):
    """``trainer.dropout_seed`` (EER_DROPOUT_SEED) reseeds torch once the model is built: the same initial
    weights as without it, and what training draws next is the reseeded generator's (dropout masks);
    without it training draws the run's own stream, which goes on from the weights' draws."""
    from allennlp.commands.train import TrainModel
    from allennlp.common import Params
    from allennlp.common.util import prepare_environment

    def built(**settings):
        params = Params.from_file(
            str(REPO / "training_configs" / "eer_short.jsonnet"), hyper("eer_short", EER_EPOCHS=1, **settings)
        )
        prepare_environment(params)  # what `allennlp train` does first: seeds (and pops) the config's seeds
        train = TrainModel.from_params(params=params, serialization_dir=str(tmp_path / f"out{len(runs)}"), local_rank=0)
        runs.append((train.model.state_dict(), torch.rand(8)))

    runs: list = []
    built()
    built(EER_DROPOUT_SEED="7")
    built(EER_DROPOUT_SEED="8")
    (own_weights, own_draws), (weights_7, draws_7), (weights_8, draws_8) = runs
    for name, value in own_weights.items():
        assert torch.equal(value, weights_7[name]) and torch.equal(value, weights_8[name]), name
    assert torch.equal(draws_7, torch.rand(8, generator=torch.Generator().manual_seed(7)))
    assert not torch.equal(draws_7, own_draws) and not torch.equal(draws_7, draws_8)
