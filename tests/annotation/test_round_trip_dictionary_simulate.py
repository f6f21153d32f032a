"""``eer-simulate`` and ``eer-dictionary`` under the seeded adversarial documents of ``tests/adversarial_documents.py``
(Unicode spaces and line breaks, invisible and combining characters, emoji, CJK, ids of every shape, raw text kept
or not, partial and complete documents with negative spans): what they write reads back through our JSON-lines
reader with the words, sentence ends, ids, raw text, ``is_complete`` and negative spans they should keep, and every
output line is one that ``eer-ner predict`` and ``eer-dictionary`` take again (the words of a kept raw text are the
document's words).

Before: ``eer-simulate --variant shortest`` cut a raw-text document's words after the sentence of its last entity
but kept the whole ``text``, so the text held words the document no longer had: ``predict`` refused every such line
('"tokens" are not the words of "text"'). Now the text is cut before the first word dropped."""

import contextlib
import io
import json
import random

import pytest
from adversarial_documents import documents_of

from eer_plugin.commands import dictionary as eer_dictionary
from eer_plugin.commands import simulate as eer_simulate
from eer_plugin.corpus.formats import read_jsonl, write_jsonl
from eer_plugin.corpus.tokenizer import tokenize_text
from eer_plugin.inference.documents import parse_input

#: the budget of an EE run: a third of the gold spans, at least those of the largest document (the complete one)
BUDGET = "budget"
RUNS = [
    ("gold", "all", []),
    ("ee", "all", ["--budget", BUDGET, "--complete-documents", "1"]),
    ("ee", "shortest", ["--budget", BUDGET]),
    ("nns", "short", []),
    ("nns", "shortest", []),
    ("random", "all", ["--keep-probability", "0.5"]),
    ("random", "shortest", ["--keep-probability", "0.5"]),
    ("dictionary", "shortest", ["--coverage", "0.5"]),
]


def quietly(main, argv) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


def taken_again(path) -> None:
    """Every line of ``path`` is an input ``predict`` takes (its words those of its raw text, if kept)."""
    for line in path.read_text(encoding="utf-8").split("\n")[:-1]:  # U+2028 stands unescaped in our JSON lines
        record = json.loads(line)
        parse_input(record)
        if "text" in record:
            assert tokenize_text(record["text"])[0] == record["tokens"], record["id"]


def simulated(seed: int, scenario: str, variant: str, options, tmp_path) -> list:
    """What differs between the gold documents and ``eer-simulate``'s output (nothing: [])."""
    gold = documents_of(seed, 20)
    for document in gold:  # gold: complete, no negative spans
        document.is_complete, document.negative_spans = True, []
    write_jsonl(gold, tmp_path / "gold.jsonl")
    out = tmp_path / f"{scenario}-{variant}.jsonl"
    budget = max(max(len(d.spans) for d in gold), sum(len(d.spans) for d in gold) // 3)
    options = [str(budget) if option == BUDGET else option for option in options]
    seeded = [] if scenario == "gold" else ["--seed", str(seed), "--variant", variant]
    assert quietly(eer_simulate.main, [scenario, str(tmp_path / "gold.jsonl"), str(out), *seeded, *options]) == 0
    taken_again(out)
    by_id, problems = {d.id: d for d in gold}, []
    back = read_jsonl(out)
    if variant == "all" and sorted(d.id for d in back) != sorted(by_id):  # EE puts its complete documents first
        problems.append(f"{scenario}: documents {[d.id for d in back]} of {[d.id for d in gold]}")
    for document in back:
        source = by_id[document.id]
        cut = len(document.tokens)
        same = (document.tokens, document.sentence_ends) == (
            source.tokens[:cut],
            source.sentence_ends[: len(document.sentence_ends)],
        )
        same = same and (variant != "all" or cut == len(source.tokens)) and document.sentence_ends[-1:] == [cut]
        if source.text is None:
            same = same and document.text is None
        else:
            same = same and source.text.startswith(document.text) and tokenize_text(document.text)[0] == document.tokens
        if scenario == "gold":
            same = same and (document.spans, document.is_complete) == (source.spans, True)
        elif scenario in ("ee", "random"):
            same = same and set(document.spans) <= set(source.spans)
        if not same:
            problems.append(f"seed {seed} {scenario} {variant}: {document!r} from {source!r}")
    return problems


@pytest.mark.parametrize("scenario, variant, options", RUNS)
def test_simulated_documents_read_back(scenario, variant, options, tmp_path):
    assert simulated(0, scenario, variant, options, tmp_path) == []


def test_shortest_cuts_the_raw_text_with_the_words(tmp_path):
    text = "Anna met Bob. Then Paris was big.  More here."
    words, _, ends = tokenize_text(text)
    gold = [{"id": "d", "tokens": words, "sentence_ends": ends, "spans": [[0, 1, "PER"]], "is_complete": True}]
    (tmp_path / "gold.jsonl").write_text(json.dumps({**gold[0], "text": text}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    argv = ["ee", str(tmp_path / "gold.jsonl"), str(out), "--budget", "1", "--variant", "shortest"]
    assert quietly(eer_simulate.main, argv) == 0
    (document,) = read_jsonl(out)
    assert (document.tokens, document.text) == (["Anna", "met", "Bob", "."], "Anna met Bob. ")
    taken_again(out)


def dictionary_round_trip(seed: int, tmp_path) -> list:
    """What differs between generated partial documents and ``eer-dictionary``'s output of them."""
    rng, documents = random.Random(seed), documents_of(seed, 20)
    write_jsonl(documents, tmp_path / "in.jsonl")
    words = sorted({w for d in documents for w in d.tokens})
    names = [f"{w}\t{rng.choice(['PER', 'LOC', 'Product Name'])}\n" for w in rng.sample(words, min(12, len(words)))]
    (tmp_path / "names.tsv").write_text("".join(names), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    argv = [str(tmp_path / "in.jsonl"), str(out), "--dictionary", str(tmp_path / "names.tsv"), "--propagate"]
    assert quietly(eer_dictionary.main, argv) == 0
    taken_again(out)
    back, problems = read_jsonl(out), []
    if [d.id for d in back] != [d.id for d in documents]:
        problems.append(f"seed {seed}: ids {[d.id for d in back]}")
    for got, sent in zip(back, documents):
        kept = (got.tokens, got.sentence_ends, got.text, got.is_complete, got.negative_spans)
        if kept != (sent.tokens, sent.sentence_ends, sent.text, sent.is_complete, sent.negative_spans):
            problems.append(f"seed {seed}: {sent!r} came back as {got!r}")
        if not set(sent.spans) <= set(got.spans) or (sent.is_complete and got.spans != sent.spans):
            problems.append(f"seed {seed}: spans {sent.spans} came back as {got.spans}")
    return problems


@pytest.mark.parametrize("seed", range(2))
def test_dictionary_labelled_documents_read_back(seed, tmp_path):
    assert dictionary_round_trip(seed, tmp_path) == []


@pytest.mark.integration
def test_seed_sweep(tmp_path):
    problems = []
    for seed in range(1, 40):
        for scenario, variant, options in RUNS:
            problems += simulated(seed, scenario, variant, options, tmp_path)
        problems += dictionary_round_trip(seed, tmp_path)
    assert problems == []
