"""The exported model (``eer-ner eer-export-model``, ``Tagger.load(DIR)``): the format on disk, the same
subwords, spans and probabilities as the AllenNLP path, clear errors for a directory that is not an
export, and (integration) the same output in a process where AllenNLP cannot be imported."""

import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import FIXTURES, REPO
from untrained_tagger import TEXT

from eer_plugin.common.errors import ArchiveError
from eer_plugin.corpus.formats import read_documents
from eer_plugin.inference.exported import FORMAT, SETTINGS_FILE, WEIGHTS_FILE, ExportedTagger

#: odd text: accents, U+FFFD, a long word (more subwords than a chunk holds), a long document (several chunks)
ODD = ["Ça été Ünïcode \ufffd café Zürich naïve", "x" + "ab" * 60 + " und São Paulo.", " ".join([TEXT] * 4)]


def fixture_documents():
    """The fixture documents as Tagger inputs: raw text and token lists with sentence ends."""
    inputs = [json.loads(line) for line in (FIXTURES / "example_document.jsonl").read_text().splitlines()]
    for doc in read_documents(str(FIXTURES / "conll2003_tiny_dev.txt")):
        inputs.append({"id": doc.id, "tokens": doc.tokens, "sentence_ends": doc.sentence_ends})
    return inputs + [TEXT] + ODD


def assert_same_outputs(expected, actual, tolerance=1e-5):
    """The same outputs (an error record, without spans, too), span probabilities within ``tolerance``."""
    assert len(expected) == len(actual)
    for one, other in zip(expected, actual):
        strip = lambda output: {k: v for k, v in output.items() if k != "spans"}  # noqa: E731
        assert strip(one) == strip(other)
        assert [{k: v for k, v in s.items() if k != "probability"} for s in one.get("spans", [])] == [
            {k: v for k, v in s.items() if k != "probability"} for s in other.get("spans", [])
        ]
        for span, twin in zip(one.get("spans", []), other.get("spans", [])):
            assert span["probability"] == pytest.approx(twin["probability"], abs=tolerance)


def export(archive, directory, *extra):
    from eer_plugin.commands.export_model import main

    main([str(archive), str(directory), *extra])
    return directory


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    return export(archive, tmp_path_factory.mktemp("export") / "tagger")


def test_the_export_holds_the_settings_weights_and_encoder_files(exported, archive):
    from safetensors.torch import load_file

    settings = json.loads((exported / SETTINGS_FILE).read_text())
    assert settings["format"] == FORMAT and settings["format_version"] == 1
    assert settings["entity_types"] == ["LOC", "PER"]
    assert settings["tags"] == ["O"] + [f"{p}-{t}" for t in ("LOC", "PER") for p in "BILU"]
    transitions = torch.tensor(settings["allowed_transitions"])
    assert transitions.shape == (9, 9) and not transitions[1, 1] and transitions[1, 2]  # B-LOC -> I-LOC, never B-LOC
    assert settings["allowed_start"][2] is False and settings["allowed_end"][1] is False  # no I- first, no B- last
    assert settings["o_cost"] == -2.0 and settings["max_length"] == 24 and settings["sentence_level"] is False
    assert settings["precision"] == "fp32" and settings["source_archive"] == "model.tar.gz"
    weights = load_file(str(exported / WEIGHTS_FILE))
    assert {"tag_scorer.weight", "tag_scorer.bias", "crf.transitions"} <= set(weights)
    assert weights["tag_scorer.weight"].shape == (9, 32) and weights["crf.transitions"].shape == (9, 9)
    assert any(k.startswith("encoder.embeddings.") for k in weights) and not any(".pooler." in k for k in weights)
    assert {"config.json", "tokenizer.json", "tokenizer_config.json"} <= set(os.listdir(exported / "encoder"))
    assert [p.name for p in exported.parent.iterdir()] == ["tagger"]  # no temporary directory left behind


def test_the_export_tags_as_the_archive_does(exported, archive):
    from eer_plugin import Tagger

    allennlp_tagger, exported_tagger = Tagger.load(archive), Tagger.load(exported)
    assert isinstance(exported_tagger._model, ExportedTagger) and exported_tagger.entity_types == ["LOC", "PER"]
    documents = fixture_documents()
    assert_same_outputs([allennlp_tagger(d) for d in documents], [exported_tagger(d) for d in documents])
    assert_same_outputs(
        list(allennlp_tagger.pipe(documents, batch_size=3)), list(exported_tagger.pipe(documents, batch_size=3))
    )
    assert sum(len(exported_tagger(d)["spans"]) for d in documents) > 20  # the comparison compared something
    ranked, ranked_exported = (
        allennlp_tagger.rank(documents, batch_size=4),
        exported_tagger.rank(documents, batch_size=4),
    )
    assert [r["index"] for r in ranked] == [r["index"] for r in ranked_exported]
    assert [r["uncertain_tags"] for r in ranked] == pytest.approx(
        [r["uncertain_tags"] for r in ranked_exported], abs=1e-5
    )


def test_subwords_and_model_inputs_equal_allennlps(archive, exported):
    """The export's tokenizer (saved files) chunks as the archive's reader does, the tensors equal what
    AllenNLP's indexer builds, and the word pieces equal PretrainedTransformerTokenizer.intra_word_tokenize's."""
    from allennlp.data.tokenizers import PretrainedTransformerTokenizer
    from allennlp.models.archival import load_archive

    loaded = load_archive(str(archive))
    reader, model = loaded.validation_dataset_reader, loaded.model
    tagger = ExportedTagger.load(exported)
    from eer_plugin.inference.documents import parse_input

    allennlp_tokenizer = PretrainedTransformerTokenizer(reader.model_name)
    for document in fixture_documents():
        doc = parse_input(document if isinstance(document, dict) else {"text": document})[0]
        ours, theirs = tagger.chunk(doc), reader.chunk(doc)
        assert [(c.subword_ids, c.word_subwords, c.word_start) for c in ours] == [
            (c.subword_ids, c.word_subwords, c.word_start) for c in theirs
        ]
        batch = tagger.subwords.tensorize(ours, torch.device("cpu"))
        indexed = reader.tensorize([reader.chunk_to_instance(c, with_labels=False) for c in theirs], model.vocab)[
            "tokens"
        ]["tokens"]
        assert torch.equal(batch["token_ids"], indexed["token_ids"]) and torch.equal(batch["mask"], indexed["mask"])
        short = [w for w in doc.tokens[:20] if tagger.subwords.tokenizer.tokenize(w)]  # words the tokenizer keeps
        pieces, _ = allennlp_tokenizer.intra_word_tokenize(short)
        mine = tagger.subwords.tokenize_words(short)
        assert [t.text_id for t in pieces] == [reader.bookends[0], *[i for p in mine for i in p], reader.bookends[1]]


def test_a_non_empty_directory_is_replaced_only_with_force(archive, exported, tmp_path, capsys):
    target = tmp_path / "taken"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    with pytest.raises(SystemExit):
        export(archive, target)
    error = capsys.readouterr().err
    assert (
        error.startswith(f"eer-export-model: error: {target}: exists and is not empty")
        and "pass --force to replace it" in error
    )
    assert os.listdir(target) == ["notes.txt"]
    export(archive, target, "--force")
    assert sorted(os.listdir(target)) == ["eer_tagger.json", "encoder", "model.safetensors"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_force_never_replaces_the_directory_holding_the_model_being_exported(archive, tmp_path, capsys, monkeypatch):
    """DIR is the training run, or any directory above it (also through a link, or "."): refused even with
    --force, before anything is loaded or written, and the run is left as it was."""
    import shutil
    from pathlib import Path

    run = tmp_path / "projects" / "ner" / "run"
    run.mkdir(parents=True)
    shutil.copy(archive, run / "model.tar.gz")
    (tmp_path / "link").symlink_to(run.parent, target_is_directory=True)
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    monkeypatch.chdir(run.parent)
    sources = [run / "model.tar.gz", run, Path("run/model.tar.gz")]
    targets = [run, run.parent, tmp_path / "projects", tmp_path, tmp_path / "link", Path("."), Path("run/..")]
    for source in sources:
        for target in targets:
            with pytest.raises(SystemExit):
                export(source, target, "--force")
            error = capsys.readouterr().err.strip()
            assert error == (
                f"eer-export-model: error: {target}: holds the model being exported ({source}); the export would replace it and "
                "delete the model; choose a new directory for the export"
            )
            assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    export(run / "model.tar.gz", run / "export")  # a new directory inside the run is fine
    assert (run / "model.tar.gz").is_file() and (run / "export" / SETTINGS_FILE).is_file()


def test_a_transformers_model_given_to_export_is_named_before_loading(tiny_encoder, tmp_path, capsys):
    with pytest.raises(SystemExit):
        export(tiny_encoder, tmp_path / "out")
    error = capsys.readouterr().err.strip()
    assert error.startswith(
        f"eer-export-model: error: {tiny_encoder}: the directory of a transformers model (its config.json has "
    )
    assert len(error.splitlines()) == 1 and not (tmp_path / "out").exists()


def broken_copies(exported, tmp_path):
    import shutil

    def copy(name):
        target = tmp_path / name
        shutil.copytree(exported, target)
        return target

    missing = copy("missing-settings")
    (missing / SETTINGS_FILE).unlink()
    version = copy("version")
    settings = json.loads((version / SETTINGS_FILE).read_text())
    (version / SETTINGS_FILE).write_text(json.dumps(dict(settings, format_version=99)))
    corrupt = copy("corrupt-json")
    (corrupt / SETTINGS_FILE).write_text((exported / SETTINGS_FILE).read_text()[:50])
    no_weights = copy("no-weights")
    (no_weights / WEIGHTS_FILE).unlink()
    bad_weights = copy("bad-weights")
    (bad_weights / WEIGHTS_FILE).write_bytes(b"not safetensors")
    tags = copy("tags")
    (tags / SETTINGS_FILE).write_text(json.dumps(dict(settings, tags=settings["tags"][::-1])))
    grammar = copy("grammar")
    (grammar / SETTINGS_FILE).write_text(json.dumps(dict(settings, allowed_start=settings["allowed_start"][:3])))
    no_encoder = copy("no-encoder")
    (no_encoder / "encoder" / "config.json").unlink()
    chunks = copy("max-length")
    (chunks / SETTINGS_FILE).write_text(json.dumps(dict(settings, max_length=0)))
    return [
        (missing, f"{missing / SETTINGS_FILE}: missing"),
        (version, f"{version / SETTINGS_FILE}: format_version 99, this eer-ner reads version 1"),
        (corrupt, f"{corrupt / SETTINGS_FILE}: not valid JSON"),
        (tags, f"{tags / SETTINGS_FILE}: 'tags' "),
        (grammar, f"{grammar / SETTINGS_FILE}: the CRF grammar"),
        (no_weights, f"{no_weights / WEIGHTS_FILE}: missing"),
        (bad_weights, f"{bad_weights / WEIGHTS_FILE}: not a safetensors file"),
        (no_encoder, f"{no_encoder / 'encoder' / 'config.json'}: missing"),
        (chunks, f"{chunks / SETTINGS_FILE}: 'max_length' is 0, a chunk needs at least 3 subwords"),
    ]


def test_a_directory_that_is_not_an_export_raises_archive_error_with_the_file_and_the_fix(exported, tmp_path):
    from eer_plugin import Tagger

    for directory, message in broken_copies(exported, tmp_path):
        with pytest.raises(ArchiveError) as raised:
            Tagger.load(directory)
        assert str(raised.value).startswith(message) and "eer-ner eer-export-model model.tar.gz DIR" in str(
            raised.value
        )


@pytest.mark.parametrize("name", ["config.json", "tokenizer_config.json"])
def test_a_model_directory_asking_to_run_its_own_code_is_refused_without_a_prompt(
    name, exported, tmp_path, monkeypatch
):
    """An export from someone else whose encoder files name custom code (``auto_map``): refused before transformers
    reads them (it would ask on a terminal whether to run the code), and the code never runs."""
    import builtins
    import shutil

    from eer_plugin import Tagger

    target = tmp_path / "untrusted"
    shutil.copytree(exported, target)
    marker = tmp_path / "ran"
    (target / "encoder" / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    path = target / "encoder" / name
    data = json.loads(path.read_text())
    kind = "AutoConfig" if name == "config.json" else "AutoTokenizer"
    path.write_text(json.dumps(dict(data, auto_map={kind: "evil.Evil", "AutoModel": "evil.Evil"})))
    monkeypatch.setattr(builtins, "input", lambda *args: pytest.fail("asked whether to run the model's code"))
    with pytest.raises(ArchiveError) as raised:
        Tagger.load(target)
    message = str(raised.value)
    assert message.startswith(f"{path}: asks to run custom code") and "eer-ner eer-export-model" in message
    assert "\n" not in message and not marker.exists()


def test_an_archive_or_a_run_directory_given_as_an_export_names_tagger_load(archive, tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(ArchiveError, match=f"^{missing}: no such directory"):
        ExportedTagger.load(missing)
    with pytest.raises(ArchiveError) as raised:
        ExportedTagger.load(archive)
    assert str(raised.value).startswith(f"{archive}: a file, not an exported model's directory")
    assert f"Tagger.load({str(archive)!r})" in str(raised.value)
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    with pytest.raises(ArchiveError, match=f"^{run}: a training run's serialization directory"):
        ExportedTagger.load(run)


def test_an_output_path_that_is_a_file_is_refused(tmp_path):
    from eer_plugin.models.export import ExportError, check_target

    (tmp_path / "file").write_text("")
    with pytest.raises(ExportError, match="exists and is not a directory"):
        check_target(tmp_path / "file", force=True)
    for below in ("sub", "sub/deeper", "sub/../sub/x"):  # a file on the way: said before the model is loaded
        with pytest.raises(ExportError, match=f"^{tmp_path / 'file' / below}: {tmp_path / 'file'} is a file, not a"):
            check_target(tmp_path / "file" / below, force=True)


ALLENNLP_FREE = """
import json, sys
sys.modules["allennlp"] = None  # importing allennlp fails from here on
from eer_plugin import Tagger
tagger = Tagger.load(sys.argv[1])
outputs = [tagger(document) for document in json.loads(sys.stdin.read())]
assert not [m for m in sys.modules if m.startswith("allennlp.")], "allennlp was imported"
print(json.dumps({"outputs": outputs, "modules": sorted(m.split(".")[0] for m in sys.modules if m.startswith(("eer_plugin.", "allennlp")))}))
"""


def tag_without_allennlp(directory, documents):
    environment = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    done = subprocess.run(
        [sys.executable, "-c", ALLENNLP_FREE, str(directory)],
        input=json.dumps(documents),
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env=environment,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])["outputs"]


@pytest.mark.integration
def test_the_export_of_the_packaged_minilm_tags_without_allennlp_as_allennlp_predict_does(tmp_path):
    """The real packaged encoder (its fast tokenizer files, not the tiny test one): archive -> export ->
    a process where importing allennlp fails -> the same spans and probabilities as `eer-ner predict`."""
    from untrained_tagger import build_archive

    archive = build_archive(tmp_path / "minilm", "all-MiniLM-L6-v2", max_length=48)
    directory = tmp_path / "export"
    command = [sys.executable, "-m", "eer_plugin.cli"]
    done = subprocess.run(
        command + ["eer-export-model", str(archive), str(directory)], capture_output=True, text=True, cwd=str(tmp_path)
    )
    assert done.returncode == 0 and "eer-export-model" in done.stdout, done.stderr[-2000:]
    documents = fixture_documents()
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("".join(json.dumps(d if isinstance(d, dict) else {"text": d}) + "\n" for d in documents))
    predicted = tmp_path / "predicted.jsonl"
    done = subprocess.run(
        command
        + [
            "predict",
            str(archive),
            str(inputs),
            "--predictor",
            "eer_tagger",
            "--output-file",
            str(predicted),
            "--silent",
        ],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    expected = [json.loads(line) for line in predicted.read_text().splitlines()]
    actual = tag_without_allennlp(directory, [d if isinstance(d, dict) else {"text": d} for d in documents])
    assert_same_outputs(expected, actual)
    assert sum(len(output["spans"]) for output in actual) > 10


@pytest.mark.integration
def test_the_tiny_export_tags_without_allennlp(exported, archive):
    from eer_plugin import Tagger

    documents = fixture_documents()
    assert_same_outputs([Tagger.load(archive)(d) for d in documents], tag_without_allennlp(exported, documents))
