"""The dictionary scenario (``eer-simulate dictionary``, benchmark ``type: 'dictionary'``): the dictionary drawn
from the gold forms, its labels made by the library matcher, and its own precision and recall against gold."""

import pytest
from conftest import FIXTURES

from eer_plugin.annotation.dictionary_scenario import (  # noqa: E402
    dictionary_annotation,
    dictionary_with_complete_documents,
    draw_dictionary,
    gold_forms,
    listable,
)
from eer_plugin.annotation.simulators import SimulationError  # noqa: E402
from eer_plugin.commands import simulate  # noqa: E402
from eer_plugin.corpus.documents import Document  # noqa: E402
from eer_plugin.corpus.formats import read_conll, read_jsonl  # noqa: E402

TINY = FIXTURES / "conll2003_tiny.txt"


def brute_labels(document, table):
    """Leftmost-longest matching of ``table`` (form -> type) within sentences, by trying every length."""
    spans, start = [], 0
    for end in document.sentence_ends:
        i = start
        while i < end:
            hit = next((j for j in range(end, i, -1) if tuple(document.tokens[i:j]) in table), None)
            if hit is None:
                i += 1
            else:
                spans.append((i, hit, table[tuple(document.tokens[i:hit])]))
                i = hit
        start = end
    return spans


@pytest.mark.parametrize("coverage", [0.2, 0.5, 1.0])
def test_labels_precision_and_recall_against_gold(coverage):
    gold = read_conll(TINY)
    docs, stats = dictionary_annotation(gold, coverage, seed=3)
    entries, counts = draw_dictionary(gold, coverage, seed=3)
    table = dict(entries)
    named = [form for form in gold_forms(gold) if listable(form)]
    assert counts["dictionary_forms"] == len(table) == max(1, int(coverage * len(named) + 0.5))  # halves up
    true = false = 0
    for labelled, truth in zip(docs, gold):
        assert labelled.spans == brute_labels(truth, table) and not labelled.is_complete
        true += len(set(labelled.spans) & set(truth.spans))
        false += len(set(labelled.spans) - set(truth.spans))
    gold_spans = sum(len(d.spans) for d in gold)
    assert (stats["kept_spans"], stats["false_positives"], stats["gold_spans"]) == (true, false, gold_spans)
    assert stats["recall"] == true / gold_spans and stats["precision"] == true / (true + false)
    if coverage == 1.0:
        assert set(table) == set(named)


def test_the_dictionary_is_seeded_and_lists_each_form_under_its_most_frequent_type():
    docs = [
        Document(f"d{i}", ["Washington", "x", "Paris"], [3], [(0, 1, "PER" if i == 0 else "LOC"), (2, 3, "LOC")])
        for i in range(3)
    ]
    entries, counts = draw_dictionary(docs, 1.0, seed=0)
    assert dict(entries) == {("Washington",): "LOC", ("Paris",): "LOC"} and counts["ambiguous_gold_forms"] == 1
    labelled, stats = dictionary_annotation(docs, 1.0)
    assert (
        stats["false_positives"] == 1 and stats["kept_spans"] == 5
    )  # Washington the person, labelled LOC: a real error
    gold = read_conll(TINY)
    assert draw_dictionary(gold, 0.5, 1) == draw_dictionary(gold, 0.5, 1) != draw_dictionary(gold, 0.5, 2)
    with pytest.raises(SimulationError, match=r"coverage must be in \(0, 1\], got 0"):
        draw_dictionary(gold, 0, 0)


def test_numbers_and_function_words_are_no_names_and_stay_out_of_the_dictionary():
    # CoNLL-2003's training set tags one "3" as ORG and one "The" as LOC: listed, they would label every
    # number 3 and every sentence-initial "The" in the corpus
    docs = [
        Document(
            "d0",
            ["The", "3", "beat", "Leeds", "by", "1,000", "."],
            [7],
            [(0, 1, "LOC"), (1, 2, "ORG"), (3, 4, "ORG"), (5, 6, "MISC")],
        ),
        Document("d1", ["Leeds", "won", "3", "-", "1", "in", "The", "Hague", "."], [9], [(0, 1, "ORG"), (6, 8, "LOC")]),
    ]
    entries, counts = draw_dictionary(docs, 1.0, seed=0)
    assert entries == [(("Leeds",), "ORG"), (("The", "Hague"), "LOC")]
    assert counts["distinct_gold_forms"] == 2 and counts["unlisted_gold_forms"] == 3
    labelled, stats = dictionary_annotation(docs, 1.0)
    assert [d.spans for d in labelled] == [[(3, 4, "ORG")], [(0, 1, "ORG"), (6, 8, "LOC")]]
    assert stats["false_positives"] == 0
    forms = [("3",), ("1,000",), ("-",), ("the",), ("OR",), ("U.S.",), ("3", "Com"), ("The", "Hague"), ("Ñu",)]
    assert [listable(form) for form in forms] == [False, False, False, False, False, True, True, True, True]
    with pytest.raises(SimulationError, match="no gold entity form a list of names would hold"):
        draw_dictionary([Document("d", ["3"], [1], [(0, 1, "ORG")])], 0.5, 0)


def test_complete_documents_with_a_dictionary():
    gold = read_conll(TINY)
    docs, stats = dictionary_with_complete_documents(gold, 0.5, complete_documents=2, seed=0)
    complete = [d for d in docs if d.is_complete]
    by_id = {d.id: d for d in gold}
    assert [d.id for d in complete] == stats["complete_ids"] and len(complete) == 2 == stats["complete_documents"]
    assert all(d.spans == by_id[d.id].spans for d in complete)
    entries, _ = draw_dictionary(gold, 0.5, 0)
    assert all(d.spans == brute_labels(by_id[d.id], dict(entries)) for d in docs if not d.is_complete)


def test_eer_simulate_dictionary(tmp_path, capsys):
    output = tmp_path / "dict.jsonl"
    assert simulate.main(["dictionary", str(TINY), str(output), "--coverage", "0.5", "--seed", "1"]) == 0
    line = capsys.readouterr().out
    _, stats = dictionary_annotation(read_conll(TINY), 0.5, 1)
    assert f"dictionary: recall {stats['recall']:.4f}  precision {stats['precision']:.4f}" in line
    assert [d.spans for d in read_jsonl(output)] == [
        d.spans for d in dictionary_annotation(read_conll(TINY), 0.5, 1)[0]
    ]
    with pytest.raises(SystemExit):
        simulate.main(["ee", str(TINY), str(output), "--coverage", "0.5"])
    assert "--coverage does not apply to scenario 'ee' (only to dictionary)" in capsys.readouterr().err
