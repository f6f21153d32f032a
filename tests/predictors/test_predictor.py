"""The ``eer_tagger`` predictor: batched chunks, exact span probabilities, bad input lines, tokenizer.

The model is an untrained tagger on the tiny local encoder, archived without training (random
scores and a large ``o_cost`` give many predicted spans), so these tests need no training run.
"""

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import torch
from conftest import REPO
from untrained_tagger import LABELS, TEXT, build_archive  # noqa: F401  (archive, predictor: fixtures in conftest.py)

from eer_plugin.corpus.tokenizer import tokenize_text


def forced_span_probability(model, emissions, mask, start, end, label):
    """The previous way: ``Z(span forced) / Z``, one constrained forward per span."""
    import copy

    from eer_plugin.core.crf import LATENT, observations_to_allowed
    from eer_plugin.core.tags import spans_to_biluo

    scheme, crf = model.scheme, copy.deepcopy(model.crf).double()  # float64: exact log Z differences
    emissions = emissions.double()
    observations = torch.full(mask.shape, LATENT, dtype=torch.long)
    observations[0, start:end] = torch.tensor(scheme.encode(spans_to_biluo([(0, end - start, label)], end - start)))
    bookends = model.bookends_outside(mask)
    forced = crf.log_partition(emissions, mask, observations_to_allowed(observations, scheme.num_tags) & bookends)
    return float((forced - crf.log_partition(emissions, mask, bookends)).detach().exp().clamp(max=1.0))


def test_span_probabilities_equal_the_per_span_constrained_forward(predictor):
    """Issue 14.1: the probabilities from one forward-backward per batch equal Z(forced)/Z per span."""
    from eer_plugin.core.spans import map_to_words, subword_owners
    from eer_plugin.core.tags import biluo_to_spans

    model, reader = predictor._model, predictor._dataset_reader
    out = predictor.predict_batch_json([{"id": "x", "text": TEXT}, {"id": "y", "text": TEXT[:60]}])[0]
    assert len(out["spans"]) >= 8, out["spans"]
    from eer_plugin.predictors.tagger import parse_input

    doc = parse_input({"text": TEXT})[0]
    chunks = reader.chunk(doc)
    assert len(chunks) > 2
    expected = []
    for chunk in chunks:  # one chunk at a time, the previous predictor's way
        batch = reader.tensorize([reader.chunk_to_instance(chunk, with_labels=False)], model.vocab)
        batch.pop("metadata")
        with torch.no_grad():
            output = model(**batch)
        length = int(output["mask"].sum())
        owners = subword_owners(chunk.word_subwords, length)
        subword_spans = biluo_to_spans(model.scheme.decode(output["predicted_tags"][0, :length].tolist()))
        for index, (first, last, label) in map_to_words(subword_spans, owners):
            start, end, _ = subword_spans[index]
            p = forced_span_probability(model, output["emissions"].detach(), output["mask"], start, end, label)
            expected.append((first + chunk.word_start, last + chunk.word_start, label, p))
    got = [(s["start"], s["end"], s["type"], s["probability"]) for s in out["spans"]]
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    for g, e in zip(got, expected):
        assert g[3] == pytest.approx(e[3], abs=2e-6, rel=1e-5)
    assert len({round(g[3], 6) for g in got}) > 3  # the probabilities are not all alike


def test_batch_prediction_equals_one_document_at_a_time(predictor):
    docs = [
        {"id": "a", "text": TEXT},
        {"id": 7, "tokens": ["Angela", "Merkel", "visited", "Paris", "."], "sentence_ends": [5]},
        {"text": TEXT[40:]},
        {"tokens": ["word"] * 60, "sentence_ends": list(range(10, 61, 10))},
    ]
    single = [predictor.predict_json(d) for d in docs]
    predictor.chunk_batch_size = 3
    try:
        batched = predictor.predict_batch_json(docs)
    finally:
        predictor.chunk_batch_size = None
    assert [b["id"] for b in batched] == ["a", "7", "", ""]
    for one, many in zip(single, batched):
        assert one["tags"] == many["tags"] and one["tokens"] == many["tokens"]
        assert [(s["start"], s["end"], s["type"]) for s in one["spans"]] == [
            (s["start"], s["end"], s["type"]) for s in many["spans"]
        ]
        for a, b in zip(one["spans"], many["spans"]):
            assert a["probability"] == pytest.approx(b["probability"], abs=1e-5)
    assert not predictor._model.track_rho_hat


def test_raw_text_output_offsets(predictor):
    out = predictor.predict_json({"id": "x", "text": TEXT})
    assert out["spans"]
    for span in out["spans"]:
        assert TEXT[span["char_start"] : span["char_end"]] == span["text"]
        assert 0.0 <= span["probability"] <= 1.0
    assert len(out["tags"]) == len(out["tokens"])


BAD_LINES = [
    ('{"id": "b", "text": ""}', "b", '"text" is empty or only white space'),
    ('{"id": "c", "text": "   \\n "}', "c", '"text" is empty or only white space'),
    ("not json", None, "not JSON"),
    ('{"id": "d", "text": 12345}', "d", '"text" must be a string'),
    ('{"id": "e", "tokens": "Merkel"}', "e", '"tokens" must be a list of strings'),
    (
        '{"id": "f", "tokens": ["a", "b", "c", "d"], "sentence_ends": [2.9, 4]}',
        "f",
        '"sentence_ends" must be a list of integers',
    ),
    ('{"id": "g", "tokens": ["a", "b"], "sentence_ends": [1]}', "g", '"sentence_ends" must increase strictly'),
    ('{"id": "h", "tokens": ["a", ""]}', "h", "tokens must be non-empty"),
    (
        '{"id": "i", "tokens": ["a", "b"], "sentence_ends": [true, 2]}',
        "i",
        '"sentence_ends" must be a list of integers',
    ),
    ('["a list"]', None, "expected a JSON object"),
    ('{"id": "j"}', "j", 'needs exactly one of "text"'),
    ('{"id": ["k"], "text": "x"}', None, '"id" must be a string or an integer'),
    ('{"id": "l", "text": "x", "tokens": ["x"]}', "l", 'needs exactly one of "text"'),
    ('{"id": "m", "text": "x y", "sentence_ends": [2]}', "m", '"sentence_ends" goes with "tokens"'),
]


@pytest.mark.parametrize("line,doc_id,reason", BAD_LINES)
def test_a_bad_line_gives_an_error_record(predictor, capsys, line, doc_id, reason):
    data = predictor.load_line(line)
    data["_eer_line"] = 3
    before = len(predictor.failed_lines)
    good, record = predictor.predict_batch_json([{"id": "ok", "text": "John Smith ."}, data])
    assert good["id"] == "ok" and good["tokens"] == ["John", "Smith", "."]
    assert record["line"] == 3 and record["id"] == doc_id and reason in record["error"], record
    assert predictor.failed_lines[before:] == [3]
    assert f"line 3, id {doc_id!r}: " in capsys.readouterr().err
    conll = predictor.__class__(predictor._model, predictor._dataset_reader, output_format="conll")
    assert conll.dump_line(record).startswith(f"# error: line 3, id {doc_id!r}: ")


LONG = 400_000
#: lines whose error record quotes a long value: a key, a word, an id of another type, a text of another type
LONG_LINES = [
    json.dumps({"text": "Paris .", "k" * LONG: 1}),
    json.dumps({"tokens": ["a b" * LONG]}),
    json.dumps({"id": ["x" * LONG], "text": "Paris ."}),
    json.dumps({"text": {"x" * LONG: 1}}),
    json.dumps({"tokens": ["Paris"], "sentence_ends": list(range(1, LONG // 8))}),
]


@pytest.mark.parametrize("line", LONG_LINES, ids=["key", "word", "id", "text", "sentence_ends"])
def test_an_error_record_quoting_a_long_value_stays_one_short_line(predictor, capsys, line):
    """The error record and its stderr line, whatever the input line quotes (before: a 1 MB key twice, in the
    output and on stderr)."""
    from eer_plugin.common.errors import MESSAGE_LIMIT

    data = predictor.load_line(line)
    data["_eer_line"] = 4
    (record,) = predictor.predict_batch_json([data])
    assert record["line"] == 4 and 20 < len(record["error"]) <= MESSAGE_LIMIT + 40, record["error"][:2000]
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and len(err) < MESSAGE_LIMIT + 100 and record["error"] in err, err[:2000]


def test_inputs_that_are_not_objects_and_null_ids(predictor):
    ok, not_object = predictor.predict_batch_json([{"id": None, "tokens": ["Paris"]}, ["Paris"]])
    assert ok["id"] == "" and ok["tokens"] == ["Paris"]
    assert not_object == {"line": None, "id": None, "error": 'expected a JSON object, got ["Paris"]'}


@pytest.mark.integration
def test_allennlp_predict_goes_on_after_bad_lines_and_exits_1(archive, tmp_path):
    """Issue 13.4, through the real command: one record per non-blank line, in order, with the
    line numbers of the file (blank lines counted), messages on stderr, exit status 1."""
    lines = ['{"id": "first", "text": "John Smith visited New York."}'] + [b[0] for b in BAD_LINES[:6]]
    lines.insert(2, "")  # a blank line: skipped, but counted
    lines.append('{"id": "last", "tokens": ["Angela", "Merkel", "visited", "Paris"], "sentence_ends": [2, 4]}')
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    allennlp = Path(sys.executable).parent / "allennlp"
    command = [
        str(allennlp),
        "predict",
        str(archive),
        str(tmp_path / "in.jsonl"),
        "--predictor",
        "eer_tagger",
        "--output-file",
        str(tmp_path / "out.jsonl"),
        "--silent",
        "--batch-size",
        "3",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert result.returncode == 1, result.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["first", "b", "c", None, "d", "e", "f", "last"]
    assert [r.get("line") for r in records] == [None, 2, 4, 5, 6, 7, 8, None]
    assert records[0]["tokens"] == ["John", "Smith", "visited", "New", "York", "."] and "error" not in records[-1]
    assert f"{tmp_path / 'in.jsonl'} line 5, id None: not JSON" in result.stderr
    summary = "6 of 8 input lines of {} failed (lines 2, 4, 5, 6, 7, 8); the other 2 were tagged"
    assert result.stderr.strip().splitlines()[-1] == "allennlp predict: error: " + summary.format(tmp_path / "in.jsonl")


def test_predict_manager_without_bad_lines_returns_normally(predictor, tmp_path):
    from allennlp.commands import predict

    from eer_plugin.predictors.predict_manager import LineReportingPredictManager

    assert predict._PredictManager is LineReportingPredictManager
    (tmp_path / "in.jsonl").write_text('{"text": "John Smith ."}\n\n{"tokens": ["Paris"]}\n')
    manager = predict._PredictManager(
        predictor, str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), 2, False, False
    )
    manager.run()  # no error
    assert [json.loads(line)["tokens"] for line in (tmp_path / "out.jsonl").read_text().splitlines()] == [
        ["John", "Smith", "."],
        ["Paris"],
    ]


# ---------------------------------------------------------------------- tokenizer (issue 13.5)
@pytest.mark.parametrize(
    "text,words",
    [
        (
            unicodedata.normalize("NFD", "José Müller in São Paulo"),
            [unicodedata.normalize("NFD", w) for w in ["José", "Müller", "in", "São", "Paulo"]],
        ),
        ("हिन्दी भाषा में लिखा", ["हिन्दी", "भाषा", "में", "लिखा"]),
        ("ภาษาไทย ง่าย", ["ภาษาไทย", "ง่าย"]),
        ("the U.S. and e.g. U.K. rules", ["the", "U.S.", "and", "e.g.", "U.K.", "rules"]),
        ("rose 3.5 % to 1,000.25 in v1.2", ["rose", "3.5", "%", "to", "1,000.25", "in", "v1.2"]),
        ("It's well-known (x)", ["It", "'s", "well-known", "(", "x", ")"]),  # the clitic split off (CoNLL, PTB)
        ("Ph.D. and F. Scott", ["Ph", ".", "D", ".", "and", "F", ".", "Scott"]),
        ("\u0301a \u0301", ["\u0301", "a", "\u0301"]),  # marks after white space or at the start: own token
    ],
)
def test_tokenizer_keeps_marks_abbreviations_and_decimals(text, words):
    got, offsets, _ = tokenize_text(text)
    assert got == words
    assert [text[a:b] for a, b in offsets] == got


@pytest.mark.parametrize(
    "text,sentences",
    [
        ("He left the U.S. Then he came back.", [["He", "left", "the", "U.S."], ["Then", "he", "came", "back", "."]]),
        (
            "The U.S. economy grew. It was e.g. fine!",
            [["The", "U.S.", "economy", "grew", "."], ["It", "was", "e.g.", "fine", "!"]],
        ),
        (
            "It rose 3.5. Then fell to 2.5. the end",
            [["It", "rose", "3.5", "."], ["Then", "fell", "to", "2.5", ".", "the", "end"]],
        ),
        ("Go! Why? Fine. ok", [["Go", "!"], ["Why", "?"], ["Fine", "."], ["ok"]]),
        ("He lives in the U.S.", [["He", "lives", "in", "the", "U.S."]]),
        ("in the U.S.\n\nNew York", [["in", "the", "U.S."], ["New", "York"]]),
    ],
)
def test_tokenizer_sentence_rule(text, sentences):
    words, _, ends = tokenize_text(text)
    got, start = [], 0
    for end in ends:
        got.append(words[start:end])
        start = end
    assert got == sentences


def test_tokenizer_mark_table_is_every_combining_mark():
    from eer_plugin.corpus.tokenizer import _all_covered, _is_mark

    assert _all_covered(_is_mark)


def test_tokenizer_format_table_is_every_joining_format_character():
    from eer_plugin.corpus.tokenizer import _all_covered, _is_joining_format

    assert _all_covered(_is_joining_format)
    assert _is_joining_format("\u00ad") and _is_joining_format("\U000e0041") and not _is_joining_format("\u200b")


@pytest.mark.parametrize(
    "text,words",
    [
        # inside a word: it stays one word (soft hyphen, word joiner, zero-width joiner and non-joiner, bidi mark)
        ("Brus\u00adsels in Loy\u2060ola", ["Brus\u00adsels", "in", "Loy\u2060ola"]),
        ("Pala\u200dcio Mi\u200c\u200eró", ["Pala\u200dcio", "Mi\u200c\u200eró"]),
        ("Jose\u0301\u00adph 1\u00ad000", ["Jose\u0301\u00adph", "1\u00ad000"]),  # after a mark; between digits
        ("क्\u200dष", ["क्\u200dष"]),  # a conjunct: virama, zero-width joiner, consonant
        # at a word's edge, after punctuation or alone: part of no token
        ("\ufeffThe \u200e\u2066Loyola\u2069\u00ad de\u2060.\u200b \u00ad \u2060", ["The", "Loyola", "de", "."]),
        # the zero-width space separates words, as a space does
        ("Loy\u200bola ภาษา\u200bไทย", ["Loy", "ola", "ภาษา", "ไทย"]),
        ("\u200b\u00ad\u200b", []),
        # the visible format characters (the Arabic number sign, the end of ayah) are punctuation
        ("\u0600١٢٣ \u06dd", ["\u0600", "١٢٣", "\u06dd"]),
    ],
)
def test_tokenizer_never_splits_a_word_at_an_invisible_format_character(text, words):
    got, offsets, ends = tokenize_text(text)
    assert got == words
    assert [text[a:b] for a, b in offsets] == got
    assert ends == ([len(words)] if words else [])


def _cut_at_sentence_ends(spans, sentence_ends):
    starts = [0, *sentence_ends[:-1]]
    return [
        (max(b, s), min(e, t), label) for s, t in zip(starts, sentence_ends) for b, e, label in spans if b < t and e > s
    ]


@pytest.mark.parametrize("scheme", ["BIO", "IOB1", "BIOUL", "BIOES", "IOBES"])
def test_conll_output_in_each_tag_scheme_reads_back_to_the_predicted_spans(scheme, predictor, tmp_path):
    """CoNLL output in the ``tag_scheme`` asked for reads back (eer-ner's own column reader, told the scheme) to the
    spans of the JSON output; an entity across a sentence end comes back as one entity in each sentence."""
    from eer_plugin.core.tags import biluo_to_spans
    from eer_plugin.corpus.formats.conll import read_conll

    conll = predictor.__class__(predictor._model, predictor._dataset_reader, output_format="conll", tag_scheme=scheme)
    out = predictor.predict_json({"id": "d", "text": TEXT})
    across = {  # an entity of a type holding "L-" and "U-" across the first sentence end, then one of a sentence
        "id": "x",
        "tokens": ["New", "York", "City", "Hall", "met", "Paris", "."],
        "sentence_ends": [2, 5, 7],
        "tags": ["B-NATIONAL-UNIT", "I-NATIONAL-UNIT", "L-NATIONAL-UNIT", "O", "O", "U-LOC", "O"],
    }
    for document in (out, across):
        spans = biluo_to_spans(document["tags"])
        assert document is across or len(spans) >= 5
        path = tmp_path / f"{document['id']}.conll"
        path.write_text(conll.dump_line(document))
        (read,) = read_conll(path, encoding=scheme, sentences_per_document=len(document["sentence_ends"]))
        assert read.tokens == document["tokens"] and read.sentence_ends == document["sentence_ends"]
        assert read.spans == _cut_at_sentence_ends(spans, document["sentence_ends"]), path.read_text()
    assert read.spans == [(0, 2, "NATIONAL-UNIT"), (2, 3, "NATIONAL-UNIT"), (5, 6, "LOC")]


@pytest.mark.parametrize(
    "arguments,message",
    [
        (dict(tag_scheme="BIOES"), 'tag_scheme "BIOES" is the tag scheme of CoNLL output: add "output_format"'),
        (dict(output_format="conll", tag_scheme="BMES"), 'tag_scheme "BMES" is not a tag scheme; expected one of IOB1'),
        (dict(output_format="conll", tag_scheme="bio "), 'tag_scheme "bio " is not a tag scheme'),
        (dict(output_format="conll", tag_scheme=3), "tag_scheme 3 is not a tag scheme"),
        (dict(output_format="conll", tag_scheme=["BIO"]), 'tag_scheme ["BIO"] is not a tag scheme'),
    ],
)
def test_a_tag_scheme_that_cannot_be_written_is_refused(arguments, message, predictor):
    from eer_plugin.predictors.tagger import PredictorArgumentError, check_predictor_args

    with pytest.raises(PredictorArgumentError) as refused:
        check_predictor_args(**arguments)
    assert str(refused.value).startswith(message), str(refused.value)
    with pytest.raises(PredictorArgumentError):
        predictor.__class__(predictor._model, predictor._dataset_reader, **arguments)
