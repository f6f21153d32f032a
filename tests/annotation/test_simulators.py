"""Annotation simulators, train-data variants and the eer-simulate command line."""

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List

import pytest
from conftest import CONLL_EN, FIXTURES, REPO, requires_conll

from eer_plugin.annotation import simulators
from eer_plugin.annotation.simulators import (
    SimulationError,
    ee_with_complete_documents,
    exploratory_expert,
    non_native_speaker,
    random_drop,
    surface,
    variant,
)
from eer_plugin.commands import simulate
from eer_plugin.corpus.documents import Document
from eer_plugin.corpus.formats import read_conll, read_jsonl

CONLL2003 = FIXTURES / "conll2003_tiny.txt"


@pytest.fixture(scope="module")
def tiny() -> List[Document]:
    return read_conll(CONLL2003)


@pytest.fixture(scope="module")
def conll_train() -> List[Document]:
    if not (CONLL_EN / "train.txt").exists():
        pytest.skip("CoNLL-2003 English not present")
    return read_conll(CONLL_EN / "train.txt")


def by_id(docs: List[Document]) -> Dict[str, Document]:
    return {d.id: d for d in docs}


def dump(docs: List[Document]) -> str:
    return "\n".join(json.dumps(d.to_json()) for d in docs)


def check_partial_of(gold: List[Document], output: List[Document]) -> None:
    """Output documents are the gold documents (same words), partially annotated."""
    gold_by_id = by_id(gold)
    assert sorted(d.id for d in output) == sorted(gold_by_id)
    for doc in output:
        doc.validate()
        assert not doc.is_complete and doc.negative_spans == []
        assert doc.tokens == gold_by_id[doc.id].tokens and doc.sentence_ends == gold_by_id[doc.id].sentence_ends


# ----------------------------------------------------------------------------------- EE
def test_exploratory_expert_fixture(tiny):
    output, stats = exploratory_expert(tiny, budget=30, seed=3)
    check_partial_of(tiny, output)
    gold = by_id(tiny)
    assert sum(len(d.spans) for d in output) == stats["kept_spans"] == 30
    assert all(len(d.spans) <= 10 for d in output)
    assert all(set(d.spans) <= set(gold[d.id].spans) for d in output)
    assert stats == {
        "recall": 30 / 82,
        "precision": 1.0,
        "kept_spans": 30,
        "gold_spans": 82,
        "false_positives": 0,
        "documents_touched": sum(1 for d in output if d.spans),
        "documents": 4,
    }
    # visit order: every annotated document comes before the first never-visited one
    touched = [bool(d.spans) for d in output]
    assert touched == sorted(touched, reverse=True)
    assert tiny[0].spans and tiny[0].is_complete  # the input is not modified


def test_exploratory_expert_scans_left_to_right_with_cap(tiny):
    output, stats = exploratory_expert(tiny, budget=12, keep_probability=1.0, max_per_document=5, seed=0)
    gold = by_id(tiny)
    kept = [d for d in output if d.spans]
    assert [len(d.spans) for d in kept] == [5, 5, 2]
    for doc in kept:  # every entity is annotated, so each document keeps its first ones
        assert doc.spans == gold[doc.id].spans[: len(doc.spans)]


def test_exploratory_expert_budget_too_large(tiny):
    with pytest.raises(SimulationError, match="supplies only 40 of the budget of 41 spans"):
        exploratory_expert(tiny, budget=41, keep_probability=1.0)  # 4 documents, at most 10 each
    with pytest.raises(SimulationError, match="keep_probability must be in"):
        exploratory_expert(tiny, keep_probability=0.0)


def test_exploratory_expert_seeds(tiny):
    first, _ = exploratory_expert(tiny, budget=25, seed=7)
    again, _ = exploratory_expert(tiny, budget=25, seed=7)
    other, _ = exploratory_expert(tiny, budget=25, seed=8)
    assert dump(first) == dump(again) != dump(other)


# ----------------------------------------------------------------------------------- NNS
def distinct_mention_corpus(documents: int = 10) -> List[Document]:
    """Documents of 3 sentences x 10 words with 3 single-word entities per sentence, all with
    different surface strings: 90 mentions in 90 groups, so NNS keeps exactly 45 and adds 5 FPs."""
    docs, n = [], 0
    for d in range(documents):
        tokens, spans = [], []
        for _ in range(3):
            start = len(tokens)
            tokens += [f"w{start + i}" for i in range(10)]
            for offset, label in ((1, "PER"), (4, "LOC"), (7, "ORG")):
                tokens[start + offset] = f"Name{n}"
                spans.append((start + offset, start + offset + 1, label))
                n += 1
        docs.append(Document(f"d{d}", tokens, [10, 20, 30], spans, is_complete=True))
    return docs


def check_false_positives(gold: List[Document], output: List[Document], max_length: int = 3) -> int:
    """Every output span is a kept gold span or a false positive that lies in one sentence, is
    1..max_length words long and equals no gold span; returns the number of false positives."""
    gold_by_id, count = by_id(gold), 0
    for doc in output:
        doc.validate()  # sorted and non-overlapping
        truth = set(gold_by_id[doc.id].spans)
        for start, end, label in doc.spans:
            if (start, end, label) in truth:
                continue
            count += 1
            assert 1 <= end - start <= max_length
            assert any(s <= start and end <= e for s, e in doc.sentences())
    return count


def check_recall_groups(gold: List[Document], output: List[Document], target: float) -> None:
    """Whole surface groups are kept or dropped, and recall is at most the target and within the
    last dropped group of it."""
    gold_groups = Counter(surface(d, s) for d in gold for s in d.spans)
    gold_by_id = by_id(gold)
    kept_groups = Counter(surface(d, s) for d in output for s in d.spans if s in set(gold_by_id[d.id].spans))
    assert all(kept_groups[g] in (0, gold_groups[g]) for g in gold_groups)
    total, kept = sum(gold_groups.values()), sum(kept_groups.values())
    limit = int(target * total)
    assert kept <= limit
    dropped = [size for g, size in gold_groups.items() if kept_groups[g] == 0]
    assert any(kept + size > limit for size in dropped)


def test_non_native_speaker_exact_precision():
    gold = distinct_mention_corpus()
    output, stats = non_native_speaker(gold, recall=0.5, precision=0.9, seed=1)
    check_partial_of(gold, output)
    assert (stats["kept_spans"], stats["false_positives"], stats["gold_spans"]) == (45, 5, 90)
    assert stats["precision"] == 0.9 and stats["recall"] == 0.5
    assert check_false_positives(gold, output) == 5
    check_recall_groups(gold, output, 0.5)


def test_non_native_speaker_fixture(tiny):
    output, stats = non_native_speaker(tiny, seed=0)
    check_partial_of(tiny, output)
    check_recall_groups(tiny, output, 0.5)
    kept = stats["kept_spans"]
    assert stats["false_positives"] == check_false_positives(tiny, output) == round(kept / 9)
    assert stats["precision"] == kept / (kept + stats["false_positives"])
    assert [d.id for d in output] == [d.id for d in tiny]  # input order
    types = {t for d in tiny for _, _, t in d.spans}
    assert {t for d in output for _, _, t in d.spans} <= types


def test_non_native_speaker_many_false_positives_never_overlap(tiny):
    output, stats = non_native_speaker(tiny, recall=0.5, precision=0.5, seed=5, max_fp_length=4)
    assert stats["false_positives"] == stats["kept_spans"]
    assert check_false_positives(tiny, output, max_length=4) == stats["false_positives"]
    with pytest.raises(SimulationError, match="no room left"):
        non_native_speaker(tiny, recall=1.0, precision=0.01, seed=0)


def test_random_drop(tiny):
    none, stats = random_drop(tiny, 0.0)
    assert stats["kept_spans"] == 0 and stats["documents_touched"] == 0
    every, stats = random_drop(tiny, 1.0)
    assert [d.spans for d in every] == [d.spans for d in tiny] and stats["recall"] == 1.0
    half, stats = random_drop(tiny, 0.5, seed=2)
    check_partial_of(tiny, half)
    assert 0 < stats["kept_spans"] < 82 and dump(half) == dump(random_drop(tiny, 0.5, seed=2)[0])


HASH_SEED_SCRIPT = """
import json, sys
sys.modules["allennlp"] = None  # this check needs only the core
from eer_plugin.annotation import simulators
from eer_plugin.corpus.formats import read_conll
docs = read_conll(sys.argv[1])
runs = [
    simulators.exploratory_expert(docs, budget=30, seed=4)[0],
    simulators.non_native_speaker(docs, seed=4)[0],
    simulators.random_drop(docs, 0.5, seed=4)[0],
]
print(json.dumps([[d.to_json() for d in run] for run in runs]))
"""


@pytest.mark.integration
def test_seed_stability_across_hash_seeds(tiny):
    expected = [
        [d.to_json() for d in run]
        for run in (
            exploratory_expert(tiny, budget=30, seed=4)[0],
            non_native_speaker(tiny, seed=4)[0],
            random_drop(tiny, 0.5, seed=4)[0],
        )
    ]
    hash_seed = "12345" if os.environ.get("PYTHONHASHSEED") != "12345" else "54321"
    proc = subprocess.run(
        [sys.executable, "-c", HASH_SEED_SCRIPT, str(CONLL2003)],
        cwd=REPO,
        env=dict(os.environ, PYTHONHASHSEED=hash_seed),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == expected


# ----------------------------------------------------------------------------------- variants
def test_variants_on_fixture(tiny):
    partial, _ = exploratory_expert(tiny, budget=12, keep_probability=1.0, max_per_document=5, seed=0)
    assert [d.to_json() for d in variant(partial, "all")] == [d.to_json() for d in partial]
    short = variant(partial, "short")
    assert [d.id for d in short] == [d.id for d in partial if d.spans] and len(short) == 3
    shortest = variant(partial, "shortest")
    for full, cut in zip(short, shortest):
        last_end = full.spans[-1][1]
        assert cut.sentence_ends[-1] == min(e for e in full.sentence_ends if e >= last_end)
        assert cut.tokens == full.tokens[: cut.sentence_ends[-1]] and cut.spans == full.spans
        cut.validate()
    assert sum(len(d.tokens) for d in shortest) < sum(len(d.tokens) for d in short)
    with pytest.raises(ValueError, match="unknown variant 'longest'"):
        variant(partial, "longest")


def test_shortest_keeps_negative_spans_in_range():
    doc = Document(
        "n",
        "a b c . d e f . g h .".split(),
        [4, 8, 11],
        [(1, 2, "PER")],
        negative_spans=[(0, 1), (2, 6), (8, 10)],
    )
    (cut,) = variant([doc], "shortest")
    assert cut.tokens == ["a", "b", "c", "."] and cut.sentence_ends == [4]
    assert cut.negative_spans == [(0, 1), (2, 4)]  # (2, 6) clipped at the cut, (8, 10) dropped
    assert doc.negative_spans == [(0, 1), (2, 6), (8, 10)]


def test_variants_on_partial_fixture():
    docs = read_jsonl(FIXTURES / "partial_tiny.jsonl")
    assert [d.id for d in variant(docs, "short")] == ["partial-1", "partial-2"]
    first, second = variant(docs, "shortest")
    assert first.tokens == docs[0].tokens and second.negative_spans == docs[1].negative_spans


# ----------------------------------------------------------------------------------- command line
@pytest.mark.integration
def test_cli_module_subprocess(tmp_path):
    out = tmp_path / "ee.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "eer_plugin.commands.simulate",
            "ee",
            str(CONLL2003),
            str(out),
            "--budget",
            "20",
            "--seed",
            "1",
            "--variant",
            "short",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "kept spans 20/82" in proc.stdout and "precision 1.0000" in proc.stdout, proc.stdout
    docs = read_jsonl(out)
    assert sum(len(d.spans) for d in docs) == 20 and all(d.spans for d in docs)
    expected = variant(exploratory_expert(read_conll(CONLL2003), budget=20, seed=1)[0], "short")
    assert [d.to_json() for d in docs] == [d.to_json() for d in expected]


def test_cli_nns_and_errors(tmp_path, capsys):
    out = tmp_path / "nns.jsonl"
    assert simulate.main(["nns", str(CONLL2003), str(out), "--recall", "0.5", "--precision", "0.9"]) == 0
    line = capsys.readouterr().out
    assert "nns: recall 0.4878  precision 0.9091  kept spans 40/82  false positives 4" in line
    assert len(read_jsonl(out)) == 4
    for argv, message in [
        # what the corpus cannot supply names the corpus
        (
            ["ee", str(CONLL2003), str(out), "--budget", "500"],
            "conll2003_tiny.txt: the corpus supplies only 40 of the budget of 500",
        ),
        (
            ["ee", str(CONLL2003), str(out), "--budget", "500", "--complete-documents", "9"],
            "conll2003_tiny.txt: complete_documents is 9, but the corpus has only 4 documents",
        ),
        (["gold", str(CONLL2003), str(out), "--seed", "3"], "--seed does not apply to scenario 'gold'"),
        (["random", str(CONLL2003), str(out)], "scenario 'random' needs --keep-probability"),
        (["ee", str(tmp_path / "missing.txt"), str(out)], "missing.txt: no such file"),
        (["gold", str(CONLL2003), str(out), "--encoding", "BIO"], r"conll2003_tiny.txt:3: .*'I-ORG'"),
    ]:
        with pytest.raises(SystemExit) as info:
            simulate.main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 1 and len(err.strip().splitlines()) == 1, (
            err
        )  # input errors: 1 (argparse's usage errors: 2)
        assert err.startswith("eer-simulate: error: ") and re.search(message, err), err


def test_cli_complete_documents(tmp_path, capsys):
    """--complete-documents: D documents with every gold span and is_complete, inside the budget, as the
    benchmark's ablation data; errors for the options it does not combine with."""
    out = tmp_path / "mixed.jsonl"
    assert (
        simulate.main(["ee", str(CONLL2003), str(out), "--budget", "30", "--complete-documents", "1", "--seed", "0"])
        == 0
    )
    printed = capsys.readouterr().out
    docs = read_jsonl(out)
    complete = [d for d in docs if d.is_complete]
    gold = {d.id: d for d in read_conll(CONLL2003)}
    assert len(complete) == 1 and complete[0].spans == gold[complete[0].id].spans
    assert sum(len(d.spans) for d in docs) == 30 and f"complete 1 ({len(complete[0].spans)} spans)" in printed
    expected, _ = ee_with_complete_documents(read_conll(CONLL2003), 30, 1, seed=0)
    assert [d.to_json() for d in docs] == [d.to_json() for d in expected]
    for argv, message in [
        (
            ["nns", str(CONLL2003), str(out), "--complete-documents", "1"],
            "--complete-documents does not apply to scenario 'nns'",
        ),
        (
            ["ee", str(CONLL2003), str(out), "--learning-curve", "--complete-documents", "1"],
            "does not combine with --learning-curve",
        ),
        (
            ["ee", str(CONLL2003), str(out), "--budget", "5", "--complete-documents", "4"],
            "hold 82 spans, more than the budget of 5",
        ),
    ]:
        with pytest.raises(SystemExit) as info:
            simulate.main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 1 and re.search(message, err), err


def test_cli_learning_curve(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(simulators, "learning_curve_budgets", (10, 25))
    simulate.main(["ee", str(CONLL2003), str(tmp_path / "curve.jsonl"), "--learning-curve", "--seed", "2"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve_M10.jsonl", "curve_M25.jsonl"]
    for budget in (10, 25):
        assert sum(len(d.spans) for d in read_jsonl(tmp_path / f"curve_M{budget}.jsonl")) == budget
    assert simulate.learning_curve_path("runs/ee.jsonl", 1000) == Path("runs/ee_M1000.jsonl")
    assert simulators.learning_curve_max_per_document(10000) == 15
    assert simulators.learning_curve_max_per_document(1000) == 10


def test_allennlp_subcommand(tmp_path, capsys):
    import argparse

    from allennlp.commands.subcommand import Subcommand

    import eer_plugin.allennlp_plugin  # noqa: F401  (registers the plugin's subcommands)

    Simulate = Subcommand.by_name("eer-simulate")
    assert Simulate.__doc__.startswith("Simulate partial annotation")
    parser = argparse.ArgumentParser()
    Simulate().add_subparser(parser.add_subparsers())
    out = tmp_path / "gold.jsonl"
    args = parser.parse_args(["eer-simulate", "gold", str(FIXTURES / "conll2002_tiny.txt"), str(out)])
    args.func(args)
    assert "gold: recall 1.0000  precision 1.0000  kept spans 31/31" in capsys.readouterr().out
    assert all(d.is_complete for d in read_jsonl(out))


# ----------------------------------------------------------------------------------- real data
@requires_conll
def test_real_exploratory_expert_1000(conll_train):
    output, stats = exploratory_expert(conll_train, budget=1000, seed=0)
    short, shortest = variant(output, "short"), variant(output, "shortest")
    print(
        f"EE-1000 seed 0: kept {stats['kept_spans']}, documents touched {stats['documents_touched']}, "
        f"short variant {len(short)} documents, shortest {sum(len(d.tokens) for d in shortest)} tokens"
    )
    assert stats["kept_spans"] == sum(len(d.spans) for d in output) == 1000
    assert len(output) == 946 and max(len(d.spans) for d in output) <= 10
    assert 50 <= len(short) <= 200 and len(short) == stats["documents_touched"]
    assert sum(len(d.tokens) for d in shortest) < sum(len(d.tokens) for d in short)


@requires_conll
def test_real_exploratory_expert_reproduces_the_authors(conll_train):
    """With the authors' seed (42) the visit order and kept spans are those of their committed
    ``entity.train-docs_P-1000.jsonl`` (documents 0385, 0895, 0792, 0749, 0539, ...; 110 touched)."""
    output, stats = exploratory_expert(conll_train, budget=1000, seed=42)
    assert [d.id for d in output[:5]] == ["train-385", "train-895", "train-792", "train-749", "train-539"]
    assert output[0].spans == [
        (8, 9, "LOC"),
        (19, 20, "MISC"),
        (24, 25, "ORG"),
        (38, 40, "ORG"),
        (43, 44, "LOC"),
        (70, 72, "PER"),
        (82, 83, "LOC"),
        (96, 97, "LOC"),
        (103, 104, "MISC"),
        (116, 117, "MISC"),
    ]
    assert stats["documents_touched"] == 110


@requires_conll
def test_real_non_native_speaker(conll_train):
    output, stats = non_native_speaker(conll_train, seed=0)
    print(
        f"NNS seed 0: recall {stats['recall']:.4f}, precision {stats['precision']:.4f}, "
        f"kept {stats['kept_spans']}, false positives {stats['false_positives']}"
    )
    check_recall_groups(conll_train, output, 0.5)
    assert stats["false_positives"] == check_false_positives(conll_train, output) == round(stats["kept_spans"] / 9)
    assert abs(stats["precision"] - 0.9) < 1 / stats["kept_spans"]


@requires_conll
def test_real_learning_curve_budgets(conll_train):
    for budget in simulators.learning_curve_budgets:
        cap = simulators.learning_curve_max_per_document(budget)
        _, stats = exploratory_expert(conll_train, budget=budget, max_per_document=cap, seed=0)
        assert stats["kept_spans"] == budget
    with pytest.raises(SimulationError, match="supplies only"):
        exploratory_expert(conll_train, budget=10000, max_per_document=10, seed=0)
