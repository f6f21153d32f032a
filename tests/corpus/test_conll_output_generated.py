"""What ``eer-ner predict``'s CoNLL output can hold, under generated documents: the seeded adversarial documents of
``test_round_trip_generated.py`` (ids of every shape, Unicode spaces and line breaks, invisible characters, odd
types) and pre-split tokens that a column reader could take for something else (``-DOCSTART-``, ``#``, ``#id``,
tags, a byte-order mark, ``=``), each document written as predict writes it (``columns.document_lines``; its input
rule ``columns.token_problem``) and read back by eer-ner's CoNLL reader. Every document reads back (the same ids,
words, sentence ends and spans cut at sentence ends, types in one word) or is an error record with a one-line
reason, which the reader skips and counts.

Before: a pre-split input holding the token ``-DOCSTART-`` was written as a token line ``-DOCSTART- O`` that every
reader takes for the start of a document, so the output read back as ``FormatError: empty document: -DOCSTART- is
followed by no tokens`` (one token of the document had been split off), or, in the middle of a document, as two
documents, the second without the id. Now such a document is predict's error record in CoNLL output (its JSON
output holds it), and the writer refuses to write it. The predictor itself: ``tests/predictors/test_conll_tokens.py``.
"""

import random
from pathlib import Path
from typing import Tuple

import pytest
from adversarial_documents import TRICKY, TYPES, generated, one_word_spans

from eer_plugin.core.tags import one_word_type
from eer_plugin.corpus.formats import read_documents
from eer_plugin.corpus.formats.columns import DOCSTART, document_lines, error_record, token_problem
from eer_plugin.corpus.formats.conll import conll_documents

SCHEMES = ["BIO", "IOB1", "BIOUL", "BIOES"]


def written(seed: int, count: int, path: Path) -> Tuple[list, list]:
    """``count`` generated documents written as predict's CoNLL output to ``path``: ``(the documents expected back
    as (id, tokens, sentence ends, spans), the error records' reasons)``. Pre-split documents get tricky tokens,
    often at a sentence start; then one document per tricky token, at both sentences' starts."""
    rng = random.Random(seed)
    scheme = rng.choice(SCHEMES)
    types = {t: one_word_type(t) for t in TYPES}
    parts, expected, reasons = [], [], []
    documents = generated(seed, count)
    for number, token in enumerate(TRICKY):
        tokens, spans = [token, "Anna", token, "Paris"], [(0, 2, rng.choice(TYPES)), (3, 4, rng.choice(TYPES))]
        documents.append(dict(id=f"tricky-{number}", tokens=tokens, ends=[2, 4], spans=spans, raw=False))
    for line, document in enumerate(documents, start=1):
        tokens, ends, spans = list(document["tokens"]), list(document["ends"]), document["spans"]
        if not document["raw"] and tokens and line <= count:
            for _ in range(rng.choice([1, 2, 3])):
                starts = [0, *ends[:-1]]
                tokens[rng.choice(starts) if rng.random() < 0.5 else rng.randrange(len(tokens))] = rng.choice(TRICKY)
        problem = token_problem(tokens) if tokens else '"text" holds no word'
        if problem:  # predict's error record
            if tokens:
                with pytest.raises(ValueError, match="CoNLL output cannot hold"):
                    document_lines(document["id"], tokens, ends, spans, scheme, types)
            parts.append(error_record(line, document["id"], problem))
            reasons.append(problem)
            continue
        parts.append(document_lines(document["id"], tokens, ends, spans, scheme, types))
        expected.append((document["id"], tokens, ends, one_word_spans(spans, ends)))
    path.write_text("".join(parts), encoding="utf-8")
    width = len(str(len(expected) - 1))
    named = [
        (str(i) if i not in (None, "") else f"{path.stem}-{n:0{width}d}", t, e, s)
        for n, (i, t, e, s) in enumerate(expected)
    ]
    return named, reasons


@pytest.mark.parametrize("seed", range(4))
def test_every_written_document_reads_back_or_is_an_error_record(seed, tmp_path):
    path = tmp_path / "tagged.conll"
    expected, reasons = written(seed, 25, path)
    documents, reading = conll_documents(path)
    got = [(d.id, d.tokens, d.sentence_ends, sorted(d.spans)) for d in documents]
    assert got == expected
    assert reading.error_records == len(reasons) and reading.documents == len(expected)
    assert all(len(r.splitlines()) == 1 for r in reasons)
    # what train / evaluate / eer-inspect read (format auto)
    assert [(d.id, d.tokens, d.sentence_ends) for d in read_documents(path)] == [row[:3] for row in expected]


def test_the_sweep_meets_every_case(tmp_path):
    """The seeds above write every tricky token but ``-DOCSTART-`` (at sentence starts too), and refuse it
    in the one document of it that each seed adds."""
    tokens, refused = set(), 0
    for seed in range(4):
        expected, reasons = written(seed, 25, tmp_path / f"s{seed}.conll")
        tokens |= {t for _, words, _, _ in expected for t in words}
        refused += sum(DOCSTART in r for r in reasons)
    assert set(TRICKY) - tokens == {DOCSTART} and refused >= 4


@pytest.mark.parametrize("where", [0, 1, 3])
def test_a_docstart_token_is_refused_wherever_it_stands(where):
    tokens = ["Anna", "met", "Bob", "today"]
    tokens[where] = DOCSTART
    assert token_problem(tokens).startswith(f'"tokens"[{where}] is {DOCSTART!r}, which CoNLL output cannot hold')
    with pytest.raises(ValueError, match="another spelling"):
        document_lines("d", tokens, [4], [], "BIO")


@pytest.mark.parametrize("bad", ["", "a b", "a\tb", "a\u2028b", "a\u00a0b", "\u3000"])
def test_a_token_that_is_no_column_is_refused(bad):
    assert "one column" in token_problem(["Anna", bad])


@pytest.mark.parametrize("reason", ["a\nb", "a\r\nb", "x\u2028y", "x\x85y", "x\x0by\x1cz", "end\n"])
def test_an_error_record_is_one_comment_line_whatever_its_reason(reason, tmp_path):
    path = tmp_path / "out.conll"
    path.write_text(error_record(3, "a\nb", reason) + document_lines("d", ["Anna"], [1], [], "BIO"), encoding="utf-8")
    documents, reading = conll_documents(path)
    assert [d.id for d in documents] == ["d"] and reading.error_records == 1
    assert path.read_text(encoding="utf-8").splitlines()[0].startswith("# error: line 3, id 'a\\nb': ")
