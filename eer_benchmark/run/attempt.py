"""One attempt at a benchmark run (:meth:`~eer_benchmark.run.runner.Runner.execute` retries it): the
ratio estimate (a ratio-estimate run), the training (``allennlp train`` / ``cbl``, or Raw then
``tune-o-cost`` for Raw+CD), the per-document test evaluation, and the run's result record."""

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from eer_benchmark.machine import machine
from eer_benchmark.plan.approaches import FAMILIES
from eer_benchmark.plan.plan import Run
from eer_benchmark.run.resume import continue_on_device, kept_estimate_seconds, start_attempt, training_finished
from eer_benchmark.tables import read_json


class StepFailed(RuntimeError):
    """A subprocess of a run exited with a non-zero status (or a run could not be set up)."""


class Attempt:
    """One attempt at ``run`` with ``runner``'s paths, environment and subprocesses; ``resume``: (epochs
    completed, training seconds kept) of an interrupted training to continue. :meth:`result` runs it and returns
    the result record. ``seconds`` is the run's cost (a Raw+CD run counts the Raw training it tunes, even
    when that is another run's), ``own_seconds`` what this attempt spent."""

    def __init__(self, runner, run: Run, log: Path, resume: Optional[Tuple[int, float]] = None):
        self.runner, self.run, self.log, self.resume = runner, run, log, resume
        self.directory = runner.run_dir(run)
        self.seconds = self.own_seconds = self.estimate_seconds = 0.0
        self.extra: Dict[str, Any] = {}

    def step(self, command, env: Dict[str, str], name: str) -> float:
        return self.runner._subprocess(command, env, self.log, name)

    def result(self) -> dict:
        run, runner = self.run, self.runner
        if run.estimates_ratio:  # the ratio estimate first: the training reads its suggestion
            self.estimate_ratio()
        env = runner.environment(run)
        archive, metrics_path = self.tune_raw(env) if FAMILIES[run.family].tunes_o_cost else self.train(env)
        if run.estimates_ratio and runner._estimate_staging(run).exists():  # (a resumed run may have moved it already)
            os.replace(runner._estimate_staging(run), runner.estimate_path(run))
        eval_seconds, counts = self.evaluate(env, archive)
        return self.record(counts, read_json(metrics_path) or {}, eval_seconds, archive)

    def estimate_ratio(self) -> None:
        """The ``eer-estimate-ratio`` step, or, when an interrupted training continues, the estimate it
        started with (the band in its compared settings) and the seconds that took."""
        run, runner = self.run, self.runner
        kept = runner.ratio_estimate(run) if self.resume else None
        if kept is not None:
            seconds = kept_estimate_seconds(self.directory)
            self.extra["ratio_estimate"], self.extra["estimate_seconds"] = kept, seconds
            self.estimate_seconds = seconds
            return
        self.directory.parent.mkdir(parents=True, exist_ok=True)
        runner._estimate_staging(run).unlink(missing_ok=True)
        seconds = self.step(runner.estimate_command(run), runner.environment(run), "estimate ratio")
        estimate = runner.ratio_estimate(run)
        if estimate is None:
            raise StepFailed(f"the ratio estimate wrote no suggestion to {runner.estimate_path(run)}")
        self.extra["ratio_estimate"], self.extra["estimate_seconds"] = estimate, seconds
        self.estimate_seconds = seconds

    def tune_raw(self, env: Dict[str, str]) -> Tuple[Path, Path]:
        """Raw+CD: the Raw run it tunes (the plan's own Raw run when there is one, else trained here),
        then ``tune-o-cost``; returns the archive and the metrics file."""
        run, runner, directory = self.run, self.runner, self.directory
        partner = runner.plan.tuned_run(run)
        directory.mkdir(parents=True, exist_ok=True)
        if partner is not None:
            partner_record = runner.record(partner)
            if partner_record.get("status") != "done":
                raise StepFailed(
                    f"the Raw run it tunes did not finish ({partner_record.get('status')}; log {runner.log_path(partner)})"
                )
            raw_dir, raw_seconds = runner.run_dir(partner), float(partner_record["seconds"])
        else:  # its own Raw training, continued after an interruption like any training (the search is redone)
            raw_dir = directory / "raw"
            raw_seconds = self.training(
                runner.commands(run)[0], env, f"train {FAMILIES[run.family].tunes}_{run.variant}", raw_dir
            )
            self.own_seconds += raw_seconds
        tune_seconds = self.step(runner.commands(run)[-1], env, "tune-o-cost")
        self.own_seconds += tune_seconds
        self.seconds = raw_seconds + tune_seconds
        shutil.copyfile(raw_dir / "o_cost.json", directory / "o_cost.json")
        self.extra["o_cost"] = json.loads((directory / "o_cost.json").read_text())["o_cost"]
        self.extra["raw_seconds"], self.extra["tune_seconds"], self.extra["raw_dir"] = (
            raw_seconds,
            tune_seconds,
            runner.recorded(raw_dir),
        )
        return directory / "model_o_cost.tar.gz", raw_dir / "metrics.json"

    def train(self, env: Dict[str, str]) -> Tuple[Path, Path]:
        """``allennlp train`` or ``allennlp cbl`` (:meth:`training`); returns the archive and the metrics file."""
        family = FAMILIES[self.run.family]
        self.seconds = self.own_seconds = self.training(
            self.runner.commands(self.run)[0], env, family.command, self.directory
        )
        final = self.directory / "final" if family.cbl_rounds else self.directory
        return final / "model.tar.gz", final / "metrics.json"

    def training(self, command: List[str], env: Dict[str, str], name: str, trained: Path) -> float:
        """The run's training step into ``trained``: continued with ``--recover`` after an interruption, or
        not run at all when the resumed training had finished (its metrics and then its archive written);
        returns its seconds, those kept from earlier attempts included."""
        run, runner = self.run, self.runner
        kept = self.resume[1] if self.resume else 0.0
        if self.resume and training_finished(trained):  # finished before a later step failed or was stopped
            self.extra["resumed"] = {
                "epochs_completed": self.resume[0],
                "seconds_before": kept,
                "training_finished": True,
            }
            return kept
        start_attempt(
            self.directory, runner.settings(run), kept, self.estimate_seconds if run.estimates_ratio else None
        )
        if self.resume:
            continue_on_device(trained, runner.plan.cuda_device(run))
            command = command + ["--recover"]
            self.extra["resumed"] = {"epochs_completed": self.resume[0], "seconds_before": kept}
        return kept + self.step(command, env, name)

    def evaluate(self, env: Dict[str, str], archive: Path) -> Tuple[float, dict]:
        """The per-document evaluation on the test data: its seconds and ``doc_counts.json``."""
        run, counts_path = self.run, self.directory / "doc_counts.json"
        evaluate = [
            sys.executable,
            "-m",
            "eer_benchmark.run.evaluate_documents",
            self.runner.shown(archive),
            self.runner.shown(run.dataset.test),
            "-o",
            str(counts_path),
            "--cuda-device",
            self.runner.plan.cuda_device(run),
        ]  # run from the runner's workdir: doc_counts.json names the archive and the test file relative to it
        if FAMILIES[run.family].ratio:  # rho* of the training data
            evaluate += ["--train", env["EER_TRAIN_DATA"], "--gold-train", run.dataset.train]
        seconds = self.step(evaluate, env, "per-document evaluation")
        return seconds, json.loads(counts_path.read_text())

    def record(self, counts: dict, metrics: dict, eval_seconds: float, archive: Path) -> dict:
        run, runner = self.run, self.runner
        summary, ratio = counts["summary"], counts.get("ratio", {})
        rho, gamma = run.ratio if run.ratio is not None else runner.plan.base_ratio(run.dataset)
        if run.estimates_ratio:
            rho, gamma = self.extra["ratio_estimate"]["entity_ratio"], self.extra["ratio_estimate"]["ratio_margin"]
        return {
            "dataset": run.dataset.name,
            "scenario": run.scenario_name,
            "approach": run.approach,
            "encoder": run.encoder,
            "seed": run.seed,
            "status": "done",
            "ablation": run.ablation,
            "precision": summary["precision"],
            "recall": summary["recall"],
            "f1": summary["f1"],
            "tp": summary["tp"],
            "fp": summary["fp"],
            "fn": summary["fn"],
            "rho_hat": metrics.get("training_rho_hat"),
            "rho_star": ratio.get("rho_star"),
            "rho_star_words": ratio.get("rho_star_words"),
            "entity_ratio": rho,
            "ratio_margin": gamma,
            "seconds": self.seconds + self.estimate_seconds,
            "own_seconds": self.own_seconds + self.estimate_seconds,
            "eval_seconds": eval_seconds,
            "allennlp_test_f1": metrics.get("test_f1-measure-overall"),
            "best_epoch": metrics.get("best_epoch"),
            "run_dir": runner.recorded(self.directory),
            "log": runner.recorded(self.log),
            "archive": runner.recorded(archive),
            "settings": runner.settings(run),
            "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": machine(runner.plan.cuda_device(run)),
            **self.extra,
        }
