"""Checkpoint files read safely and refused with their reason, the newest usable checkpoint, ``--recover``'s checks
of a directory, the vocabulary guard: on small files made here (the sweep over real runs:
``test_recover_sweep.py``)."""

import json
import os
import pickle
from pathlib import Path

import pytest
import torch

from eer_plugin.common.errors import UserError
from eer_plugin.runtime import weights_files
from eer_plugin.training import checkpoint_files, recovery
from eer_plugin.training.checkpoint_files import CheckpointError, UnusableCheckpoint


class RunsCode:
    def __reduce__(self):
        return (os.system, (f"touch {os.environ['EER_TEST_MARKER']}",))


def _states(epochs: int = 1, batches: int = 0, value: float = 1.0):
    model_state = {"w": torch.full((2, 3), value), "b": torch.zeros(3, dtype=torch.bfloat16)}
    training_state = {
        "version": 1,
        "epochs_completed": epochs,
        "batches_in_epoch_completed": batches,
        "metric_tracker": {"best_epoch": None},
        "optimizer": {"state": {}, "param_groups": [{"params": [0, 1]}]},
        checkpoint_files.FINGERPRINT_KEY: checkpoint_files.fingerprint(model_state),
    }
    return model_state, training_state


def _save(directory: Path, epochs: int = 1, batches: int = 0, value: float = 1.0):
    model_state, training_state = _states(epochs, batches, value)
    model_path = directory / f"model_state_e{epochs}_b{batches}.th"
    training_path = directory / f"training_state_e{epochs}_b{batches}.th"
    torch.save(training_state, training_path)
    torch.save(model_state, model_path)
    return model_path, training_path


def _cut(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


DAMAGES = {
    "empty": (lambda p: p.write_bytes(b""), "empty (0 bytes)"),
    "truncated": (_cut, "incomplete"),
    "text": (lambda p: p.write_text("a line\n"), "not a torch file"),
    "a pickle that runs code": (lambda p: p.write_bytes(pickle.dumps(RunsCode())), "not a torch file"),
    "code inside a torch file": (lambda p: torch.save({"x": RunsCode()}, p), "torch.load(weights_only=True) refuses"),
    "a list": (lambda p: torch.save([1, 2], p), "holds a list"),
}


@pytest.mark.parametrize("which", ["model", "training"])
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_checkpoint_file_is_refused_with_its_reason_and_no_code_runs(damage, which, tmp_path, monkeypatch):
    monkeypatch.setenv("EER_TEST_MARKER", str(tmp_path / "code-ran"))
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    paths = dict(zip(("model", "training"), _save(tmp_path)))
    make, reason = DAMAGES[damage]
    make(paths[which])
    with pytest.raises(UnusableCheckpoint) as refused:
        checkpoint_files.read_checkpoint(str(paths["model"]), str(paths["training"]), 1, 0)
    assert refused.value.path == str(paths[which]) and reason in refused.value.reason
    assert not (tmp_path / "code-ran").exists()


def test_a_pair_that_does_not_belong_together_is_refused(tmp_path):
    model_path, training_path = _save(tmp_path)
    torch.save(_states(value=2.0)[0], model_path)  # weights saved later than the training state
    with pytest.raises(UnusableCheckpoint, match="does not hold the weights saved with training_state_e1_b0.th"):
        checkpoint_files.read_checkpoint(str(model_path), str(training_path), 1, 0)
    _save(tmp_path, epochs=2)
    with pytest.raises(UnusableCheckpoint, match="after 2 epochs and 0 batches, not the 1 and 0 of its name"):
        checkpoint_files.read_checkpoint(str(model_path), str(tmp_path / "training_state_e2_b0.th"), 1, 0)


def test_an_intact_checkpoint_is_read_whole(tmp_path):
    model_path, training_path = _save(tmp_path)
    for mmap in (False, True):
        model_state, training_state = checkpoint_files.read_checkpoint(str(model_path), str(training_path), 1, 0, mmap)
        assert torch.equal(model_state["w"], torch.ones(2, 3)) and training_state["epochs_completed"] == 1


def test_a_pair_read_again_unchanged_is_hashed_once_and_a_changed_one_again(tmp_path, monkeypatch):
    """``--recover`` reads the checkpoint to check it, then again to resume: the weights are hashed once. A file
    replaced since (an atomic save, or a write in place with its new time) is hashed again, and refused when its
    weights are not the pair's."""
    model_path, training_path = _save(tmp_path)
    later, latest = _states(value=2.0)[0], _states(value=3.0)[0]
    hashed = []
    real = checkpoint_files.fingerprint
    monkeypatch.setattr(checkpoint_files, "fingerprint", lambda state: hashed.append(1) or real(state))
    for _ in range(3):
        checkpoint_files.read_checkpoint(str(model_path), str(training_path), 1, 0, mmap=True)
    assert len(hashed) == 1
    torch.save(later, tmp_path / "other.th")
    os.replace(tmp_path / "other.th", model_path)  # an atomic save: a new file
    with pytest.raises(UnusableCheckpoint, match="does not hold the weights saved with"):
        checkpoint_files.read_checkpoint(str(model_path), str(training_path), 1, 0)
    assert len(hashed) == 2
    monkeypatch.setattr(checkpoint_files, "fingerprint", real)
    _save(tmp_path)
    checkpoint_files.read_checkpoint(str(model_path), str(training_path), 1, 0)
    status = model_path.stat()
    torch.save(latest, model_path)  # in place: the same file, as long, written later
    os.utime(model_path, ns=(status.st_atime_ns, status.st_mtime_ns + 1))
    assert model_path.stat().st_ino == status.st_ino and model_path.stat().st_size == status.st_size
    with pytest.raises(UnusableCheckpoint, match="does not hold the weights saved with"):
        checkpoint_files.read_checkpoint(str(model_path), str(training_path), 1, 0)


def _lock(monkeypatch, path: Path) -> None:
    """``path`` unreadable (mode 000; for root, who reads it anyway, the modules that read a run's files refuse it)."""
    os.chmod(path, 0)
    if os.geteuid() == 0:

        def guarded_open(name, *args, **kwargs):
            if str(name) == str(path):
                raise PermissionError(13, "Permission denied", str(name))
            return open(name, *args, **kwargs)

        for module in (checkpoint_files, recovery, weights_files):
            monkeypatch.setattr(module, "open", guarded_open, raising=False)


def test_an_unreadable_file_stops_with_the_chmod_that_fixes_it(tmp_path, monkeypatch):
    model_path, training_path = _save(tmp_path)
    _lock(monkeypatch, model_path)
    with pytest.raises(CheckpointError, match=f"{model_path}: cannot be read .*chmod u\\+r {model_path}"):
        checkpoint_files.read_checkpoint(str(model_path), str(training_path), 1, 0)


def test_the_fingerprint_is_that_of_the_weights():
    a, _ = _states()
    assert checkpoint_files.fingerprint(a) == checkpoint_files.fingerprint({k: v.clone() for k, v in a.items()})
    changed = {**a, "w": a["w"].clone()}
    changed["w"][0, 0] = 1.5
    assert checkpoint_files.fingerprint(changed) != checkpoint_files.fingerprint(a)
    assert checkpoint_files.fingerprint({"w": a["w"].reshape(3, 2)}) != checkpoint_files.fingerprint({"w": a["w"]})


def test_the_newest_usable_checkpoint_is_chosen_and_none_is_one_line(tmp_path, caplog):
    from eer_plugin.training.checkpointer import AtomicCheckpointer

    checkpointer = AtomicCheckpointer(str(tmp_path))
    assert checkpointer.newest_usable() is None
    older, _ = _save(tmp_path, 1, 0)
    newer, _ = _save(tmp_path, 1, 2)
    _cut(newer)
    model_path, _, training_state = checkpointer.newest_usable()
    assert model_path == str(older) and training_state["batches_in_epoch_completed"] == 0
    assert f"1 newer checkpoint cannot ({newer}: incomplete" in caplog.text
    _cut(older)
    with pytest.raises(CheckpointError) as stopped:
        checkpointer.newest_usable()
    message = str(stopped.value)
    assert message.startswith(f"{newer}: incomplete") and "the 1 older checkpoint cannot be used either" in message
    assert "--force" in message and "\n" not in message


def test_best_weights_come_from_the_best_epochs_checkpoint_or_the_run_stops(tmp_path):
    older, _ = _save(tmp_path, 1, 0)
    newer, _ = _save(tmp_path, 1, 2)
    state = {"metric_tracker": {"best_epoch": 0}, "epochs_completed": 1, "batches_in_epoch_completed": 2}
    best = tmp_path / "best.th"
    assert checkpoint_files.best_weights_source(str(tmp_path), state, str(newer)) == str(older)  # missing
    os.link(older, best)
    assert checkpoint_files.best_weights_source(str(tmp_path), state, str(newer)) is None
    _cut(best)  # and its checkpoint, the same file
    with pytest.raises(CheckpointError, match=f"{best}: incomplete.*model_state_e1_b0.th .*is not there to restore"):
        checkpoint_files.best_weights_source(str(tmp_path), state, str(newer))
    at_best = {**state, "batches_in_epoch_completed": 0}
    assert checkpoint_files.best_weights_source(str(tmp_path), at_best, str(newer)) == str(newer)


def test_the_end_of_training_reads_best_th_weights_only(tmp_path, monkeypatch):
    """AllenNLP's ``_load_model_state`` (the best weights when a run ends) runs no code from best.th, even where
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` makes a plain ``torch.load`` unpickle anything."""
    from allennlp.training import GradientDescentTrainer

    monkeypatch.setenv("EER_TEST_MARKER", str(tmp_path / "code-ran"))
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    torch.save({"x": RunsCode()}, tmp_path / "best.th")
    trainer = GradientDescentTrainer.__new__(GradientDescentTrainer)
    trainer._ddp_wrapped_model, trainer.model = None, torch.nn.Linear(2, 2)
    with pytest.raises(CheckpointError, match="best.th: holds objects other than tensors"):
        trainer._load_model_state(str(tmp_path / "best.th"))
    assert not (tmp_path / "code-ran").exists()
    torch.save({"weight": torch.ones(2, 2), "bias": torch.zeros(2)}, tmp_path / "best.th")
    trainer._load_model_state(str(tmp_path / "best.th"))
    assert torch.equal(trainer.model.weight.data, torch.ones(2, 2))


def _params(**settings):
    from allennlp.common import Params

    return Params({"trainer": {"num_epochs": 2}, **settings})


def test_recover_checks_the_directory_before_anything_is_written(tmp_path, caplog):
    run = tmp_path / "run"
    with pytest.raises(CheckpointError, match="no such directory: there is no run to recover; leave out --recover"):
        recovery.check_recovery(_params(), run)
    run.mkdir()
    with pytest.raises(CheckpointError, match="an empty directory"):
        recovery.check_recovery(_params(), run)
    (run / "metrics.json").write_text("{}")
    with pytest.raises(CheckpointError, match=f"{run / 'config.json'}: missing .*holds metrics.json"):
        recovery.check_recovery(_params(), run)
    (run / "config.json").write_text("{ no")
    with pytest.raises(CheckpointError, match="config.json: not the JSON the run wrote .*--force"):
        recovery.check_recovery(_params(), run)
    (run / "config.json").write_text(json.dumps({"trainer": {"num_epochs": 3}}))
    with pytest.raises(CheckpointError, match="trainer.num_epochs: 3 in the run, 2 now"):
        recovery.check_recovery(_params(), run)
    (run / "config.json").write_text(json.dumps({"trainer": {"num_epochs": 2}}))
    with pytest.raises(CheckpointError, match="no checkpoint to continue from .*but metrics.json of trained epochs"):
        recovery.check_recovery(_params(), run)
    (run / "metrics.json").unlink()  # what a run stopped before its first checkpoint leaves: it starts again
    recovery.check_recovery(_params(), run)
    assert f"{run}: no checkpoint yet (the run stopped before its first one)" in caplog.text
    _save(run, 1, 0)
    recovery.check_recovery(_params(), run)
    (run / "metrics.json").write_text("{}")
    (run / "model.tar.gz").write_bytes(b"")
    recovery.check_recovery(_params(), run)  # finished, with its last checkpoint: it ends again as it ended
    for name in ("model_state_e1_b0.th", "training_state_e1_b0.th"):  # finished, its checkpoints cleaned up
        (run / name).unlink()
    with pytest.raises(CheckpointError, match="the run has finished .*checkpoints were removed.*nothing was changed"):
        recovery.check_recovery(_params(), run)
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "metrics.json", "model.tar.gz"]


def _vocabulary(*labels):
    from allennlp.data import Vocabulary

    vocab = Vocabulary(non_padded_namespaces=["*labels"])
    for label in labels:
        vocab.add_token_to_namespace(label, "labels")
    return vocab


def test_a_saved_vocabulary_is_kept_and_never_replaced_by_another(tmp_path):
    directory = tmp_path / "vocabulary"
    _vocabulary("O", "U-PER", "U-LOC").save_to_files(str(directory))
    saved = {p.name: p.read_bytes() for p in directory.iterdir()}
    _vocabulary("O", "U-PER", "U-LOC").save_to_files(str(directory))  # the same: kept as it is
    with pytest.raises(UserError) as refused:
        _vocabulary("O", "U-LOC", "U-PER").save_to_files(str(directory))
    message = str(refused.value)
    assert (
        message.startswith(f"{directory / 'labels.txt'}: holds another vocabulary") and f"delete {directory}" in message
    )
    assert "entry 1: 'U-PER' there, 'U-LOC' now" in message
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == saved
