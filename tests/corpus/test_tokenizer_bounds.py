"""The raw-text tokenizer's work stays bounded on any text: a run without white space longer than
``LONGEST_RUN`` is cut into pieces, and text without such a run is tokenized as if nothing were cut."""

import random
import re

import pytest
from work_counter import peak_memory

import eer_plugin.corpus.tokenizer as tokenizer
from eer_plugin.corpus.tokenizer import tokenize_text

# letters, digits, joiners, sentence ends, an abbreviation's parts, a combining mark, clitics, white space,
# invisible format characters (a soft hyphen, a word joiner, a bidi mark) and the zero-width space
ALPHABET = list("aBc1.,'’-US \n\txé9!?st") + ["\u0301", "\u00a0", "\u2028", "\u00ad", "\u2060", "\u200e", "\u200b"]
INVISIBLE = re.compile("[\u00ad\u2060\u200e\u200b]")


def random_texts(count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        yield "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 60)))


def longest_run(text):
    return max((len(run) for run in re.split(r"\s+", text)), default=0)


@pytest.mark.parametrize("limit", [3, 5, 8, 17])
def test_cutting_at_white_space_changes_nothing(monkeypatch, limit):
    """With a tiny limit the text is cut at many white-space characters; where no run exceeds the limit,
    words, offsets and sentence ends are those of the uncut text."""
    compared = 0
    for text in random_texts(3000, seed=limit):
        if longest_run(text) > limit:
            continue
        monkeypatch.setattr(tokenizer, "LONGEST_RUN", 1 << 30)
        whole = tokenize_text(text)
        monkeypatch.setattr(tokenizer, "LONGEST_RUN", limit)
        assert tokenize_text(text) == whole, text
        compared += 1
    assert compared > 300


@pytest.mark.parametrize("limit", [2, 4, 7])
def test_a_longer_run_is_cut_into_pieces_with_exact_offsets(monkeypatch, limit):
    monkeypatch.setattr(tokenizer, "LONGEST_RUN", limit)
    for text in random_texts(3000, seed=100 + limit):
        words, offsets, ends = tokenize_text(text)
        assert [text[start:end] for start, end in offsets] == words
        assert all(0 < end - start <= limit for start, end in offsets)
        assert all(a[1] <= b[0] for a, b in zip(offsets, offsets[1:]))
        # every visible character outside white space, once; no token starts or ends with an invisible one
        assert INVISIBLE.sub("", "".join(words)) == re.sub(r"\s", "", INVISIBLE.sub("", text))
        assert not any(INVISIBLE.match(word[0]) or INVISIBLE.match(word[-1]) for word in words)
        assert ends == sorted(set(ends)) and (not words or ends[-1] == len(words))


def test_one_huge_token():
    text = "x" * (3 * tokenizer.LONGEST_RUN + 5) + " Paris ."
    words, offsets, _ = tokenize_text(text)
    assert [end - start for start, end in offsets[:4]] == [tokenizer.LONGEST_RUN] * 3 + [5]
    assert words[4:] == ["Paris", "."] and text[offsets[4][0] : offsets[4][1]] == "Paris"


def peak_bytes(text):
    tokenizer.token_pattern()  # built outside the measurement
    return peak_memory(tokenize_text, text)[1]


def test_memory_does_not_grow_with_the_length_of_a_token():
    """A one-million-character token took the pattern ~190 MB (a 10-million-character one, ~2 GB); the peak
    is now bounded by one piece, the same for 1 and 2 million characters."""
    one, two = peak_bytes("a" * 1_000_000), peak_bytes("a" * 2_000_000)
    assert one < 40 * 2**20 and two < 40 * 2**20
    assert two < 1.5 * one
