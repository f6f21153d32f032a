"""A user's document ids survive our own round trips. Label Studio: ``eer-export label-studio`` writes each
task's ``data.eer_id``, Label Studio keeps it (and numbers the tasks itself), ``eer-import label-studio`` names the
document by it (before: by Label Studio's task number, so every id was new), and so do ``--complete-ids`` and the
Label Studio backend's training, by one rule (the real Label Studio: tests/serve/test_label_studio.py). CoNLL: a
document's ``# id = ...`` line after its ``-DOCSTART-`` line, as ``eer-ner predict`` writes it, is its id when read
back (the predict side is tests/predictors/test_conll_documents.py). Ids are generated: unicode, numeric-looking
strings, white space, line breaks, quotes; an id twice is refused."""

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_same_text import through_label_studio, write_predictions

from eer_plugin.commands import eer_export, eer_import
from eer_plugin.corpus.formats import FormatError, read_conll, read_jsonl
from eer_plugin.corpus.formats.columns import comment_id, id_comment
from eer_plugin.corpus.formats.conll import conll_documents
from eer_plugin.corpus.importers import AnnotationImportError, import_documents
from eer_plugin.corpus.importers.label_studio import document_id
from eer_plugin.corpus.tokenizer import tokenize_text
from eer_plugin.serve import tasks as serve_tasks
from eer_plugin.serve.backend import Backend

LABEL_CONFIG = (
    '<View><Text name="doc" value="$body"/><Labels name="ner" toName="doc"><Label value="PER"/></Labels>'
    '<Choices name="complete" toName="doc"><Choice value="complete"/></Choices></View>'
)
TEXTS = ["Anna met Bob in Paris .", "EU rejects German call .", "Thank you ."]
#: ids a user may have: unicode, numeric-looking strings (some equal to Label Studio's task numbers), paths, spaces
FIXED_IDS = ["Zürich-α", "人名-3", "007", "2", "1", "3.0", "1e3", "-1", "news/a b.txt", "doc 🙂", "0"]


def generated_ids(seed: int, count: int = 12):
    """``count`` distinct ids drawn from :data:`FIXED_IDS` and random strings of letters, digits and symbols."""
    rng = random.Random(seed)
    pool = "aZ09-_./:#é漢🙂 "
    ids = list(FIXED_IDS)
    while len(ids) < 40:
        ids.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 8))).strip() or "x")
    return rng.sample(list(dict.fromkeys(ids)), count)


def label_studio_round_trip(ids, tmp_path, extra=()):
    """Our ids exported, through Label Studio (tasks numbered 1, 2, ..., each annotated), imported: the imported
    documents (``extra``: further ``eer-import`` arguments)."""
    documents = [(doc_id, TEXTS[n % len(TEXTS)], []) for n, doc_id in enumerate(ids)]
    exported = tmp_path / "tasks.json"
    assert (
        eer_export.main(["label-studio", str(write_predictions(documents, tmp_path / "p.jsonl")), str(exported)]) == 0
    )
    imported = tmp_path / "imported.jsonl"
    assert eer_import.main(["label-studio", str(through_label_studio(exported)), str(imported), *extra]) == 0
    return read_jsonl(imported)


@pytest.mark.parametrize("seed", range(3))
def test_label_studio_export_annotate_import_keeps_the_ids_and_the_documents(seed, tmp_path):
    ids = generated_ids(seed)
    documents = label_studio_round_trip(ids, tmp_path)
    assert [d.id for d in documents] == ids
    assert [d.tokens for d in documents] == [tokenize_text(TEXTS[n % len(TEXTS)])[0] for n in range(len(ids))]


def test_complete_ids_name_our_ids_after_the_round_trip(tmp_path):
    ids = ["Zürich-α", "007", "2"]
    (tmp_path / "complete.txt").write_text("007\n2\n", encoding="utf-8")
    documents = label_studio_round_trip(ids, tmp_path, ["--complete-ids", str(tmp_path / "complete.txt")])
    assert [(d.id, d.is_complete) for d in documents] == [("Zürich-α", False), ("007", True), ("2", True)]


def tasks_file(tmp_path, tasks):
    path = tmp_path / "export.json"
    path.write_text("[\n" + ",\n".join(json.dumps(task, ensure_ascii=False) for task in tasks) + "\n]\n")
    return path


def task(number, eer_id=..., text="Anna met Bob ."):
    data = {"text": text}
    if eer_id is not ...:
        data["eer_id"] = eer_id
    found = {"data": data, "annotations": [{"result": []}]}
    if number is not None:
        found["id"] = number
    return found


def test_without_an_eer_id_the_task_id_names_the_document_else_its_index(tmp_path):
    tasks = [task(11, "d1"), task(12), task(13, None), task(14, ""), task(None), task(15, 7), task(16, 3.0)]
    documents, _ = import_documents("label-studio", tasks_file(tmp_path, tasks), tokenize_text)
    assert [d.id for d in documents] == ["d1", "12", "13", "14", "task-4", "7", "3"]
    assert [document_id(t, i) for i, t in enumerate(tasks)] == [d.id for d in documents]  # the one rule


@pytest.mark.parametrize(
    "tasks, first, second",
    [
        ([task(1, "same"), task(2, "same")], 1, 2),
        ([task(1, "2"), task(2)], 1, 2),  # our id "2" and Label Studio's task 2 without one
        ([task(1, "Zürich"), task(2, "x"), task(3, "Zürich")], 1, 3),
    ],
)
def test_an_id_twice_is_refused_naming_both_tasks(tasks, first, second, tmp_path):
    path = tasks_file(tmp_path, tasks)
    with pytest.raises(AnnotationImportError, match="already used by") as info:
        import_documents("label-studio", path, tokenize_text)
    assert f"task {second} is already used by {path}: task {first}" in str(info.value)
    assert info.value.line == second + 1  # each task on its own line, after the "["


@pytest.mark.parametrize("bad", [True, [1], {"id": 1}, 1.5])
def test_an_eer_id_that_is_no_id_is_one_error_naming_the_task_and_the_key(bad, tmp_path):
    path = tasks_file(tmp_path, [task(1, "ok"), task(2, bad)])
    with pytest.raises(AnnotationImportError, match=r"document 2: its data\.eer_id must be a string or an integer"):
        import_documents("label-studio", path, tokenize_text)
    assert serve_tasks.complete_ids([task(2, bad)]) == []  # left to the import's error, which names its line


def test_the_backend_names_complete_tasks_as_the_importer_names_their_documents():
    ticked = {"type": "choices", "value": {"choices": ["complete"]}}
    tasks = [task(1, "Zürich-α"), task(2), task(None), task(4, "007")]
    for found in tasks:
        found["annotations"][0]["result"] = [ticked]
    assert serve_tasks.complete_ids(tasks) == ["Zürich-α", "2", "task-2", "007"]


def test_training_names_documents_by_our_ids_and_finds_the_complete_ones(tmp_path):
    """The tasks ``eer-export label-studio`` wrote keep ``data.eer_id`` in Label Studio: the backend's training
    names their documents by it, as ``eer-import label-studio`` does, and the complete task by the same rule (before,
    the complete ids were Label Studio's task numbers, which no document had once the import named them by ours).
    Label Studio and the training are stand-ins: nothing runs."""
    ticked = {"type": "choices", "from_name": "complete", "to_name": "doc", "value": {"choices": ["complete"]}}
    span = {"type": "labels", "value": {"start": 0, "end": 4, "labels": ["PER"]}}
    exported = [
        {"id": 7, "data": {"body": "John Smith met Anna.", "eer_id": "Zürich-α"}, "annotations": [{"result": [span]}]},
        {"id": 8, "data": {"body": "John left.", "eer_id": "007"}, "annotations": [{"result": [span, ticked]}]},
        {"id": 9, "data": {"body": "John stayed."}, "annotations": [{"result": [span, ticked]}]},
    ]
    started = {}

    class Client:
        def project(self, project):
            return {"label_config": LABEL_CONFIG}

        def export(self, project, all_tasks=False):
            return exported

    class Store:
        work_dir = tmp_path

    class Training:
        running, status = False, {}

        def start(self, documents, complete, types, project):
            started.update(documents=documents, complete=complete)
            (tmp_path / "train.log").write_text("")
            return {"version": "eer-v1", "log": str(tmp_path / "train.log")}

    status, body = Backend(Store(), Training(), "http://ls", "key", client=lambda url, key: Client()).train(
        {"project": 1}
    )
    assert status == 201, body
    assert [(d.id, d.is_complete) for d in started["documents"]] == [("Zürich-α", False), ("007", True), ("9", True)]
    assert started["complete"] == 2


# ------------------------------------------------------------------------------------------- CoNLL: # id = lines
ID_TEXT = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(FIXED_IDS + [" d1", '"q"', "a\nb"])


@given(doc_id=ID_TEXT)
@settings(max_examples=300, deadline=None)
def test_an_id_comment_is_one_line_that_reads_back_to_the_id(doc_id):
    line = id_comment(doc_id)
    assert len(line.splitlines()) == 1 and line.startswith("# id = ")
    assert comment_id(line[len("# id =") :], "f", 1) == doc_id


def conll(tmp_path, text, name="out.conll"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", range(3))
def test_documents_read_back_with_the_ids_of_their_id_lines(seed, tmp_path):
    ids = generated_ids(seed) + [" padded ", 'say "hi"', "two\nlines", "x\u2028y"]
    random.Random(seed).shuffle(ids)
    blocks = [f"-DOCSTART- O\n{id_comment(i)}\n\nw{n} O\n.  O\n\nx{n} B-PER\n\n" for n, i in enumerate(ids)]
    blocks.insert(3, "-DOCSTART- O\n\nunnamed O\n\n")  # no id: named by the file and its index
    documents, reading = conll_documents(conll(tmp_path, "".join(blocks)))
    read = [(d.id, d.tokens) for d in documents]
    expected = [(i, [f"w{n}", ".", f"x{n}"]) for n, i in enumerate(ids)]
    assert read == expected[:3] + [("out-03", ["unnamed"])] + expected[3:]
    assert (reading.documents, reading.ids, reading.documents_from) == (len(ids) + 1, len(ids), "docstart")


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("-DOCSTART- O\n# id = a\n\nx O\n\n-DOCSTART- O\n# id = a\n\ny O\n", 7, "document id 'a' already used by the"),
        ("-DOCSTART- O\n# id = out-1\n\nx O\n\n-DOCSTART- O\n\ny O\n", 6, "document id 'out-1' already used by"),
        ("# id = a\n-DOCSTART- O\n\nx O\n", 1, "'# id =' names the document that a -DOCSTART- line opens"),
        ("-DOCSTART- O\n\nx O\n# id = a\ny O\n", 4, "put it after that line, before the document's first token"),
        ("-DOCSTART- O\n# id = a\n\n# id = b\nx O\n", 4, "a second '# id =' line for the document of line 1"),
        ('-DOCSTART- O\n# id = "a\n\nx O\n', 2, "no JSON string"),
        ("-DOCSTART- O\n# id =\n\nx O\n", 2, "'# id =' names no id"),
    ],
)
def test_an_id_line_that_cannot_name_its_document_is_an_error_naming_its_line(text, line, message, tmp_path):
    with pytest.raises(FormatError, match=message) as info:
        read_conll(conll(tmp_path, text))
    assert info.value.line == line


def test_a_hash_token_is_still_a_token_and_four_columns_take_an_id_too(tmp_path):
    (document,) = read_conll(conll(tmp_path, "-DOCSTART- O\n# id = d\n\n# O\n# B-PER\nid O\n"))
    assert (document.id, document.tokens, document.spans) == ("d", ["#", "#", "id"], [(1, 2, "PER")])
    (document,) = read_conll(conll(tmp_path, "-DOCSTART- -X- -X- O\n# id = d 1\n\nEU NNP B-NP B-ORG\n"))
    assert (document.id, document.tokens, document.spans) == ("d 1", ["EU"], [(0, 1, "ORG")])
