"""The Python API (``from eer_plugin import Tagger``): the predictor's output for strings, token lists
and lazy batched streams, and one clear error for each kind of bad input. The model is the untrained
tagger of test_predictor.py (random scores, many spans), so no training runs here."""

import collections
import re
import subprocess
import sys

import pytest
from conftest import REPO
from untrained_tagger import TEXT

from eer_plugin import api
from eer_plugin.api import TaggerInputError


@pytest.fixture(scope="module")
def tagger(archive):  # noqa: F811
    from eer_plugin import Tagger

    return Tagger.load(archive)


def same_output(got: dict, expected: dict) -> None:
    """Equal predictor outputs: every field exactly, the probabilities to float precision."""
    assert {k: v for k, v in got.items() if k != "spans"} == {k: v for k, v in expected.items() if k != "spans"}
    strip = lambda spans: [{k: v for k, v in s.items() if k != "probability"} for s in spans]  # noqa: E731
    assert strip(got["spans"]) == strip(expected["spans"])
    assert [s["probability"] for s in got["spans"]] == pytest.approx(
        [s["probability"] for s in expected["spans"]], abs=1e-6
    )


def test_the_package_exports_the_tagger_lazily():
    import eer_plugin
    from eer_plugin import api

    assert eer_plugin.Tagger is api.Tagger and eer_plugin.TaggerInputError is TaggerInputError
    with pytest.raises(AttributeError, match="no attribute 'Tager'"):
        eer_plugin.Tager  # noqa: B018


def test_a_string_is_tagged_as_predict_tags_raw_text(tagger, predictor):  # noqa: F811
    got = tagger(TEXT)
    same_output(got, predictor.predict_json({"text": TEXT}))
    assert got["text"] == TEXT and len(got["spans"]) >= 8
    for span in got["spans"]:
        assert TEXT[span["char_start"] : span["char_end"]] == span["text"]
        assert set(span) == {"type", "start", "end", "text", "char_start", "char_end", "probability"}
        assert span["type"] in tagger.entity_types and 0.0 < span["probability"] <= 1.0


def test_a_token_list_is_one_document_of_those_words(tagger, predictor):  # noqa: F811
    tokens = ["Angela", "Merkel", "visited", "New", "York", "."]
    got = tagger(tokens)
    same_output(got, predictor.predict_json({"tokens": tokens}))
    assert got["tokens"] == tokens and got["sentence_ends"] == [6] and "text" not in got
    assert all("char_start" not in s and s["text"] == " ".join(tokens[s["start"] : s["end"]]) for s in got["spans"])
    assert tagger(tuple(tokens)) == got


def test_a_predict_input_dict_keeps_its_id_and_sentences(tagger):
    got = tagger({"id": "d7", "tokens": ["John", "Smith", ".", "He", "left", "."], "sentence_ends": [3, 6]})
    assert got["id"] == "d7" and got["sentence_ends"] == [3, 6]


def test_text_is_normalised_one_for_one_like_predict_input(tagger):
    text = "John\x07Smith visited \ud800London."
    got = tagger(text)
    assert got["text"] == "John\ufffdSmith visited \ufffdLondon." and len(got["text"]) == len(text)


def test_pipe_is_a_lazy_stream_batched_across_documents(tagger, predictor):  # noqa: F811
    documents = [
        TEXT[:60],
        ["John", "Smith", "left", "."],
        TEXT[60:110],
        {"id": 3, "text": "Paris and Berlin."},
        TEXT[:30],
    ]
    pulled = []

    def source():
        for document in documents:
            pulled.append(document)
            yield document

    calls = []  # documents per model call
    original = api.tag_documents
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            api, "tag_documents", lambda parsed, size, tag: calls.append(len(parsed)) or original(parsed, size, tag)
        )
        stream = tagger.pipe(source(), batch_size=2)
        assert pulled == []  # nothing is read before the first result is asked for
        first = next(stream)
        assert len(pulled) == 2 and calls == [2]
        results = [first, *stream]
    assert calls == [2, 2, 1] and len(results) == len(documents)
    for document, result in zip(documents, results):
        same_output(result, tagger(document))
    assert results[3]["id"] == "3"


BAD_DOCUMENTS = [
    (None, "document: expected a string (raw text), a list of token strings, or a dict"),
    (42, "got int 42"),
    (b"bytes", "got bytes"),
    ("", '"text" is empty or only white space'),
    ("  \n ", '"text" is empty or only white space'),
    ("\u200b \u00ad\ufeff", '"text" holds no word: only white space and invisible format characters'),
    ([], '"tokens" is empty'),
    (["New York"], "tokens must be non-empty, without white space"),
    (["New", "\u00a0", "York"], '"tokens"[1] is "\\u00a0": tokens must be non-empty'),  # a no-break space, shown
    (["New\u200bYork", "\t"], '"tokens"[1] is "\\t"'),
    (["ok", 3], '"tokens" must be a list of strings'),
    ({"txt": "typo"}, "unknown key(s) 'txt' (did you mean 'text'?)"),
    ({"tokens": ["a", "b"], "sentence_end": [1, 2]}, "unknown key(s) 'sentence_end' (did you mean 'sentence_ends'?)"),
    ({}, 'needs exactly one of "text"'),
]


PIPE_HINT = "; a list is the tokens of one document: tag several documents with tagger.pipe(documents)"


@pytest.mark.parametrize(
    "documents",
    [["Paris is nice.", "Berlin too."], [{"text": "Paris is nice."}, "Berlin."], ["Paris", {"text": "x"}], [["a"]]],
)
def test_several_documents_given_as_one_name_pipe(tagger, documents):
    """tagger([...]) of texts or dicts (meant as several documents) says how to tag several; pipe() tags them."""
    with pytest.raises(TaggerInputError) as raised:
        tagger(documents)
    assert str(raised.value).startswith("document: ") and str(raised.value).endswith(PIPE_HINT)
    if all(isinstance(d, (str, dict)) for d in documents):
        assert len(list(tagger.pipe(documents))) == len(documents)


@pytest.mark.parametrize("tokens", [["ok", ""], ["ok", 3], ["ok", None]])
def test_a_bad_token_list_has_no_pipe_hint(tagger, tokens):
    with pytest.raises(TaggerInputError) as raised:
        tagger(tokens)
    assert PIPE_HINT not in str(raised.value)


@pytest.mark.parametrize("document, message", BAD_DOCUMENTS)
def test_a_bad_document_is_one_clear_error(tagger, document, message):
    with pytest.raises(TaggerInputError, match=re.escape(message)):
        tagger(document)


class _Series:
    """A pandas-like column: iterable and sized, but no list."""

    def __init__(self, values):
        self.values = list(values)

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)


ITERABLE_HINT = ": tag several documents with tagger.pipe(documents), or give one document's tokens as a list"


@pytest.mark.parametrize(
    "make",
    [
        lambda texts: (text for text in texts),
        lambda texts: _Series(texts),
        lambda texts: iter(texts),
        lambda texts: set(texts),
        lambda texts: collections.deque(texts),
        lambda texts: dict.fromkeys(texts).keys(),
        lambda texts: map(str, texts),
    ],
)
def test_an_iterable_given_as_one_document_names_pipe_and_pipe_tags_it(tagger, make):
    texts = ["Paris is nice.", "John Smith left."]
    with pytest.raises(TaggerInputError) as raised:
        tagger(make(texts))
    message = str(raised.value)
    assert message.startswith("document: expected a string") and "\n" not in message
    assert message.endswith(ITERABLE_HINT + " (list(tokens))")
    tagged = list(tagger.pipe(make(texts)))
    assert len(tagged) == 2 and {t["text"] for t in tagged} == set(texts)


@pytest.mark.parametrize("data", [b"John Smith left.", bytearray(b"John"), memoryview(b"John")])
def test_bytes_say_to_decode_them(tagger, data):
    with pytest.raises(TaggerInputError, match=r'got \w+ .*; decode it to a string first \(data.decode\("utf-8"\)\)$'):
        tagger(data)
    with pytest.raises(TaggerInputError, match="document 0 of the stream: .*decode it"):
        list(tagger.pipe([data]))


def test_a_bad_document_in_a_stream_is_named_by_its_position(tagger):
    stream = tagger.pipe(["John left.", "Paris.", None], batch_size=2)
    assert len(list(next(stream)["tokens"])) == 3
    next(stream)
    with pytest.raises(TaggerInputError, match="document 2 of the stream: expected a string"):
        next(stream)


@pytest.mark.parametrize(
    "documents, batch_size, message",
    [
        ("one text", 8, "pipe\\(\\) takes an iterable of documents, got str"),
        (None, 8, "pipe\\(\\) takes an iterable of documents, got NoneType"),
        (7, 8, "pipe\\(\\) takes an iterable of documents, got int 7"),
        (["x"], 0, "batch_size must be an integer of at least 1, got int 0"),
        (["x"], True, "batch_size must be an integer of at least 1, got bool"),
    ],
)
def test_bad_pipe_arguments_fail_at_the_call(tagger, documents, batch_size, message):
    with pytest.raises(TaggerInputError, match=message):
        tagger.pipe(documents, batch_size=batch_size)


def test_rank_orders_documents_by_their_expected_uncertain_entity_tags(tagger, predictor):  # noqa: F811
    """rank(): every document once, most uncertain first; each score is the sum over the document's words of
    min(p, 1 - p), p = 1 - the CRF marginal of O at the word's first subword (computed here from the model's marginals)."""
    import torch

    from eer_plugin.inference.decoding import tensorize_chunks
    from eer_plugin.inference.documents import parse_input

    documents = [
        TEXT[:60],
        ["John", "Smith", "left", "."],
        TEXT,
        {"id": "paris", "text": "Paris and Berlin."},
        TEXT[60:110],
    ]
    ranked = tagger.rank(documents, batch_size=2)
    assert sorted(row["index"] for row in ranked) == list(range(len(documents)))
    assert [row["uncertain_tags"] for row in ranked] == sorted((row["uncertain_tags"] for row in ranked), reverse=True)
    model, reader = predictor._model, predictor._dataset_reader
    for row in ranked:
        document = documents[row["index"]]
        doc = parse_input(
            document
            if isinstance(document, dict)
            else {"tokens": document}
            if isinstance(document, list)
            else {"text": document}
        )[0]
        assert row["words"] == len(doc.tokens) and row["id"] == doc.id
        expected = 0.0
        for chunk in reader.chunk(doc):
            with torch.no_grad():
                batch = tensorize_chunks(model, reader, [chunk])
                emissions, mask = model.scores(batch["tokens"])
                outside = model.crf.marginals(emissions, mask, model.bookends_outside(mask))[
                    0, :, model.scheme.outside_index
                ]
            expected += sum(min(1 - float(outside[first]), float(outside[first])) for first, _ in chunk.word_subwords)
        assert row["uncertain_tags"] == pytest.approx(expected, abs=1e-6)
        assert 0 <= row["uncertain_tags"] <= row["words"] / 2
    assert ranked[0]["uncertain_tags"] > ranked[-1]["uncertain_tags"] >= 0  # the documents differ
    with pytest.raises(TaggerInputError, match="rank\\(\\) takes an iterable of documents"):
        tagger.rank("one text")


def test_a_missing_model_is_an_archive_error(tmp_path):
    from eer_plugin import Tagger
    from eer_plugin.common.errors import ArchiveError

    with pytest.raises(ArchiveError, match="no-model.tar.gz: no such file"):
        Tagger.load(tmp_path / "no-model.tar.gz")


@pytest.mark.integration
def test_the_api_imports_without_allennlp():
    """``from eer_plugin import Tagger`` where importing AllenNLP fails (the AllenNLP-free path's start)."""
    code = (
        "import sys; sys.modules['allennlp'] = None\n"
        "from eer_plugin import Tagger, TaggerInputError\n"
        "try:\n    Tagger.__call__(Tagger(None), None)\nexcept TaggerInputError as error:\n    print(error)\n"
        "print(sorted(m for m in sys.modules if m.startswith('allennlp') and sys.modules[m] is not None))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "document: expected a string (raw text), a list of token strings, or a dict like a "
        'predict input line ({"text": ...} or {"tokens": [...]}), got NoneType None',
        "[]",
    ]


@pytest.mark.parametrize(
    "path, options, message",
    [
        (None, {}, "expected the path of a model .*got NoneType None"),
        (5, {}, "expected the path of a model .*got int 5"),
        ("", {}, "expected the path of a model .*got str ''"),
        ("model.tar.gz", {"cuda_device": "0"}, "cuda_device must be an integer \\(-1: the CPU\\), got str '0'"),
    ],
)
def test_a_path_or_device_of_the_wrong_type_is_one_clear_error(path, options, message):
    from eer_plugin import Tagger

    with pytest.raises(TypeError, match=f"^Tagger.load: {message}"):
        Tagger.load(path, **options)


@pytest.mark.parametrize("precision", ["int4", "FP32", "", 8, True, ["int8"]])
def test_a_precision_the_tagger_lacks_is_one_clear_error_before_anything_loads(archive, tmp_path, precision):
    """The same line for a model archive, an exported model and a path that is no model (nothing is loaded)."""
    from eer_plugin import Tagger
    from eer_plugin.models.export import export_model

    export_model(archive, tmp_path / "export")
    for path in (archive, tmp_path / "export", tmp_path / "no-model.tar.gz"):
        with pytest.raises(ValueError) as raised:
            Tagger.load(path, precision=precision)
        assert str(raised.value) == (
            "Tagger.load: precision must be one of fp32, bf16, auto, int8 (fp32: float32; bf16: bfloat16; auto: bf16 "
            f"where native, else fp32; int8: quantized, CPU only), or null (the model's own), got {precision!r}"
        )  # the one line of every entry point (tests/inference/test_tagging_precision.py)
