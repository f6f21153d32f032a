"""The backend inside a real Label Studio (its default SQLite database in a temporary data directory, a free
localhost port, a user and legacy API token created on the command line): a project with an NER label config,
tasks imported, the backend connected, predictions, partial annotations, training, the new version's
predictions, ranking, a restart; a server killed (``kill -9``) mid-training, which takes its training with it;
and the stated load (20 concurrent predict requests of 10 tasks). Needs
``bash scripts/setup_label_studio.sh`` (the serve extra and Label Studio in .venv-ls); skips without them.
Every process started here is ended in a ``finally``; every wait is bounded."""

import concurrent.futures
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO
from serve_processes import CONFIG, TEXTS, TOKEN, Backend, free_port, processes_naming, stop, wait_for

pytestmark = pytest.mark.integration
requests = pytest.importorskip("requests")
pytest.importorskip("fastapi", reason="the serve extra is not installed: bash scripts/setup_label_studio.sh")
LABEL_STUDIO = Path(os.environ.get("EER_LABEL_STUDIO", REPO / ".venv-ls" / "bin" / "label-studio"))


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory):
    if not LABEL_STUDIO.exists():
        pytest.skip(f"Label Studio is not installed at {LABEL_STUDIO}: bash scripts/setup_label_studio.sh")
    data, port = tmp_path_factory.mktemp("label-studio"), free_port()
    env = dict(
        os.environ,
        LABEL_STUDIO_BASE_DATA_DIR=str(data),
        COLLECT_ANALYTICS="false",
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        SSRF_PROTECTION_ENABLED="false",
        ML_BLOCK_LOCAL_IP="false",
    )  # a backend on 127.0.0.1
    log = data / "label-studio.log"
    command = [
        str(LABEL_STUDIO),
        "start",
        "--no-browser",
        "--internal-host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data-dir",
        str(data),
        "--username",
        "eer@example.com",
        "--password",
        "eer-test-password",
        "--user-token",
        TOKEN,
        "--enable-legacy-api-token",
    ]
    with open(log, "w") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    try:
        wait_for(f"http://127.0.0.1:{port}/health", process, 600, log)  # the first start migrates the database
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def check_offsets(predictions, texts_by_task, version):
    for prediction in predictions:
        assert prediction["model_version"] == version and 0 < prediction["score"] <= 1
        text = texts_by_task[prediction["task"]]
        for result in prediction["result"]:
            value = result["value"]
            assert value["text"] == text[value["start"] : value["end"]] != ""
            assert (result["from_name"], result["to_name"], result["type"]) == ("label", "text", "labels")
            assert value["labels"][0] in ("PER", "LOC") and 0 <= result["score"] <= 1


def api(label_studio: str):
    """``ls(method, path, **kwargs)``: Label Studio's REST API with the test token; its JSON answer."""

    def ls(method, path, **kwargs):
        answer = requests.request(
            method, label_studio + path, headers={"Authorization": f"Token {TOKEN}"}, timeout=120, **kwargs
        )
        assert answer.status_code < 300, f"{method} {path}: {answer.status_code} {answer.text[:500]}"
        return answer.json() if answer.content else None

    return ls


def test_predict_annotate_train_rank_restart_inside_label_studio(label_studio, archive, tmp_path):
    from eer_plugin.serve.client import LabelStudioClient, LabelStudioError

    ls = api(label_studio)

    def predictions(project, version):
        return [p for p in ls("GET", "/api/predictions/", params={"project": project}) if p["model_version"] == version]

    with pytest.raises(LabelStudioError, match="refused the API key"):
        LabelStudioClient(label_studio, "wrong-token").project(1)
    project = ls("POST", "/api/projects", json={"title": "eer-ner test", "label_config": CONFIG})["id"]
    ls("POST", f"/api/projects/{project}/import", json=[{"text": text} for text in TEXTS])
    task_list = ls("GET", "/api/tasks", params={"project": project, "page_size": 100})["tasks"]
    texts = {task["id"]: task["data"]["text"] for task in task_list}
    assert sorted(texts.values()) == sorted(TEXTS)

    work = tmp_path / "work"
    backend = Backend(str(archive), work, label_studio)
    try:
        ml = ls("POST", "/api/ml", json={"url": backend.url, "project": project, "title": "eer-ner"})
        assert (ml["state"], ml["model_version"]) == ("CO", "eer-v0")
        # predictions for every task, asked for by Label Studio (the data manager's "Retrieve predictions")
        retrieve = {"id": "retrieve_tasks_predictions", "project": project}
        ls("POST", "/api/dm/actions", params=retrieve, json={"selectedItems": {"all": True, "excluded": []}})
        first = predictions(project, "eer-v0")
        assert sorted(p["task"] for p in first) == sorted(texts) and sum(len(p["result"]) for p in first) > 0
        check_offsets(first, texts, "eer-v0")

        # partial annotations of two tasks (one ticked complete), then Label Studio's "Start Training"
        def span(text, words, label):
            start = text.index(words)
            return {
                "from_name": "label",
                "to_name": "text",
                "type": "labels",
                "value": {"start": start, "end": start + len(words), "text": words, "labels": [label]},
            }

        one, two = task_list[0], task_list[1]
        ls(
            "POST",
            f"/api/tasks/{one['id']}/annotations",
            json={"result": [span(one["data"]["text"], one["data"]["text"].split()[0], "PER")]},
        )
        complete = {"from_name": "complete", "to_name": "text", "type": "choices", "value": {"choices": ["complete"]}}
        ls(
            "POST",
            f"/api/tasks/{two['id']}/annotations",
            json={"result": [span(two["data"]["text"], "Paris", "LOC"), complete]},
        )
        ls("POST", f"/api/ml/{ml['id']}/train", json={})
        status = backend.get("/health")["training"]
        assert status["state"] in ("running", "finished") and (
            status["version"],
            status["documents"],
            status["complete"],
        ) == ("eer-v1", 2, 1)
        again = backend.post("/train", {"project": project})
        if status["state"] == "running":
            assert again.status_code == 409 and again.json()["error"].startswith("training already running: eer-v1")
        deadline = time.monotonic() + 300
        while backend.get("/health")["model_version"] != "eer-v1":
            assert time.monotonic() < deadline, (backend.get("/health"), backend.log.read_text()[-3000:])
            assert backend.get("/health")["training"]["state"] != "failed", Path(status["log"]).read_text()[-3000:]
            time.sleep(2)
        assert (work / "state.json").is_file() and json.loads((work / "state.json").read_text())["version"] == "eer-v1"

        # the new version's predictions, served to Label Studio
        ls("POST", "/api/dm/actions", params=retrieve, json={"selectedItems": {"all": True, "excluded": []}})
        second = predictions(project, "eer-v1")
        assert sorted(p["task"] for p in second) == sorted(texts)
        check_offsets(second, texts, "eer-v1")

        # rank: the unannotated tasks, most informative first, written back as prediction scores
        ranked = backend.post("/rank", {"project": project})
        assert ranked.status_code == 200, ranked.text
        rows = ranked.json()["ranked"]
        assert sorted(r["task"] for r in rows) == sorted(set(texts) - {one["id"], two["id"]})
        assert [r["score"] for r in rows] == sorted(r["score"] for r in rows)
        written = {p["task"]: p for p in predictions(project, "eer-v1") if p["task"] in {r["task"] for r in rows}}
        assert len(predictions(project, "eer-v1")) == len(texts)  # replaced, not added
        assert [written[r["task"]]["score"] for r in rows] == pytest.approx([r["score"] for r in rows])
    finally:
        stop(backend.process)

    restarted = Backend(str(archive), work)  # the work directory's last finished model
    try:
        assert restarted.get("/health")["model_version"] == "eer-v1"
        answer = restarted.post(
            "/predict", {"tasks": [{"id": 1, "data": {"text": TEXTS[2]}}], "label_config": CONFIG}
        ).json()
        assert answer["results"][0]["model_version"] == "eer-v1"
        check_offsets([dict(answer["results"][0], task=1)], {1: TEXTS[2]}, "eer-v1")
    finally:
        stop(restarted.process)


def test_our_document_ids_survive_a_real_label_studio(label_studio, tmp_path):
    """``eer-export label-studio`` -> a project's import -> annotations -> its JSON export -> ``eer-import
    label-studio``: Label Studio numbers the tasks itself but keeps ``data.eer_id``, so every document comes back
    under our id (before: under Label Studio's task number), and the backend's complete ids are the importer's."""
    from eer_plugin.commands import eer_export, eer_import
    from eer_plugin.corpus.formats import read_jsonl
    from eer_plugin.corpus.tokenizer import tokenize_text
    from eer_plugin.serve import tasks
    from eer_plugin.serve.client import LabelStudioClient

    ls = api(label_studio)
    ids = ["Zürich-α", "007", "2", "news/a b.txt"]
    lines = []
    for number, doc_id in enumerate(ids):  # eer-ner predict's output for raw text, without spans
        text = TEXTS[number % len(TEXTS)]
        tokens, _, ends = tokenize_text(text)
        lines.append({"id": doc_id, "text": text, "tokens": tokens, "sentence_ends": ends, "spans": []})
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    assert eer_export.main(["label-studio", str(tmp_path / "p.jsonl"), str(tmp_path / "tasks.json")]) == 0
    project = ls("POST", "/api/projects", json={"title": "our ids", "label_config": CONFIG})["id"]
    ls("POST", f"/api/projects/{project}/import", json=json.loads((tmp_path / "tasks.json").read_text()))
    listed = ls("GET", "/api/tasks", params={"project": project, "page_size": 100})["tasks"]
    assert sorted(t["data"]["eer_id"] for t in listed) == sorted(ids)  # our "2" may be a task's number: no matter
    complete = {"from_name": "complete", "to_name": "text", "type": "choices", "value": {"choices": ["complete"]}}
    for number, found in enumerate(listed):  # each task's first word a PER, every other task complete
        word = found["data"]["text"].split()[0]
        start = found["data"]["text"].index(word)
        value = {"start": start, "end": start + len(word), "text": word, "labels": ["PER"]}
        span = {"from_name": "label", "to_name": "text", "type": "labels", "value": value}
        ls("POST", f"/api/tasks/{found['id']}/annotations", json={"result": [span, complete] if number % 2 else [span]})
    exported = LabelStudioClient(label_studio, TOKEN).export(project)
    (tmp_path / "export.json").write_text(json.dumps(exported, ensure_ascii=False))
    assert eer_import.main(["label-studio", str(tmp_path / "export.json"), str(tmp_path / "imported.jsonl")]) == 0
    documents = read_jsonl(tmp_path / "imported.jsonl")
    assert sorted(d.id for d in documents) == sorted(ids) and len(documents) == len(listed)
    by_id = {d.id: d for d in documents}
    assert all(
        by_id[line["id"]].tokens == line["tokens"] and by_id[line["id"]].spans == [(0, 1, "PER")] for line in lines
    )
    assert sorted(tasks.complete_ids(exported)) == sorted(t["data"]["eer_id"] for t in listed[1::2])


def test_twenty_concurrent_predict_requests_of_ten_tasks(archive, tmp_path):
    backend = Backend(str(archive), tmp_path / "work")
    try:
        body = {
            "tasks": [{"id": i, "data": {"text": TEXTS[i % len(TEXTS)]}} for i in range(10)],
            "label_config": CONFIG,
        }
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(lambda _: backend.post("/predict", body), range(20)))
        assert [a.status_code for a in answers] == [200] * 20
        results = [a.json()["results"] for a in answers]
        assert all(len(r) == 10 for r in results) and all(r == results[0] for r in results)
    finally:
        stop(backend.process)


def _region(start, end, labels=("PER",), text=None):
    value = {"start": start, "end": end, "text": TEXTS[0][start:end] if text is None else text, "labels": list(labels)}
    return {"from_name": "label", "to_name": "text", "type": "labels", "value": value}


COMPLETE = {"from_name": "complete", "to_name": "text", "type": "choices", "value": {"choices": ["complete"]}}
#: generated annotation shapes of one task (TEXTS[0]): what Label Studio stores, then what /train answers and says
ANNOTATIONS = {
    "partial": ([[_region(0, 10)]], 201, None),
    "a label the config lacks": ([[_region(0, 10, ["ORG"])]], 201, "the labels ORG of the annotations are no <Label>"),
    "text changed after": ([[_region(0, 10)], "retext"], 201, "the task's text changed after it was annotated"),
    "complete, no span": ([[COMPLETE]], 201, None),
    "cancelled, then partial": (["cancel", [_region(0, 10)]], 201, None),
    "end past the text": ([[_region(50, 90)]], 422, "is out of range"),
    "start after end": ([[_region(10, 0)]], 422, "is out of range"),
    "overlapping": ([[_region(0, 10), _region(5, 18, ["LOC"])]], 422, "overlapping spans"),
    "two labels on a region": ([[_region(0, 10, ["PER", "LOC"])]], 422, "carries 2 labels"),
    "a region without a label": ([[_region(0, 10, [])]], 422, "a training would learn nothing"),
    "white space only": ([[_region(10, 11)]], 422, "a training would learn nothing"),
    "no labels result": ([[]], 422, "a training would learn nothing"),
    "cancelled only": (["cancel"], 422, "has no annotated task yet"),
    "a draft only": (["draft"], 422, "has no annotated task yet"),
}


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_generated_annotations_train_or_are_refused_in_one_line(label_studio, archive, tmp_path):
    from eer_plugin.api import Tagger
    from eer_plugin.serve.backend import Backend as InProcess
    from eer_plugin.serve.models import ModelStore, Trainer

    ls = api(label_studio)
    store = ModelStore(str(archive), str(tmp_path / "work"), Tagger.load)
    backend = InProcess(store, Trainer(store), label_studio, TOKEN)
    for name, (annotations, status, says) in ANNOTATIONS.items():
        project = ls("POST", "/api/projects", json={"title": name, "label_config": CONFIG})["id"]
        ls("POST", f"/api/projects/{project}/import", json=[{"text": TEXTS[0]}])
        task = ls("GET", "/api/tasks", params={"project": project})["tasks"][0]["id"]
        for annotation in annotations:
            if annotation == "cancel":
                ls("POST", f"/api/tasks/{task}/annotations", json={"result": [_region(0, 10)], "was_cancelled": True})
            elif annotation == "draft":
                ls("POST", f"/api/tasks/{task}/drafts", json={"result": [_region(0, 10)]})
            elif annotation == "retext":
                ls("PATCH", f"/api/tasks/{task}", json={"data": {"text": TEXTS[1]}})
            else:
                ls("POST", f"/api/tasks/{task}/annotations", json={"result": annotation})
        answered, body = backend.train({"project": project})
        while backend.trainer.running:  # only what /train answers is tested here: the training is stopped
            backend.trainer.stop()
            backend.trainer.wait(2)
        assert answered == status, (name, body)
        said = body["error"] if status == 422 else " ".join(body["warnings"])
        assert "\n" not in said and (says in said if says else said == ""), (name, said)
    assert not (store.work_dir / "state.json").exists() and store.current.version == "eer-v0"


def test_a_killed_server_takes_its_training_with_it_and_a_new_one_takes_over(label_studio, archive, tmp_path):
    ls = api(label_studio)
    project = ls("POST", "/api/projects", json={"title": "kill -9", "label_config": CONFIG})["id"]
    ls("POST", f"/api/projects/{project}/import", json=[{"text": text} for text in TEXTS])
    task = ls("GET", "/api/tasks", params={"project": project})["tasks"][0]
    words = task["data"]["text"].split()[0]
    ls("POST", f"/api/tasks/{task['id']}/annotations", json={"result": [_region(0, len(words), text=words)]})
    work, endless = tmp_path / "work", {"trainer.num_epochs": 100_000, "trainer.min_steps": 0}
    run = work / "runs" / "eer-v1"
    backend = Backend(str(archive), work, label_studio, overrides=endless)
    try:
        answer = backend.post("/train", {"project": project})
        assert answer.status_code == 201 and answer.json()["version"] == "eer-v1", answer.text
        deadline = time.monotonic() + 300
        while not (run / "model" / "config.json").is_file():  # AllenNLP's train is under way
            assert time.monotonic() < deadline, (run / "train.log").read_text()[-3000:]
            assert backend.get("/health")["training"]["state"] == "running", (run / "train.log").read_text()[-3000:]
            time.sleep(1)
        assert processes_naming(str(run))
        os.kill(backend.process.pid, signal.SIGKILL)  # as kill -9 or the out-of-memory killer: no clean-up
        backend.process.wait(30)
        killed = time.monotonic()
        while processes_naming(str(run)) and time.monotonic() - killed < 30:
            time.sleep(0.2)
        assert processes_naming(str(run)) == [], (
            f"the training outlived its server by {time.monotonic() - killed:.0f} s"
        )
    finally:
        stop(backend.process)
        for pid in processes_naming(str(run)):  # an orphan of a failed test
            os.kill(pid, signal.SIGKILL)
    said = (run / "train.log").read_text().splitlines()[-1]
    assert said == (
        f"eer-ner train: error: the eer-ner serve that started this training (pid {backend.process.pid}) ended; it stops "
        "unfinished, without a model.tar.gz"
    )
    assert not (run / "model" / "model.tar.gz").exists() and not (work / "state.json").exists()

    restarted = Backend(str(archive), work, label_studio)  # the same work directory, the recipe's short training
    try:
        assert restarted.get("/health")["model_version"] == "eer-v0"
        answer = restarted.post("/train", {"project": project})
        assert answer.status_code == 201 and answer.json()["version"] == "eer-v2", answer.text
        deadline = time.monotonic() + 300
        while restarted.get("/health")["model_version"] != "eer-v2":
            status = restarted.get("/health")["training"]
            assert time.monotonic() < deadline and status["state"] != "failed", status
            time.sleep(2)
    finally:
        stop(restarted.process)
    assert json.loads((work / "state.json").read_text())["version"] == "eer-v2"
