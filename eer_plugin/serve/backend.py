"""Label Studio's ML backend protocol as plain methods: each takes the request's JSON body and returns
``(HTTP status, JSON body)``; :mod:`eer_plugin.serve.app` only routes HTTP to them.

* ``GET /health``: ``{"status": "UP", "model_version": ..., "training": {...}}``;
* ``POST /setup`` (Label Studio, when the backend is connected and before predictions): checks the project's
  label config against the model (:mod:`eer_plugin.serve.label_config`) and answers ``{"model_version": ...}``;
* ``POST /predict``: ``{"tasks": [...], "label_config": ...}`` -> ``{"results": [one prediction per task]}``
  (:mod:`eer_plugin.serve.tasks`);
* ``POST /webhook``: Label Studio's events; ``START_TRAINING`` (the project's "Start Training") trains, every
  other event is acknowledged and ignored;
* ``POST /train`` ``{"project": ID}``: the same training without Label Studio's button;
* ``POST /rank`` ``{"project": ID}``: orders the project's unannotated tasks by :meth:`eer_plugin.Tagger.rank`
  and writes each one's prediction to Label Studio, its score :func:`eer_plugin.serve.tasks.certainty`.

Training: the project's JSON export is fetched (:mod:`eer_plugin.serve.client`), imported with the Label Studio
importer (``annotators="first"``; the complete tasks: :func:`eer_plugin.serve.tasks.is_complete`) and trained
in the background (:class:`eer_plugin.serve.models.Trainer`). Errors are ``{"error": one line}``: 409 training
already running, 413 a /predict request of more words than ``--max-words``, 422 a request body that is no JSON
object or a label config or task the backend cannot fill, 502 Label Studio unreachable or refusing the API key.

Requests run side by side; their model calls take turns one call at a time (:mod:`eer_plugin.serve.turns`), so
a long /predict or /rank delays a short request by a few model calls, not by its own length.
"""

import json
import logging
from typing import Any, Callable, Dict, List, Optional, Tuple

from eer_plugin.api import TaggerInputError
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.errors import one_line, shortened
from eer_plugin.corpus import strict_json
from eer_plugin.inference.documents import describe
from eer_plugin.serve import label_config, tasks
from eer_plugin.serve.client import LabelStudioClient, LabelStudioError
from eer_plugin.serve.models import ModelStore, Trainer, TrainingRunning
from eer_plugin.serve.turns import Stopping

logger = logging.getLogger(__name__)

Answer = Tuple[int, Dict[str, Any]]
#: documents per model call
BATCH_SIZE = 8
#: the most words (separated by white space, all tasks together) one /predict request may hold
#: (``--max-words``): about 80 s of a 2-core CPU with MiniLM (docs/speed.md), within Label Studio's 100 s
#: ``ML_TIMEOUT_PREDICT``; a larger request is a 413 naming the limit, not a prediction Label Studio stopped
#: waiting for
MAX_WORDS = 20_000
#: the import warnings a training's answer quotes (all of them: its log and the backend's console)
WARNINGS_SHOWN = 5
#: the routes that answer GET
GET_ROUTES = ("/", "/health", "/versions")
#: the body each POST route expects (for the answer to one that is not a JSON object)
EXPECTED_BODIES = {
    "/setup": '{"schema": "<View>...</View>"}',
    "/predict": '{"tasks": [...], "label_config": "<View>...</View>"}',
    "/webhook": '{"action": "START_TRAINING", "project": {"id": ID}}',
    "/train": '{"project": ID}',
    "/rank": '{"project": ID}',
}


def _error(status: int, message: str) -> Answer:
    """An error answer: ``message`` as one line (:func:`~eer_plugin.common.errors.one_line`), a long one
    :func:`~eer_plugin.common.errors.shortened` (an error quoting a 3 MB label value), also in the log."""
    message = shortened(one_line(message))
    logger.error("%s", message)
    return status, {"error": message}


def _json_kind(value: Any, sent: bool) -> str:
    """What a request body that is no JSON object is (``sent``: whether there was a body at all)."""
    if not sent:
        return "empty"
    kinds = {bool: "true or false", list: "a JSON array", str: "a JSON string", int: "a number", float: "a number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def project_id(value: Any) -> int:
    """The project id of a request: ``3``, ``"3"`` or Label Studio's ``"3.1700000000"`` (id.creation time), or a
    ``{"id": 3, ...}`` project object (webhooks)."""
    if isinstance(value, dict):
        value = value.get("id")
    try:
        return int(str(value).split(".")[0])
    except (TypeError, ValueError):
        raise ValueError(f'no project id in {value!r}: send {{"project": ID}}') from None


class Backend:
    """The ML backend of one :class:`ModelStore`; ``client`` builds a :class:`LabelStudioClient` from a URL and key;
    a /predict request of more than ``max_words`` words is a 413."""

    def __init__(
        self,
        store: ModelStore,
        trainer: Trainer,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        client: Callable[[str, str], LabelStudioClient] = LabelStudioClient,
        max_words: int = MAX_WORDS,
    ) -> None:
        self.store = store
        self.max_words = max_words
        self.trainer = trainer
        self.url = url
        self.api_key = api_key
        self._client = client
        self._configs: Dict[str, label_config.LabelConfig] = {}

    # ------------------------------------------------------------------ helpers
    def config(self, xml: Any) -> label_config.LabelConfig:
        if not isinstance(xml, str) or xml not in self._configs:
            parsed = label_config.parse(xml)
            self._configs = {xml: parsed}  # the last config only (one project per backend, as a rule)
        return self._configs[xml]

    def client(self) -> LabelStudioClient:
        return self._client(self.url or "", self.api_key or "")

    # ------------------------------------------------------------------ endpoints
    def handle(self, route: str, raw: bytes) -> Answer:
        """``POST route`` with the request body ``raw``: the body read as a JSON object, then the route's method; a
        body that is no JSON object is a 422 naming what the route expects (never an empty request to the method)."""
        method = getattr(self, route.strip("/"))
        expected = f"POST {route} expects a JSON object, such as {EXPECTED_BODIES[route]}"
        try:
            body = strict_json.loads(raw.decode("utf-8")) if raw.strip() else None
        except UnicodeDecodeError:
            return _error(422, f"{expected}; the request body is not UTF-8 text")
        except strict_json.JsonError as error:
            return _error(422, f"{expected}; the request body is not JSON ({error})")
        if not isinstance(body, dict):
            return _error(422, f"{expected}; the request body is {_json_kind(body, bool(raw.strip()))}")
        try:
            return method(body)
        except Stopping as stopping:
            return _error(503, f"POST {route}: {stopping}")

    def stopping(self) -> None:
        """The server is stopping (Ctrl-C, SIGTERM): the requests that wait for the model, or are between two model
        calls, end with a 503, so that the server stops after the model call under way, not after the longest
        request."""
        self.store.lock.close("the backend is stopping (Ctrl-C or SIGTERM); send the request again once it runs")

    def no_route(self, method: str, path: str) -> str:
        """What a request to a route the backend does not answer (or with another method) gets, as one line."""
        takes = "POST" if path in EXPECTED_BODIES else "GET" if path in GET_ROUTES else None
        known = f"GET {', '.join(GET_ROUTES)}; POST {', '.join(EXPECTED_BODIES)}"
        if takes is not None:
            message = f"{method} {path}: the route takes {takes} only ({known})"
        else:
            message = f"{method} {path}: no such route; the backend answers {known}"
        logger.error("%s", message)
        return message

    def failed(self, method: str, path: str, error: BaseException) -> Answer:
        """The answer to a request that failed where no answer was foreseen (a bug): a 500 with one line."""
        first = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
        return _error(
            500,
            f"{method} {path} failed: {type(error).__name__}{': ' + first if first else ''} (a bug of the backend; "
            "its console shows the traceback)",
        )

    def too_large(self, route: str, limit_mb: float) -> Answer:
        """The answer to a request body over ``limit_mb`` MB (not read)."""
        return _error(
            413,
            f"POST {route}: the request body is larger than {limit_mb:g} MB, the most this backend reads (eer-ner "
            "serve --max-body-mb); send fewer or shorter tasks per request",
        )

    def health(self) -> Answer:
        return 200, {
            "status": "UP",
            "model_class": "eer-ner",
            "model_version": self.store.current.version,
            "training": self.trainer.status,
        }

    def setup(self, body: Dict[str, Any]) -> Answer:
        served = self.store.current
        try:
            self.config(body.get("schema") or body.get("label_config")).type_to_label(served.entity_types)
        except label_config.LabelConfigError as error:
            return _error(422, str(error))
        for key, what in (("hostname", "Label Studio's address"), ("access_token", "an API token")):
            if body.get(key) is not None and not isinstance(body[key], str):
                return _error(422, f'setup: "{key}" must be {what} as a string, got {describe(body[key])}')
        if not self.url and body.get("hostname"):  # Label Studio's own address and its project owner's token
            self.url = body["hostname"]
        if not self.api_key and body.get("access_token"):
            self.api_key = body["access_token"]
        return 200, {"model_version": served.version}

    def predictions(self, texts: List[str], config: label_config.LabelConfig) -> List[Dict[str, Any]]:
        """One prediction per task text (see :mod:`eer_plugin.serve.tasks`), tagged by the model served now; each
        model call takes its turn at the model (:mod:`eer_plugin.serve.turns`), so other requests go on meanwhile."""
        served = self.store.current
        mapping = config.type_to_label(served.entity_types)
        wanted = [i for i, text in enumerate(texts) if text.strip()]
        tagged = list(served.tagger.pipe([texts[i] for i in wanted], batch_size=BATCH_SIZE))
        ranked = served.tagger.rank([texts[i] for i in wanted], batch_size=BATCH_SIZE)
        uncertain = {wanted[row["index"]]: row["uncertain_tags"] for row in ranked}
        found = dict(zip(wanted, tagged))
        return [
            tasks.prediction(
                tasks.results(found[i], texts[i], config, mapping) if i in found else [],
                uncertain.get(i, 0.0),
                served.version,
            )
            for i in range(len(texts))
        ]

    def predict(self, body: Dict[str, Any]) -> Answer:
        task_list = body.get("tasks")
        if not isinstance(task_list, list):
            return _error(422, 'predict: expected {"tasks": [...], "label_config": ...}')
        try:
            config = self.config(body.get("label_config"))
            texts = [tasks.task_text(task, config) for task in task_list]
        except (label_config.LabelConfigError, tasks.TaskError) as error:
            return _error(422, str(error))
        words = sum(len(text.split()) for text in texts)
        if words > self.max_words:
            return _error(
                413,
                f"POST /predict: the {len(texts)} tasks hold {words:,} words, more than the {self.max_words:,} one "
                "request may (eer-ner serve --max-words); send fewer or shorter tasks per request, or start the "
                "backend with a higher --max-words (and raise Label Studio's ML_TIMEOUT_PREDICT to match)",
            )
        try:
            return 200, {"results": self.predictions(texts, config), "model_version": self.store.current.version}
        except (label_config.LabelConfigError, TaggerInputError) as error:
            return _error(422, str(error))

    def webhook(self, body: Dict[str, Any]) -> Answer:
        action = body.get("action")
        if action != "START_TRAINING":
            return 200, {
                "status": "ignored",
                "action": action,
                "why": "the backend trains on START_TRAINING or POST /train",
            }
        return self.train(body)

    def _guarded(self, method: Callable[[Dict[str, Any]], Answer], body: Dict[str, Any]) -> Answer:
        """``method(body)``, its errors as answers: 502 for Label Studio's, 422 for the request's or the config's."""
        try:
            return method(body)
        except LabelStudioError as error:
            return _error(502, str(error))
        except (ValueError, label_config.LabelConfigError) as error:
            return _error(422, str(error))

    def _project(self, body: Dict[str, Any]) -> Tuple[int, LabelStudioClient, label_config.LabelConfig]:
        """The request's project id, the Label Studio client and the project's label config."""
        project = project_id(body.get("project"))
        client = self.client()
        return project, client, self.config(client.project(project).get("label_config"))

    def train(self, body: Dict[str, Any]) -> Answer:
        """Fetches and imports the project's annotations now (their errors are the answer), trains in the background."""
        if self.trainer.running:
            return _error(
                409,
                f"training already running: {self.trainer.status['version']} since {self.trainer.status['started']}; wait for it to finish",
            )
        return self._guarded(self._train, body)

    def _train(self, body: Dict[str, Any]) -> Answer:
        from eer_plugin.corpus.importers import AnnotationImportError, import_documents
        from eer_plugin.corpus.tokenizer import tokenize_text

        project, client, config = self._project(body)
        annotated = [task for task in client.export(project) if tasks.kept_annotation(task) is not None]
        if not annotated:
            return _error(
                422, f"project {project} has no annotated task yet: annotate some (partially is fine), then train"
            )
        # the export the import reads, kept in the work directory: the errors name its lines
        path = self.store.work_dir / f"export-project-{project}.json"
        atomic_write_text(str(path), json.dumps(annotated, indent=1))
        try:
            documents, report = import_documents(
                "label-studio",
                path,
                tokenize_text,
                complete_ids=tasks.complete_ids(annotated),
                annotators="first",
                text_key=config.data_key,
            )
        except AnnotationImportError as error:
            return _error(422, f"project {project}: {error}")
        if not (report.spans or report.complete_documents or report.negative_spans):
            return _error(
                422,
                f"project {project}: the annotations hold no entity span and no task is ticked complete, so a "
                f"training would learn nothing ({report.summary()}); mark some entities (partially is fine), then train",
            )
        unknown = sorted(set(report.types) - set(config.labels))
        if unknown:
            report.warn(
                f"the labels {', '.join(unknown)} of the annotations are no <Label> of project {project}'s config "
                "(renamed or removed?): the model learns them as types of their own, which the project does not show"
            )
        try:
            job = self.trainer.start(
                documents, report.complete_documents, sorted(set(config.labels) | set(report.types)), project
            )
        except TrainingRunning as error:
            return _error(409, str(error))
        logger.info("training %s on project %s: %s", job["version"], project, report.summary())
        warnings = [shortened(one_line(warning)) for warning in report.warnings]
        for warning in warnings:
            logger.warning("training %s: %s", job["version"], warning)
        with open(job["log"], "a", encoding="utf-8") as log:  # the training's log starts with what the import saw
            log.writelines(f"warning: {warning}\n" for warning in warnings)
        return 201, dict(job, job=job["version"], imported=report.summary(), warnings=warnings[:WARNINGS_SHOWN])

    def rank(self, body: Dict[str, Any]) -> Answer:
        """Ranks the project's unannotated tasks and writes their predictions (replacing this version's)."""
        return self._guarded(self._rank, body)

    def _rank(self, body: Dict[str, Any]) -> Answer:
        project, client, config = self._project(body)
        todo = tasks.unannotated(client.export(project, all_tasks=True))
        if not todo:
            return 200, {"project": project, "ranked": [], "model_version": self.store.current.version}
        predictions = self.predictions([tasks.task_text(task, config) for task in todo], config)
        version = predictions[0]["model_version"]
        ids = {task["id"] for task in todo}
        for old in client.predictions(project):
            if old.get("task") in ids and old.get("model_version") == version:
                client.delete_prediction(old["id"])
        for task, found in zip(todo, predictions):
            client.create_prediction(task["id"], found)
        ranked = sorted(
            (
                {"task": task["id"], "score": found["score"], "spans": len(found["result"])}
                for task, found in zip(todo, predictions)
            ),
            key=lambda row: row["score"],
        )
        return 200, {"project": project, "model_version": version, "ranked": ranked}
