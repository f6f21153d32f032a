"""What a running epoch has summed, kept in a checkpoint inside an epoch (eer_plugin/training/epoch_state.py): every
metric object of the models survives a weights-only save and load with the values it had, the training loss
sums are continued in the trainer's order, and a bad EER_CHECKPOINT_SECONDS is one line naming it."""

import io
import random
from collections import Counter

import pytest
import torch
from allennlp.training.metrics import Average

from eer_plugin.common.errors import UserError
from eer_plugin.models.partial_metrics import PartialSpanMetric
from eer_plugin.models.tagger import WordSpanF1
from eer_plugin.training import epoch_state


class Holder(torch.nn.Module):
    """A model whose modules hold the metric objects the taggers and the span model hold."""

    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Module()
        self.inner.rho_hat = Average()
        self.span_f1 = WordSpanF1(["LOC", "PER"])
        self.partial_span = PartialSpanMetric(entity_ratio=0.15)


def fed(holder: Holder, seed: int) -> Holder:
    rng = random.Random(seed)
    for _ in range(5):
        holder.inner.rho_hat(torch.tensor(rng.random()))
        spans = [(rng.randint(0, 3), rng.randint(4, 6), rng.choice(["LOC", "PER"])) for _ in range(3)]
        holder.span_f1(spans[:2], spans[1:])
        holder.partial_span(
            [spans[0]], {"spans": spans[1:], "is_complete": rng.random() < 0.5, "words": list("abcdef")}
        )
    return holder


class Trainer:
    def __init__(self, model):
        self.model = model


def saved_and_loaded(value):
    buffer = io.BytesIO()
    torch.save(value, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def test_every_metric_object_is_restored_with_its_values():
    before = fed(Holder(), seed=0)
    epoch_state._SUMS[before] = epoch_state._Sums(3.25, None)
    state = saved_and_loaded(epoch_state.epoch_state(Trainer(before)))
    after = Holder()
    epoch_state.resume_epoch(after, state)
    assert after.get_submodule("inner").rho_hat.get_metric() == before.inner.rho_hat.get_metric()
    assert after.span_f1.get_metric() == before.span_f1.get_metric() and after.span_f1.counts.tp
    assert after.partial_span.counts == before.partial_span.counts and isinstance(after.partial_span.counts, Counter)
    assert after.partial_span.found_by_type == before.partial_span.found_by_type
    # the restored metrics go on counting as the originals do
    assert fed(after, seed=1).span_f1.get_metric() == fed(before, seed=1).span_f1.get_metric()
    assert epoch_state._SUMS[after].loss == 3.25 and epoch_state._SUMS[after].carried


def test_the_training_loss_is_summed_on_in_the_trainers_order():
    """A resumed epoch's loss equals the uninterrupted sum to the last bit, for batch losses whose sum depends on
    the order of the additions."""
    losses = [random.Random(2).uniform(0, 1e3) * 10 ** random.Random(i).randint(-8, 8) for i in range(200)]
    model = Holder().train()
    seen = []
    wrapped = epoch_state._get_metrics(lambda model, total, *rest, **kw: seen.append(total) or {})
    straight = 0.0
    for loss in losses:
        straight += loss
        wrapped(model, straight, None, loss, None, 1)
    saved = epoch_state._SUMS[model].loss  # after batch 200: the checkpoint's sum
    more = losses[::-1]
    for loss in more:
        straight += loss
    resumed = Holder().train()
    epoch_state.resume_epoch(resumed, {"loss": saved, "reg_loss": None, "metrics": {}})
    partial = 0.0  # the resumed trainer's own sum starts again from 0
    for loss in more:
        partial += loss
        wrapped(resumed, partial, None, loss, None, 1)
    assert seen[-1] == straight
    assert saved + partial != straight  # what adding the saved sum to the later batches' would have reported
    wrapped(resumed, partial, None, None, None, 400, reset=True)  # the epoch's end
    assert seen[-1] == straight and resumed not in epoch_state._SUMS


@pytest.mark.parametrize("value", ["abc", "0", "-5", "inf", "nan", "NaN", "1e400", "  ", "null", '"600"', "1_000"])
def test_a_bad_checkpoint_interval_is_one_line_naming_it(value, monkeypatch):
    """Checked with the other environment settings before the config is evaluated (its std.parseJson said only
    "parse error"), by the rule of the key it fills (trainer.checkpointer.save_every_num_seconds)."""
    from allennlp.common import Params

    monkeypatch.setenv("EER_CHECKPOINT_SECONDS", value)
    with pytest.raises(UserError) as raised:
        Params.from_file("eer_short.jsonnet")
    assert str(raised.value).startswith(
        f"eer_short.jsonnet: EER_CHECKPOINT_SECONDS={value!r}: expected a number of seconds above 0, or empty for its "
        "default ("
    ) and "\n" not in str(raised.value)
    for good, seconds in (("600", 600), (" 0.5 ", 0.5), ("1e3", 1000)):
        monkeypatch.setenv("EER_CHECKPOINT_SECONDS", good)
        config = Params.from_file("eer_short.jsonnet").as_dict()
        assert config["trainer"]["checkpointer"]["save_every_num_seconds"] == seconds


def test_the_checkpoint_interval_reaches_every_packaged_config(monkeypatch, tmp_path, capsys):
    from allennlp.common import Params

    from eer_plugin import cli
    from eer_plugin.runtime.config_files import CONFIG_DIR

    configs = sorted(path.name for path in CONFIG_DIR.glob("*.jsonnet"))
    assert len(configs) == 17
    monkeypatch.setenv("EER_CHECKPOINT_SECONDS", "600")
    for config in configs:
        assert Params.from_file(config).as_dict()["trainer"]["checkpointer"]["save_every_num_seconds"] == 600, config
    monkeypatch.delenv("EER_CHECKPOINT_SECONDS")
    assert "save_every_num_seconds" not in Params.from_file("eer_short.jsonnet").as_dict()["trainer"]["checkpointer"]
    # a bad value stops `train` before anything is built or written
    monkeypatch.setenv("EER_CHECKPOINT_SECONDS", "ten minutes")
    assert cli.main(["train", "eer_short.jsonnet", "-s", str(tmp_path / "out")]) == 1
    assert not (tmp_path / "out").exists()
    err = capsys.readouterr().err
    assert (
        "eer-ner train: error: eer_short.jsonnet: EER_CHECKPOINT_SECONDS='ten minutes': expected a number of seconds above 0"
        in err
    )
