"""The importers' work stays bounded on one huge document: a span's words are found by binary search (not a scan
of every word per span), with the words of every span exactly those of the scan."""

import random

import eer_plugin.corpus.importers as importers
from eer_plugin.corpus.importers import ImportReport, RawDocument, RawSpan, to_document
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
                found = importers._words_of(start, end, starts, ends, True, whole)
                assert list(found) == importers._words_of(start, end, starts, ends, False, whole), (text, start, end)
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
