"""Test-only: seeded adversarial documents for the round trips through every writer and reader
(``tests/corpus/test_round_trip_generated.py``, ``tests/corpus/test_conll_output_generated.py``,
``tests/predictors/test_conll_tokens.py``, ``tests/annotation/test_round_trip_dictionary_simulate.py``):
combining marks and decomposed letters, CJK without spaces, emoji with ZWJ, skin tones and flags, right-to-left
text and bidi marks, NBSP and other Unicode spaces, zero-width and other invisible format characters, a byte-order
mark, tabs, ``\\r\\n`` and lone ``\\r``, U+2028/U+2029, words that are only punctuation, entities at the first and
last word, adjacent entities of one type, one-word and empty documents, very long words, types with unusual
characters, ids of every shape; and tokens that a column reader could take for something else."""

import random
from typing import List, Tuple

from eer_plugin.core.tags import one_word_type
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.tokenizer import tokenize_text

WORDS = [
    *("Anna", "Paris", "U.S.", "don't", "Germany's", "3.5", "1,000", "O'Neill", "aujourd'hui", "ﬁne", "Ｆｕｌｌ"),
    *(
        "Jose\u0301",
        "e\u0301cole",
        "Zu\u0308rich",
        "\u0301x",
        "हिन्दी",
        "ภาษาไทย",
        "東京都に住んでいます",
        "北京大学",
        "한국어",
    ),
    *(
        "👩\u200d💻",
        "👍🏽",
        "🇩🇪🇫🇷",
        "❤️",
        "👨\u200d👩\u200d👧",
        "x\u20e3",
        "שלום",
        "مرحبا",
        "\u200fעברית\u200f",
        "\u202bRTL\u202c",
    ),
    *("...", "!?", "—", "«»", "(", ")", ".", "?", "!", "-", "''", "'", "’", "\u0600123"),
    *("Brus\u00adsels", "a\u200db", "x\u2060y", "\ufeffbom", "zw\u200bsp"),
]
#: what stands between two words (or nothing): Unicode spaces, line and paragraph breaks, invisible characters
SEPARATORS = [" "] * 4 + ["  ", "\t", "\n", "\r\n", "\r", "\n\n", "\u00a0", "\u2028", "\u2029", "\u3000", "\u2009"]
SEPARATORS += ["\u200b", "\u0085", "\x0b", "\x0c", "\x1c", "\x1f", " \u200d ", "\u200e", ""]
#: types every format writes and reads back (brat through visual.conf's names); a type named like a tag is warned
TYPES = ["PER", "LOC", "Product Name", "a:b", "人名", "Ünïcode", "B-PER", "x-y_z", "E=mc2", "#tag", "Ö", "a b c"]
IDS = ["Zürich-α", "人名-3", "007", "0", "1e3", "-1", "news/a b", "doc 🙂", " padded ", "a\nb", "x\u2028y", 'q"uote']
IDS += [
    "tab\there",
    "שלום",
    "Jose\u0301",
    "José",
    ".hidden",
    "a.txt",
    "deep/er/path",
    12,
    0,
    "",
    None,
    "/abs",
    "a/../b",
]


def generated(seed: int, count: int) -> List[dict]:
    """``count`` documents: an id (unique as text, or none), a text, its words, their offsets and sentence ends
    (:func:`tokenize_text`, as predict cuts it), spans over the words (first and last word, adjacent ones of one
    type) and whether predict got the raw text (else its words, pre-split)."""
    rng = random.Random(seed)
    documents, used = [], set()
    for number in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.choice([1, 1, 2, 3, 5, 8, 15]))]
        if rng.random() < 0.03:
            words.append("w" * rng.choice([300, 70_000]))  # beyond the tokenizer's longest run: cut in two
        text = rng.choice(["", "", " ", "\n", "\ufeff", "\u200b", "\t"])
        text += "".join(w + rng.choice(SEPARATORS) for w in words[:-1]) + words[-1]
        text += rng.choice(["", "", " ", "\n", "\r\n", "\u2029", "\u200d"])
        if rng.random() < 0.05:
            text = rng.choice([" ", "\u200b\n", "\u00ad"])  # no word: predict's error record
        doc_id = (
            rng.choice(IDS) if rng.random() < 0.5 else "".join(rng.choices("aZ09-_.:#é漢🙂 /", k=rng.randint(1, 8)))
        )
        if doc_id not in (None, "") and str(doc_id) in used:
            doc_id = f"{doc_id}~{number}"
        used.add(str(doc_id))
        tokens, offsets, ends = tokenize_text(text)
        spans, start = [], 0
        while start < len(tokens):
            if rng.random() < 0.35:
                end = min(len(tokens), start + rng.choice([1, 1, 2, 3]))
                spans.append((start, end, rng.choice(TYPES)))
                start = end  # the next may start right here: adjacent entities
            else:
                start += 1
        raw = rng.random() < 0.8
        documents.append(dict(id=doc_id, text=text, tokens=tokens, offsets=offsets, ends=ends, spans=spans, raw=raw))
    return documents


def documents_of(seed: int, count: int) -> List[Document]:
    """Generated training documents: partial or complete, negative spans (plain and typed) on words outside the
    entities, the raw text kept or not."""
    rng, documents = random.Random(seed), []
    for number, d in enumerate(generated(seed, count)):
        if not d["tokens"]:
            continue
        inside = {i for s, e, _ in d["spans"] for i in range(s, e)}
        free = [i for i in range(len(d["tokens"])) if i not in inside]
        negatives = [
            (i, i + 1) + ((rng.choice(TYPES),) if rng.random() < 0.4 else ()) for i in free if rng.random() < 0.3
        ]
        doc_id = str(d["id"]) if d["id"] not in (None, "") else f"unnamed-{number}"
        text = d["text"] if d["raw"] else None
        documents.append(Document(doc_id, d["tokens"], d["ends"], d["spans"], rng.random() < 0.3, negatives, text=text))
    return documents


#: pre-split tokens that a column reader could take for something other than a token, or that sit at a sentence
#: start: ``-DOCSTART-`` (which CoNLL cannot hold), comment-like, tag-like, invisible characters
TRICKY = ["-DOCSTART-", "#", "##", "#id", "#tag", "-DOCSTART-x", "-docstart-", "\ufeff", "\ufeff#", "\u200b#"]
TRICKY += ["O", "B-PER", "I-", '"', "=", "id", "error:", "\ufffd", "-X-", "--", "#\u200b", "\u2060"]


def one_word_spans(spans, ends) -> List[Tuple[int, int, str]]:
    """The spans cut at the sentence ends, their types in one word: what a CoNLL file says of them."""
    starts = [0, *ends[:-1]]
    return sorted(
        (max(b, s), min(e, t), one_word_type(x)) for s, t in zip(starts, ends) for b, e, x in spans if b < t and e > s
    )
