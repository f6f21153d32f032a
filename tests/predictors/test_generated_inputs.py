"""Bad input is a class, not a list: generated batches of predict input lines, good and bad mixed, through the
predictor (``eer-ner predict``'s ``predict_batch_json``) and the Python API.

* a good line's document is the same whether it is tagged beside bad lines or with the good lines alone;
* a bad line is an error record naming its line, in its place;
* every span is exact: its ``text`` is the (normalised, one for one) input text at ``char_start:char_end``, the
  spans are in order, do not overlap, lie within the text and the words, have the model's types and finite
  probabilities in [0, 1], for texts of any characters (combining marks, zero-width and bidirectional format
  characters, no-break and other Unicode spaces, line and paragraph separators, emoji with modifiers, CJK without
  spaces, lone surrogates, NUL and other control characters, U+FEFF, U+FFFD) and longer than one chunk."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from untrained_tagger import LABELS

from eer_plugin.corpus.text import normalise
from eer_plugin.corpus.tokenizer import tokenize_text

TYPES = {label[2:] for label in LABELS if label != "O"}
#: pieces of text: words, punctuation, and characters tokenizers treat specially
PIECES = [
    "John", "Smith", "London", "U.S.", "3.5", "don't", ".", "!", ",", "(", " ", "  ", "\t", "\n", "\r\n",
    "\u00a0", "\u2028", "\u2029", "\u0085", "\u3000", "\u200b", "\u200c", "\u200d", "\ufeff", "\u200e", "\u200f",
    "\u202e", "\u0301", "e\u0301", "\u0308\u0308", "\ufffd", "\x00", "\x07", "\x7f", "\ud800", "\udfff",
    "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1ec\U0001f1e7", "约翰访问了伦敦。",
    "हिन्दी", "\U0001d50d", "\ue000", "x" * 300,
]  # fmt: skip
TEXTS = st.lists(st.sampled_from(PIECES), min_size=1, max_size=60).map("".join)
#: lines that are no input document, each a class of its own
BAD_LINES = st.one_of(
    st.sampled_from(["[1, 2]", '"text"', "3", "null", "{}", '{"id": "x"}', '{"text": "a", "text": "b"}', "{"]),
    st.one_of(st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2), st.booleans()).map(
        lambda value: json.dumps({"text": value})
    ),
    st.text(st.sampled_from(" \t\n\u00a0\u2028\u3000"), max_size=5).map(lambda t: json.dumps({"text": t})),
    st.lists(st.sampled_from(["", "a b", "a\u00a0b", "a\u2028b", "ok"]), min_size=1, max_size=3)
    .filter(lambda tokens: tokens != ["ok"] * len(tokens))
    .map(lambda tokens: json.dumps({"tokens": tokens})),
    st.sampled_from([[], [0, 1], [1.0], [True], [2, 1]]).map(
        lambda ends: json.dumps({"tokens": ["a"], "sentence_ends": ends})
    ),
)
GOOD_LINES = st.one_of(
    TEXTS.filter(lambda t: tokenize_text(normalise(t))[0]).map(lambda t: json.dumps({"id": "t", "text": t})),
    st.lists(st.sampled_from(["John", "\u200b", "\ufeff", "\u0301", "\ufffd", "."]), min_size=1, max_size=30).map(
        lambda tokens: json.dumps({"id": 1, "tokens": tokens})
    ),
)


def assert_exact(output: dict, text) -> None:
    """The output's spans are exact, ordered, disjoint, within bounds, of the model's types, with finite probabilities."""
    words, previous_end, previous_char = len(output["tokens"]), 0, 0
    assert len(output["tags"]) == words and output["sentence_ends"][-1] == words
    for span in output["spans"]:
        assert span["type"] in TYPES and previous_end <= span["start"] < span["end"] <= words
        assert math.isfinite(span["probability"]) and 0.0 <= span["probability"] <= 1.0
        previous_end = span["end"]
        if text is not None:
            assert previous_char <= span["char_start"] < span["char_end"] <= len(text)
            assert span["text"] == output["text"][span["char_start"] : span["char_end"]] == span["text"].strip()
            previous_char = span["char_end"]
    if text is not None:
        assert output["text"] == normalise(text) and len(output["text"]) == len(text)


def same_document(one: dict, other: dict) -> bool:
    """Equal outputs, the probabilities up to float32 rounding (padding in a batch changes the encoder's rounding)."""
    probabilities = [(a["probability"], b["probability"]) for a, b in zip(one["spans"], other["spans"])]
    unscored = [[{**span, "probability": 0.0} for span in output["spans"]] for output in (one, other)]
    return {**one, "spans": unscored[0]} == {**other, "spans": unscored[1]} and all(
        a == pytest.approx(b, abs=1e-5) for a, b in probabilities
    )


@given(lines=st.lists(st.tuples(st.booleans(), GOOD_LINES, BAD_LINES), min_size=1, max_size=6))
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_a_generated_batch_tags_its_good_lines_as_alone_and_names_its_bad_lines(lines, predictor):
    chosen = [(good, line if good else bad) for good, line, bad in lines]
    loaded = []
    for number, (_, line) in enumerate(chosen, 1):
        data = predictor.load_line(line)
        data["_eer_line"] = number
        loaded.append(data)
    mixed = predictor.predict_batch_json(loaded)
    alone = predictor.predict_batch_json([data for (good, _), data in zip(chosen, loaded) if good])
    alone_outputs = iter(alone)
    for number, ((good, line), output) in enumerate(zip(chosen, mixed), 1):
        if good:
            assert "error" not in output, (line, output)
            assert_exact(output, json.loads(line).get("text"))
            assert same_document(output, next(alone_outputs))
        else:
            assert output["line"] == number and isinstance(output["error"], str) and "\n" not in output["error"]


@given(texts=st.lists(TEXTS.filter(lambda t: tokenize_text(normalise(t))[0]), min_size=1, max_size=4))
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_tags_generated_texts_exactly_one_by_one_and_batched(texts, tagger):
    batched = list(tagger.pipe(texts, batch_size=3))
    for text, output in zip(texts, batched):
        assert_exact(output, text)
        assert same_document(output, tagger(text))


@pytest.fixture(scope="module")
def tagger(archive):
    from eer_plugin.api import Tagger

    return Tagger.load(archive)


def test_an_error_of_many_lines_is_one_line_of_conll_output(predictor, monkeypatch):
    def failing(chunks):
        raise RuntimeError("first line\nsecond line\n\tthird")

    monkeypatch.setattr(predictor, "tag_chunks", failing)
    monkeypatch.setattr(predictor, "output_format", "conll")
    record = predictor.predict_batch_json([{"text": "John left.", "_eer_line": 3}])[0]
    assert record["error"] == "tagging failed: RuntimeError: first line second line third"
    assert predictor.dump_line(record) == f"# error: line 3, id None: {record['error']}\n\n"
