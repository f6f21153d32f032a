"""An interrupted benchmark run continues its training from the latest checkpoint
(eer_benchmark.run.resume): when it may (settings unchanged, a complete checkpoint, no failure), the
wall time it keeps, and, with the tiny encoder, that a run killed by SIGTERM after two epochs and resumed
ends with the uninterrupted run's results."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from conftest import REPO
from test_benchmark import DEV, TRAIN, plan_data
from test_benchmark_partial import ESTIMATE, partial_plan

from eer_benchmark import Runner, dry_run, parse_plan
from eer_benchmark.commands import benchmark
from eer_benchmark.run.attempt import StepFailed
from eer_benchmark.run.resume import (
    attempt_path,
    latest_checkpoint,
    resumable,
    resume_point,
    start_attempt,
    training_finished,
)

EPOCHS = 6  # of the interrupted run: it is stopped after two
SETTINGS = {"EER_EPOCHS": "4", "EER_LEARNING_RATE": "5e-5"}


def checkpoint(directory: Path, epochs: int, mtime: float, model: bool = True, training: bool = True) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, present in ((f"model_state_e{epochs}_b0.th", model), (f"training_state_e{epochs}_b0.th", training)):
        if present:
            (directory / name).write_bytes(b"x")
            os.utime(directory / name, (mtime, mtime))


def test_resume_point_needs_the_same_settings_a_complete_checkpoint_and_no_failure(tmp_path):
    run_dir = tmp_path / "seed0"
    assert resume_point(run_dir, SETTINGS) is None  # nothing there
    start_attempt(run_dir, SETTINGS, seconds_before=100.0)
    started = json.loads(attempt_path(run_dir).read_text())["started"]
    assert (
        attempt_path(run_dir).parent == run_dir.parent and not run_dir.exists()
    )  # allennlp train wants the run directory empty
    run_dir.mkdir()
    assert resume_point(run_dir, SETTINGS) is None  # no checkpoint yet: start again
    checkpoint(run_dir, 1, started + 30)  # AllenNLP's names: e1_b0 after the first epoch
    checkpoint(run_dir, 2, started + 60)
    checkpoint(run_dir, 3, started + 95, training=False)  # killed between the two files: not a checkpoint
    assert latest_checkpoint(run_dir)[:2] == (2, 0)
    epochs, kept = resume_point(run_dir, SETTINGS)
    # the training kept: 100 s from earlier attempts and 60 s up to the checkpoint (the 35 s after it are redone)
    assert epochs == 2 and abs(kept - 160.0) < 1e-6
    assert resume_point(run_dir, {**SETTINGS, "EER_EPOCHS": "5"}) is None  # the plan changed: start again
    (run_dir / "FAILED.json").write_text("{}")
    assert resume_point(run_dir, SETTINGS) is None  # a recorded failure starts afresh
    (run_dir / "FAILED.json").unlink()
    (run_dir / "DONE").write_text("")
    assert resume_point(run_dir, SETTINGS) is None


def test_a_cbl_runs_checkpoints_add_up_over_its_rounds(tmp_path):
    run_dir = tmp_path / "seed0"
    start_attempt(run_dir, SETTINGS)
    started = json.loads(attempt_path(run_dir).read_text())["started"]
    checkpoint(run_dir / "round_1", 3, started + 100)  # a finished round keeps its last checkpoint
    checkpoint(run_dir / "round_2", 1, started + 150)
    assert latest_checkpoint(run_dir) == (4, 0, started + 150)
    (run_dir / "cbl_state.json").write_text("{}")  # round 2 finished and relabelled later
    os.utime(run_dir / "cbl_state.json", (started + 170, started + 170))
    checkpoint(run_dir / "round_2", 3, started + 160)
    epochs, kept = resume_point(run_dir, SETTINGS)
    assert epochs == 6 and abs(kept - 170.0) < 1e-6
    checkpoint(run_dir / "final", 2, started + 250)
    assert latest_checkpoint(run_dir) == (8, 0, started + 250)


def test_a_finished_training_has_an_archive_written_after_its_metrics(tmp_path):
    """AllenNLP writes metrics.json, then model.tar.gz; an interrupted training archives its best epoch so far
    without metrics. An archive older than the metrics is such a leftover: the training did not finish."""
    for place in ("seed0", "seed0/final", "seed0/raw"):  # EER and SNS; CBL's final tagger; Raw+CD's own Raw
        directory = tmp_path / place
        directory.mkdir(parents=True)
        (directory / "model.tar.gz").write_bytes(b"best epoch so far")  # archived when interrupted
        os.utime(directory / "model.tar.gz", (1000.0, 1000.0))
        assert not training_finished(tmp_path / "seed0")
        (directory / "metrics.json").write_text("{}")  # the resumed training finished, stopped while archiving
        os.utime(directory / "metrics.json", (2000.0, 2000.0))
        assert not training_finished(tmp_path / "seed0")
        os.utime(directory / "model.tar.gz", (2001.0, 2001.0))  # its archive written
        assert training_finished(tmp_path / "seed0")
        for name in ("model.tar.gz", "metrics.json"):
            (directory / name).unlink()


def test_which_runs_resume():
    plan = parse_plan(
        plan_data(
            approaches=["eer_short", "sns_shortest", "raw_shortest", "raw_cd_shortest", "cbl_bert_shortest", "gold"]
        )
    ).expand()
    assert {run.approach: resumable(run) for run in plan.runs} == {
        "eer_short": True,
        "sns_shortest": True,
        "raw_shortest": True,
        "gold": True,
        "cbl_bert_shortest": True,  # allennlp cbl --recover: its finished rounds are kept
        "raw_cd_shortest": True,  # its own Raw training (the O-cost search starts again)
    }
    estimate = parse_plan(partial_plan()).expand()
    assert [resumable(r) for r in estimate.runs if r.estimates_ratio] == [True, True]  # "estimate, then bind" too


def stand_in_training(runner, run_dir: Path, trained: Path, command, kept_seconds: float) -> float:
    """A training step's stand-in: the first attempt checkpoints two epochs ``kept_seconds`` after it started,
    then the session ends; the one with ``--recover`` finishes (150 s)."""
    trained.mkdir(parents=True, exist_ok=True)
    if "--recover" not in command:
        started = json.loads(attempt_path(run_dir).read_text())["started"]
        checkpoint(trained, 2, started + kept_seconds)
        runner._stopping = True
        raise StepFailed("train: interrupted")
    (trained / "metrics.json").write_text(json.dumps({"training_rho_hat": 0.21}))
    (trained / "model.tar.gz").write_bytes(b"archive")
    return 150.0


def stand_in_evaluation(command) -> float:
    counts = {"summary": {"precision": 1.0, "recall": 0.5, "f1": 2 / 3, "tp": 1, "fp": 0, "fn": 1}, "counts": {}}
    Path(command[command.index("-o") + 1]).write_text(json.dumps(counts))
    return 5.0


def test_an_interrupted_ratio_estimate_run_keeps_its_band_and_continues(tmp_path, monkeypatch):
    """An "estimate, then bind" run stopped after its estimate and two epochs continues its training with
    ``--recover`` and the band it started with; the estimate is not computed again and its seconds count once.
    (The subprocesses are stand-ins that write what the real steps write; the SIGTERM test below trains.)"""
    plan = parse_plan(
        partial_plan(ablations={"approach": "eer_short", "scenarios": ["EE"], "settings": [{**ESTIMATE, "seeds": [0]}]})
    ).expand()
    run = next(r for r in plan.runs if r.estimates_ratio)
    steps = []

    def step(runner, command, env, log, name):
        overrides = json.loads(command[command.index("-o") + 1]) if name == "train" else {}
        steps.append((name, list(command), overrides.get("model.entity_ratio")))
        if name == "estimate ratio":
            output = Path(command[command.index("--output") + 1])
            output.write_text(
                json.dumps(
                    {
                        "ratio": 0.2,
                        "low": 0.16,
                        "high": 0.24,
                        "documents": 2,
                        "suggested": {"entity_ratio": 0.2, "ratio_margin": 0.04},
                    }
                )
            )
            return 30.0
        if name == "per-document evaluation":
            return stand_in_evaluation(command)
        return stand_in_training(runner, runner.run_dir(run), runner.run_dir(run), command, 200.0)

    monkeypatch.setattr(Runner, "_subprocess", step)
    said = []
    first = Runner(plan, str(tmp_path / "bench"), echo=said.append, retries=0)
    first._total = 1
    first._execute_unit([run])
    assert first.record(run)["status"] == "missing" and said[-1].endswith(
        "(interrupted; next time it continues after 2 epochs)"
    ), said
    result = Runner(plan, str(tmp_path / "bench"), echo=lambda *_: None, retries=0).execute(run)
    assert [name for name, _, _ in steps] == ["estimate ratio", "train", "train", "per-document evaluation"], steps
    assert "--recover" in steps[2][1] and steps[1][2] == steps[2][2] == 0.2  # the same band, held on
    assert result["status"] == "done" and result["resumed"]["epochs_completed"] == 2
    assert (
        result["ratio_estimate"]["entity_ratio"] == result["entity_ratio"] == 0.2 and result["estimate_seconds"] == 30.0
    )
    assert (
        abs(result["seconds"] - (200.0 + 150.0 + 30.0)) < 1.0
    )  # kept training, the resumed training, the estimate once
    assert json.loads((first.run_dir(run) / "ratio_estimate.json").read_text())["suggested"]["entity_ratio"] == 0.2


@pytest.mark.integration
def test_a_run_interrupted_after_two_epochs_resumes_to_the_uninterrupted_result(tiny_encoder, tmp_path):
    # epochs of ~2 s (the fixture's 4 documents 30 times, every sentence trained on): the tiny fixture run's
    # 0.1 s epochs all ended before a SIGTERM sent after the second one took effect (CI, stop 23)
    train = tmp_path / "train.txt"
    train.write_text(Path(TRAIN).read_text() * 30)
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"datasets: [{{name: fx, train: {train}, dev: {DEV}, test: {DEV}}}]\n"
        f"scenarios: [{{name: EE-400, type: ee, budget: 400}}]\napproaches: [eer_all]\nepochs: {EPOCHS}\n"
        f"env: {{EER_ENCODER: {tiny_encoder}, EER_MAX_LENGTH: 128}}\n"
    )
    tail = Path("runs/fx/EE-400/eer_all") / Path(tiny_encoder).name / "seed0"
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    assert benchmark.main([str(plan), "-o", str(whole)]) == 0

    latest_checkpoint(
        tmp_path
    )  # imports the checkpointer (AllenNLP, seconds) now, not in the polling loop's first call
    env = {k: v for k, v in os.environ.items() if not k.startswith("EER_")}
    runner = subprocess.Popen(
        [sys.executable, "-m", "allennlp", "eer-benchmark", str(plan), "-o", str(resumed)],
        cwd=str(REPO),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    run_dir = resumed / tail

    def epochs_saved() -> int:
        found = latest_checkpoint(run_dir) if run_dir.is_dir() else None
        return found[0] if found else -1

    deadline = time.time() + 180
    while time.time() < deadline and runner.poll() is None and epochs_saved() < 2:  # two epochs checkpointed
        time.sleep(0.1)
    runner.send_signal(signal.SIGTERM)
    _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 130, stderr[-2000:]
    assert not (run_dir / "DONE").exists(), "the run finished before it was interrupted"
    epochs = latest_checkpoint(run_dir)[0]
    assert 2 <= epochs < EPOCHS and "interrupted trainings continue from their latest checkpoint" in stderr

    assert benchmark.main([str(plan), "-o", str(resumed)]) == 0
    log = (resumed / "logs" / tail.relative_to("runs")).with_suffix(".log").read_text()
    assert (
        f"resuming the interrupted training after {epochs} completed epoch{'s' * (epochs != 1)}" in log
        and "--recover" in log
    )
    mine, theirs = (json.loads((out / tail / "result.json").read_text()) for out in (resumed, whole))
    assert mine["resumed"]["epochs_completed"] == epochs and mine["seconds"] > mine["resumed"]["seconds_before"] > 0
    for key in ("tp", "fp", "fn", "f1", "rho_hat", "best_epoch"):
        assert mine[key] == theirs[key], key
    metrics = [json.loads((out / tail / "metrics.json").read_text()) for out in (resumed, whole)]
    assert metrics[0]["best_validation_f1-measure-overall"] == metrics[1]["best_validation_f1-measure-overall"]
    weights = [torch.load(out / tail / "best.th", weights_only=True) for out in (resumed, whole)]
    assert weights[0].keys() == weights[1].keys() and all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    assert (
        not list(run_dir.glob("training_state_*.th")) and not attempt_path(run_dir).exists()
    )  # cleaned up when finished


@pytest.mark.integration
def test_a_failed_evaluation_is_retried_without_training_again(tiny_encoder, tmp_path, monkeypatch):
    """The retry of an attempt whose training finished (its archive written) before a later step failed
    evaluates that model; it does not train it again, and the run's record counts the training once."""
    from eer_benchmark.run.attempt import Attempt, StepFailed

    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"datasets: [{{name: fx, train: {TRAIN}, dev: {DEV}, test: {DEV}}}]\n"
        f"scenarios: [{{name: EE-30, type: ee, budget: 30}}]\napproaches: [eer_all]\nepochs: 2\n"
        f"env: {{EER_ENCODER: {tiny_encoder}, EER_MAX_LENGTH: 128}}\n"
    )
    evaluate, calls = Attempt.evaluate, []

    def fails_once(self, env, archive):
        calls.append(archive)
        if len(calls) == 1:
            raise StepFailed("per-document evaluation exited with status 1")
        return evaluate(self, env, archive)

    monkeypatch.setattr(Attempt, "evaluate", fails_once)
    assert benchmark.main([str(plan), "-o", str(tmp_path / "bench")]) == 0
    tail = Path("fx/EE-30/eer_all") / Path(tiny_encoder).name / "seed0"
    log = (tmp_path / "bench" / "logs" / tail).with_suffix(".log").read_text()
    assert "attempt 2 of 2" in log and "resuming the interrupted training after 2 completed epochs" in log
    assert log.count("--- train: ") == 2, log  # one training step: its command and its exit status
    result = json.loads((tmp_path / "bench" / "runs" / tail / "result.json").read_text())
    assert result["status"] == "done" and result["resumed"]["training_finished"] is True
    assert 0 < result["seconds"] == result["resumed"]["seconds_before"] and len(calls) == 2


def test_an_interrupted_raw_cd_run_continues_its_raw_training(tmp_path, monkeypatch):
    """Raw+CD without the plan's Raw run trains its own in ``raw/``: stopped there after two epochs, it
    continues that training with ``--recover``, then searches the O-cost; its seconds count the kept epochs."""
    plan = parse_plan(plan_data(approaches=["raw_cd_shortest"])).expand()
    (run,) = plan.runs
    steps = []

    def step(runner, command, env, log, name):
        steps.append((name, "--recover" in command))
        raw = runner.run_dir(run) / "raw"
        if name == "tune-o-cost":
            (raw / "o_cost.json").write_text(json.dumps({"o_cost": 2.5}))
            Path(command[command.index("--output-archive") + 1]).write_bytes(b"archive")
            return 40.0
        if name == "per-document evaluation":
            return stand_in_evaluation(command)
        return stand_in_training(runner, runner.run_dir(run), raw, command, 300.0)

    monkeypatch.setattr(Runner, "_subprocess", step)
    assert Runner(plan, str(tmp_path / "bench"), echo=lambda *_: None, retries=0).execute(run)["status"] == "missing"
    # it continues on GPU 0 (the device is no compared setting): the saved config takes the new device
    saved = Runner(plan, str(tmp_path / "bench")).run_dir(run) / "raw" / "config.json"
    saved.write_text(json.dumps({"trainer": {"cuda_device": -1}}))
    on_gpu = parse_plan(plan_data(approaches=["raw_cd_shortest"], env={"EER_CUDA_DEVICE": "0"})).expand()
    result = Runner(on_gpu, str(tmp_path / "bench"), echo=lambda *_: None, retries=0).execute(on_gpu.runs[0])
    assert json.loads(saved.read_text()) == {"trainer": {"cuda_device": 0}}
    assert steps == [
        ("train raw_shortest", False),
        ("train raw_shortest", True),
        ("tune-o-cost", False),
        ("per-document evaluation", False),
    ]
    assert result["status"] == "done" and result["o_cost"] == 2.5 and result["resumed"]["epochs_completed"] == 2
    assert abs(result["raw_seconds"] - 450.0) < 1.0 and abs(result["seconds"] - 490.0) < 1.0


def test_a_training_resumed_on_another_device_passes_allennlps_recover_check(tmp_path):
    """A run interrupted on the CPU continues on GPU 0 (and back): ``--recover`` compares every key of the saved
    config.json, trainer.cuda_device too, and the benchmark's resume does not compare devices."""
    from allennlp.common import Params
    from allennlp.common.checks import ConfigurationError
    from allennlp.training.util import create_serialization_dir

    from eer_benchmark.run.resume import continue_on_device
    from eer_plugin.common.errors import UserError

    config = {"model": {"type": "eer_tagger", "dropout": 0.2}, "trainer": {"cuda_device": -1, "num_epochs": 10}}
    for place in (tmp_path, tmp_path / "round_1"):  # the run's config and, for CBL, a round's
        place.mkdir(exist_ok=True)
        (place / "config.json").write_text(json.dumps(config, indent=4))
    (tmp_path / "o_cost.json").write_text('{"o_cost": 1.5}')
    on_gpu = {**config, "trainer": {**config["trainer"], "cuda_device": 0}}
    # AllenNLP's check, or the plugin's (eer_plugin.training.recovery), which names the setting
    with pytest.raises(
        (ConfigurationError, UserError), match=r"does not match|trainer\.cuda_device: -1 in the run, 0 now"
    ):
        create_serialization_dir(Params(json.loads(json.dumps(on_gpu))), str(tmp_path), recover=True, force=False)
    continue_on_device(tmp_path, "0")
    for place in (tmp_path, tmp_path / "round_1"):
        create_serialization_dir(Params(json.loads(json.dumps(on_gpu))), str(place), recover=True, force=False)
        assert json.loads((place / "config.json").read_text()) == on_gpu  # nothing else changed
    continue_on_device(tmp_path, "-1")  # and back to the CPU
    assert (
        json.loads((tmp_path / "config.json").read_text()) == config
        and (tmp_path / "o_cost.json").read_text() == '{"o_cost": 1.5}'
    )


@pytest.mark.parametrize("weights_here", [False, True])
def test_a_raw_run_restored_without_its_model_is_trained_again_for_its_raw_cd_run(tmp_path, monkeypatch, weights_here):
    """A Raw run restored from the records (``eer-records`` keeps no weights), its Raw+CD run still to run: the
    search needs the model, so the Raw run is trained again first (its record replaced) and then tuned. With its
    model here, only the search runs."""
    from test_benchmark import fabricate

    plan = parse_plan(plan_data(approaches=["raw_shortest", "raw_cd_shortest"])).expand()
    raw, raw_cd = plan.runs
    runner = Runner(plan, str(tmp_path / "bench"), echo=lambda *_: None, retries=0)
    fabricate(runner, raw, [(2, 1, 0)], seconds=999.0)  # as eer-records restore leaves it: no model.tar.gz
    if weights_here:
        (runner.run_dir(raw) / "model.tar.gz").write_bytes(b"archive")
    steps = []

    def step(runner, command, env, log, name):
        steps.append(name)
        if name == "tune-o-cost":
            (runner.run_dir(raw) / "o_cost.json").write_text(json.dumps({"o_cost": 2.5}))
            Path(command[command.index("--output-archive") + 1]).write_bytes(b"archive")
            return 40.0
        if name == "per-document evaluation":
            return stand_in_evaluation(command)
        directory = runner.run_dir(raw)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "metrics.json").write_text(json.dumps({"training_rho_hat": 0.21}))
        (directory / "model.tar.gz").write_bytes(b"archive")
        return 150.0

    monkeypatch.setattr(Runner, "_subprocess", step)
    assert runner.to_run(plan.units()[0]) == ([raw_cd] if weights_here else [raw, raw_cd])
    listed = []
    dry_run(plan, runner, list(enumerate(plan.units())), echo=listed.append)
    assert [line.split()[2] for line in listed if line.startswith("unit ")] == (
        ["done", "missing"] if weights_here else ["again", "missing"]
    )
    runner.run_units(plan.units())
    assert steps == (
        ["tune-o-cost", "per-document evaluation"]
        if weights_here
        else ["train", "per-document evaluation", "tune-o-cost", "per-document evaluation"]
    )
    assert runner.is_done(raw) and runner.is_done(raw_cd) and runner.record(raw_cd)["o_cost"] == 2.5
    assert runner.record(raw)["seconds"] == (999.0 if weights_here else 150.0)  # trained again: its new record
