import itertools

import pytest
import torch

from eer_plugin.core.tags import (
    BiluoScheme,
    TagSequenceError,
    biluo_to_spans,
    detect_encoding,
    normalize_encoding,
    spans_to_biluo,
    spans_to_tags,
    tags_to_spans,
    to_biluo,
)


def test_scheme_layout():
    scheme = BiluoScheme(["PER", "LOC"])
    assert scheme.labels == ["O", "B-PER", "I-PER", "L-PER", "U-PER", "B-LOC", "I-LOC", "L-LOC", "U-LOC"]
    assert scheme.num_tags == 9 and scheme.outside_index == 0
    assert BiluoScheme.from_labels(scheme.labels).labels == scheme.labels
    assert scheme.entity_mask().tolist() == [False] + [True] * 8
    with pytest.raises(ValueError):
        BiluoScheme.from_labels(["O", "I-PER", "B-PER", "L-PER", "U-PER"])


def test_transition_matrix_matches_grammar():
    scheme = BiluoScheme(["PER", "LOC"])
    allowed = scheme.allowed_transitions()
    # exhaustive: a pair is allowed iff some valid sequence contains it
    seen = torch.zeros_like(allowed)
    for seq in itertools.product(scheme.labels, repeat=4):
        if scheme.is_valid(list(seq)):
            for a, b in zip(seq, seq[1:]):
                seen[scheme.index[a], scheme.index[b]] = True
    assert torch.equal(seen, allowed)
    assert allowed[scheme.index["B-PER"], scheme.index["L-PER"]]
    assert not allowed[scheme.index["B-PER"], scheme.index["L-LOC"]]
    assert not allowed[scheme.index["O"], scheme.index["I-PER"]]
    assert scheme.allowed_start().tolist() == [tag == "O" or tag[0] in "BU" for tag in scheme.labels]
    assert scheme.allowed_end().tolist() == [tag == "O" or tag[0] in "LU" for tag in scheme.labels]
    assert not scheme.is_valid(["I-PER", "L-PER"]) and not scheme.is_valid(["O", "B-PER"])


def test_conversions():
    iob1 = ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "O", "I-MISC"]
    bio = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "O", "B-MISC"]
    biluo = ["B-PER", "L-PER", "O", "U-LOC", "U-LOC", "O", "U-MISC"]
    spans = [(0, 2, "PER"), (3, 4, "LOC"), (4, 5, "LOC"), (6, 7, "MISC")]
    assert tags_to_spans(iob1, "IOB1") == spans
    assert tags_to_spans(bio, "IOB2") == spans
    assert biluo_to_spans(biluo) == spans
    assert to_biluo(iob1, "IOB1") == biluo == to_biluo(bio, "BIO") == to_biluo(biluo, "BILOU")
    assert spans_to_biluo(spans, 7) == biluo
    assert detect_encoding([iob1]) == "IOB1"
    assert detect_encoding([bio]) == "BIO"
    assert detect_encoding([biluo]) == "BIOUL"


@pytest.mark.parametrize(
    "tags,encoding,position",
    [
        (["O", "I-PER"], "BIO", 1),
        (["B-PER", "I-LOC"], "BIO", 1),
        (["B-PER", "O"], "BIOUL", 1),
        (["L-PER"], "BIOUL", 0),
        (["B-PER"], "BIOUL", 1),
        (["U-PER"], "BIO", 0),
        (["X-PER"], "BIO", 0),
        (["PER"], "IOB1", 0),
    ],
)
def test_invalid_sequences_name_the_position(tags, encoding, position):
    with pytest.raises(TagSequenceError) as err:
        tags_to_spans(tags, encoding)
    assert err.value.position == position


def test_bad_spans_and_encodings():
    with pytest.raises(ValueError, match="overlaps"):
        spans_to_biluo([(0, 2, "PER"), (1, 3, "LOC")], 4)
    with pytest.raises(ValueError, match="out of range"):
        spans_to_biluo([(2, 5, "PER")], 4)
    with pytest.raises(ValueError, match="unknown tag encoding"):
        normalize_encoding("BMES")


def _span_sets(length, types, start=0):
    """Every set of non-overlapping spans over positions ``start..length``."""
    if start >= length:
        yield []
        return
    yield from _span_sets(length, types, start + 1)
    for end in range(start + 1, length + 1):
        for label in types:
            for rest in _span_sets(length, types, end):
                yield [(start, end, label), *rest]


@pytest.mark.parametrize("encoding", ["IOB1", "BIO", "IOB2", "BIOUL", "BILOU", "BIOES", "IOBES"])
def test_spans_written_in_any_scheme_read_back_as_themselves(encoding):
    """Every span set over up to 5 positions and three types, two of which hold ``L-`` / ``U-`` (a prefix rewrite by
    string replacement turned ``NATIONAL-PARK`` into ``NATIONAI-PARK``), written in ``encoding`` and read back."""
    types, checked = ("A", "NATIONAL-PARK", "EU-UL-X"), 0
    for length in range(6):
        for spans in _span_sets(length, types):
            tags = spans_to_tags(spans, length, encoding)
            assert tags_to_spans(tags, encoding) == spans, (spans, tags)
            assert all(tag == "O" or tag[2:] in types for tag in tags), tags
            checked += 1
    assert checked == 2640


def test_each_scheme_writes_its_own_prefixes():
    spans = [(0, 1, "A"), (1, 3, "A"), (4, 7, "B")]
    assert spans_to_tags(spans, 7, "BIOUL") == ["U-A", "B-A", "L-A", "O", "B-B", "I-B", "L-B"]
    assert spans_to_tags(spans, 7, "BIOES") == ["S-A", "B-A", "E-A", "O", "B-B", "I-B", "E-B"]
    assert spans_to_tags(spans, 7, "BIO") == ["B-A", "B-A", "I-A", "O", "B-B", "I-B", "I-B"]
    assert spans_to_tags(spans, 7, "IOB1") == ["I-A", "B-A", "I-A", "O", "I-B", "I-B", "I-B"]
    with pytest.raises(ValueError, match="unknown tag encoding 'BMES'"):
        spans_to_tags(spans, 7, "BMES")
