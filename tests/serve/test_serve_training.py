"""The backend's training path with enough complete tasks: "estimate, then bind" (``eer-estimate-ratio``, then
``train --ratio-estimate``) in the background process, the atomic switch to the new model. The Label Studio round
trip (the paper's band, fewer complete tasks) is tests/serve/test_label_studio.py."""

import dataclasses
import json
import tarfile

import pytest
from conftest import FIXTURES

from eer_plugin.api import Tagger
from eer_plugin.corpus.formats import read_jsonl
from eer_plugin.serve.models import MIN_COMPLETE_TASKS, ModelStore, Trainer, TrainingRunning

pytestmark = pytest.mark.integration


def test_enough_complete_tasks_estimate_then_bind_and_switch(archive, tmp_path):
    store = ModelStore(str(archive), str(tmp_path / "work"), Tagger.load)
    trainer = Trainer(store, overrides={"trainer.num_epochs": 1, "trainer.min_steps": 0})
    fixture = read_jsonl(FIXTURES / "conll2003_tiny_partial.jsonl")
    documents = [dataclasses.replace(doc, id=f"{doc.id}-{i}", is_complete=True) for i in range(5) for doc in fixture]
    assert len(documents) >= MIN_COMPLETE_TASKS
    types = sorted({label for doc in documents for *_, label in doc.spans})
    job = trainer.start(documents, len(documents), types, project=1)
    assert (job["version"], job["ratio"]) == ("eer-v1", "estimate, then bind")
    with pytest.raises(TrainingRunning, match="training already running: eer-v1"):
        trainer.start(documents, len(documents), types, project=1)
    assert store.current.version == "eer-v0"  # served until the new model is finished
    trainer.wait(600)
    run = store.work_dir / "runs" / "eer-v1"
    assert trainer.status["state"] == "finished", (run / "train.log").read_text()[-3000:]
    suggested = json.loads((run / "ratio.json").read_text())["suggested"]
    with tarfile.open(run / "model" / "model.tar.gz") as model:
        config = json.loads(model.extractfile("config.json").read())["model"]
    assert (config["ratio_control"], config["entity_ratio"], config["ratio_margin"]) == (
        "bind",
        suggested["entity_ratio"],
        suggested["ratio_margin"],
    )
    assert config["entity_types"] == types
    assert (store.current.version, store.current.entity_types) == ("eer-v1", types)
    assert json.loads((store.work_dir / "state.json").read_text()) == {
        "version": "eer-v1",
        "model": str(run / "model" / "model.tar.gz"),
    }


def test_a_failed_training_says_why_in_health_and_the_old_model_stays(archive, tmp_path):
    store = ModelStore(str(archive), str(tmp_path / "work"), Tagger.load)
    trainer = Trainer(store, overrides={"trainer.num_epochs": "many", "trainer.min_steps": 0})
    documents = read_jsonl(FIXTURES / "conll2003_tiny_partial.jsonl")
    trainer.start(documents, 0, ["LOC", "PER"], project=1)
    trainer.wait(600)
    error = trainer.status["error"]
    assert trainer.status["state"] == "failed" and error.startswith("train exited with status 1: "), error
    reason = error[len("train exited with status 1: ") : error.index(" (log ")]
    assert reason not in ("no output", "") and "\n" not in error and error.endswith("train.log)"), error
    assert store.current.version == "eer-v0" and not (store.work_dir / "state.json").exists()
