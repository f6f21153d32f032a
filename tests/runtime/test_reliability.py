"""Issue 13: safe archives, checkpoints that survive a kill, exact resume, clear failures, the eer-ner command."""

import io
import json
import os
import pickle
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest
import torch
from conftest import FIXTURES, REPO, hyper

DEV = str(FIXTURES / "conll2003_tiny_dev.txt")


def train(serialization_dir: Path, recover: bool = False, config: str = "eer_short.jsonnet"):
    from allennlp.commands.train import train_model_from_file

    return train_model_from_file(
        str(REPO / "training_configs" / config),
        str(serialization_dir),
        overrides='{"trainer.num_epochs": 1}',
        recover=recover,
        force=not recover,
    )


@pytest.fixture(scope="module")
def archive(tmp_path_factory, tiny_encoder) -> Path:
    """A one-epoch EER model on the fixtures (tiny encoder), archived."""
    mp = pytest.MonkeyPatch()
    mp.setenv("EER_ENCODER", tiny_encoder)
    mp.setenv("EER_MAX_LENGTH", "128")
    directory = tmp_path_factory.mktemp("reliability-model")
    train(directory)
    yield directory / "model.tar.gz"
    mp.undo()


# ----------------------------------------------------------------------------------- 1. safe archives


def _member(archive: tarfile.TarFile, name: str, data: bytes = b"", **attributes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in attributes.items():
        setattr(info, key, value)
    archive.addfile(info, io.BytesIO(data) if info.isfile() else None)


def crafted_archive(path: Path, kind: str, outside: Path) -> Path:
    """A model-looking archive (config.json first) with one hostile member aimed at ``outside``."""
    with tarfile.open(path, "w:gz") as archive:
        _member(archive, "config.json", b"{}")
        if kind == "dotdot":
            _member(archive, "../" * 12 + str(outside).lstrip("/"), b"pwned")
        elif kind == "absolute":
            _member(archive, str(outside), b"pwned")
        elif kind == "symlink":
            _member(archive, "vocabulary", type=tarfile.SYMTYPE, linkname=str(outside))
        elif kind == "symlink-then-write":  # a link to a directory outside, then a file through it
            _member(archive, "vocabulary", type=tarfile.SYMTYPE, linkname=str(outside.parent))
            _member(archive, f"vocabulary/{outside.name}", b"pwned")
        elif kind == "hardlink":
            _member(archive, "weights.th", type=tarfile.LNKTYPE, linkname=str(outside))
        elif kind == "device":
            _member(archive, "weights.th", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
        elif kind == "fifo":
            _member(archive, "weights.th", type=tarfile.FIFOTYPE)
    return path


HOSTILE = ["dotdot", "absolute", "symlink", "symlink-then-write", "hardlink", "device", "fifo"]


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_archive_is_refused_and_nothing_is_written(kind, tmp_path, monkeypatch):
    from allennlp.models.archival import load_archive

    from eer_plugin.common.errors import ArchiveError

    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))  # where the extraction directories go
    outside = tmp_path / "outside" / "pwned"
    outside.parent.mkdir()
    path = crafted_archive(tmp_path / f"{kind}.tar.gz", kind, outside)
    with pytest.raises(ArchiveError, match=r"unsafe model archive, refusing to extract it: member .*: it"):
        load_archive(str(path))  # AllenNLP's own loader (evaluate, predict) goes through the check
    assert not outside.exists() and list(outside.parent.iterdir()) == []
    assert list(temp_root.iterdir()) == []  # the extraction directory is removed, nothing in it


def test_unsafe_member_names_are_refused_before_extraction(tmp_path):
    from eer_plugin.common.errors import ArchiveError
    from eer_plugin.runtime.archive import safe_extract

    for name in ["a/../../x", "/etc/x", "..", "C:/x", "\\x"]:
        path = tmp_path / "a.tar"
        with tarfile.open(path, "w") as archive:
            _member(archive, "ok.txt", b"fine")
            _member(archive, name, b"bad")
        destination = tmp_path / "out"
        destination.mkdir(exist_ok=True)
        with pytest.raises(ArchiveError):
            safe_extract(path, destination)
        assert list(destination.iterdir()) == []  # not even the good member: all checks come first


@pytest.mark.integration
def test_normal_archive_still_loads(archive):
    from allennlp.models.archival import load_archive

    from eer_plugin.runtime.archive import load_model_archive

    for loaded in (load_archive(str(archive)), load_model_archive(archive)):
        assert type(loaded.model).__name__ == "EERTagger" or hasattr(loaded.model, "crf")
        assert loaded.model.vocab.get_vocab_size("labels") > 1


class _Payload:
    """Pickled with a __reduce__ that would run code on a plain torch.load."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.integration
def test_weights_are_loaded_weights_only(archive, tmp_path):
    """A weights.th holding a pickled callable is refused, and the callable never runs."""
    from allennlp.models.archival import load_archive

    from eer_plugin.common.errors import ArchiveError

    marker = tmp_path / "code-ran"
    hostile = tmp_path / "hostile.tar.gz"
    with tarfile.open(archive) as source, tarfile.open(hostile, "w:gz") as target:
        for member in source.getmembers():
            if member.name == "weights.th":
                data = pickle.dumps({"x": _Payload(str(marker))}, protocol=2)
                buffer = io.BytesIO()
                torch.save({"x": torch.zeros(1)}, buffer)  # a real state dict ...
                raw = buffer.getvalue()
                # ... whose pickle is replaced by one that calls open(): a zip with data.pkl swapped
                import zipfile

                out = io.BytesIO()
                with zipfile.ZipFile(io.BytesIO(raw)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
                    for item in zin.infolist():
                        zout.writestr(item, data if item.filename.endswith("data.pkl") else zin.read(item.filename))
                member.size = len(out.getvalue())
                target.addfile(member, io.BytesIO(out.getvalue()))
            else:
                target.addfile(member, source.extractfile(member) if member.isfile() else None)
    with pytest.raises(ArchiveError, match="weights_only=True"):
        load_archive(str(hostile))
    assert not marker.exists()


# ----------------------------------------------------------------------------------- 6. clear failures


def _with_unknown_type(tmp_path: Path) -> Path:
    text = Path(DEV).read_text().replace("I-PER", "I-WEAPON")
    path = tmp_path / "weapons.txt"
    path.write_text(text)
    return path


@pytest.mark.integration
def test_evaluate_on_an_unknown_entity_type_names_type_and_file(archive, tmp_path):
    from allennlp.commands.evaluate import evaluate_from_archive

    from eer_plugin.runtime.errors import UnknownEntityTypeError

    data = _with_unknown_type(tmp_path)
    with pytest.raises(UnknownEntityTypeError) as caught:
        evaluate_from_archive(archive_file=str(archive), input_file=str(data))
    message = str(caught.value)
    assert str(data) in message and "'WEAPON'" in message and "not known to the model" in message
    assert "LOC, MISC, ORG, PER" in message


@pytest.mark.integration
def test_document_counts_on_an_unknown_entity_type(archive, tmp_path):
    from eer_benchmark.run.evaluation import document_counts
    from eer_plugin.runtime.errors import UnknownEntityTypeError

    data = _with_unknown_type(tmp_path)
    with pytest.raises(UnknownEntityTypeError, match=rf"{data}:\d+: entity type 'WEAPON' is not known to the model"):
        document_counts(str(archive), str(data))


@pytest.mark.integration
def test_tune_o_cost_on_unknown_type_missing_or_broken_archive(archive, tmp_path):
    import argparse

    from eer_plugin.commands.tune_o_cost import tune_o_cost
    from eer_plugin.common.errors import ArchiveError, UserError
    from eer_plugin.runtime.errors import UnknownEntityTypeError

    def args(archive_file, dev=DEV):
        return argparse.Namespace(
            archive_file=str(archive_file),
            dev_file=str(dev),
            test_file=None,
            n_calls=3,
            low=1e-4,
            high=1e2,
            seed=0,
            batch_size=8,
            cuda_device=-1,
            output_archive=str(tmp_path / "cd.tar.gz"),
        )

    with pytest.raises(ArchiveError, match="no such file"):
        tune_o_cost(args(tmp_path / "missing.tar.gz"))
    (tmp_path / "text.tar.gz").write_text("not an archive\n")
    with pytest.raises(ArchiveError, match="not a model archive"):
        tune_o_cost(args(tmp_path / "text.tar.gz"))
    with pytest.raises(ArchiveError, match="is a directory"):
        tune_o_cost(args(tmp_path))
    with tarfile.open(tmp_path / "empty.tar.gz", "w:gz") as empty:
        _member(empty, "readme.txt", b"hello")
    with pytest.raises(ArchiveError, match="no config.json"):
        tune_o_cost(args(tmp_path / "empty.tar.gz"))
    with pytest.raises(UserError, match="no such dev file"):
        tune_o_cost(args(archive, tmp_path / "missing-dev.txt"))
    with pytest.raises(UnknownEntityTypeError, match="'WEAPON'"):
        tune_o_cost(args(archive, _with_unknown_type(tmp_path)))
    assert not (tmp_path / "cd.tar.gz").exists()


@pytest.mark.integration
def test_user_errors_are_one_line_at_the_command_line(tmp_path):
    """`allennlp tune-o-cost` / `evaluate` on a missing or non-archive file: one line, no traceback."""
    (tmp_path / "text.tar.gz").write_text("not an archive\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    # tune-o-cost is found through the repository's .allennlp_plugins; evaluate runs elsewhere with --include-package
    for command, archive_file, cwd in (("tune-o-cost", "missing.tar.gz", REPO), ("evaluate", "text.tar.gz", tmp_path)):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "allennlp",
                command,
                str(tmp_path / archive_file),
                DEV,
                "--include-package",
                "eer_plugin",
            ],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=300,
        )
        assert proc.returncode == 1, proc.stderr[-2000:]
        lines = [line for line in proc.stderr.splitlines() if line.strip() and " - INFO - " not in line]
        # "python -m allennlp" names itself as argparse does ("__main__.py" before Python 3.14)
        said = f" {command}: error: {tmp_path / archive_file}: "
        assert lines == [lines[-1]] and said in lines[-1], proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------- 2, 3. checkpoints: kills and exact resume


class Killed(BaseException):
    """Stands for SIGKILL: not an Exception, so no handler of the trainer catches it."""


#: the hyperparameters of this test's trainings (``-o``), set by :func:`_train_env`
_HYPERPARAMETERS: dict = {}


def _train_env(monkeypatch, tiny_encoder, epochs: int = 2, **settings) -> None:
    """The tiny encoder in the environment; ``epochs`` and the ``EER_*`` hyperparameters in ``settings``
    become the ``-o`` of every :func:`_train` of the test."""
    monkeypatch.setenv("EER_ENCODER", tiny_encoder)
    monkeypatch.setenv("EER_MAX_LENGTH", "128")
    monkeypatch.setattr(
        sys.modules[__name__], "_HYPERPARAMETERS", {"EER_EPOCHS": epochs, "EER_BATCH_SIZE": 4, **settings}
    )


def _train(directory: Path, config: str, recover: bool = False, overrides: str = ""):
    from allennlp.commands.train import train_model_from_file

    merged = {**json.loads(hyper(config, **_HYPERPARAMETERS)), **json.loads(overrides or "{}")}
    return train_model_from_file(
        str(REPO / "training_configs" / config),
        str(directory),
        overrides=json.dumps(merged),
        recover=recover,
        force=not recover,
    )


def _train_until_killed(monkeypatch, directory: Path, config: str, killed_after, overrides: str = "") -> None:
    """Trains ``config`` into ``directory`` and kills it (:class:`Killed`) right after the checkpoint that
    ``killed_after(trainer)`` names has been saved, as a SIGKILL at that moment would."""
    from eer_plugin.training import checkpointer

    original = checkpointer.AtomicCheckpointer.save_checkpoint

    def save_then_die(self, trainer):
        original(self, trainer)
        if killed_after(trainer):
            raise Killed()

    with monkeypatch.context() as patch:
        patch.setattr(checkpointer.AtomicCheckpointer, "save_checkpoint", save_then_die)
        with pytest.raises(Killed):
            _train(directory, config, overrides=overrides)


def _after_epoch_one(trainer) -> bool:
    return trainer._epochs_completed == 1


def _comparable(directory: Path) -> dict:
    """Every metric of every epoch and of the end (durations, memory, timestamps left out), and the final weights."""

    def clean(metrics):
        return {k: v for k, v in metrics.items() if "duration" not in k and "memory" not in k and "time" not in k}

    epochs = {p.name: clean(json.loads(p.read_text())) for p in sorted(directory.glob("metrics_epoch_*.json"))}
    final = clean(json.loads((directory / "metrics.json").read_text()))
    (last,) = list(directory.glob("model_state_e*_b0.th"))  # keep_most_recent_by_count: 1
    return {
        "epochs": epochs,
        "final": final,
        "weights": torch.load(last, weights_only=True),
        "best": torch.load(directory / "best.th", weights_only=True),
    }


def _assert_identical(a: dict, b: dict) -> None:
    assert a["epochs"] == b["epochs"] and a["final"] == b["final"]
    for name in ("weights", "best"):
        assert a[name].keys() == b[name].keys()
        assert all(torch.equal(a[name][k], b[name][k]) for k in a[name])


@pytest.mark.integration
@pytest.mark.parametrize("config", ["eer_short.jsonnet", "sns_short.jsonnet"])
def test_interrupted_and_recovered_run_is_the_uninterrupted_run(config, tiny_encoder, monkeypatch, tmp_path):
    from eer_plugin.training import checkpointer

    _train_env(monkeypatch, tiny_encoder, epochs=3)
    _train(tmp_path / "straight", config)
    _train_until_killed(monkeypatch, tmp_path / "resumed", config, _after_epoch_one)
    state = torch.load(tmp_path / "resumed" / "training_state_e1_b0.th", weights_only=True)
    assert {"python", "numpy", "torch"} <= state[checkpointer.RNG_KEY]["now"].keys()
    if config.startswith("sns"):  # the span model's own negative sampler
        assert "model:.rng" in state[checkpointer.RNG_KEY]["now"]["private"]
    _train(tmp_path / "resumed", config, recover=True)
    _assert_identical(_comparable(tmp_path / "straight"), _comparable(tmp_path / "resumed"))


@pytest.mark.integration
def test_recovered_run_under_the_binding_control_is_the_uninterrupted_run(tiny_encoder, monkeypatch, tmp_path):
    """The binding control's state (running ratio and the band's two multipliers) is part of the model: a run
    killed after epoch 1 and recovered ends with the uninterrupted run's weights, multipliers and metrics."""
    # a band far from where the model starts and is pulled: the multipliers move
    band = {
        "EER_RATIO_CONTROL": "bind",
        "EER_ENTITY_RATIO": "0.6",
        "EER_RATIO_MARGIN": "0.01",
        "EER_RATIO_INIT": "none",
    }
    _train_env(monkeypatch, tiny_encoder, epochs=3, **band)
    _train(tmp_path / "straight", "eer_short.jsonnet")
    _train_until_killed(monkeypatch, tmp_path / "resumed", "eer_short.jsonnet", _after_epoch_one)
    _train(tmp_path / "resumed", "eer_short.jsonnet", recover=True)
    straight, resumed = _comparable(tmp_path / "straight"), _comparable(tmp_path / "resumed")
    _assert_identical(straight, resumed)
    assert [k for k in straight["weights"] if k.endswith("entity_price.state")]  # compared above with the weights
    assert any(m.get("training_entity_price", 0) > 0 for m in straight["epochs"].values())


@pytest.mark.integration
@pytest.mark.parametrize("config", ["gold.jsonnet", "eer_short.jsonnet", "sns_short.jsonnet"])
def test_resume_from_a_checkpoint_inside_an_epoch(config, tiny_encoder, monkeypatch, tmp_path):
    """Killed after a checkpoint inside epoch 1 and recovered: the weights, validation and every training metric
    of every epoch (the interrupted one's loss and rho_hat too: training/epoch_state.py) are the uninterrupted run's."""
    from eer_plugin.training import epoch_state

    _train_env(monkeypatch, tiny_encoder, epochs=3)
    overrides = json.dumps({"trainer.checkpointer.save_every_num_batches": 2})
    _train(tmp_path / "straight", config, overrides=overrides)
    in_epoch_one = lambda trainer: trainer._epochs_completed == 1 and trainer._batches_in_epoch_completed == 2  # noqa: E731
    _train_until_killed(monkeypatch, tmp_path / "resumed", config, in_epoch_one, overrides=overrides)
    state = torch.load(tmp_path / "resumed" / "training_state_e1_b2.th", weights_only=True)
    assert state[epoch_state.EPOCH_KEY]["loss"] > 0 and state[epoch_state.EPOCH_KEY]["metrics"]
    _train(tmp_path / "resumed", config, recover=True, overrides=overrides)
    straight, resumed = _comparable(tmp_path / "straight"), _comparable(tmp_path / "resumed")
    assert any(k.startswith("training_") for k in straight["epochs"]["metrics_epoch_1.json"])
    _assert_identical(straight, resumed)


@pytest.mark.integration
def test_a_kill_in_any_write_leaves_a_recoverable_run(tiny_encoder, monkeypatch, tmp_path):
    """Every file write of a 2-epoch run (checkpoints, best.th, metrics) is interrupted in turn
    half-way; --recover then always finishes the run with the uninterrupted run's results."""
    import allennlp.training.gradient_descent_trainer as gdt

    from eer_plugin.common import atomic, outputs

    _train_env(monkeypatch, tiny_encoder, epochs=2)
    _train(tmp_path / "straight", "eer_short.jsonnet")
    expected = _comparable(tmp_path / "straight")

    writes = {"count": 0, "kill_at": None}

    def dying(write):
        def wrapper(*args, **kwargs):
            writes["count"] += 1
            if writes["count"] == writes["kill_at"]:
                raise Killed()
            return write(*args, **kwargs)

        return wrapper

    real_save = torch.save

    def partial_save(obj, f, *args, **kwargs):  # writes half the bytes, then the process "dies"
        writes["count"] += 1
        if writes["count"] != writes["kill_at"]:
            return real_save(obj, f, *args, **kwargs)
        buffer = io.BytesIO()
        real_save(obj, buffer)
        f.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
        f.flush()
        raise Killed()

    kill_points = 0
    for kill_at in range(1, 100):
        directory = tmp_path / f"killed_{kill_at}"
        writes.update(count=0, kill_at=kill_at)
        with monkeypatch.context() as patch:
            patch.setattr(torch, "save", partial_save)  # kill in the middle of a checkpoint / best.th write
            patch.setattr(outputs, "publish", dying(outputs.publish))  # kill after any temporary file is whole
            patch.setattr(gdt, "hardlink_or_copy", dying(gdt.hardlink_or_copy))  # kill after best.th was removed
            try:
                _train(directory, "eer_short.jsonnet")
            except Killed:
                pass
        if writes["count"] < kill_at:  # the run wrote fewer files: every write has been interrupted once
            break
        kill_points += 1
        assert not (directory / "model.tar.gz").exists()
        # a real kill runs no cleanup: the temporary file of the interrupted write stays behind
        (directory / f".model_state_e1_b0.th{atomic.TEMPORARY_MARK}99999-deadbeef").write_bytes(b"partial")
        for path in directory.glob("*_state_e*.th"):  # what is there is whole
            torch.load(path, weights_only=True)
        _train(directory, "eer_short.jsonnet", recover=True)
        _assert_identical(expected, _comparable(directory))
        assert not list(directory.glob(f".*{atomic.TEMPORARY_MARK}*"))  # the recovered run removed them
    print(f"{kill_points} kill points")
    # per epoch: metrics_epoch, training state and model state (mid-write and before the rename),
    # best.th when the epoch is the best; at the end: model.tar.gz, metrics.json
    assert kill_points >= 12


# ----------------------------------------------------------------------------------- 7. the eer-ner command


@pytest.mark.integration
def test_eer_ner_command_runs_allennlp_with_the_plugin_from_any_directory(tmp_path):
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="eer-ner")
    assert script.value == "eer_plugin.cli:main"
    executable = Path(sys.executable).parent / "eer-ner"
    assert executable.exists(), "run bash scripts/setup_env.sh (setup.py declares the eer-ner console script)"
    assert not (tmp_path / ".allennlp_plugins").exists()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    listing = subprocess.run(
        [str(executable), "--help"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )
    assert listing.returncode == 0, listing.stderr[-2000:]
    # the overview: "  NAME  description" under each purpose, then AllenNLP's other commands by name
    lines = listing.stdout.splitlines()
    commands = {line.split()[0].rstrip(",") for line in lines if line[:2] == "  " and line[2:3].strip()}
    assert {"train", "evaluate", "predict", "eer-simulate", "tune-o-cost", "cbl", "eer-benchmark"} <= commands
    simulate = subprocess.run(
        [str(executable), "eer-simulate", "--help"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
    )
    assert simulate.returncode == 0 and simulate.stdout.startswith("usage: eer-ner eer-simulate"), simulate.stderr[
        -2000:
    ]


# A real SIGKILL at a random moment of a training run (slow: one process start per run and per recovery)

SLOW_WRITER = """
import io, os, sys, time
import torch
_save = torch.save
def slow_save(obj, f, *args, **kwargs):  # every torch.save takes ~0.5 s, so kills often land mid-write
    buffer = io.BytesIO()
    _save(obj, buffer, *args, **kwargs)
    data = buffer.getvalue()
    handle = open(f, "wb") if isinstance(f, (str, os.PathLike)) else f
    try:
        for start in range(0, len(data), len(data) // 10 + 1):
            handle.write(data[start : start + len(data) // 10 + 1])
            handle.flush()
            time.sleep(0.05)
    finally:
        if handle is not f:
            handle.close()
torch.save = slow_save
from eer_plugin.cli import main
sys.exit(main(sys.argv[1:]))
"""


def kill_and_recover(directory: Path, config: str, delay: float, env: dict, overrides: str = ""):
    """Starts `eer-ner train` with slow writes, SIGKILLs it ``delay`` seconds after its training
    started (config.json written), then runs `--recover` to the end; returns the recovery and the
    names of the files the kill left."""
    import time

    command = [str(REPO / "training_configs" / config), "-s", str(directory), "-o", overrides or "{}"]
    process = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER, "train", *command],
        env=env,
        cwd=directory.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 300
    while not (directory / "config.json").exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(delay)
    process.kill()
    process.wait()
    left = sorted(p.name for p in directory.iterdir())
    recovery = subprocess.run(
        [sys.executable, "-m", "eer_plugin.cli", "train", *command, "--recover"],
        env=env,
        cwd=directory.parent,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return recovery, left


@pytest.mark.integration
@pytest.mark.slow
def test_sigkill_at_random_moments_then_recover(tiny_encoder, tmp_path):
    """EER_KILL_ITERATIONS (default 5) runs killed at random moments; every --recover finishes with
    the uninterrupted run's metrics and weights."""
    import random

    env = {
        **os.environ,
        "EER_ENCODER": tiny_encoder,
        "EER_MAX_LENGTH": "128",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
    }
    overrides = '{"trainer.num_epochs": 3}'
    straight = tmp_path / "straight"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "eer_plugin.cli",
            "train",
            str(REPO / "training_configs" / "eer_short.jsonnet"),
            "-s",
            str(straight),
            "-o",
            overrides,
        ],
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )
    expected = _comparable(straight)
    rng = random.Random(int(os.environ.get("EER_KILL_SEED", "0")))
    mid_write = finished = 0
    iterations = int(os.environ.get("EER_KILL_ITERATIONS", "5"))
    for iteration in range(iterations):
        directory = tmp_path / f"killed_{iteration}"
        delay = rng.uniform(0.0, 12.0)
        recovery, left = kill_and_recover(directory, "eer_short.jsonnet", delay, env, overrides)
        assert recovery.returncode == 0, f"kill after {delay:.2f} s (left {left}): {recovery.stderr[-3000:]}"
        _assert_identical(expected, _comparable(directory))
        mid_write += any(".eer-tmp-" in name for name in left)
        finished += "model.tar.gz" in left
    print(f"{iterations} kills: {mid_write} in the middle of a write, {finished} after the run had finished")
