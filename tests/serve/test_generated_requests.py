"""Generated bad input for the Label Studio ML backend, in process (Starlette's test client): label configs that do
not fit the model (what /setup says, and that /predict keeps the same promise), error answers that stay one
line, why a training failed, one server per work directory. The real Label Studio round trip is
tests/serve/test_label_studio.py."""

import itertools
import json
import random

import pytest

from eer_plugin.api import Tagger
from eer_plugin.common.errors import MESSAGE_LIMIT, UserError
from eer_plugin.serve import label_config
from eer_plugin.serve.backend import Backend
from eer_plugin.serve.models import LOCK_FILE, ModelStore, Trainer, failure_reason

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

CONFIG = (
    '<View><Text name="text" value="$text"/><Labels name="label" toName="text"><Label value="PER"/>'
    '<Label value="LOC"/></Labels><Choices name="complete" toName="text"><Choice value="complete"/></Choices></View>'
)
OBJECTS = {
    "Text": '<Text name="t" value="$text"/>',
    "HyperText": '<HyperText name="t" value="$text"/>',
    "Image": '<Image name="t" value="$text"/>',
    "no $": '<Text name="t" value="text"/>',
    "no name": '<Text value="$text"/>',
}
#: labels as "value" or "value|predicted_values"
LABEL_SETS = [
    ["PER", "LOC"],
    ["PER"],
    ["PER", "LOC", "ORG"],
    ["ORG"],
    [],
    ["per"],
    ["PER", "PER"],
    ["Person|PER"],
    ["Place|LOC", "PER"],
    ["Place|LOC,PER"],
    ["X|ORG"],
    ["Place|LOC", "LOC"],
    ["\u00e9|PER"],
]


def _labels(name: str, to: str, values) -> str:
    inner = "".join(
        f'<Label value="{v.split("|")[0]}" predicted_values="{v.split("|")[1]}"/>'
        if "|" in v
        else f'<Label value="{v}"/>'
        for v in values
    )
    return f'<Labels name="{name}" toName="{to}">{inner}</Labels>'


def generated_configs():
    """Label configs: objects x label sets x 0-2 <Labels> controls x where they point, the truncations of a good
    config, random character flips (lone surrogates among them), a huge label value."""
    configs = []
    for obj, labels, controls, target in itertools.product(OBJECTS, LABEL_SETS, (0, 1, 2), ("t", "t2", "nowhere")):
        parts = [OBJECTS[obj], '<Text name="t2" value="$other"/>']
        parts += [_labels(f"l{i}", target if i == 0 else "t", labels) for i in range(controls)]
        configs.append("<View>" + "".join(parts) + "</View>")
    configs += [CONFIG[:cut] for cut in range(0, len(CONFIG), 9)]
    rng = random.Random(0)
    for _ in range(30):
        chars = list(CONFIG)
        for _ in range(rng.randrange(1, 4)):
            chars[rng.randrange(len(chars))] = rng.choice('<>/"=$ &;\x00\udc80\ud800\u00e9')
        configs.append("".join(chars))
    configs.append(CONFIG.replace('value="PER"', f'value="{"P" * 200_000}"'))
    return configs


#: the generated configs a run sends (a seeded sample: each 200 is a model call)
SAMPLE = 150


@pytest.fixture(scope="module")
def store(archive, tmp_path_factory):
    return ModelStore(str(archive), str(tmp_path_factory.mktemp("work")), Tagger.load)


@pytest.fixture(scope="module")
def client(store):
    pytest.importorskip("fastapi", reason="the serve extra is not installed (bash scripts/setup_label_studio.sh)")
    from fastapi.testclient import TestClient

    from eer_plugin.serve.app import create_app

    return TestClient(create_app(Backend(store, Trainer(store))), raise_server_exceptions=False)


def _one_line(answer) -> str:
    error = answer.json()["error"]
    assert "\n" not in error and len(error) <= MESSAGE_LIMIT + 40, error[:300]
    return error


def test_generated_label_configs_are_200_or_one_422_line_at_setup_and_predict_alike(client):
    tasks = [{"id": 1, "data": {"text": "John Smith visited London.", "other": "Paris"}}]
    answered = set()
    configs = generated_configs()
    for xml in random.Random(1).sample(configs, SAMPLE) + configs[-31:]:  # the flips and the huge value always
        # as Label Studio sends them: JSON with \ud800 escapes for a lone surrogate
        setup = client.post("/setup", content=json.dumps({"schema": xml, "project": "1.17"}).encode())
        predict = client.post("/predict", content=json.dumps({"tasks": tasks, "label_config": xml}).encode())
        assert setup.status_code in (200, 422) and setup.status_code == predict.status_code, (xml[:200], setup.text)
        answered.add(setup.status_code)
        if setup.status_code == 422:
            assert _one_line(setup) == _one_line(predict)  # the promise at setup is the one kept at predict
            continue
        config = label_config.parse(xml)
        for result in predict.json()["results"][0]["result"]:
            assert (result["from_name"], result["to_name"]) == (config.from_name, config.to_name)
            assert result["value"]["labels"][0] in config.labels
    assert answered == {200, 422}
    assert client.get("/health").json()["status"] == "UP"


def test_a_lone_surrogate_in_a_label_config_is_named_not_a_500(client):
    xml = CONFIG.replace('value="LOC"', 'value="L\udc80C"')
    for route, body in (("/setup", {"schema": xml}), ("/predict", {"tasks": [], "label_config": xml})):
        answer = client.post(route, content=json.dumps(body).encode())
        assert answer.status_code == 422, answer.text
        assert _one_line(answer).startswith("label config is no XML: character ") and "lone surrogate" in answer.text


@pytest.mark.parametrize(
    "values, model_types, expected",
    [
        (["Place|LOC", "PER"], ["LOC", "PER"], {"LOC": "Place", "PER": "PER"}),  # the model given
        (["Place|LOC", "PER"], ["PER", "Place"], {"Place": "Place", "PER": "PER"}),  # one trained on the project
        (["Place|LOC,GPE", "PER"], ["GPE", "PER"], {"GPE": "Place", "PER": "PER"}),
        (["Organisation|ORG"], ["Organisation"], {"Organisation": "Organisation"}),
    ],
)
def test_a_label_with_predicted_values_is_filled_by_a_model_trained_on_its_project(values, model_types, expected):
    """A training on the project teaches the labels' values as types: its model must fill the same config."""
    xml = f'<View><Text name="t" value="$text"/>{_labels("l", "t", values)}</View>'
    assert label_config.parse(xml).type_to_label(model_types) == expected


def test_every_generated_config_fits_a_model_that_knows_its_label_values():
    for labels in LABEL_SETS:
        values = [v.split("|")[0] for v in labels]
        if not values or len(set(values)) < len(values):
            continue
        xml = f'<View><Text name="t" value="$text"/>{_labels("l", "t", labels)}</View>'
        mapping = label_config.parse(xml).type_to_label(sorted(set(values)))
        assert set(mapping.values()) == set(values), labels


@pytest.mark.parametrize(
    "log, reason",
    [
        (
            "$ eer-ner train ...\nloading\neer-ner train: error: trainer.num_epochs: expected an integer\n",
            "eer-ner train: error: trainer.num_epochs",
        ),
        (
            "$ x\nTraceback (most recent call last):\n  File ...\nRuntimeError: CUDA out of memory\n",
            "RuntimeError: CUDA",
        ),
        ("$ x\neer-ner train: error: argument -o: invalid\n\n\n", "eer-ner train: error: argument -o"),
        ("eer-ner train: error: first\nmore output\nerror: second\nlast line\n", "error: second"),
        ("", "no output"),
        ("\n \n", "no output"),
        ("x" * 100_000 + "\nKilled\n", "Killed"),
        (b"\xff\xfe junk\neer-ner train: error: caf\xc3\xa9\n", "eer-ner train: error: caf\u00e9"),
    ],
)
def test_a_failed_training_says_why_in_one_line(tmp_path, log, reason):
    path = tmp_path / "train.log"
    path.write_bytes(log if isinstance(log, bytes) else log.encode())
    found = failure_reason(path)
    assert found.startswith(reason) and "\n" not in found
    assert failure_reason(tmp_path / "missing.log").startswith("its log cannot be read (")


def test_a_work_dir_serves_one_server_at_a_time(archive, tmp_path):
    import os

    first = ModelStore(str(archive), str(tmp_path), Tagger.load, exclusive=True)
    with pytest.raises(UserError) as raised:
        ModelStore(str(archive), str(tmp_path), Tagger.load, exclusive=True)
    assert str(raised.value) == (
        f"{tmp_path}: the work directory is in use by another eer-ner serve (pid {os.getpid()}); give each server "
        "its own --work-dir, or stop that one"
    )
    first._held.close()  # the process ended: the system releases the lock
    again = ModelStore(str(archive), str(tmp_path), Tagger.load, exclusive=True)
    assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    again._held.close()
