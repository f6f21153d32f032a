"""``--recover`` on damaged serialization directories: a generated sweep (docs/reliability.md, "Resume").

One interrupted run (the tiny encoder, 2 epochs of 3 batches, a checkpoint every 2 batches and the newest 2 kept,
killed after the checkpoint ``e1_b2`` inside epoch 2, so ``e1_b0`` is there too) is copied once per case and
damaged in one way: a checkpoint file truncated, emptied, replaced by text, by another object, by a pickle that
runs code, by a file of another run (other entity types, another encoder) or of the other checkpoint; the
vocabulary, ``config.json``, ``meta.json``, the metrics or ``best.th`` damaged or missing; a file unreadable; a
directory without a checkpoint, without a configuration, empty, missing or finished. Each case either resumes from
the newest checkpoint that can be used, saying so, and ends with the uninterrupted run's weights and metrics, or
stops with one line naming the file and the fix, with the directory as it was."""

import hashlib
import json
import os
import pickle
import re
import shutil
from pathlib import Path
from typing import Callable, Dict, NamedTuple, Optional

import pytest
import torch
from conftest import FIXTURE_DATA, REPO, build_tiny_encoder, eer_ner, hyper

from eer_plugin.common.errors import UserError, report
from eer_plugin.runtime import weights_files
from eer_plugin.training import checkpoint_files, recovery

pytestmark = pytest.mark.integration

CONFIG = str(REPO / "training_configs" / "eer_short.jsonnet")
NEWEST, OLDER = "e1_b2", "e1_b0"
M2, T2 = f"model_state_{NEWEST}.th", f"training_state_{NEWEST}.th"
M1, T1 = f"model_state_{OLDER}.th", f"training_state_{OLDER}.th"


def _overrides() -> str:
    settings = json.loads(hyper("eer_short", EER_EPOCHS=2, EER_BATCH_SIZE=4))
    settings.update(
        {"trainer.checkpointer.save_every_num_batches": 2, "trainer.checkpointer.keep_most_recent_by_count": 2}
    )
    return json.dumps(settings)


class Killed(BaseException):
    """Stands for SIGKILL right after a checkpoint was saved (no handler of the trainer catches it)."""


def _train(directory: Path, recover: bool = False, killed_at: Optional[str] = None) -> None:
    """Trains the sweep's run into ``directory`` (``killed_at``: killed right after that checkpoint is saved)."""
    from allennlp.commands.train import train_model_from_file

    from eer_plugin.training import checkpointer

    original = checkpointer.AtomicCheckpointer.save_checkpoint

    def save(self, trainer):
        original(self, trainer)
        if f"e{trainer._epochs_completed}_b{trainer._batches_in_epoch_completed}" == killed_at:
            raise Killed()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(checkpointer.AtomicCheckpointer, "save_checkpoint", save)
        try:
            train_model_from_file(CONFIG, str(directory), overrides=_overrides(), recover=recover, force=not recover)
        except Killed:
            assert killed_at is not None


def _as_checkpoint(source: Path, epochs: int, batches: int, directory: Path) -> None:
    """``source``'s first checkpoint (``e0_b2``) under the name of ``e<epochs>_b<batches>`` in ``directory``, its
    counters changed to match: the checkpoint of another run at the point of this one's."""
    state = torch.load(source / "training_state_e0_b2.th", weights_only=True)
    state.update(epochs_completed=epochs, batches_in_epoch_completed=batches)
    torch.save(state, directory / f"training_state_e{epochs}_b{batches}.th")
    shutil.copy(source / "model_state_e0_b2.th", directory / f"model_state_e{epochs}_b{batches}.th")


#: the entity types the run of other types has instead of PER and LOC: as many tags, so the same shapes
RENAMED = {"PER": "PERSON", "LOC": "PLACE"}


def _other_types(top: Path):
    """The fixture's training and dev data with the types of :data:`RENAMED` renamed."""
    train, dev = top / "other_types.jsonl", top / "other_types_dev.txt"
    text = Path(FIXTURE_DATA["EER_TRAIN_DATA"]).read_text()
    train.write_text(re.sub(r'"(PER|LOC)"', lambda m: f'"{RENAMED[m.group(1)]}"', text))
    text = Path(FIXTURE_DATA["EER_DEV_DATA"]).read_text()
    dev.write_text(re.sub(r"-(PER|LOC)$", lambda m: f"-{RENAMED[m.group(1)]}", text, flags=re.M))
    return train, dev


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_encoder) -> Dict[str, Path]:
    """The uninterrupted run, the interrupted one, and checkpoints of runs with other entity types and another
    encoder (their first checkpoint, named as this run's)."""
    top = tmp_path_factory.mktemp("recover-sweep")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EER_ENCODER", tiny_encoder)
        patch.setenv("EER_MAX_LENGTH", "128")
        patch.setenv("EER_TEST_DATA", "")  # no test evaluation: the sweep compares training and validation
        _train(top / "straight")
        _train(top / "base", killed_at=NEWEST)
        train, dev = _other_types(top)
        patch.setenv("EER_TRAIN_DATA", str(train))
        patch.setenv("EER_DEV_DATA", str(dev))
        _train(top / "other_types", killed_at="e0_b2")
        patch.setenv("EER_TRAIN_DATA", FIXTURE_DATA["EER_TRAIN_DATA"])
        patch.setenv("EER_DEV_DATA", FIXTURE_DATA["EER_DEV_DATA"])
        wider = build_tiny_encoder(top / "tiny-bert-48", hidden_size=48)
        patch.setenv("EER_ENCODER", str(wider))
        _train(top / "other_encoder", killed_at="e0_b2")
    for name in ("other_types", "other_encoder"):
        for epochs, batches in ((1, 0), (1, 2)):
            _as_checkpoint(top / name, epochs, batches, top / name)
    assert {M1, T1, M2, T2} <= {p.name for p in (top / "base").iterdir()}
    theirs, ours = ((top / name / "vocabulary" / "labels.txt").read_text().split() for name in ("other_types", "base"))
    assert len(theirs) == len(ours) and "B-PERSON" in theirs and "B-PERSON" not in ours
    return {"top": top, **{p.name: p for p in top.iterdir()}}


@pytest.fixture
def sweep_env(runs, tiny_encoder, monkeypatch):
    """The environment the runs were trained in (``--recover`` compares the configuration it gives)."""
    monkeypatch.setenv("EER_ENCODER", tiny_encoder)
    monkeypatch.setenv("EER_MAX_LENGTH", "128")
    monkeypatch.setenv("EER_TEST_DATA", "")
    return runs


# ----------------------------------------------------------------------------------------- the damages


def truncate(path: Path) -> None:
    """Half the file, cut in place (a hard link to it is cut too, as a disk fault would)."""
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def empty(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(0)


class RunsCode:
    """A pickled object whose loading runs a command (``touch`` of :data:`MARKER`)."""

    def __reduce__(self):
        return (os.system, (f"touch {os.environ['EER_SWEEP_MARKER']}",))


def edited_state(name: str, edit: Callable[[dict], None]) -> Callable[[Path], None]:
    def damage(directory: Path) -> None:
        state = torch.load(directory / name, weights_only=True)
        edit(state)
        torch.save(state, directory / name)

    return damage


def swapped_labels(directory: Path) -> None:
    path = directory / "vocabulary" / "labels.txt"
    lines = path.read_text().splitlines()
    i, j = (next(k for k, line in enumerate(lines) if line.endswith(kind)) for kind in ("-PER", "-LOC"))
    lines[i], lines[j] = lines[j], lines[i]
    path.write_text("\n".join(lines) + "\n")


def remove_all_but(keep: Callable[[str], bool]) -> Callable[[Path], None]:
    def damage(directory: Path) -> None:
        for path in directory.iterdir():
            if not keep(path.name):
                shutil.rmtree(path) if path.is_dir() else path.unlink()

    return damage


class Resumes(NamedTuple):
    """The run resumes from the checkpoint ``point`` (None: from the start, saying so), its log naming the file of a
    newer one it ``passed_over``, and ends as the uninterrupted run (but for a file it leaves ``damaged``, as it was:
    the metrics of an earlier epoch)."""

    point: Optional[str]
    passed_over: Optional[str] = None
    damaged: Optional[str] = None


class Stops(NamedTuple):
    """The run stops with one line naming ``file`` (relative to the directory) and saying ``fix``."""

    file: str
    fix: str


def damages(runs: Dict[str, Path]):
    """``(name, damage(directory), expected)`` of every case of the sweep."""
    other_types, other_encoder, straight = runs["other_types"], runs["other_encoder"], runs["straight"]
    passed_over = lambda name: Resumes(OLDER, name)  # noqa: E731
    yield "model_state truncated", lambda d: truncate(d / M2), passed_over(M2)
    yield "model_state empty", lambda d: empty(d / M2), passed_over(M2)
    yield "model_state holds no weights", lambda d: torch.save({"a": "b"}, d / M2), passed_over(M2)
    yield "training_state truncated", lambda d: truncate(d / T2), passed_over(T2)
    yield "training_state empty", lambda d: empty(d / T2), passed_over(T2)
    yield "training_state is text", lambda d: (d / T2).write_text("not a checkpoint\n"), passed_over(T2)
    yield "training_state holds a list", lambda d: torch.save([1, 2, 3], d / T2), passed_over(T2)
    yield "training_state is a pickle that runs code", lambda d: (d / T2).write_bytes(pickle.dumps(RunsCode())), passed_over(T2)  # fmt: skip
    yield "training_state holds code", lambda d: torch.save({"x": RunsCode()}, d / T2), passed_over(T2)
    yield "epoch state damaged", edited_state(T2, lambda s: s.update(eer_epoch={"loss": "x", "metrics": {}})), passed_over(T2)  # fmt: skip
    yield "generator states damaged", edited_state(T2, lambda s: s["eer_rng"].update(now={"python": 5})), passed_over(T2)  # fmt: skip
    yield "training_state of the other checkpoint", lambda d: shutil.copy(d / T1, d / T2), passed_over(T2)
    yield "model_state newer than its training_state", lambda d: shutil.copy(straight / "best.th", d / M2), passed_over(M2)  # fmt: skip
    yield "checkpoint of other entity types", lambda d: [shutil.copy(other_types / n, d / n) for n in (M2, T2)], passed_over(M2)  # fmt: skip
    yield "every checkpoint truncated", lambda d: [truncate(d / n) for n in (M1, M2)], Stops(M2, "--force")
    yield "every checkpoint of another encoder", lambda d: [shutil.copy(other_encoder / n, d / n) for n in (M1, T1, M2, T2)], Stops(M2, "encoder")  # fmt: skip
    yield "model_state unreadable", lambda d: os.chmod(d / M2, 0), Stops(M2, "chmod u+r")
    yield "vocabulary missing", lambda d: shutil.rmtree(d / "vocabulary"), Resumes(NEWEST)
    yield "vocabulary truncated", lambda d: truncate(d / "vocabulary" / "labels.txt"), Stops("vocabulary/labels.txt", "delete")  # fmt: skip
    yield "vocabulary with two tags swapped", swapped_labels, Stops("vocabulary/labels.txt", "delete")
    yield "vocabulary not text", lambda d: (d / "vocabulary" / "labels.txt").write_bytes(b"\xff\xfe\x00"), Stops("vocabulary/labels.txt", "delete")  # fmt: skip
    yield "vocabulary of other entity types", lambda d: [shutil.rmtree(d / "vocabulary"), shutil.copytree(other_types / "vocabulary", d / "vocabulary")], Stops("vocabulary/labels.txt", "delete")  # fmt: skip
    yield "vocabulary unreadable", lambda d: os.chmod(d / "vocabulary" / "labels.txt", 0), Stops("vocabulary/labels.txt", "chmod u+r")  # fmt: skip
    yield (
        "config.json not JSON",
        lambda d: (d / "config.json").write_text("{ not json"),
        Stops("config.json", "--force"),
    )
    yield "config.json of other settings", edited_config, Stops("config.json", "trainer.num_epochs")
    yield "config.json missing", lambda d: (d / "config.json").unlink(), Stops("config.json", "--force")
    yield "config.json unreadable", lambda d: os.chmod(d / "config.json", 0), Stops("config.json", "chmod u+r")
    yield "meta.json damaged", lambda d: (d / "meta.json").write_text("{"), Resumes(NEWEST)
    yield "meta.json missing", lambda d: (d / "meta.json").unlink(), Resumes(NEWEST)
    yield (
        "metrics of epoch 1 damaged",
        lambda d: (d / "metrics_epoch_0.json").write_text("{"),
        Resumes(NEWEST, damaged="metrics_epoch_0.json"),
    )
    yield "best.th replaced by a damaged file", lambda d: [(d / "best.th").unlink(), (d / "best.th").write_bytes(b"PK\x03\x04")], Resumes(NEWEST)  # fmt: skip
    yield "best.th holds code", lambda d: [(d / "best.th").unlink(), torch.save({"x": RunsCode()}, d / "best.th")], Resumes(NEWEST)  # fmt: skip
    yield "best.th missing", lambda d: (d / "best.th").unlink(), Resumes(NEWEST)
    yield "best.th truncated with its checkpoint", lambda d: truncate(d / "best.th"), Stops("best.th", "--force")
    yield "only metrics", remove_all_but(lambda n: n.startswith("metrics")), Stops("config.json", "--force")
    yield "no checkpoint, best.th kept", remove_all_but(lambda n: not n.endswith(".th") or n == "best.th"), Stops("", "best.th of trained epochs")  # fmt: skip
    yield "stopped before its first checkpoint", remove_all_but(lambda n: n in ("config.json", "meta.json", "vocabulary", "out.log")), Resumes(None)  # fmt: skip
    yield "empty directory", remove_all_but(lambda n: False), Stops("", "leave out --recover")


def edited_config(directory: Path) -> None:
    path = directory / "config.json"
    config = json.loads(path.read_text())
    config["trainer"]["num_epochs"] = 3
    path.write_text(json.dumps(config, indent=4))


CASES = [name for name, _, _ in damages({"other_types": Path(), "other_encoder": Path(), "straight": Path()})]


def _copy(source: Path, directory: Path) -> Path:
    """``source`` copied to ``directory`` with its hard links (``best.th`` is one of the best epoch's checkpoint)."""
    shutil.copytree(source, directory)
    for path in source.glob("model_state_*.th"):
        if (source / "best.th").exists() and os.path.samefile(source / "best.th", path):
            (directory / "best.th").unlink()
            os.link(directory / path.name, directory / "best.th")
    return directory


def _contents(directory: Path) -> Dict[str, str]:
    """``{file: SHA-256}`` of every file under ``directory`` (``None`` for one that cannot be read)."""
    found = {}
    for path in sorted(directory.rglob("*")) if directory.exists() else ():
        if path.is_file():
            try:
                found[str(path.relative_to(directory))] = hashlib.sha256(path.read_bytes()).hexdigest()
            except PermissionError:
                found[str(path.relative_to(directory))] = None
    return found


def _comparable(directory: Path, leave_out: Optional[str] = None) -> dict:
    """Every metric of every epoch (but the file ``leave_out``) and of the end (durations, memory, timestamps left
    out), the newest checkpoint's weights and ``best.th``."""

    def clean(metrics):
        return {k: v for k, v in metrics.items() if "duration" not in k and "memory" not in k and "time" not in k}

    epochs = {
        p.name: clean(json.loads(p.read_text()))
        for p in sorted(directory.glob("metrics_epoch_*.json"))
        if p.name != leave_out
    }
    newest = max(directory.glob("model_state_e*.th"), key=lambda p: checkpoint_point(p.name))
    return {
        "epochs": epochs,
        "final": clean(json.loads((directory / "metrics.json").read_text())),
        "weights": torch.load(newest, weights_only=True),
        "best": torch.load(directory / "best.th", weights_only=True),
    }


def _assert_same(a: dict, b: dict) -> None:
    """Two :func:`_comparable` results are the same run: metrics equal, weights and ``best.th`` equal."""
    assert a["epochs"] == b["epochs"] and a["final"] == b["final"]
    for name in ("weights", "best"):
        assert a[name].keys() == b[name].keys() and all(torch.equal(a[name][k], b[name][k]) for k in a[name])


def checkpoint_point(name: str):
    epochs, batches = name.split("_e")[1].removesuffix(".th").split("_b")
    return int(epochs), int(batches)


def _unreadable_as_root(monkeypatch, directory: Path) -> None:
    """Root reads any file whatever its mode: the files this case made unreadable (mode 000) refuse the modules that
    read a run's files, as they refuse any other user."""
    if os.geteuid() != 0:
        return
    locked = {str(p) for p in directory.rglob("*") if p.is_file() and p.stat().st_mode & 0o777 == 0}

    def guarded_open(path, *args, **kwargs):
        if str(path) in locked:
            raise PermissionError(13, "Permission denied", str(path))
        return open(path, *args, **kwargs)

    for module in (checkpoint_files, recovery, weights_files):
        monkeypatch.setattr(module, "open", guarded_open, raising=False)


@pytest.mark.parametrize("case", CASES)
def test_recover_resumes_from_a_usable_checkpoint_or_stops_in_one_line(
    case, sweep_env, tmp_path, monkeypatch, capsys, caplog
):
    runs = sweep_env
    _, damage, expected = next(c for c in damages(runs) if c[0] == case)
    directory = _copy(runs["base"], tmp_path / "run")
    monkeypatch.setenv("EER_SWEEP_MARKER", str(tmp_path / "code-ran"))
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # AllenNLP's own loads would then unpickle code
    damage(directory)
    _unreadable_as_root(monkeypatch, directory)
    before = _contents(directory)
    from allennlp.commands.train import train_model_from_file

    if isinstance(expected, Stops):
        with pytest.raises(UserError) as raised:
            train_model_from_file(CONFIG, str(directory), overrides=_overrides(), recover=True)
        message = str(raised.value)
        assert "\n" not in message and str(directory / expected.file) in message and expected.fix in message, message
        capsys.readouterr()
        assert (
            report(raised.value, "eer-ner train") == 1
            and capsys.readouterr().err == f"eer-ner train: error: {message}\n"
        )
        after = _contents(directory)
        # nothing removed or changed (the run's log gets the lines of the attempt when it built the model)
        assert {k: v for k, v in after.items() if k != "out.log"} == {k: v for k, v in before.items() if k != "out.log"}
    else:
        train_model_from_file(CONFIG, str(directory), overrides=_overrides(), recover=True)
        log = (directory / "out.log").read_text()
        if expected.point is None:
            assert f"{directory}: no checkpoint yet (the run stopped before its first one)" in caplog.text
            assert "resuming from the checkpoint" not in log
        else:
            assert f"resuming from the checkpoint {directory / f'model_state_{expected.point}.th'}" in log
        if expected.passed_over:
            assert f"resuming from {directory / f'model_state_{expected.point}.th'}, the newest checkpoint" in log
            assert f"cannot ({directory / expected.passed_over}: " in log
        straight = _comparable(runs["straight"], leave_out=expected.damaged)
        resumed = _comparable(directory, leave_out=expected.damaged)
        assert straight["epochs"] == resumed["epochs"] and straight["final"] == resumed["final"]
        for name in ("weights", "best"):
            assert all(torch.equal(straight[name][k], resumed[name][k]) for k in straight[name])
        if expected.damaged:
            assert (directory / expected.damaged).read_text() == "{"
    assert not (tmp_path / "code-ran").exists()


def test_a_moved_run_ends_with_its_own_best_weights(sweep_env, tmp_path):
    """The training state names best.th by the path the run had: recovered in another place, the run ends with
    the best weights of its own directory, not with those of the directory it was copied from."""
    from allennlp.commands.train import train_model_from_file

    first = _copy(sweep_env["base"], tmp_path / "first")
    moved = _copy(first, tmp_path / "moved")
    (first / "best.th").unlink()
    torch.save({"not": torch.zeros(1)}, first / "best.th")  # what the moved run must not load
    train_model_from_file(CONFIG, str(moved), overrides=_overrides(), recover=True)
    straight, resumed = _comparable(sweep_env["straight"]), _comparable(moved)
    assert all(torch.equal(straight["best"][k], resumed["best"][k]) for k in straight["best"])


def test_a_run_killed_while_archiving_ends_with_its_last_metrics_damaged(sweep_env, tmp_path):
    """Killed after its last checkpoint (before metrics.json and model.tar.gz): recovered, it trains nothing and
    archives its model; the last epoch's metrics file, read for metrics.json, is damaged: a warning, not a traceback."""
    from allennlp.commands.train import train_model_from_file

    directory = _copy(sweep_env["straight"], tmp_path / "run")
    for name in ("metrics.json", "model.tar.gz"):
        (directory / name).unlink()
    (directory / "metrics_epoch_1.json").write_text("{")
    train_model_from_file(CONFIG, str(directory), overrides=_overrides(), recover=True)
    assert (directory / "model.tar.gz").is_file()
    assert f"{directory / 'metrics_epoch_1.json'} cannot be read" in (directory / "out.log").read_text()
    straight = json.loads((sweep_env["straight"] / "metrics.json").read_text())
    assert json.loads((directory / "metrics.json").read_text())["best_epoch"] == straight["best_epoch"]


def test_recover_on_a_missing_directory_or_a_finished_run_changes_nothing(sweep_env, tmp_path):
    from allennlp.commands.train import train_model_from_file

    with pytest.raises(UserError, match="no such directory: there is no run to recover; leave out --recover"):
        train_model_from_file(CONFIG, str(tmp_path / "none"), overrides=_overrides(), recover=True)
    assert not (tmp_path / "none").exists()
    finished = _copy(sweep_env["straight"], tmp_path / "finished")
    before = _comparable(finished)
    train_model_from_file(CONFIG, str(finished), overrides=_overrides(), recover=True)  # the same command again
    _assert_same(_comparable(finished), before)
    for path in finished.glob("*_state_e*.th"):  # a finished run whose checkpoints were cleaned up
        path.unlink()
    before = _contents(finished)
    with pytest.raises(UserError, match="the run has finished .*model.tar.gz is its model.*nothing was changed"):
        train_model_from_file(CONFIG, str(finished), overrides=_overrides(), recover=True)
    assert _contents(finished) == before


def test_eer_ner_train_recover_is_one_line_at_the_command_line(sweep_env, tmp_path):
    """The command the user types: exit status 1, the last line of stderr the error, no traceback, and no file of
    the directory changed."""
    directory = _copy(sweep_env["base"], tmp_path / "run")
    for name in (M1, M2):
        truncate(directory / name)
    before = _contents(directory)
    command = ("train", CONFIG, "-s", directory, "-o", _overrides(), "--recover")
    done = eer_ner(*command, capture_output=True, text=True, timeout=1200)  # it starts AllenNLP: slow on a busy CPU
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"eer-ner train: error: {directory / M2}: incomplete") and "--force" in last, last
    assert _contents(directory) == before


def test_the_checkpoints_say_which_weights_and_vocabulary_they_hold(sweep_env):
    """What a resume checks is saved with every checkpoint: the model state's fingerprint and the vocabulary."""
    state = torch.load(sweep_env["base"] / T2, weights_only=True)
    model_state = torch.load(sweep_env["base"] / M2, weights_only=True)
    assert state[checkpoint_files.FINGERPRINT_KEY] == checkpoint_files.fingerprint(model_state)
    from allennlp.data import Vocabulary

    saved = Vocabulary.from_files(str(sweep_env["base"] / "vocabulary"))
    record = state[checkpoint_files.VOCABULARY_KEY]  # the labels, and the encoder's subwords (namespace "tags")
    assert record["labels"] == checkpoint_files.vocabulary_record(saved)["labels"] and record["labels"]["size"] > 2
    assert record["tags"]["size"] > 100
