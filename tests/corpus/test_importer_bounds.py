"""The importers' work stays bounded on one huge document: a span's words are found by binary search (not a scan
of every word per span), with the words of every span exactly those of the scan; a negative span's clash with an
entity too (the importers' and :meth:`Document.validate`'s check), with the entity of the scan."""

import random

import pytest
from work_counter import lines_run

from eer_plugin.corpus.documents import Document, DocumentError, clashing_span
from eer_plugin.corpus.importers import ImportReport, RawDocument, RawSpan, to_document
from eer_plugin.corpus.importers.offsets import words_of
from eer_plugin.corpus.tokenizer import tokenize_text

ALPHABET = list("ab1.,'- \n") + ["\u00a0"]


def test_binary_search_finds_the_words_of_the_scan():
    """For random texts and character spans, the words by binary search are those of the scan of every word
    (the words a span touches, and those wholly inside it)."""
    rng = random.Random(0)
    compared = 0
    for _ in range(2000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40)))
        _, offsets, _ = tokenize_text(text)
        starts, ends = [a for a, _ in offsets], [b for _, b in offsets]
        for _ in range(5):
            start = rng.randint(0, len(text))
            end = rng.randint(start, len(text))
            for whole in (True, False):
                found = words_of(start, end, starts, ends, True, whole)
                assert list(found) == words_of(start, end, starts, ends, False, whole), (text, start, end)
                compared += 1
    assert compared == 20000


class Counted(int):
    """A character offset that counts the comparisons made with it."""

    count = 0

    def __lt__(self, other):
        Counted.count += 1
        return int(self) < int(other)

    def __le__(self, other):
        Counted.count += 1
        return int(self) <= int(other)

    def __gt__(self, other):
        Counted.count += 1
        return int(self) > int(other)

    def __ge__(self, other):
        Counted.count += 1
        return int(self) >= int(other)


def counting_tokenizer(text):
    words, offsets, ends = tokenize_text(text)
    return words, [(Counted(a), Counted(b)) for a, b in offsets], ends


def comparisons(n):
    """The offset comparisons of importing one document of ``n`` entity spans and ``n`` negative spans."""
    unit = "Paris is nice "
    spans = [RawSpan(i * len(unit), i * len(unit) + 5, "LOC", f"T{i}") for i in range(n)]
    spans += [RawSpan(i * len(unit) + 6, i * len(unit) + 13, None, f"N{i}", negative=True) for i in range(n)]
    Counted.count = 0
    document = to_document(RawDocument("d", unit * n, spans), counting_tokenizer, ImportReport("test"))
    assert len(document.spans) == n and len(document.negative_spans) == n
    return Counted.count


def test_the_work_of_a_span_does_not_grow_with_the_document():
    """Before, every span scanned every word: 2.3 million offset comparisons for 500 spans (1,500 words), 36 million
    for 2,000 (16 times as many); now about 24,000 and 113,000 (binary search: spans x log(words))."""
    small, large = comparisons(500), comparisons(2000)
    assert large < 6 * small
    assert small < 100 * 500


def scanned_clash(negative, spans):
    """The check before: the first entity, in order, that the negative span overlaps or contradicts."""
    start, end = negative[0], negative[1]
    for index, (s, e, label) in enumerate(spans):
        if (start < e and s < end) if len(negative) == 2 else tuple(negative) == (s, e, label):
            return index
    return None


def test_binary_search_finds_the_clash_of_the_scan():
    rng = random.Random(1)
    for _ in range(3000):
        spans, position = [], 0
        while position < 30 and rng.random() < 0.8:
            start = position + rng.randint(0, 3)
            spans.append((start, start + rng.randint(1, 3), rng.choice("AB")))
            position = spans[-1][1]
        ends = [e for _, e, _ in spans]
        for _ in range(10):
            start = rng.randint(0, 32)
            negative = (start, start + rng.randint(1, 4)) + ((rng.choice("AB"),) if rng.random() < 0.5 else ())
            if rng.random() < 0.2 and spans:  # a rejected entity: the same span, the same or another type
                negative = rng.choice(spans)[:2] + (rng.choice("AB"),)
            assert clashing_span(negative, spans, ends) == scanned_clash(negative, spans), (negative, spans)


def annotated(n):
    """A document of ``n`` entities and ``n`` negative spans between them (as spaCy's O runs give)."""
    return Document(
        "d",
        ["w"] * (4 * n),
        [4 * n],
        [(4 * i, 4 * i + 2, "PER") for i in range(n)],
        False,
        [(4 * i + 2, 4 * i + 4) for i in range(n)],
    )


def test_validating_negative_spans_does_not_grow_with_the_entities():
    """Before, each negative span scanned every entity: 190,000 lines run for 300 of each, 2.9 million for 1,200 (8,000
    of each took 3.4 s); now 11,000 and 46,000."""
    small, large = (annotated(n) for n in (300, 1200))
    assert lines_run(large.validate) < 5 * lines_run(small.validate)
    clash = Document("d", ["w"] * 8, [8], [(2, 4, "PER"), (5, 6, "LOC")], False, [(0, 1), (3, 5), (5, 6, "LOC")])
    with pytest.raises(DocumentError, match=r"negative span \(3, 5\) overlaps entity \(2, 4, PER\)"):
        clash.validate()


def test_importing_negative_spans_does_not_grow_with_the_entities():
    """Before, each negative span scanned every entity: 591,000 lines run for 300 of each, 8.8 million for 1,200; now
    54,000 and 217,000."""

    def work(n):
        unit = "Paris is nice "
        spans = [RawSpan(i * len(unit), i * len(unit) + 5, "LOC", f"T{i}") for i in range(n)]
        spans += [RawSpan(i * len(unit) + 6, i * len(unit) + 13, None, f"N{i}", negative=True) for i in range(n)]
        raw = RawDocument("d", unit * n, spans)
        return lines_run(lambda: to_document(raw, tokenize_text, ImportReport("test")))

    work(10)  # the tokenizer's pattern built outside the measurement
    assert work(1200) < 5 * work(300)
