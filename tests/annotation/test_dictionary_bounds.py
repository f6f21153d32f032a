"""Dictionary labelling's type warnings stay bounded on a dictionary of many types listed once (a column of ids read
as types): the first few are compared with every type, the rest counted; a dictionary with few such types gets the
warnings it got before."""

import difflib
import random
from collections import Counter

from work_counter import lines_run

from eer_plugin.annotation.dictionary_files import CSV_HEADER_TYPES, TYPO_CHECK_ENTRIES, TYPO_WARNINGS, type_warnings


def warnings_before(dictionaries, corpus_types=()):
    """The warnings before the bound: every one-line type compared with every type."""
    totals: Counter = Counter()
    for d in dictionaries:
        totals.update(d["per_type"])
    warnings = []
    for d in dictionaries:
        for label in d["per_type"]:
            where = f"{d['path']}:{d['first_line'][label]}"
            if totals[label] == 1 and sum(totals.values()) >= TYPO_CHECK_ENTRIES:
                close = difflib.get_close_matches(label, [t for t in totals if t != label], n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                if d["first_line"][label] == min(d["first_line"].values()):
                    hint += f" (a header row? name its type column {CSV_HEADER_TYPES[0]!r}, or remove the row)"
                warnings.append(
                    f"{where}: type {label!r} is listed on this line only, the other types on many{hint}; "
                    "check it is not a typo"
                )
            if corpus_types and label not in corpus_types:
                warnings.append(
                    f"{where}: type {label!r} is not used by the input's annotation ({', '.join(corpus_types)}); "
                    "the model will learn it as a new type"
                )
    return warnings


def dictionary(rng, name, types):
    counts = {label: rng.choice([1, 1, 2, 5, 30]) for label in types}
    lines = rng.sample(range(1, 200), len(types))
    return {"path": f"{name}.tsv", "per_type": counts, "first_line": dict(zip(types, lines))}


def test_few_one_line_types_get_the_warnings_of_before():
    rng = random.Random(0)
    names = ["PER", "PRE", "LOC", "LCO", "ORG", "MISC", "Sector", "GPE", "EVENT", "PERS", "ORGG", "Q1"]
    compared = 0
    for _ in range(400):
        dictionaries = [
            dictionary(rng, f"d{k}", rng.sample(names, rng.randint(1, 6))) for k in range(rng.randint(1, 3))
        ]
        totals = Counter()
        for d in dictionaries:
            totals.update(d["per_type"])
        if sum(1 for count in totals.values() if count == 1) > TYPO_WARNINGS:
            continue
        corpus = sorted(rng.sample(names, rng.randint(0, 3)))
        assert type_warnings(dictionaries, corpus) == warnings_before(dictionaries, corpus)
        compared += 1
    assert compared == 400


def ids_as_types(n):
    """A dictionary of ``n`` entries, each with a type of its own (``name<TAB>Q123``: a column of ids)."""
    types = [f"Q{i}" for i in range(n)]
    return [
        {"path": "ids.tsv", "per_type": dict.fromkeys(types, 1), "first_line": {t: i + 1 for i, t in enumerate(types)}}
    ]


def test_many_one_line_types_are_counted_in_one_warning(monkeypatch):
    compared = []
    monkeypatch.setattr(
        difflib, "get_close_matches", lambda word, candidates, n: compared.append(len(candidates)) or []
    )
    warnings = type_warnings(ids_as_types(1000))
    assert len(compared) == TYPO_WARNINGS == len(warnings) - 1
    assert warnings[0].startswith("ids.tsv:1: type 'Q0' is listed on this line only")
    assert warnings[-1].startswith("990 more types listed on one line only ('Q10', 'Q11', 'Q12', ...)")


def test_the_work_grows_linearly_with_the_types():
    """Before, each one-line type was compared with every type: 1,000 types took 3.0 s, 4,000 111 s (36 times); now
    four times the types, about four times the lines run."""
    small, large = ids_as_types(2000), ids_as_types(8000)
    assert lines_run(lambda: type_warnings(large)) < 5 * lines_run(lambda: type_warnings(small))
