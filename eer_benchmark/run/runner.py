"""Execution of a plan's runs: the subprocesses of a run (``allennlp train`` / ``cbl`` /
``tune-o-cost``, then the per-document test evaluation), simulated training data, resume (``DONE``
markers), retries and failure records, parallel jobs, shards and interruption (Ctrl-C, SIGTERM).

A run is finished when its ``DONE`` marker exists (written last, atomically); finished runs are
skipped, so an interrupted benchmark resumes where it stopped, and an interrupted training continues
from its latest checkpoint (:mod:`~eer_benchmark.run.resume`). A failing run is retried, then
recorded as failed (``FAILED.json``, its log under ``OUTDIR/logs``) and retried on the next invocation."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from eer_benchmark.plan.approaches import FAMILIES
from eer_benchmark.plan.plan import Plan, Run, number_text
from eer_benchmark.run.attempt import Attempt, StepFailed
from eer_benchmark.run.resume import remove_checkpoints, resumable, resume_point, retry_point
from eer_benchmark.run.simulated import SimulatedData
from eer_benchmark.tables import read_json
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.wording import counted
from eer_plugin.runtime.settings import BY_NAME, RESULT_NEUTRAL, config_approach, overrides

#: settings compared between a finished run and the current plan (a mismatch is an error)
COMPARED_SETTINGS = (
    "EER_EPOCHS",
    "EER_BATCH_SIZE",
    "EER_LEARNING_RATE",
    "EER_MAX_LENGTH",
    "EER_ENTITY_RATIO",
    "EER_RATIO_MARGIN",
    "EER_RATIO_LOSS_WEIGHT",
    "EER_CBL_ROUND_EPOCHS",
    "EER_MIN_STEPS",
    "EER_HEAD_LEARNING_RATE",
    "EER_PRECISION",
    "EER_RATIO_INIT",
    "EER_TRAIN_CONSTRAINTS",
    "EER_RATIO_BOOKENDS",
    "EER_PER_SEQUENCE_RATIO",
    "EER_RATIO_CONTROL",  # no legacy value: runs recorded before it ran with either control (the env said which)
    "EER_DROPOUT_SEED",
)
ESTIMATED = "<estimated>"  #: rho and gamma of a ratio-estimate run until its estimate ran (a dry run shows it)
#: how a run made before a setting was recorded behaved: its value of the setting (a callable of the
#: recorded settings). A finished run whose record lacks a setting is compared with this value, so a
#: run from before the head learning rate or the calibrated start existed is stale for a plan using them.
LEGACY_SETTINGS = {
    "EER_MIN_STEPS": lambda recorded: "0",
    "EER_HEAD_LEARNING_RATE": lambda recorded: recorded.get(
        "EER_LEARNING_RATE"
    ),  # the heads learned at the encoder's rate
    "EER_PRECISION": lambda recorded: "fp32",
    "EER_RATIO_INIT": lambda recorded: "none",
    "EER_TRAIN_CONSTRAINTS": lambda recorded: "true",
    "EER_RATIO_BOOKENDS": lambda recorded: "false",
    "EER_PER_SEQUENCE_RATIO": lambda recorded: "false",
    "EER_DROPOUT_SEED": lambda recorded: "",  # dropout drew the run's own stream
}


class Runner:
    """Executes the runs of a plan under ``outdir`` and reads their state back from disk.

    Args:
        plan: the expanded plan (:func:`~eer_benchmark.plan.parse.load_plan`).
        outdir: the benchmark directory (``data/``, ``runs/``, ``logs/``, the report); made absolute.
        jobs: runs at a time (threads of a thread pool, each waiting on its run's subprocesses).
        threads: torch/OpenMP threads per run (``OMP_NUM_THREADS``); default: cores // jobs.
        retries: how often a failing run is started again before it is recorded as failed.
        echo: where progress lines go (``print``; tests pass a collector).
        keep_checkpoints: keep the trainer's checkpoints of finished runs (they are deleted by default).
        workdir: the directory the runs' subprocesses start in (default: the current directory, where the
            plan's relative data paths start); the records name the archive and the data relative to it.
    """

    def __init__(
        self,
        plan: Plan,
        outdir: str,
        jobs: int = 1,
        threads: Optional[int] = None,
        retries: int = 1,
        echo=print,
        keep_checkpoints: bool = False,
        workdir: Optional[str] = None,
    ):
        self.plan = plan
        self.workdir = Path(workdir or os.getcwd()).resolve()
        self.keep_checkpoints = keep_checkpoints
        self.outdir = Path(outdir).resolve()
        self.jobs = max(1, jobs)
        self.threads = threads or max(1, (os.cpu_count() or 1) // self.jobs)
        self.retries = retries
        self.echo = echo
        self._lock = threading.Lock()
        self.data = SimulatedData(self.outdir, lambda message: self.echo(message), self.workdir)
        self._progress = None
        self._counter = 0
        self._total = 0
        self._stopping = False  # set on Ctrl-C / SIGTERM: no retry, no new run, no failure record
        self._children: set = set()  # running subprocesses of runs

    # ------------------------------------------------------------------ paths and state
    def run_dir(self, run: Run) -> Path:
        return self.outdir / "runs" / run.rel

    def recorded(self, path: Path) -> str:
        """A path as the run records keep it: relative to the benchmark directory, so records copied to
        another machine or checkout (``docs/results/records.jsonl``) name nothing of this one."""
        return os.path.relpath(path, self.outdir)

    def shown(self, path) -> str:
        """A path as a run's subprocesses are given it: relative to :attr:`workdir`, where they start (so
        ``doc_counts.json`` and ``ratio_estimate.json`` name no path of this machine)."""
        return os.path.relpath(path, self.workdir)

    def log_path(self, run: Run) -> Path:
        return self.outdir / "logs" / run.rel.parent / f"{run.rel.name}.log"

    def data_path(self, run: Run) -> Path:
        """The run's simulated training data (the scenario's; a ratio-estimate run's has complete documents)."""
        return self.data.path(run.dataset.name, run.train_data_name, run.seed)

    def dev_path(self, run: Run) -> Optional[Path]:
        """The run's simulated partial dev data (an ablation's ``dev``); None: the dataset's dev file."""
        name = run.dev_data_name
        return self.data.path(run.dataset.name, name, run.seed) if name is not None else None

    def estimate_path(self, run: Run) -> Path:
        """The JSON output of a ratio-estimate run's ``eer-estimate-ratio`` step (in its run directory)."""
        return self.run_dir(run) / "ratio_estimate.json"

    def _estimate_staging(self, run: Run) -> Path:
        """Where the estimate step writes before training (``allennlp train`` wants an empty run
        directory); moved to :meth:`estimate_path` once the training finished."""
        directory = self.run_dir(run)
        return directory.with_name(f".{directory.name}.ratio_estimate.json")

    def ratio_estimate(self, run: Run) -> Optional[dict]:
        """``{ratio, low, high, documents, entity_ratio, ratio_margin}`` of a ratio-estimate run's step, once it ran."""
        if not run.estimates_ratio:
            return None
        data = read_json(self.estimate_path(run)) or read_json(self._estimate_staging(run))
        if not data or "suggested" not in data:
            return None
        return {
            "ratio": data["ratio"],
            "low": data["low"],
            "high": data["high"],
            "documents": data.get("documents"),
            "entity_ratio": data["suggested"]["entity_ratio"],
            "ratio_margin": data["suggested"]["ratio_margin"],
        }

    def record(self, run: Run) -> dict:
        """The run's state on disk: its result (``done``), its failure record (``failed``) or ``missing``."""
        directory = self.run_dir(run)
        if (directory / "DONE").exists():
            result = read_json(directory / "result.json")
            if result is not None:
                return result
        failure = read_json(directory / "FAILED.json")
        if failure is not None:
            return failure
        return {"status": "missing", "run_dir": str(directory), "log": str(self.log_path(run))}

    def is_done(self, run: Run) -> bool:
        return (self.run_dir(run) / "DONE").exists()

    def weightless_partner(self, run: Run) -> Optional[Run]:
        """The finished Raw run that ``run`` (a Raw+CD run still to run) tunes, when its model is not here: a run
        restored from the records (``eer-records`` keeps no weights), or on another machine, cannot be tuned, so it is
        trained again before the search (its record replaced), and the search tunes the model its record describes."""
        if self.is_done(run) or not FAMILIES[run.family].tunes_o_cost:
            return None
        partner = self.plan.tuned_run(run)
        if partner is None or not self.is_done(partner) or (self.run_dir(partner) / "model.tar.gz").exists():
            return None
        return partner

    def to_run(self, unit: List[Run]) -> List[Run]:
        """The runs of ``unit`` to execute, in its order: those not done, and a :meth:`weightless_partner`."""
        again = {partner.name for partner in map(self.weightless_partner, unit) if partner is not None}
        return [run for run in unit if not self.is_done(run) or run.name in again]

    def settings(self, run: Run) -> Dict[str, str]:
        values = self.run_settings(run)
        return {key: values.get(key, "") for key in COMPARED_SETTINGS}

    def stale_runs(self, runs: Iterable[Run]) -> List[str]:
        """Finished runs whose recorded settings differ from the plan's (e.g. other epochs). A setting
        the record lacks (the run predates it) counts as its :data:`LEGACY_SETTINGS` value."""
        stale = []
        for run in runs:
            if not self.is_done(run):
                continue
            recorded = dict(self.record(run).get("settings") or {})
            if not recorded:
                continue  # no settings recorded at all: nothing to compare
            for key, legacy in LEGACY_SETTINGS.items():
                if key not in recorded:
                    recorded[key] = legacy(recorded)
            current = self.settings(run)
            diff = [
                f"{k} {recorded.get(k)!r} (now {v!r})" for k, v in current.items() if k in recorded and recorded[k] != v
            ]
            if diff:
                stale.append(f"{run.name}: {', '.join(diff)}")
        return stale

    # ------------------------------------------------------------------ settings, environment and commands
    def run_settings(self, run: Run) -> Dict[str, str]:
        """Every setting of the run by its ``EER_*`` name (and the plan's other variables): the plan's, then the run's own."""
        env = dict(self.plan.env_of(run))
        env.update(
            EER_TRAIN_DATA=str(self.data_path(run)) if run.scenario is not None else run.dataset.train,
            EER_GOLD_TRAIN_DATA=run.dataset.train,
            EER_DEV_DATA=str(self.dev_path(run)) if run.dev is not None else run.dataset.dev,
            EER_TEST_DATA=run.dataset.test,
            EER_ENCODER=run.encoder,
            EER_SEED=str(run.seed),
        )
        if run.ratio is not None:
            env["EER_ENTITY_RATIO"], env["EER_RATIO_MARGIN"] = (number_text(v) for v in run.ratio)
        if run.estimates_ratio:  # the ratio estimate's suggestion (a placeholder until it ran)
            estimate = self.ratio_estimate(run)
            if estimate is None:
                env["EER_ENTITY_RATIO"] = env["EER_RATIO_MARGIN"] = ESTIMATED
            else:
                env["EER_ENTITY_RATIO"], env["EER_RATIO_MARGIN"] = (
                    number_text(estimate[k]) for k in ("entity_ratio", "ratio_margin")
                )
        return env

    def environment(self, run: Run) -> Dict[str, str]:
        """The subprocess environment: the caller's without the settings a plan owns (a stray ``EER_ENCODER``
        in the shell must not change a run; ``settings.MACHINE_VARIABLES`` and ``settings.RESULT_NEUTRAL`` pass), then the run's environment
        settings (:meth:`run_settings`); its hyperparameters reach the training as ``-o`` (:meth:`overrides`)."""
        env = {k: v for k, v in os.environ.items() if k not in BY_NAME}
        env.update(
            {k: v for k, v in self.run_settings(run).items() if k not in BY_NAME or not BY_NAME[k].is_hyperparameter}
        )
        env.update({k: os.environ[k] for k in RESULT_NEUTRAL if os.environ.get(k)})  # the shell's, over defaults
        for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            if key not in self.plan.env:
                env[key] = str(self.threads)
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def overrides(self, run: Run, config: str) -> str:
        """The ``-o`` (JSON) of the run's training with ``config``: the run's hyperparameters at the config's keys."""
        approach, variant = config_approach(config)
        values = self.run_settings(run)
        estimated = [k for k, v in values.items() if v == ESTIMATED]  # shown as is until the estimate ran
        result = overrides({k: v for k, v in values.items() if k not in estimated}, approach, variant)
        result.update({BY_NAME[k].path_for(approach): ESTIMATED for k in estimated if BY_NAME[k].path_for(approach)})
        return json.dumps(result, sort_keys=True)

    def commands(self, run: Run) -> List[List[str]]:
        """The main commands of a run (for --dry-run; see :meth:`_attempt` for the whole sequence)."""
        directory, family = self.run_dir(run), FAMILIES[run.family]
        include = ["--include-package", "eer_plugin"]
        config = str(family.config_file(run.variant))  # the packaged config (approaches.FAMILIES)
        if family.tunes_o_cost:  # the run it tunes (the plan's, else trained here), then the search
            partner = self.plan.tuned_run(run)
            raw_dir = self.run_dir(partner) if partner else directory / "raw"
            commands = (
                []
                if partner
                else [["allennlp", "train", config, "-s", str(raw_dir), "-o", self.overrides(run, config), *include]]
            )
            return commands + [
                [
                    "allennlp",
                    family.command,
                    str(raw_dir / "model.tar.gz"),
                    run.dataset.dev,
                    "--test-file",
                    run.dataset.test,
                    "--seed",
                    str(run.seed),
                    "--output-archive",
                    str(directory / "model_o_cost.tar.gz"),
                    "--cuda-device",
                    self.plan.cuda_device(run),
                    *include,
                ]
            ]
        return [["allennlp", family.command, config, "-s", str(directory), "-o", self.overrides(run, config), *include]]

    def estimate_command(self, run: Run) -> Optional[List[str]]:
        """A ratio-estimate run's first step: ``eer-estimate-ratio`` on the complete documents of its
        training data (the run's encoder, chunk length and bookend counting; its partial documents in
        the run's variant are checked against the estimate)."""
        if not run.estimates_ratio:
            return None
        env = self.plan.env_of(run)
        command = [  # run from the workdir: ratio_estimate.json names the data relative to it, like doc_counts.json
            "allennlp",
            "eer-estimate-ratio",
            self.shown(self.data_path(run)),
            "--encoder",
            run.encoder,
            "--variant",
            run.variant,
            "--max-length",
            str(env.get("EER_MAX_LENGTH", "512")),
            "--seed",
            str(run.seed),
            "--output",
            str(self._estimate_staging(run)),
        ]
        if str(env.get("EER_RATIO_BOOKENDS", "false")).lower() == "true":
            command.append("--count-bookends")
        return command

    def _subprocess(self, command: List[str], env: Dict[str, str], log: Path, step: str) -> float:
        if command[0] == "allennlp":
            command = [sys.executable, "-m", "allennlp", *command[1:]]
        started = time.time()
        with open(log, "a") as handle:
            handle.write(f"\n--- {step}: {' '.join(command)}\n")
            handle.flush()
            process = subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT, cwd=str(self.workdir))
            with self._lock:
                self._children.add(process)
            try:
                code = process.wait()
            except BaseException:  # interrupted (Ctrl-C, SIGTERM): the run's subprocess stops with us
                process.kill()
                process.wait()
                raise
            finally:
                with self._lock:
                    self._children.discard(process)
            seconds = time.time() - started
            handle.write(f"--- {step}: exit status {code} after {seconds:.1f} s\n")
        if code != 0:
            raise StepFailed(f"{step} exited with status {code}")
        return seconds

    # ------------------------------------------------------------------ data
    def prepare_data(self, runs: Iterable[Run]) -> None:
        """Simulates the partial data every unfinished run needs, once per (dataset, data, seed): the
        scenario's training data, a ratio-estimate run's training data with complete documents, an
        ablation's partial dev data (:class:`~eer_benchmark.run.simulated.SimulatedData`)."""
        needed: Dict[Path, Tuple[str, Run]] = {}
        for run in runs:
            if run.scenario is None or self.is_done(run):
                continue
            needed.setdefault(self.data_path(run), ("train", run))
            if run.dev is not None:
                needed.setdefault(self.dev_path(run), ("dev", run))
        self.data.make(needed)

    # ------------------------------------------------------------------ one run
    def _attempt(self, run: Run, log: Path, resume: Optional[Tuple[int, float]] = None) -> dict:
        """One attempt at a run (:class:`~eer_benchmark.run.attempt.Attempt`); ``resume``: (epochs
        completed, training seconds kept) of an interrupted training to continue."""
        return Attempt(self, run, log, resume).result()

    def execute(self, run: Run) -> dict:
        """Runs one run (skipping it when done), retrying a failure ``self.retries`` times."""
        if self.is_done(run):
            return self.record(run)
        directory, log = self.run_dir(run), self.log_path(run)
        log.parent.mkdir(parents=True, exist_ok=True)
        attempts = self.retries + 1
        error = ""
        data_error = next(
            (self.data.errors[p] for p in (self.data_path(run), self.dev_path(run)) if p in self.data.errors), None
        )
        # an interrupted training continues on the first attempt (a failed attempt's retry: resume.retry_point)
        resume = resume_point(directory, self.settings(run)) if resumable(run) and not data_error else None
        for attempt in range(1, attempts + 1):
            if self._stopping:
                return self.record(run)
            if directory.exists() and resume is None:
                shutil.rmtree(directory)
            with open(log, "a") as handle:
                handle.write(
                    f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {run.name}: attempt {attempt} of {attempts}\n"
                )
                if resume:
                    handle.write(
                        f"resuming the interrupted training after {counted(resume[0], 'completed epoch')} ({resume[1]:.0f} s of training kept)\n"
                    )
                if data_error:
                    handle.write(data_error + "\n")
            if data_error:
                error = data_error
                break  # deterministic: no retry
            try:
                result = self._attempt(run, log, resume)
            except Exception as err:  # noqa: BLE001 - any failure of a run is recorded, never raised
                if self._stopping:  # interrupted: the next invocation starts this run again
                    return self.record(run)
                error = f"{type(err).__name__}: {err}" if not isinstance(err, StepFailed) else str(err)
                with open(log, "a") as handle:
                    handle.write(f"=== attempt {attempt} failed: {error}\n")
                if attempt < attempts:
                    self._status(f"retry  {run.name}: {error} (log {log})")
                    resume = retry_point(run, directory, self.settings(run))
                continue
            if not self.keep_checkpoints:
                remove_checkpoints(directory, log)
            atomic_write_text(directory / "result.json", json.dumps(result, indent=1))
            atomic_write_text(directory / "DONE", time.strftime("%Y-%m-%d %H:%M:%S\n"))
            return result
        failure = {
            "dataset": run.dataset.name,
            "scenario": run.scenario_name,
            "approach": run.approach,
            "encoder": run.encoder,
            "seed": run.seed,
            "status": "failed",
            "ablation": run.ablation,
            "error": error,
            "attempts": attempts if not data_error else 1,
            "run_dir": self.recorded(directory),
            "log": self.recorded(log),
            "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        atomic_write_text(directory / "FAILED.json", json.dumps(failure, indent=1))
        return failure

    def _status(self, message: str) -> None:
        with self._lock:
            if self._progress is not None:
                self._progress.write(message)
            else:
                self.echo(message)

    def _execute_unit(self, unit: List[Run]) -> None:
        for run in self.to_run(unit):
            if self._stopping:
                continue
            with self._lock:
                self._counter += 1
                number = self._counter
            tag = f"[{number}/{self._total}]"
            if self.is_done(run):  # a weightless partner: trained again, its record replaced
                self._status(f"again  {tag} {run.name} (its model is not here, and the Raw+CD run tunes it)")
                (self.run_dir(run) / "DONE").unlink()
            self._status(f"start  {tag} {run.name}")
            started = time.time()
            result = self.execute(run)
            if result["status"] == "done":
                self._status(
                    f"done   {tag} {run.name}: test F1 {100 * result['f1']:.2f} ({time.time() - started:.0f} s)"
                )
            elif result["status"] == "failed":
                self._status(f"FAILED {tag} {run.name}: {result.get('error')} (log {self.log_path(run)})")
            else:
                point = resume_point(self.run_dir(run), self.settings(run)) if resumable(run) else None
                later = f"continues after {counted(point[0], 'epoch')}" if point else "starts again"
                self._status(f"stopped {tag} {run.name} (interrupted; next time it {later})")
            with self._lock:
                if self._progress is not None:
                    self._progress.update()

    def run_units(self, units: List[List[Run]]) -> None:
        from tqdm import tqdm

        pending = [unit for unit in units if self.to_run(unit)]
        total_runs = sum(len(unit) for unit in units)
        self._total = sum(len(self.to_run(unit)) for unit in pending)
        self.echo(
            f"{total_runs - self._total} of {total_runs} runs done already; running {self._total} with {counted(self.jobs, 'job')}, {counted(self.threads, 'thread')} each"
        )
        if not pending:
            return
        self.prepare_data([r for unit in pending for r in unit])
        self._progress = tqdm(total=self._total, desc="benchmark runs", unit="run", file=sys.stderr)
        try:
            if self.jobs == 1:
                for unit in pending:
                    self._execute_unit(unit)
            else:
                with ThreadPoolExecutor(max_workers=self.jobs) as pool:
                    futures = [pool.submit(self._execute_unit, unit) for unit in pending]
                    try:
                        for future in futures:
                            future.result()
                    except KeyboardInterrupt:
                        self._stopping = True
                        with self._lock:  # a Ctrl-C reached them already; a SIGTERM to us alone did not
                            for process in self._children:
                                process.kill()
                        pool.shutdown(wait=True, cancel_futures=True)
                        raise
        finally:
            self._progress.close()
            self._progress = None
