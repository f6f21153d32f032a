"""An ``-o/--overrides`` is read once per command. ``eer-ner train`` evaluated its text with jsonnet three times
(``--ratio-estimate``, ``train``'s checks, the checks' ``Params.from_file``), each ``Params.from_file`` a fourth and
fifth time (AllenNLP's own parse of the object it was given, as JSON text), and AllenNLP's ``train`` twice more;
``evaluate`` read it in its check, in ``load_archive``'s ``Params.from_file`` twice, and read the model's
``config.json`` a second time for the messages about the override. Now the command reads the text once, when it
checks it, and hands on what it read (:class:`eer_plugin.runtime.config_overrides.Overrides`). The config file itself
was evaluated twice by ``eer-ner train`` (its checks, then AllenNLP's ``train``): now once, its checks inside the one
``Params.from_file``."""

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES


@pytest.fixture
def reads(monkeypatch):
    """What jsonnet evaluates from here on: ``snippets`` (each ``-o`` text) and ``files`` (config file names)."""
    from allennlp.common import params

    import eer_plugin.allennlp_plugin  # noqa: F401  (its config-file wrapper installed first: it is what reads)

    counted = {"snippets": [], "files": Counter()}
    evaluate_snippet, evaluate_file = params.evaluate_snippet, params.evaluate_file

    def snippet(filename, expr, **kwargs):
        counted["snippets"].append(expr)
        return evaluate_snippet(filename, expr, **kwargs)

    def file(filename, **kwargs):
        counted["files"][Path(filename).name] += 1
        return evaluate_file(filename, **kwargs)

    monkeypatch.setattr(params, "evaluate_snippet", snippet)
    monkeypatch.setattr(params, "evaluate_file", file)
    return counted


@pytest.mark.parametrize("estimate", [False, True], ids=["plain", "ratio-estimate"])
def test_train_reads_its_overrides_once(estimate, reads, tiny_env, tmp_path, monkeypatch):
    """Up to the training itself (AllenNLP's ``train_model``, stubbed: the params it is given are the point)."""
    from allennlp.commands import train as allennlp_train

    from eer_plugin import cli

    trained = []
    monkeypatch.setattr(allennlp_train, "train_model", lambda params, **kwargs: trained.append(params.as_dict()))
    monkeypatch.setenv("EER_TRAIN_DATA", str(FIXTURES / "partial_tiny.jsonl"))
    monkeypatch.delenv("EER_DEV_DATA", raising=False)
    monkeypatch.delenv("EER_TEST_DATA", raising=False)
    text = '{"trainer.num_epochs": 1, "model.dropout": 0.1, "model.ratio_margin": 0.02}'
    argv = ["train", "eer_short.jsonnet", "-s", str(tmp_path / "run"), "-o", text]
    if estimate:
        path = tmp_path / "ratio.json"
        path.write_text(json.dumps({"suggested": {"entity_ratio": 0.105, "ratio_margin": 0.02}}))
        argv += ["--ratio-estimate", str(path)]
    assert cli.main(argv) == 0
    assert reads["snippets"] == [text]  # once, where it was read as one for each reader
    # the config once: its checks run inside the Params.from_file of AllenNLP's train (runtime.config_checks)
    assert reads["files"]["eer_short.jsonnet"] == 1
    (params,) = trained
    assert params["trainer"]["num_epochs"] == 1 and params["model"]["dropout"] == 0.1
    assert params["model"]["ratio_margin"] == 0.02
    if estimate:
        assert (params["model"]["entity_ratio"], params["model"]["ratio_control"]) == (0.105, "bind")


def test_evaluate_reads_its_overrides_and_the_models_config_once(reads, archive, tmp_path, capsys):
    from eer_plugin import cli

    data = tmp_path / "test.jsonl"
    spans = [[0, 2, "PER"], [3, 4, "LOC"]]
    data.write_text(
        json.dumps({"id": "a", "tokens": ["John", "Smith", "visited", "London"], "spans": spans, "is_complete": True})
        + "\n"
    )
    text = '{"model.o_cost": 1.5}'
    metrics = tmp_path / "metrics.json"
    assert cli.main(["evaluate", str(archive), str(data), "-o", text, "--output-file", str(metrics)]) == 0
    assert reads["snippets"] == [text]
    assert reads["files"]["config.json"] == 1  # the messages about an override use this same reading
    assert "f1-measure-overall" in json.loads(metrics.read_text())


def test_an_override_read_once_shows_as_the_user_typed_it():
    """What later messages show of a read ``-o``: the text given, not the object it became."""
    from allennlp.common.params import parse_overrides

    from eer_plugin.runtime.config_overrides import Overrides, parsed, shown

    text = '{"model": {"o_cost": 1 + 0.5}}'
    read = parsed(text, parse_overrides)
    assert isinstance(read, Overrides) and read == {"model": {"o_cost": 1.5}} and shown(read) == text
    assert parsed(read, parse_overrides) is read  # a second reader takes it as it is
    assert shown(parsed({"model.o_cost": 2}, parse_overrides)) == '{"model.o_cost": 2}'
