"""Resuming a benchmark run's interrupted training, and removing the checkpoints once a run is finished.

A run whose only long step is ``allennlp train`` into its own directory (EER, SNS, Raw, Gold, ...) keeps
that directory when the benchmark is interrupted (Ctrl-C, SIGTERM, a kill, the end of a session). The next
invocation continues it with ``allennlp train --recover`` from its latest complete trainer checkpoint (the
``eer_atomic`` checkpointer's: both files of an epoch written, random number generators included, so the
resumed run repeats the uninterrupted one) when the run's settings are the ones it started with. Otherwise
(no checkpoint yet, other settings, a recorded failure) it starts from scratch, as before. CBL continues
with ``allennlp cbl --recover`` (its finished rounds kept, the round in progress from its checkpoint), and
Raw+CD its own Raw training in ``raw/`` (the O-cost search, minutes, runs again). A ratio-estimate run
("estimate, then bind") continues too: its estimate, written beside the run directory before the training,
is kept and not computed again, so the resumed training holds the band it started with (the settings
compared include that band). The retry of a failed attempt starts afresh too, unless the training had
finished (:func:`retry_point`): a failed evaluation does not train the model again.

Each attempt leaves ``<run directory>.attempt.json`` beside the run directory (``allennlp train`` wants
the directory itself empty): the compared settings and when the training started, plus the training
seconds kept from earlier attempts. The seconds an interrupted attempt
contributes are those up to its latest checkpoint (the work after it is redone), so a resumed run's wall
time counts every kept epoch once, whether the interruption was a signal or a kill."""

import json
import time
from pathlib import Path
from typing import Dict, Optional, Tuple

from eer_benchmark.plan.approaches import FAMILIES
from eer_benchmark.plan.plan import Run
from eer_benchmark.tables import read_json
from eer_plugin.common.atomic import atomic_write_text

#: what only ``allennlp train --recover`` needs (the weights stay in model.tar.gz and best.th);
#: CBL's rounds keep a best.th each, and its rounds' state the weights of every word
CHECKPOINT_PATTERNS = ("**/model_state_e*.th", "**/training_state_e*.th", "round_*/best.th", "cbl_state.json")


def resumable(run: Run) -> bool:
    """Whether an interrupted run continues its training (:attr:`~eer_benchmark.plan.approaches.Family.resumable`:
    ``allennlp train``, CBL's rounds, Raw+CD's own Raw training). A ratio-estimate run is one too: its estimate
    is kept (:func:`kept_estimate_seconds`)."""
    return FAMILIES[run.family].resumable


def latest_checkpoint(directory: Path) -> Optional[Tuple[int, int, float]]:
    """``(epochs completed, batches completed in the next, modification time)`` of the checkpoint
    ``allennlp train --recover`` would load from ``directory``, as the ``eer_atomic`` checkpointer itself finds
    it (the newest with both of its files; AllenNLP names it by those counts: ``e1_b0`` is written after
    the first epoch), else None. A CBL run's trainings are in ``round_<k>`` and ``final`` (Raw+CD's in
    ``raw``): the epochs add up over them, the batches and the time are the newest checkpoint's (or, when
    later, the time its rounds' state was saved, ``cbl_state.json``)."""
    from eer_plugin.training.checkpointer import AtomicCheckpointer  # AllenNLP: only where a run may resume

    found = []
    for place in [directory, *sorted(directory.glob("round_*/")), directory / "final", directory / "raw"]:
        latest = AtomicCheckpointer(str(place)).find_latest_checkpoint() if place.is_dir() else None
        if latest is not None:
            model, training = (Path(path) for path in latest)
            epochs, batches = AtomicCheckpointer._parse_training_state_path(str(training))
            found.append((epochs, batches, max(model.stat().st_mtime, training.stat().st_mtime)))
    if not found:
        return None
    _, batches, written = max(found, key=lambda item: item[2])
    state = directory / "cbl_state.json"
    written = max(written, state.stat().st_mtime) if state.is_file() else written
    return sum(epochs for epochs, _, _ in found), batches, written


def attempt_path(directory: Path) -> Path:
    """The attempt record of the run in ``directory``: ``<directory>.attempt.json`` beside it."""
    return directory.with_name(directory.name + ".attempt.json")


def start_attempt(
    directory: Path, settings: Dict[str, str], seconds_before: float = 0.0, estimate_seconds: Optional[float] = None
) -> None:
    """Records that a training attempt starts now in ``directory`` with ``settings``, after
    ``seconds_before`` seconds of training kept from earlier attempts (and, for a ratio-estimate run, the
    ``estimate_seconds`` its kept estimate took)."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    record = {"settings": settings, "started": time.time(), "seconds_before": seconds_before}
    if estimate_seconds is not None:
        record["estimate_seconds"] = estimate_seconds
    atomic_write_text(attempt_path(directory), json.dumps(record, indent=1))


def resume_point(directory: Path, settings: Dict[str, str]) -> Optional[Tuple[int, float]]:
    """``(epochs completed at the checkpoint, training seconds kept)`` when the interrupted training in ``directory``
    can continue with ``--recover``: it has an attempt record with these settings, a complete
    checkpoint, and neither a ``DONE`` marker nor a failure record. None: start from scratch."""
    if not directory.is_dir() or (directory / "DONE").exists() or (directory / "FAILED.json").exists():
        return None
    attempt = read_json(attempt_path(directory))
    checkpoint = latest_checkpoint(directory)
    if not attempt or attempt.get("settings") != settings or checkpoint is None:
        return None
    epochs, _, written = checkpoint
    kept = float(attempt.get("seconds_before", 0.0)) + max(0.0, written - float(attempt.get("started", written)))
    return epochs, kept


def kept_estimate_seconds(directory: Path) -> float:
    """The seconds of the ratio estimate that the interrupted attempt in ``directory`` ran (0: none recorded)."""
    return float((read_json(attempt_path(directory)) or {}).get("estimate_seconds", 0.0))


def training_finished(directory: Path) -> bool:
    """Whether ``allennlp train`` finished in ``directory`` (or ``allennlp cbl`` in its ``final``, Raw+CD's
    own Raw training in ``raw``): :func:`eer_plugin.runtime.archive.training_finished`."""
    from eer_plugin.runtime.archive import training_finished as finished  # torch: only where a run may resume

    return any(finished(place) for place in (directory, directory / "final", directory / "raw"))


def continue_on_device(directory: Path, cuda_device: str) -> None:
    """Lets an interrupted training continue on another device (a run started on the CPU, resumed on a GPU):
    ``--recover`` refuses a configuration that differs from the saved ``config.json`` in any key, and the
    device is none of the settings a resume compares. So the saved configurations of ``directory`` and its
    subdirectories (CBL's rounds, Raw+CD's Raw) take ``trainer.cuda_device`` from this attempt, atomically."""
    for path in [directory / "config.json", *sorted(directory.glob("*/config.json"))]:
        config = read_json(path)
        trainer = config.get("trainer") if isinstance(config, dict) else None
        if isinstance(trainer, dict) and "cuda_device" in trainer and trainer["cuda_device"] != int(cuda_device):
            trainer["cuda_device"] = int(cuda_device)
            atomic_write_text(path, json.dumps(config, indent=4))


def retry_point(run: Run, directory: Path, settings: Dict[str, str]) -> Optional[Tuple[int, float]]:
    """Where the retry of a failed attempt starts: after a training that finished (:func:`training_finished`,
    so a later step failed, such as the per-document evaluation) the retry takes it as it is (:func:`resume_point`,
    and the attempt trains nothing), otherwise it starts afresh (None)."""
    if not resumable(run) or not training_finished(directory):
        return None
    return resume_point(directory, settings)


def remove_checkpoints(directory: Path, log: Path) -> None:
    """Deletes a finished run's trainer checkpoints (a CBL run on MiniLM would otherwise keep several GB)
    and its attempt record; the MB freed go to the run's log."""
    freed = 0
    for pattern in CHECKPOINT_PATTERNS:
        for file in directory.glob(pattern):
            freed += file.stat().st_size
            file.unlink()
    attempt_path(directory).unlink(missing_ok=True)
    with open(log, "a") as handle:
        handle.write(f"--- removed trainer checkpoints: {freed / 2**20:.1f} MB\n")
