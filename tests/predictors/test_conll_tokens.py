"""``eer-ner predict``'s CoNLL output under generated inputs (the documents of ``test_round_trip_generated.py``, raw
text and pre-split tokens, the tricky tokens of ``test_conll_output_generated.py`` put in): the real predictor (an
untrained tagger whose types hold a space, ``#``, a tag's shape and a ``-``), its JSON and its CoNLL output of the
same input. Every document of the JSON output reads back from the CoNLL output (id, words, sentence ends, spans cut
at sentence ends, types in one word) but one holding a token ``-DOCSTART-``, which is an error record there with
the reason (exit status 1, as for any line that failed), where it was written as ``-DOCSTART- O`` and the whole
output was unreadable (``FormatError: empty document: -DOCSTART- is followed by no tokens``)."""

import json
import random

import pytest
from adversarial_documents import TRICKY, generated, one_word_spans
from test_conll_documents import predict
from test_predict_outputs import run_manager

from eer_plugin.core.tags import biluo_to_spans
from eer_plugin.corpus.formats.columns import DOCSTART, token_problem
from eer_plugin.corpus.formats.conll import conll_documents

TYPES = ("Product Name", "#tag", "B-PER", "x-y_z")


@pytest.fixture(scope="module")
def odd_types_predictor(tmp_path_factory, tiny_encoder):
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor
    from untrained_tagger import build_archive

    archive = build_archive(tmp_path_factory.mktemp("odd-types"), tiny_encoder, types=TYPES)
    return Predictor.from_archive(load_archive(str(archive)), "eer_tagger")


def inputs(seed: int, count: int) -> list:
    """Predict's input lines of ``count`` generated documents, tricky tokens in the pre-split ones, and one
    document whose token ``-DOCSTART-`` opens its second sentence."""
    rng, lines = random.Random(seed), []
    for document in generated(seed, count):
        line = {} if document["id"] is None else {"id": document["id"]}
        if document["raw"] or not document["tokens"]:
            lines.append({**line, "text": document["text"]})
            continue
        tokens = list(document["tokens"])
        for _ in range(rng.choice([1, 2])):
            tokens[rng.randrange(len(tokens))] = rng.choice(TRICKY)
        lines.append({**line, "tokens": tokens, "sentence_ends": document["ends"]})
    lines.append({"id": "docstart", "tokens": ["Anna", ".", DOCSTART, "Paris"], "sentence_ends": [2, 4]})
    return lines


def conll_round_trip(predictor, seed: int, count: int, tmp_path) -> None:
    lines = inputs(seed, count)
    records, path = predict(predictor, lines, tmp_path, name=f"out-{seed}")
    refused = [n for n, r in enumerate(records) if "error" not in r and token_problem(r["tokens"])]
    assert refused and refused[-1] == len(lines) - 1
    text = path.read_text(encoding="utf-8")
    for n in refused:
        assert f"\n# error: line {n + 1}, id {lines[n].get('id')!r}: {token_problem(records[n]['tokens'])}\n" in (
            "\n" + text
        )
    kept = [r for n, r in enumerate(records) if "error" not in r and n not in refused]
    documents, reading = conll_documents(path)
    documents = list(documents)
    named = [d.id for d in documents]
    assert [(d.tokens, d.sentence_ends, sorted(d.spans)) for d in documents] == [
        (r["tokens"], r["sentence_ends"], one_word_spans(biluo_to_spans(r["tags"]), r["sentence_ends"])) for r in kept
    ]
    assert [i for i, r in zip(named, kept) if r["id"] != ""] == [r["id"] for r in kept if r["id"] != ""]
    assert reading.error_records == len(records) - len(kept)
    assert any(" " in t for d in documents for _, _, t in d.spans) is False
    assert run_manager(predictor.__class__(predictor._model, predictor._dataset_reader, output_format="conll"),
                       tmp_path / "in.jsonl", tmp_path / "again.conll") == 1  # fmt: skip


def test_predicted_conll_reads_back_or_is_an_error_record(odd_types_predictor, tmp_path):
    conll_round_trip(odd_types_predictor, 0, 6, tmp_path)


@pytest.mark.integration
def test_seed_sweep(odd_types_predictor, tmp_path):
    for seed in range(1, 9):
        conll_round_trip(odd_types_predictor, seed, 25, tmp_path)


def test_json_output_keeps_a_docstart_token(odd_types_predictor, tmp_path):
    """Only CoNLL cannot hold it: the JSON output tags the document."""
    (tmp_path / "in.jsonl").write_text(json.dumps({"id": "d", "tokens": [DOCSTART, "Anna"]}) + "\n")
    assert run_manager(odd_types_predictor, tmp_path / "in.jsonl", tmp_path / "out.jsonl") == 0
    assert json.loads((tmp_path / "out.jsonl").read_text())["tokens"] == [DOCSTART, "Anna"]
