"""The served model, its versions in the work directory, and training the next one in the background.

Work directory (``--work-dir``)::

    state.json              {"version": "eer-v2", "model": ".../runs/eer-v2/model.tar.gz"}: the last finished model
    serve.lock              the pid of the eer-ner serve using the directory (locked while it runs: one at a time)
    runs/eer-vN/            one training: train.jsonl (the imported annotations), ratio.json (when estimated),
                            train.log, and AllenNLP's serialization directory model/ (model.tar.gz at its end)

The model given on the command line is version ``eer-v0``; each training makes ``eer-v<N+1>``. A training runs as
its own process (``eer-ner train``, the same path as on the command line), tied to the server: it ends when the
server ends, killed or not (:mod:`eer_plugin.serve.tether`). The backend switches to the new model only after
that process ended well with its ``metrics.json`` and then its ``model.tar.gz`` (written atomically by the plugin),
the model loaded, and then ``state.json`` is replaced atomically: predictions are never served from a half-written
model, and a restart serves the last finished model. A second training while one runs is :class:`TrainingRunning`.
The served model's calls take turns (:mod:`eer_plugin.serve.turns`).
"""

import dataclasses
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from eer_plugin.annotation.ratio_estimate import MIN_COMPLETE_DOCUMENTS
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.errors import ArchiveError, UserError, one_line, shortened
from eer_plugin.serve.tether import tethered
from eer_plugin.serve.turns import TurnLock

logger = logging.getLogger(__name__)

#: the packaged config a training runs (``eer-ner train CONFIG``)
TRAIN_CONFIG = "eer_short.jsonnet"
#: the README's own-data recipe: at least 150 optimizer steps, batches of 2, a higher learning rate
SMALL_DATA_OVERRIDES: Dict[str, Any] = {
    "trainer.num_epochs": 20,
    "trainer.min_steps": 150,
    "data_loader.batch_sampler.batch_size": 2,
    "trainer.optimizer.lr": 1e-4,
}
#: "estimate, then bind" from this many complete tasks on (fewer: the paper's band, rho 0.15 +- 0.05)
MIN_COMPLETE_TASKS = MIN_COMPLETE_DOCUMENTS
#: the work directory unless --work-dir names one (relative: to the current directory)
WORK_DIR = "eer-serve"
FIRST_VERSION = "eer-v0"
STATE_FILE = "state.json"
#: held by the one ``eer-ner serve`` of a work directory (:func:`hold`)
LOCK_FILE = "serve.lock"
_VERSION = re.compile(r"^eer-v(\d+)$")


class TrainingRunning(UserError):
    """A training was asked for while one runs."""


@dataclasses.dataclass(frozen=True)
class ServedModel:
    version: str
    path: str
    tagger: Any
    entity_types: List[str]


def encoder_settings(path: str) -> Dict[str, str]:
    """``EER_ENCODER`` / ``EER_MAX_LENGTH`` of the model at ``path`` (an exported directory, a serialization
    directory or a ``model.tar.gz``), for training its successor on the same encoder."""
    location = Path(path)
    if (location / "eer_tagger.json").is_file():
        settings = json.loads((location / "eer_tagger.json").read_text(encoding="utf-8"))
        return {"EER_ENCODER": str(settings["encoder"]), "EER_MAX_LENGTH": str(settings["max_length"])}
    if (location / "config.json").is_file():
        config = json.loads((location / "config.json").read_text(encoding="utf-8"))
    else:
        try:
            with tarfile.open(location, "r:*") as archive:
                member = archive.extractfile("config.json")
                config = json.loads(member.read().decode("utf-8"))  # type: ignore[union-attr]
        except (OSError, KeyError, tarfile.TarError, ValueError, AttributeError) as error:
            raise ArchiveError(
                f"{path}: cannot read the model's config.json to train its successor ({error})"
            ) from None
    reader = config.get("dataset_reader", {})
    found = {"EER_ENCODER": str(reader.get("model_name", ""))}
    if reader.get("max_length") is not None:
        found["EER_MAX_LENGTH"] = str(reader["max_length"])
    return found


def failure_reason(log: Path, tail: int = 65536) -> str:
    """Why a training process failed, as one line from the end of its ``log``: the last ``PROG: error: ...`` line the
    one error printer wrote (a user error), else the last line (a traceback's exception), else "no output"."""
    try:
        with open(log, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - tail))
            lines = [line.strip() for line in handle.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError as error:
        return f"its log cannot be read ({error.strerror or error})"
    errors = [line for line in lines if re.match(r"^([\w.-]+( [\w.-]+){0,2}: )?error: ", line)]  # "eer-ner train: "
    return errors[-1] if errors else lines[-1] if lines else "no output"


def _number(version: str) -> int:
    match = _VERSION.match(version or "")
    return int(match.group(1)) if match else 0


def _read_state(state: Path) -> Dict[str, str]:
    """The checked ``state.json`` (``{"version": "eer-vN", "model": PATH}``), or :class:`UserError` naming it."""
    from eer_plugin.corpus import strict_json
    from eer_plugin.inference.documents import describe

    fix = "remove it to serve the model given again"
    try:
        saved = strict_json.loads(state.read_text(encoding="utf-8"))
    except (ValueError, OSError) as error:  # JsonError and UnicodeDecodeError are ValueErrors
        raise UserError(f"{state}: damaged (not JSON: {error}); {fix}") from None
    if not isinstance(saved, dict) or not all(isinstance(saved.get(key), str) for key in ("version", "model")):
        raise UserError(
            f'{state}: damaged (expected {{"version": "eer-vN", "model": PATH}}, got {describe(saved)}); {fix}'
        )
    return saved


def hold(work_dir: Path) -> Any:
    """Locks ``work_dir`` for this process (``WORK_DIR/serve.lock``, an advisory lock the system releases when the
    process ends, killed or not) and returns the open lock file; :class:`UserError` when another ``eer-ner serve``
    holds it: two servers would number their trainings alike and replace each other's ``state.json``."""
    import fcntl

    path = work_dir / LOCK_FILE
    try:
        handle = open(path, "a+", encoding="utf-8")
    except OSError as error:
        raise UserError(f"{path}: cannot open the work directory's lock ({error.strerror or error})") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        handle.close()
        raise UserError(
            f"{work_dir}: the work directory is in use by another eer-ner serve (pid {holder}); give each server "
            "its own --work-dir, or stop that one"
        ) from None
    handle.truncate(0)
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


class ModelStore:
    """The model being served (:attr:`current`), loaded from ``work_dir``'s ``state.json`` when there is one (the
    last finished training), else from ``initial_model``; ``load`` is :meth:`eer_plugin.Tagger.load`."""

    def __init__(self, initial_model: str, work_dir: str, load: Callable[[str], Any], exclusive: bool = False) -> None:
        self.work_dir = Path(work_dir).resolve()
        try:
            self.work_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # a file there (or on the way), no permission, ...
            raise UserError(
                f"{work_dir}: the work directory (--work-dir) cannot be made there ({error.strerror or error}: "
                f"{error.filename}); choose a directory you can write to"
            ) from None
        if exclusive:  # eer-ner serve: one server per work directory, held until the process ends
            self._held = hold(self.work_dir)
        self.initial_model = str(initial_model)
        self._load = load
        #: one model call at a time (2 requests' forward passes would only share the same cores), in turns
        self.lock = TurnLock()
        state = self.work_dir / STATE_FILE
        if state.is_file():
            saved = _read_state(state)
            try:
                self.current = self._loaded(saved["version"], saved["model"])
            except (UserError, OSError) as error:  # the model it names was moved or removed
                raise UserError(
                    f"{state} names {saved['model']} ({saved['version']}) as the model to serve, which does not load: "
                    f"{error}; remove {state} to serve the model given again"
                ) from None
            self.source = f"the last finished training ({state})"
        else:
            self.current = self._loaded(FIRST_VERSION, self.initial_model)
            self.source = "the model given"

    def _loaded(self, version: str, path: str) -> ServedModel:
        tagger = self._load(path).taking_turns(self.lock)
        return ServedModel(version, str(path), tagger, list(tagger.entity_types))

    def next_version(self) -> str:
        runs = self.work_dir / "runs"
        used = [_number(self.current.version)] + ([_number(p.name) for p in runs.iterdir()] if runs.is_dir() else [])
        return f"eer-v{max(used) + 1}"

    def switch(self, version: str, path: str) -> ServedModel:
        """Loads the model at ``path``, serves it from now on and records it in ``state.json`` (atomically)."""
        served = self._loaded(version, path)
        atomic_write_text(
            str(self.work_dir / STATE_FILE), json.dumps({"version": version, "model": str(path)}, indent=1)
        )
        self.current = served  # one reference assignment: a request sees the old model or the new one
        return served


class Trainer:
    """Trains the next model of a :class:`ModelStore` in a background process and switches to it at the end."""

    def __init__(
        self,
        store: ModelStore,
        config: str = TRAIN_CONFIG,
        overrides: Optional[Dict[str, Any]] = None,
        encoder: Optional[str] = None,
    ) -> None:
        self.store = store
        self.config = config
        #: the -o overrides of every training: :data:`SMALL_DATA_OVERRIDES` updated with ``overrides``
        self.overrides = dict(SMALL_DATA_OVERRIDES, **(overrides or {}))
        self.encoder = encoder
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen] = None
        self._thread: Optional[threading.Thread] = None
        #: what the last (or running) training is doing, for /health and the answers
        self.status: Dict[str, Any] = {"state": "idle"}

    @property
    def running(self) -> bool:
        return self.status.get("state") == "running"

    def start(
        self, documents: Sequence[Any], complete: int, entity_types: Sequence[str], project: Any
    ) -> Dict[str, Any]:
        """Starts training on ``documents`` (:class:`eer_plugin.corpus.documents.Document`, ``complete`` of them
        complete) and returns the job; :class:`TrainingRunning` when one runs."""
        from eer_plugin.corpus.formats import write_jsonl

        with self._lock:
            if self.running:
                raise TrainingRunning(
                    f"training already running: {self.status['version']} since {self.status['started']} "
                    f"(log {self.status['log']}); wait for it to finish, then train again"
                )
            version = self.store.next_version()
            run = self.store.work_dir / "runs" / version
            run.mkdir(parents=True)
            write_jsonl(documents, run / "train.jsonl")
            estimate = complete >= MIN_COMPLETE_TASKS
            self.status = {
                "state": "running",
                "version": version,
                "project": project,
                "documents": len(documents),
                "complete": complete,
                "ratio": "estimate, then bind" if estimate else "the paper's band",
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "log": str(run / "train.log"),
            }
            self._thread = threading.Thread(
                target=self._run, args=(run, version, list(entity_types), estimate), daemon=True
            )
            self._thread.start()
            return dict(self.status)

    def _commands(self, run: Path, entity_types: List[str], estimate: bool, env: Dict[str, str]) -> List[List[str]]:
        """The ``eer-ner`` arguments of one training's processes: ``eer-estimate-ratio`` (with ``estimate``), then
        ``train``."""
        overrides = dict(self.overrides)
        overrides.setdefault("model.entity_types", sorted(entity_types))
        data = str(run / "train.jsonl")
        commands = []
        ratio: List[str] = []
        if estimate:
            length = ["--max-length", env["EER_MAX_LENGTH"]] if env.get("EER_MAX_LENGTH") else []
            commands.append(
                [
                    "eer-estimate-ratio",
                    data,
                    "--encoder",
                    env["EER_ENCODER"],
                    *length,
                    "--output",
                    str(run / "ratio.json"),
                ]
            )
            ratio = ["--ratio-estimate", str(run / "ratio.json")]
        commands.append(["train", self.config, "-s", str(run / "model"), "-o", json.dumps(overrides), *ratio])
        return commands

    def environment(self) -> Dict[str, str]:
        env = dict(os.environ)
        env.update(encoder_settings(self.store.current.path))  # the encoder of the model served now
        if self.encoder:
            env["EER_ENCODER"] = self.encoder
        env.update(EER_DEV_DATA="", EER_TEST_DATA="", EER_GOLD_TRAIN_DATA="")
        return env

    def _run(self, run: Path, version: str, entity_types: List[str], estimate: bool) -> None:
        try:
            env = self.environment()
            env["EER_TRAIN_DATA"] = str(run / "train.jsonl")
            with open(run / "train.log", "a", encoding="utf-8") as log:
                for arguments in self._commands(run, entity_types, estimate, env):
                    log.write(f"$ {sys.executable} -m eer_plugin.cli {' '.join(arguments)}\n")
                    log.flush()
                    # tied to this server: it ends when the server ends, killed or not (this thread waits for it)
                    with tethered(
                        arguments, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                    ) as self._process:
                        code = self._process.wait()
                    if code != 0:
                        log.flush()
                        raise RuntimeError(
                            f"{arguments[0]} exited with status {code}: {failure_reason(run / 'train.log')} "
                            f"(log {run / 'train.log'})"
                        )
            from eer_plugin.runtime.archive import training_finished

            archive = run / "model" / "model.tar.gz"
            if not training_finished(run / "model"):  # its metrics.json, then model.tar.gz: not an interrupted run's
                raise RuntimeError(f"training ended without its metrics.json and {archive}; see {run / 'train.log'}")
            self.store.switch(version, str(archive))
            self.status = dict(
                self.status, state="finished", finished=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            )
            logger.info("now serving %s (%s)", version, archive)
        except Exception as error:  # noqa: BLE001  (reported in /health and the log; the old model stays)
            self.status = dict(self.status, state="failed", error=shortened(one_line(error)))
            logger.error(
                "training %s failed, still serving %s: %s", version, self.store.current.version, self.status["error"]
            )
        finally:
            self._process = None

    def wait(self, timeout: Optional[float] = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self) -> None:
        """Ends a running training's process group (the server is shutting down)."""
        process = self._process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
