"""The Label Studio ML backend without a server: the label config, the predictions' offsets and scores, which
annotations are complete, the served model's versions, the error answers, and the HTTP routes (Starlette's
test client, in process). The real Label Studio round trip is tests/serve/test_label_studio.py."""

import ast
import json
import socket

import pytest
from conftest import REPO

from eer_plugin.api import Tagger
from eer_plugin.serve import label_config, tasks
from eer_plugin.serve.backend import Backend, project_id
from eer_plugin.serve.client import LabelStudioClient, LabelStudioError
from eer_plugin.serve.models import FIRST_VERSION, ModelStore, Trainer, encoder_settings

CONFIG = (
    '<View><Text name="doc" value="$body"/><Labels name="ner" toName="doc"><Label value="PER" background="red"/>'
    '<Label value="Place" predicted_values="LOC"/></Labels>'
    '<Choices name="complete" toName="doc"><Choice value="complete"/></Choices></View>'
)
TEXTS = [
    "John Smith visited New York. He met the mayor of London!",
    "  Angela Merkel and Emmanuel Macron met in Paris,\tBerlin and Rome.  ",
    "Café owners in Zürich — \u00e9t\u00e9 2024 — said 3.5 percent.\nThen John left.",
    "   ",
]


@pytest.fixture(scope="module")
def store(archive, tmp_path_factory):
    return ModelStore(str(archive), str(tmp_path_factory.mktemp("work")), Tagger.load)


@pytest.fixture(scope="module")
def backend(store):
    return Backend(store, Trainer(store))


def test_the_label_config_names_the_control_the_text_and_the_types():
    config = label_config.parse(CONFIG)
    assert (config.from_name, config.to_name, config.data_key, config.labels) == (
        "ner",
        "doc",
        "body",
        ["PER", "Place"],
    )
    assert config.type_to_label(["LOC", "MISC", "PER"]) == {"PER": "PER", "LOC": "Place"}


@pytest.mark.parametrize(
    "xml, message",
    [
        (
            '<View><Text name="t" value="$text"/><Choices name="c" toName="t"><Choice value="a"/></Choices></View>',
            "has no <Labels> control",
        ),
        (
            '<View><Text name="t" value="$text"/><Labels name="l" toName="x"><Label value="PER"/></Labels></View>',
            "points at a <Text>",
        ),
        ("<View><Text", "is no XML"),
        ("", "no label config was sent"),
    ],
)
def test_a_config_the_backend_cannot_fill_is_one_clear_error(xml, message):
    with pytest.raises(label_config.LabelConfigError, match=message):
        label_config.parse(xml)


def test_a_label_the_model_lacks_is_an_error_at_setup_not_a_silent_drop(backend):
    xml = '<View><Text name="t" value="$text"/><Labels name="l" toName="t"><Label value="PER"/><Label value="ORG"/></Labels></View>'
    status, body = backend.setup({"schema": xml})
    assert status == 422
    assert "'ORG'" in body["error"] and "LOC, PER" in body["error"]
    status, body = backend.setup({"schema": CONFIG})
    assert (status, body) == (200, {"model_version": FIRST_VERSION})
    status, body = backend.setup({"schema": "<View/>"})
    assert status == 422 and "no <Labels>" in body["error"]


def test_predictions_hold_the_task_texts_exact_offsets_and_the_span_probabilities(backend, store):
    task_list = [{"id": i, "data": {"body": text}} for i, text in enumerate(TEXTS)]
    status, body = backend.predict({"tasks": task_list, "label_config": CONFIG, "project": "3.1700000000"})
    assert status == 200 and len(body["results"]) == len(TEXTS)
    tagged = [store.current.tagger(text) for text in TEXTS[:3]]
    label = {"PER": "PER", "LOC": "Place"}
    for text, expected, prediction in zip(TEXTS, tagged + [{"spans": []}], body["results"]):
        assert prediction["model_version"] == FIRST_VERSION
        spans = [
            (r["value"]["start"], r["value"]["end"], r["value"]["labels"], r["score"]) for r in prediction["result"]
        ]
        # the backend tags the tasks in one batch, the tagger one text at a time: the same spans, and the
        # probabilities up to float32 rounding (padding changes the encoder's rounding on some CPUs)
        assert spans == [
            (s["char_start"], s["char_end"], [label[s["type"]]], pytest.approx(s["probability"], abs=1e-5))
            for s in expected["spans"]
        ]
        for result in prediction["result"]:
            assert (result["from_name"], result["to_name"], result["type"]) == ("ner", "doc", "labels")
            assert result["value"]["text"] == text[result["value"]["start"] : result["value"]["end"]]
            assert result["value"]["text"] == result["value"]["text"].strip() != ""
    assert sum(len(p["result"]) for p in body["results"]) > 5  # the untrained tagger marks many spans
    assert body["results"][3] == {"result": [], "score": 1.0, "model_version": FIRST_VERSION}  # white space only


def test_the_prediction_score_orders_tasks_as_tagger_rank_does(backend, store):
    task_list = [{"id": i, "data": {"body": text}} for i, text in enumerate(TEXTS[:3])]
    scores = [p["score"] for p in backend.predict({"tasks": task_list, "label_config": CONFIG})[1]["results"]]
    ranked = store.current.tagger.rank(TEXTS[:3])
    assert sorted(range(3), key=lambda i: scores[i]) == [row["index"] for row in ranked]
    for row in ranked:
        assert scores[row["index"]] == pytest.approx(1 / (1 + row["uncertain_tags"]))


def test_a_task_without_the_configs_text_is_a_clear_error(backend):
    status, body = backend.predict({"tasks": [{"id": 7, "data": {"text": "x"}}], "label_config": CONFIG})
    assert status == 422 and "task 7: no text at data['body']" in body["error"]
    for task in (5, None, "text", ["x"], "x" * 100):
        status, body = backend.predict({"tasks": [{"id": 1, "data": {"body": "ok"}}, task], "label_config": CONFIG})
        shown = json.dumps(task)
        assert status == 422 and body["error"] == (
            f"a task is {shown if len(shown) <= 40 else shown[:37] + '...'}, not a task object "
            '{"id": ..., "data": {"body": "..."}}'
        )


def test_a_task_is_complete_only_when_its_kept_annotation_ticks_complete():
    ticked = {"type": "choices", "from_name": "complete", "value": {"choices": ["Complete"]}}
    span = {"type": "labels", "value": {"start": 0, "end": 4, "labels": ["PER"]}}
    exported = [
        {"id": 1, "annotations": [{"result": [span, ticked]}]},
        {"id": 2, "annotations": [{"result": [span]}]},
        {"id": 3, "annotations": [{"was_cancelled": True, "result": [ticked]}, {"result": [span]}]},
        {"id": 4, "annotations": [{"result": [span]}, {"result": [ticked]}]},  # the importer keeps the first
        {"id": 5, "annotations": []},
        {"id": 6, "annotations": [], "completions": [{"result": [span, ticked]}]},  # an older export's name
        {"id": 7, "annotations": [{"result": [span]}], "completions": [{"result": [span]}]},  # the importer's error
    ]
    assert tasks.complete_ids(exported) == ["1", "6"]
    assert [t["id"] for t in tasks.unannotated(exported)] == [5]


def test_project_ids_as_label_studio_sends_them():
    assert [project_id(v) for v in (3, "3", "3.1700000000", {"id": 3, "title": "x"})] == [3, 3, 3, 3]
    with pytest.raises(ValueError, match="no project id"):
        project_id(None)


def test_label_studio_unreachable_is_one_clear_answer(backend):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend.url, backend.api_key = f"http://127.0.0.1:{port}", "token"
    status, body = backend.train({"project": 1})
    assert (
        status == 502
        and body["error"]
        == f"Label Studio at http://127.0.0.1:{port} is unreachable (ConnectionError); start it, or fix --label-studio-url"
    )
    backend.url = None
    with pytest.raises(LabelStudioError, match="pass --label-studio-url"):
        LabelStudioClient("", "key")


def test_other_events_are_acknowledged_and_ignored(backend):
    assert backend.webhook({"action": "ANNOTATION_CREATED"})[1]["status"] == "ignored"


def test_a_restart_serves_the_last_finished_model(archive, tmp_path):
    first = ModelStore(str(archive), str(tmp_path), Tagger.load)
    assert (first.current.version, first.next_version()) == (FIRST_VERSION, "eer-v1")
    (tmp_path / "runs" / "eer-v1").mkdir(parents=True)  # a training that never finished
    assert first.next_version() == "eer-v2"
    first.switch("eer-v2", str(archive))
    again = ModelStore("/nowhere/model.tar.gz", str(tmp_path), Tagger.load)  # the work dir's model wins
    assert (again.current.version, again.current.path, again.next_version()) == ("eer-v2", str(archive), "eer-v3")
    (tmp_path / "state.json").write_text("{")
    with pytest.raises(Exception, match="state.json: damaged"):
        ModelStore(str(archive), str(tmp_path), Tagger.load)


def test_a_model_that_does_not_load_is_one_clear_error(tmp_path):
    from eer_plugin.common.errors import ArchiveError

    with pytest.raises(ArchiveError, match="nowhere"):
        ModelStore(str(tmp_path / "nowhere.tar.gz"), str(tmp_path / "work"), Tagger.load)


def test_training_uses_the_served_models_encoder_and_the_small_data_recipe(store, tiny_encoder):
    assert encoder_settings(store.current.path) == {"EER_ENCODER": tiny_encoder, "EER_MAX_LENGTH": "24"}
    trainer = Trainer(store, overrides={"trainer.num_epochs": 2})
    env = trainer.environment()
    assert (env["EER_ENCODER"], env["EER_DEV_DATA"]) == (tiny_encoder, "")
    train = trainer._commands(store.work_dir, ["PER", "LOC"], estimate=False, env=env)[-1]
    overrides = json.loads(train[train.index("-o") + 1])
    assert overrides == {
        "trainer.num_epochs": 2,
        "trainer.min_steps": 150,
        "data_loader.batch_sampler.batch_size": 2,
        "trainer.optimizer.lr": 1e-4,
        "model.entity_types": ["LOC", "PER"],
    }
    assert train[0:2] == ["train", "eer_short.jsonnet"] and "--ratio-estimate" not in train
    estimate, train = trainer._commands(store.work_dir, ["PER"], estimate=True, env=env)
    assert estimate[0:2] == ["eer-estimate-ratio", str(store.work_dir / "train.jsonl")]
    assert estimate[2:6] == ["--encoder", tiny_encoder, "--max-length", "24"]
    assert train[-2:] == ["--ratio-estimate", estimate[-1]]


def test_only_the_http_layer_imports_the_framework():
    """Importing eer_plugin (or any module but serve/app.py) never imports FastAPI, Starlette or uvicorn."""
    found = []
    for path in sorted((REPO / "eer_plugin").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                if name.split(".")[0] in ("fastapi", "starlette", "uvicorn"):
                    found.append((str(path.relative_to(REPO)), node.lineno))
    assert {file for file, *_ in found} <= {"eer_plugin/serve/app.py"}


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_the_http_routes(backend):
    pytest.importorskip("fastapi", reason="the serve extra is not installed (bash scripts/setup_label_studio.sh)")
    from fastapi.testclient import TestClient

    from eer_plugin.serve.app import create_app

    client = TestClient(create_app(backend))
    assert client.get("/health").json()["model_version"] == FIRST_VERSION
    answer = client.post("/predict", json={"tasks": [{"id": 1, "data": {"body": TEXTS[0]}}], "label_config": CONFIG})
    assert answer.status_code == 200 and answer.json()["results"][0]["result"]
    answer = client.post("/setup", json={"schema": "<View/>"})
    assert answer.status_code == 422 and "no <Labels>" in answer.json()["error"]
    assert client.post("/train", content=b"not json").status_code == 422  # more: the tests of request bodies below


def test_an_exported_model_is_served_the_same_and_trains_on_its_encoder(archive, store, tmp_path, tiny_encoder):
    from eer_plugin.models.export import export_model

    export_model(archive, tmp_path / "export")
    exported = Backend(ModelStore(str(tmp_path / "export"), str(tmp_path / "work"), Tagger.load), Trainer(store))
    task_list = [{"id": i, "data": {"body": text}} for i, text in enumerate(TEXTS)]
    from_archive = Backend(store, Trainer(store)).predict({"tasks": task_list, "label_config": CONFIG})[1]["results"]
    from_export = exported.predict({"tasks": task_list, "label_config": CONFIG})[1]["results"]
    spans = lambda results: [[(r["value"], r["score"]) for r in p["result"]] for p in results]  # noqa: E731
    assert [[v for v, _ in p] for p in spans(from_export)] == [[v for v, _ in p] for p in spans(from_archive)]
    for mine, theirs in zip(from_export, from_archive):
        assert mine["score"] == pytest.approx(theirs["score"], abs=1e-5)
        assert [r["score"] for r in mine["result"]] == pytest.approx([r["score"] for r in theirs["result"]], abs=1e-5)
    assert encoder_settings(str(tmp_path / "export")) == {"EER_ENCODER": tiny_encoder, "EER_MAX_LENGTH": "24"}


def _http_client(backend):
    pytest.importorskip("fastapi", reason="the serve extra is not installed (bash scripts/setup_label_studio.sh)")
    from fastapi.testclient import TestClient

    from eer_plugin.serve.app import create_app

    return TestClient(create_app(backend))


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_task_texts_with_lone_surrogates_are_answered_with_their_exact_slices(backend):
    import random

    client = _http_client(backend)
    rng = random.Random(0)
    words = ["John", "Smith", "visited", "London", "\u00e9t\u00e9", "3.5", ",", "\n"]
    texts = [
        " ".join(rng.choice(words + [chr(rng.randrange(0xD800, 0xE000))]) for _ in range(rng.randrange(3, 12)))
        for _ in range(12)
    ]
    texts = [text if any(0xD800 <= ord(c) < 0xE000 for c in text) else text + " \udc80" for text in texts]
    task_list = [{"id": i, "data": {"body": text}} for i, text in enumerate(texts)]
    # Label Studio writes a lone surrogate as a \ud800 escape (JSON in UTF-8 cannot hold it otherwise)
    answer = client.post("/predict", content=json.dumps({"tasks": task_list, "label_config": CONFIG}).encode())
    assert answer.status_code == 200, answer.text
    results = json.loads(answer.content)["results"]
    assert len(results) == len(texts) and sum(len(r["result"]) for r in results) > len(texts)
    for text, prediction in zip(texts, results):
        for result in prediction["result"]:
            assert result["value"]["text"] == text[result["value"]["start"] : result["value"]["end"]]
    assert client.post("/predict", json={"tasks": [], "label_config": CONFIG}).headers["content-type"] == (
        "application/json"
    )


LARGE_OBJECT = json.dumps({"tasks": [], "label_config": "x" * 5_000_000}).encode()
#: request bodies that are no JSON object, and what the answer says the body is
NOT_AN_OBJECT = {
    b"": "the request body is empty",
    b"  \n": "the request body is empty",
    b"hello": "the request body is not JSON (invalid JSON at column 1",
    b'{"project": 1': "the request body is not JSON (invalid JSON",
    b"[1, 2]": "the request body is a JSON array",
    b'"text"': "the request body is a JSON string",
    b"3": "the request body is a number",
    b"null": "the request body is null",
    b"true": "the request body is true or false",
    b"[" * 100_000: "the request body is not JSON (nested too deeply",
    b'{"project": 1, "project": 2}': 'the request body is not JSON (repeated key "project"',
    b'{"tasks": "\xff"}': "the request body is not UTF-8 text",
    LARGE_OBJECT: "label config is no XML",  # a JSON object: read, then refused
}


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
@pytest.mark.parametrize("route", ["/setup", "/predict", "/webhook", "/train", "/rank"])
def test_a_body_that_is_no_json_object_is_one_422_line_naming_what_the_route_expects(backend, route):
    from eer_plugin.serve.backend import EXPECTED_BODIES

    client = _http_client(backend)
    for body, says in NOT_AN_OBJECT.items():
        if says.startswith("label config") and route != "/predict":
            continue
        for content_type in ("application/json", "text/plain", "application/x-www-form-urlencoded"):
            answer = client.post(route, content=body, headers={"content-type": content_type})
            assert answer.status_code == 422, (route, body[:20], answer.text)
            error = answer.json()["error"]
            assert says in error and "\n" not in error, (route, body[:20], error)
            if not says.startswith("label config"):
                assert error.startswith(f"POST {route} expects a JSON object, such as {EXPECTED_BODIES[route]}; ")
    assert client.get("/health").json()["status"] == "UP"  # the service answers on
    ignored = client.post(
        "/webhook", content=b'{"action": "ANNOTATION_CREATED"}', headers={"content-type": "text/plain"}
    )
    assert ignored.status_code == 200 and ignored.json()["status"] == "ignored"  # JSON under another content type


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_a_body_over_the_limit_is_a_413_line_before_it_is_read(backend):
    pytest.importorskip("fastapi", reason="the serve extra is not installed (bash scripts/setup_label_studio.sh)")
    from fastapi.testclient import TestClient

    from eer_plugin.serve.app import create_app

    client = TestClient(create_app(backend, max_body_mb=0.01))  # 10,000 bytes
    small = json.dumps({"tasks": [{"id": 1, "data": {"body": "John Smith left. " * 10}}], "label_config": CONFIG})
    assert client.post("/predict", content=small.encode()).status_code == 200
    text = "John Smith left. " * 600  # over 10,000 bytes once in a task
    big = json.dumps({"tasks": [{"id": 1, "data": {"body": text}}], "label_config": CONFIG}).encode()
    for route in ("/predict", "/train", "/setup"):
        # whole (its Content-Length says it), and in chunks without a length: found while reading
        for content in (big, (big[i : i + 1000] for i in range(0, len(big), 1000))):
            answer = client.post(route, content=content)
            assert answer.status_code == 413 and answer.json() == {
                "error": f"POST {route}: the request body is larger than 0.01 MB, the most this backend reads "
                "(eer-ner serve --max-body-mb); send fewer or shorter tasks per request"
            }
    assert client.get("/health").json()["status"] == "UP"
    assert client.post("/predict", content=small.encode()).status_code == 200  # and it answers on


def test_the_body_limit_is_a_number_of_megabytes_above_0_and_the_word_limit_a_count():
    pytest.importorskip("fastapi", reason="the serve extra is not installed (bash scripts/setup_label_studio.sh)")
    from eer_plugin.common.errors import UserError
    from eer_plugin.serve.launch import launch

    for bad in (0, -1.0, float("nan"), float("inf"), "20", True):
        with pytest.raises(UserError, match="--max-body-mb must be a number of megabytes above 0"):
            launch("unused.tar.gz", max_body_mb=bad)
    for bad in (0, -5, 2.5, "20", True):
        with pytest.raises(UserError, match="--max-words must be a number of words of at least 1"):
            launch("unused.tar.gz", max_words=bad)


def test_a_predict_request_of_more_words_than_the_limit_is_a_413_naming_it(store):
    limited = Backend(store, Trainer(store), max_words=20)
    ten = "John Smith met Angela Merkel in Paris, Berlin and Rome."
    fits = {"tasks": [{"id": 1, "data": {"body": ten}}, {"id": 2, "data": {"body": ten}}], "label_config": CONFIG}
    status, body = limited.predict(fits)
    assert status == 200 and len(body["results"]) == 2
    status, body = limited.predict(dict(fits, tasks=fits["tasks"] + [{"id": 3, "data": {"body": "Rome."}}]))
    assert (status, body) == (
        413,
        {
            "error": "POST /predict: the 3 tasks hold 21 words, more than the 20 one request may (eer-ner serve "
            "--max-words); send fewer or shorter tasks per request, or start the backend with a higher --max-words "
            "(and raise Label Studio's ML_TIMEOUT_PREDICT to match)"
        },
    )


def test_an_address_the_backend_cannot_listen_at_is_one_line_before_the_model_loads(tmp_path):
    pytest.importorskip("fastapi", reason="the serve extra is not installed (bash scripts/setup_label_studio.sh)")
    from eer_plugin.common.errors import UserError
    from eer_plugin.serve.launch import launch

    model = str(tmp_path / "no-model.tar.gz")  # the address is checked first: this is never read
    with socket.socket() as busy:  # an earlier eer-ner serve on the port
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(UserError) as raised:
            launch(model, port=port, work_dir=str(tmp_path / "work"))
        assert str(raised.value) == (
            f"cannot listen at 127.0.0.1:{port} (Address already in use): another program (an eer-ner serve started "
            "before?) listens there, or it is no address of this machine; stop it, or choose another --port / --host"
        )
    for port in (-1, 65536, 70000, "9090", True, 90.5):
        with pytest.raises(UserError, match=f"^--port must be a port number from 0 to 65535, got {port!r}$"):
            launch(model, port=port)
    with pytest.raises(UserError, match="^--host 999.1.1.1: no address of this machine"):
        launch(model, host="999.1.1.1")
    with pytest.raises(UserError, match="^cannot listen at 10.255.255.1:"):  # an address of another machine
        launch(model, host="10.255.255.1", port=0)
    assert not (tmp_path / "work").exists()


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_an_unknown_route_or_method_is_an_error_line_listing_the_routes(backend):
    client = _http_client(backend)
    routes = "GET /, /health, /versions; POST /setup, /predict, /webhook, /train, /rank"
    for method, path, takes in [
        ("GET", "/nope", None),
        ("POST", "/api/predict", None),
        ("GET", "/predict", "POST"),
        ("PUT", "/train", "POST"),
        ("POST", "/health", "GET"),
        ("DELETE", "/versions", "GET"),
    ]:
        answer = client.request(method, path)
        if takes is None:
            assert (answer.status_code, answer.json()) == (
                404,
                {"error": f"{method} {path}: no such route; the backend answers {routes}"},
            )
        else:
            assert (answer.status_code, answer.json()) == (
                405,
                {"error": f"{method} {path}: the route takes {takes} only ({routes})"},
            )
    assert client.get("/health").json()["status"] == "UP"


def test_a_setup_whose_address_or_token_is_no_string_is_refused_not_kept(store):
    fresh = Backend(store, Trainer(store))
    for key in ("hostname", "access_token"):
        for value in (5, ["http://x"], {"url": "x"}, True):
            status, body = fresh.setup({"schema": CONFIG, key: value})
            assert (
                status == 422
                and body["error"].startswith(f'setup: "{key}" must be ')
                and "as a string, got" in body["error"]
            )
    assert (fresh.url, fresh.api_key) == (None, None)  # nothing kept: training still says what is missing
    status, body = fresh.train({"project": 1})
    assert status == 502 and "pass --label-studio-url" in body["error"]


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_an_unforeseen_failure_is_a_500_error_line_and_the_service_answers_on(store, monkeypatch):
    pytest.importorskip("fastapi", reason="the serve extra is not installed (bash scripts/setup_label_studio.sh)")
    from fastapi.testclient import TestClient

    from eer_plugin.serve.app import create_app

    broken = Backend(store, Trainer(store))
    client = TestClient(create_app(broken), raise_server_exceptions=False)

    def fails(body):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(broken, "rank", fails)
    answer = client.post("/rank", json={"project": 1})
    assert (answer.status_code, answer.json()) == (
        500,
        {"error": "POST /rank failed: RuntimeError: boom (a bug of the backend; its console shows the traceback)"},
    )
    assert client.get("/health").json()["status"] == "UP"


def test_a_work_dir_that_cannot_be_a_directory_is_one_line(tmp_path):
    from eer_plugin.common.errors import UserError

    (tmp_path / "notes.txt").write_text("mine")
    for work_dir in (tmp_path / "notes.txt", tmp_path / "notes.txt" / "work"):
        with pytest.raises(UserError) as raised:
            ModelStore("unused.tar.gz", str(work_dir), Tagger.load)
        message = str(raised.value)
        assert message.startswith(f"{work_dir}: the work directory (--work-dir) cannot be made there (")
        assert message.endswith("; choose a directory you can write to") and "\n" not in message
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "state, says",
    [
        ("{", "damaged (not JSON: invalid JSON at column 2"),
        ("\udcff".encode("utf-8", "surrogateescape"), "damaged (not JSON: "),
        ("[1]", 'damaged (expected {"version": "eer-vN", "model": PATH}, got [1])'),
        ('{"version": "eer-v3"}', 'damaged (expected {"version": "eer-vN", "model": PATH}, got {"version"'),
        ('{"version": 3, "model": "m.tar.gz"}', 'damaged (expected {"version": "eer-vN", "model": PATH}'),
        (
            '{"version": "eer-v3", "model": "/nowhere/model.tar.gz"}',
            "names /nowhere/model.tar.gz (eer-v3) as the model",
        ),
    ],
)
def test_a_state_file_that_cannot_be_served_names_itself(archive, tmp_path, state, says):
    from eer_plugin.common.errors import UserError

    path = tmp_path / "state.json"
    path.write_bytes(state if isinstance(state, bytes) else state.encode())
    with pytest.raises(UserError) as raised:
        ModelStore(str(archive), str(tmp_path), Tagger.load)
    message = str(raised.value)
    assert message.startswith(f"{path}") and says in message, message
    assert message.endswith("to serve the model given again") and "\n" not in message
