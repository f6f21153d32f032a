"""``eer-ner predict``'s CoNLL output keeps its documents: each opens with ``-DOCSTART- O`` and, when it has an id,
a ``# id = ...`` line, so that eer-ner's CoNLL reader (what ``train``, ``evaluate`` and ``eer-inspect`` read with)
gives back the same documents: as many, the same words, sentences and ids, the spans of the JSON output cut at
sentence ends. Before, the output had no document boundary and the reader grouped its sentences by ten under new
ids (three documents of 4, 5 and 6 sentences came back as two, of 10 and 5, named ``out-0`` and ``out-1``). Error
records (input lines predict could not tag) are skipped with a warning; two documents of one id are refused, as
every reader refuses them."""

import json
import logging

import pytest
from test_predict_outputs import run_manager

from eer_plugin.core.tags import biluo_to_spans
from eer_plugin.corpus.formats import FormatError, read_conll, read_documents
from eer_plugin.corpus.formats.conll import conll_documents
from eer_plugin.corpus.inspection import inspect_file

#: ids a user gives: unicode, numeric-looking strings and an integer, white space, a line break, quotes, none
IDS = ["Zürich-α", "007", 12, " padded ", 'say "hi"', "two\nlines", None, "人名", "", "3.0", "news/a b.txt"]


def inputs():
    """One document per id, raw text and pre-split tokens in turn, 2 to 5 sentences each (more than ten in all,
    which a reader grouping sentences by ten would merge)."""
    lines = []
    for number, doc_id in enumerate(IDS):
        sentences = 2 + number % 4
        if number % 2:
            line = {"text": " ".join(f"Anna {k} met John Smith in Paris." for k in range(sentences))}
        else:
            tokens = [word for k in range(sentences) for word in ("London", str(k), "is", "big", ".")]
            line = {"tokens": tokens, "sentence_ends": [5 * (k + 1) for k in range(sentences)]}
        if doc_id is not None:
            line["id"] = doc_id
        lines.append(line)
    return lines


def tagger(predictor, output_format):
    return predictor.__class__(predictor._model, predictor._dataset_reader, output_format=output_format)


def predict(predictor, lines, tmp_path, name="out"):
    """The JSON records and the CoNLL output file of ``lines`` (each format from its own run of the manager)."""
    source = tmp_path / "in.jsonl"
    source.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    run_manager(tagger(predictor, "json"), source, tmp_path / f"{name}.jsonl")
    run_manager(tagger(predictor, "conll"), source, tmp_path / f"{name}.conll")
    records = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    return records, tmp_path / f"{name}.conll"


def cut_at_sentence_ends(spans, sentence_ends):
    starts = [0, *sentence_ends[:-1]]
    return [(max(b, s), min(e, t), x) for s, t in zip(starts, sentence_ends) for b, e, x in spans if b < t and e > s]


def test_conll_output_reads_back_to_the_same_documents_and_ids(predictor, tmp_path, caplog):
    records, path = predict(predictor, inputs(), tmp_path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("-DOCSTART- O\n# id = Zürich-α\n\nLondon ") and text.count("-DOCSTART- O\n") == len(IDS)
    assert '\n# id = " padded "\n' in text and '\n# id = "two\\nlines"\n' in text and "\n# id = 12\n" in text
    with caplog.at_level(logging.INFO, logger="eer_plugin.corpus.formats.conll"):
        documents = read_conll(path)
    assert "grouped" not in caplog.text and f"{len(IDS)} documents from -DOCSTART- lines" in caplog.text
    named = [str(i) if i not in (None, "") else f"out-{n:02d}" for n, i in enumerate(IDS)]
    assert [d.id for d in documents] == named
    assert [(d.tokens, d.sentence_ends) for d in documents] == [(r["tokens"], r["sentence_ends"]) for r in records]
    cut = [cut_at_sentence_ends(biluo_to_spans(r["tags"]), r["sentence_ends"]) for r in records]
    assert [d.spans for d in documents] == cut and sum(map(len, cut)) > 0
    # what the dataset reader (train, evaluate) reads, format auto, and eer-inspect's report
    assert [(d.id, d.tokens, d.spans) for d in read_documents(path)] == [(d.id, d.tokens, d.spans) for d in documents]
    report = inspect_file(str(path))
    assert (report["documents"], report["named_documents"], report["documents_from"]) == (len(IDS), 9, "docstart")
    assert report["sentences"] == sum(len(r["sentence_ends"]) for r in records) > 10


def test_error_records_are_skipped_with_a_warning_and_the_documents_read_back(predictor, tmp_path):
    lines = [{"id": "a", "text": "Anna met John."}, '{"id": "broken", "text": ', {"id": "b", "tokens": ["Paris"]}]
    records, path = predict(predictor, lines, tmp_path)
    assert "\n# error: line 2, id None: not JSON" in path.read_text()
    documents, reading = conll_documents(path)
    assert [d.id for d in documents] == [r["id"] for r in records if "error" not in r] == ["a", "b"]
    assert (reading.error_records, reading.first_error_record) == (1, 9)
    assert any("1 error record of eer-ner predict skipped, first on line 9" in m for _, m in reading.log_lines(path))
    assert any("error record" in warning for warning in inspect_file(str(path))["warnings"])


def test_two_documents_of_one_id_are_refused_when_read_back(predictor, tmp_path):
    lines = [{"id": "same", "text": "Anna met John."}, {"id": "x", "text": "Paris."}, {"id": "same", "text": "Rome."}]
    _, path = predict(predictor, lines, tmp_path)
    with pytest.raises(FormatError, match="document id 'same' already used by the document of line 2") as info:
        read_conll(path)
    assert info.value.line == path.read_text().splitlines().index("# id = same", 2) + 1  # the second one
