"""Subword expansion and chunking invariants on long synthetic documents."""

import random

import pytest
from transformers import AutoTokenizer

from eer_plugin.core.tags import biluo_to_spans
from eer_plugin.corpus.documents import Document
from eer_plugin.inference.chunking import LATENT_LABEL, chunk_document


@pytest.fixture(scope="module")
def tokenizer(tiny_encoder):
    return AutoTokenizer.from_pretrained(tiny_encoder, use_fast=True)


def chunker(tokenizer, max_length):
    def tokenize(words):
        enc = tokenizer(words, is_split_into_words=True, add_special_tokens=False)
        pieces = [[] for _ in words]
        for pos, w in enumerate(enc.word_ids()):
            pieces[w].append(enc["input_ids"][pos])
        return pieces

    cls, sep = tokenizer.build_inputs_with_special_tokens([])
    return lambda doc: chunk_document(doc, tokenize, tokenizer.convert_ids_to_tokens, (cls, sep), max_length)


def synthetic_document(seed, sentences=30, long_sentence=False, complete=False):
    rng = random.Random(seed)
    tokens, ends, spans = [], [], []
    for s in range(sentences):
        length = rng.randint(3, 15) if not (long_sentence and s == 3) else 120
        start = len(tokens)
        tokens.extend(
            rng.choice(["alpha", "b", "gamma42", "delta-x", "epsilon", "z", "new", "york"]) for _ in range(length)
        )
        i = start
        while i < len(tokens):
            if rng.random() < 0.15:
                width = rng.randint(1, 4 if not long_sentence else 8)
                end = min(i + width, len(tokens))
                spans.append((i, end, rng.choice(["PER", "LOC"])))
                i = end + 1
            else:
                i += 1
        ends.append(len(tokens))
    return Document(id=f"doc{seed}", tokens=tokens, sentence_ends=ends, spans=spans, is_complete=complete).validate()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_length", [16, 40, 512])
def test_chunks_cover_every_word_once_within_budget(tokenizer, seed, max_length):
    doc = synthetic_document(seed, long_sentence=seed % 2 == 1, complete=seed % 3 == 0)
    chunks = chunker(tokenizer, max_length)(doc)
    covered = []
    for c in chunks:
        assert len(c.subword_ids) <= max_length
        assert c.labels[0] == c.labels[-1] == "O" and len(c.labels) == len(c.subword_ids)
        covered.extend(range(c.word_start, c.word_start + len(c.words)))
        # exact word <-> subword map: re-tokenizing each word gives the mapped pieces
        for w, (s, e) in enumerate(c.word_subwords):
            expected = tokenizer(c.words[w], add_special_tokens=False)["input_ids"]
            assert c.subword_ids[s:e] == expected
        # observed subword tags decode to the chunk's annotated spans (mapped to subwords)
        observed = [t if t != LATENT_LABEL else "O" for t in c.labels]
        subword_spans = biluo_to_spans(observed)
        mapped = [(c.word_subwords[s][0], c.word_subwords[e - 1][1], t) for s, e, t in c.spans]
        assert subword_spans == mapped
        if not doc.is_complete:
            assert all(t == LATENT_LABEL for t, o in zip(c.labels[1:-1], observed[1:-1]) if o == "O")
    assert covered == list(range(len(doc.tokens)))


def test_sentence_boundaries_respected_when_possible(tokenizer):
    doc = synthetic_document(7)
    chunks = chunker(tokenizer, 40)(doc)
    sentence_starts = {0, *doc.sentence_ends}
    sizes = {}
    for c in chunks:
        for w, (s, e) in enumerate(c.word_subwords):
            sizes[c.word_start + w] = e - s
    for c in chunks:
        if c.word_start not in sentence_starts:  # only inside a sentence too long for one chunk
            start, end = next((s, e) for s, e in doc.sentences() if s < c.word_start < e)
            assert sum(sizes[w] for w in range(start, end)) > 38
    assert sum(c.word_start in sentence_starts for c in chunks) > 3


def test_long_sentence_cut_avoids_entities(tokenizer):
    tokens = ["w"] * 30
    doc = Document(id="d", tokens=tokens, sentence_ends=[30], spans=[(8, 12, "PER")]).validate()
    chunks = chunker(tokenizer, 12)(doc)  # 10 subwords per chunk: the cut at 10 would split (8, 12)
    assert [c.word_start for c in chunks][:2] == [0, 8]
    assert any(c.spans == [(0, 4, "PER")] for c in chunks)


@pytest.mark.parametrize("variant", ["short", "shortest"])
def test_raw_reader_variant_keeps_only_the_annotated_documents(tmp_path, variant):
    """Raw/SNS read partial data with ``assume_complete`` (unmarked = O): the short/shortest variant
    must still be chosen from the annotation as given, so they train on the same words as EER.
    (Marking every document complete first made every document 'annotated': Raw-shortest trained
    on the whole corpus, 260 instead of 28 batches per epoch on CoNLL EE-1000.)"""
    from eer_plugin.corpus.formats import write_jsonl
    from eer_plugin.data.reader import PartialDocumentReader

    words = ["Alice", "met", "Bob", ".", "They", "talked", ".", "It", "rained", "."]
    docs = [
        Document("annotated", words, [4, 7, 10], [(0, 1, "PER")]),
        Document("unannotated", words, [4, 7, 10], []),
        Document("checked", words, [4, 7, 10], [], is_complete=True),  # complete, no entity: all O, kept
    ]
    path = tmp_path / "partial.jsonl"
    write_jsonl(docs, path)
    read = {
        complete: PartialDocumentReader(
            model_name="all-MiniLM-L6-v2", variant=variant, assume_complete=complete
        ).read_documents(str(path))
        for complete in (False, True)
    }
    for complete, kept in read.items():
        assert [d.id for d in kept] == ["annotated", "checked"], complete
        assert len(kept[0].tokens) == (4 if variant == "shortest" else 10) and len(kept[1].tokens) == 10
    assert all(d.is_complete for d in read[True]) and [d.is_complete for d in read[False]] == [False, True]
