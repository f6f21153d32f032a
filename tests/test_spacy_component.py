"""The spaCy component ``eer_ner`` (entry point ``spacy_factories``): doc.ents and the scored spans of
doc.spans are the tagger's spans, nlp.pipe batches documents, and a pipeline saved with nlp.to_disk
tags the same after spacy.load without the original model file, nlp.to_bytes / from_bytes carry the model, and
an exported model (no AllenNLP) works as the component's model."""

import shutil
import subprocess
import sys

import pytest
from conftest import REPO
from untrained_tagger import TEXT

from eer_plugin import api

spacy = pytest.importorskip("spacy")

TEXTS = [TEXT[:60], "", "John Smith visited London.", "  \n", "Angela Merkel met Emmanuel Macron in Paris."]


@pytest.fixture(scope="module")
def nlp(archive):  # noqa: F811
    nlp = spacy.blank("en")
    nlp.add_pipe("eer_ner", config={"model": str(archive), "batch_size": 2})
    return nlp


@pytest.fixture
def on_a_copy(archive, tmp_path):  # noqa: F811
    """A pipeline whose model is a copy of the archive (the tests delete it), the copy, and its spans of TEXTS."""
    model = tmp_path / "model.tar.gz"
    shutil.copyfile(archive, model)
    first = spacy.blank("en")
    first.add_pipe("eer_ner", config={"model": str(model)})
    return first, model, [spans_of(doc) for doc in first.pipe(TEXTS)]


def spans_of(doc) -> list:
    return [(s.start_char, s.end_char, s.label_) for s in doc.spans["eer_ner"]]


def test_the_factory_is_registered_by_the_entry_point():
    from importlib.metadata import entry_points

    (point,) = [p for p in entry_points(group="spacy_factories") if p.name == "eer_ner"]
    assert point.value == "eer_plugin.spacy_component:make_eer_ner"
    assert spacy.blank("en").has_factory("eer_ner")


def test_doc_ents_and_spans_are_the_taggers_spans_with_their_probabilities(nlp):
    doc = nlp(TEXT)
    tagged = nlp.get_pipe("eer_ner").tagger(TEXT)
    assert spans_of(doc) == [
        (s["char_start"], s["char_end"], s["type"]) for s in tagged["spans"]
    ]  # the tokens agree here
    assert doc.spans["eer_ner"].attrs["probabilities"] == [s["probability"] for s in tagged["spans"]]
    assert len(doc.ents) == len(tagged["spans"]) >= 8
    assert [e._.eer_probability for e in doc.ents] == [s["probability"] for s in tagged["spans"]]


def test_a_span_ending_inside_a_spacy_token_covers_that_token(nlp):
    """The tagger splits ``Kohl's`` into ``Kohl`` ``'s``; a spaCy doc built with other tokens gets whole tokens."""
    from spacy.tokens import Doc

    doc = Doc(nlp.vocab, words=["JohnSmith", "visited", "NewYork", "."], spaces=[True, True, False, False])
    component = nlp.get_pipe("eer_ner")
    component.set_annotations(
        doc,
        {
            "spans": [
                {"char_start": 0, "char_end": 4, "type": "PER", "probability": 0.9},
                {"char_start": 4, "char_end": 9, "type": "LOC", "probability": 0.8},
            ]
        },
    )
    assert [(s.start, s.end, s.label_) for s in doc.spans["eer_ner"]] == [(0, 1, "PER"), (0, 1, "LOC")]
    assert [(e.start, e.end, e.label_) for e in doc.ents] == [(0, 1, "PER")]  # non-overlapping


def test_nlp_pipe_batches_documents_and_equals_one_at_a_time(nlp):
    calls = []  # documents per model call
    original = api.tag_documents
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            api, "tag_documents", lambda parsed, size, tag: calls.append(len(parsed)) or original(parsed, size, tag)
        )
        docs = list(nlp.pipe(TEXTS))
    assert calls == [1, 1, 1]  # batches of 2 docs; the docs without words are not sent to the model
    assert [spans_of(d) for d in docs] == [spans_of(nlp(text)) for text in TEXTS]
    assert docs[1].ents == () and len(docs[1].spans["eer_ner"]) == 0 and len(docs[2].ents) > 0


def test_a_saved_pipeline_loads_and_tags_without_the_original_model(on_a_copy, tmp_path):
    first, model, expected = on_a_copy
    first.to_disk(tmp_path / "pipeline")
    model.unlink()
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["eer_ner"]
    assert [spans_of(doc) for doc in loaded.pipe(TEXTS)] == expected
    assert loaded.get_pipe("eer_ner").model == str(tmp_path / "pipeline" / "eer_ner" / "model.tar.gz")
    loaded.to_disk(tmp_path / "pipeline")  # saved again where it was loaded from
    assert [spans_of(doc) for doc in spacy.load(tmp_path / "pipeline").pipe(TEXTS)] == expected


@pytest.mark.parametrize("inside", ["spacy", "pipelines/v1/spacy", "sub/../pipeline"])
def test_a_pipeline_saved_inside_its_models_directory_holds_a_copy_without_itself(archive, tmp_path, inside):
    """A serialization directory (or export) as the model, the pipeline saved in it (or in a folder below it): the
    copy leaves the pipeline out instead of copying it into itself, and the saved pipeline tags the same."""
    run = tmp_path / "run"
    shutil.copytree(archive.parent, run)
    first = spacy.blank("en")
    first.add_pipe("eer_ner", config={"model": str(run)})
    expected = [spans_of(doc) for doc in first.pipe(TEXTS[:3])]
    pipeline = run / inside
    (run / inside.split("/")[0]).mkdir(exist_ok=True)
    pipeline.parent.mkdir(parents=True, exist_ok=True)  # spaCy makes the last directory only
    first.to_disk(pipeline)
    saved = pipeline / "eer_ner" / "model"
    expected_files = [p.name for p in archive.parent.iterdir()] + ["sub"] * inside.startswith("sub")
    assert sorted(p.name for p in saved.iterdir()) == sorted(expected_files)
    assert not [p for p in run.rglob("*") if ".eer-tmp-" in p.name or ".eer-" in p.name]  # no temporary left
    assert [spans_of(doc) for doc in spacy.load(pipeline).pipe(TEXTS[:3])] == expected


def test_two_components_keep_their_own_spans(nlp, archive, tmp_path):  # noqa: F811
    """A second eer_ner component (another name, its own model) writes doc.spans[its name], not over the first's;
    a spans_key set in the config is kept; doc.ents are the last component's."""
    expected = [spans_of(doc) for doc in nlp.pipe(TEXTS)]
    two = spacy.blank("en")
    two.add_pipe("eer_ner", config={"model": str(archive)})
    two.add_pipe("eer_ner", name="second", config={"model": str(archive), "batch_size": 3})
    two.add_pipe("eer_ner", name="third", config={"model": str(archive), "spans_key": "mine"})
    for doc, spans in zip(two.pipe(TEXTS), expected):
        assert sorted(doc.spans) == ["eer_ner", "mine", "second"]
        for key in ("eer_ner", "second", "mine"):
            assert [(s.start_char, s.end_char, s.label_) for s in doc.spans[key]] == spans
    two.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert [loaded.get_pipe(n).spans_key for n in loaded.pipe_names] == ["eer_ner", "second", "mine"]


def test_to_bytes_and_from_bytes_carry_the_model(on_a_copy, tmp_path):
    first, model, expected = on_a_copy
    data, component_data = first.to_bytes(), first.get_pipe("eer_ner").to_bytes()
    model.unlink()
    second = spacy.blank("en")
    second.add_pipe("eer_ner", config={"model": "not-read.tar.gz"})
    second.from_bytes(data)
    assert [spans_of(doc) for doc in second.pipe(TEXTS)] == expected
    assert second.get_pipe("eer_ner").to_bytes() == component_data  # the bytes it came from, again
    second.to_disk(tmp_path / "pipeline")  # no file behind the model: the bytes are unpacked there
    assert (tmp_path / "pipeline" / "eer_ner" / "model.tar.gz").is_file()
    assert [spans_of(doc) for doc in spacy.load(tmp_path / "pipeline").pipe(TEXTS)] == expected


def test_an_exported_model_works_as_the_component_model(nlp, archive, tmp_path):  # noqa: F811
    from eer_plugin.inference.exported import ExportedTagger
    from eer_plugin.models.export import export_model

    export_model(archive, tmp_path / "export")
    expected = [spans_of(doc) for doc in nlp.pipe(TEXTS)]
    exported = spacy.blank("en")
    exported.add_pipe("eer_ner", config={"model": str(tmp_path / "export")})
    assert [spans_of(doc) for doc in exported.pipe(TEXTS)] == expected
    assert isinstance(exported.get_pipe("eer_ner").tagger._model, ExportedTagger)
    exported.to_disk(tmp_path / "pipeline")
    assert (tmp_path / "pipeline" / "eer_ner" / "model" / "model.safetensors").is_file()
    assert [spans_of(doc) for doc in spacy.load(tmp_path / "pipeline").pipe(TEXTS)] == expected
    again = spacy.blank("en")
    again.add_pipe("eer_ner", config={"model": "not-read"})
    assert [spans_of(doc) for doc in again.from_bytes(exported.to_bytes()).pipe(TEXTS)] == expected


def test_a_missing_model_is_a_clear_error_at_the_first_doc(tmp_path):
    from eer_plugin.common.errors import ArchiveError

    nlp = spacy.blank("en")
    nlp.add_pipe("eer_ner", config={"model": str(tmp_path / "typo.tar.gz")})
    with pytest.raises(ArchiveError, match="typo.tar.gz: no such file"):
        nlp("Some text.")


@pytest.mark.integration
def test_building_a_spacy_pipeline_imports_no_allennlp_and_changes_nothing():
    """spaCy imports every factory's module when it builds any pipeline: ours is the package (which registers
    nothing) and its spaCy component, no AllenNLP, no other module of eer-ner, no global state changed."""
    code = (
        "import sys, spacy; hook = sys.excepthook; spacy.blank('en'); assert sys.excepthook is hook; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('eer_plugin', 'allennlp')))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['eer_plugin', 'eer_plugin.spacy_component']", done.stdout
