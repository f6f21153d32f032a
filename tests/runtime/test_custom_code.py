"""A model from someone else never runs code shipped with its encoder: a model config (archive or serialization
directory) that sets ``trust_remote_code`` anywhere, or names as its encoder a local directory whose
``config.json`` / ``tokenizer_config.json`` has ``auto_map``, is refused before any of the model is loaded, with
the archive's name; generated configs for the rule, the package's real archive loader for the refusal."""

import json
import random
import shutil
import tarfile

import pytest

from eer_plugin.common.errors import ArchiveError
from eer_plugin.runtime.custom_code import model_config_problem


def _nest(rng: random.Random, leaf: dict, depth: int):
    """``leaf`` inside ``depth`` random dicts and lists, with unrelated keys beside it."""
    value = leaf
    for _ in range(depth):
        value = [1, value] if rng.random() < 0.3 else {f"k{rng.randint(0, 9)}": "x", "inner": value}
    return value


def test_the_rule_on_generated_configs(tmp_path):
    rng = random.Random(0)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "config.json").write_text(json.dumps({"model_type": "bert"}))
    coded = tmp_path / "coded"
    for index, name in enumerate(("config.json", "tokenizer_config.json")):
        directory = coded / name
        directory.mkdir(parents=True)
        (directory / name).write_text(json.dumps({"auto_map": {"AutoModel": "modeling.Model"}}))
        (directory / ("tokenizer_config.json" if index == 0 else "config.json")).write_text("{}")
    for _ in range(50):
        depth = rng.randint(0, 4)
        for value in (True, 1, "yes"):
            problem = model_config_problem(_nest(rng, {"trust_remote_code": value}, depth))
            assert problem and "trust_remote_code to " in problem
        for value in (False, 0, None, ""):
            assert model_config_problem(_nest(rng, {"trust_remote_code": value}, depth)) is None
        assert model_config_problem(_nest(rng, {"model_name": str(plain)}, depth)) is None
        assert model_config_problem(_nest(rng, {"model_name": "bert-base-uncased"}, depth)) is None  # not a directory
        for name in ("config.json", "tokenizer_config.json"):
            problem = model_config_problem(_nest(rng, {"model_name": str(coded / name)}, depth))
            assert problem and f"{coded / name / name} asks to run code of its own" in problem


def _edited_model(archive, directory, edit):
    """The untrained tagger's serialization directory copied, its config.json changed by ``edit``, and its archive."""
    shutil.copytree(archive.parent, directory, ignore=shutil.ignore_patterns("model.tar.gz"))
    config = json.loads((directory / "config.json").read_text())
    edit(config)
    (directory / "config.json").write_text(json.dumps(config))
    packed = directory.parent / f"{directory.name}.tar.gz"
    with tarfile.open(packed, "w:gz") as target:
        for path in sorted(directory.iterdir()):
            target.add(path, arcname=path.name)
    return directory, packed


def _embedder(config):
    return config["model"]["text_field_embedder"]["token_embedders"]["tokens"]


def test_an_archive_or_run_directory_that_would_run_code_is_refused_before_loading(archive, tiny_encoder, tmp_path):
    from eer_plugin.api import Tagger
    from eer_plugin.runtime.archive import load_model_archive

    coded_encoder = tmp_path / "coded-encoder"
    shutil.copytree(tiny_encoder, coded_encoder)
    settings = json.loads((coded_encoder / "config.json").read_text())
    (coded_encoder / "config.json").write_text(json.dumps({**settings, "auto_map": {"AutoModel": "evil.Model"}}))
    (coded_encoder / "evil.py").write_text("raise SystemExit('the custom code ran')\n")
    edits = {
        "trust": lambda c: _embedder(c).update(transformer_kwargs={"trust_remote_code": True}),
        "auto_map": lambda c: (
            _embedder(c).update(model_name=str(coded_encoder)),
            c["dataset_reader"].update(model_name=str(coded_encoder)),
        ),
    }
    for name, edit in edits.items():
        directory, packed = _edited_model(archive, tmp_path / name, edit)
        for load, where in ((load_model_archive, packed), (Tagger.load, packed), (Tagger.load, directory)):
            with pytest.raises(ArchiveError) as raised:
                load(where)
            message = str(raised.value)
            prefix = f"{packed}: its config.json " if where == packed else f"{directory / 'config.json'} "
            assert message.startswith(prefix), message
            assert "which eer-ner never does" in message and "eer-archive-" not in message
            assert ("transformer_kwargs.trust_remote_code to true" if name == "trust" else '("auto_map")') in message
    assert Tagger.load(archive)("John Smith visited Paris.")["spans"] is not None  # the untouched archive loads
