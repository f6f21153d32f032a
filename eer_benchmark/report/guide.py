""" "Which approach should I use?" (``docs/which-approach.md``, linked from the README): a short guide written from
the measured tables only, generated from ``docs/results/results.csv`` (and the paper's numbers) so that it cannot
drift from the report; its long generated rows live in that generated page, not in the README.

:func:`render_docs <eer_benchmark.report.docs.render_docs>` writes it between the page's markers
(:data:`START`, :data:`END`) when the docs directory's :data:`GUIDE_PAGE` has them; ``tests/test_docs.py`` checks
that the committed page holds exactly what :func:`guide_markdown` makes of the committed CSV.

Each regime names the runs it compares (a ``results.csv`` selection: scenario, ablation directory, approach);
the approach recommended is the one with the best mean F1 over its finished seeds, ranked on the headline
block's encoder (all-mpnet-base-v2) among the candidates the plan runs there once each of them has all its
seeds, and on the plan's encoder (MiniLM) until then (:func:`ranking_encoder`); both encoders' numbers stand
beside it, and a candidate run on MiniLM only says so."""

import csv
import io
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from eer_benchmark.analyse.paper import paper_value
from eer_benchmark.plan.approaches import approach_label
from eer_benchmark.tables import mean, std

START = "<!-- which-approach: generated from docs/results/results.csv by allennlp eer-benchmark --docs; do not edit -->"
END = "<!-- /which-approach -->"
#: the page of the docs directory that holds the guide between the markers
GUIDE_PAGE = "which-approach.md"
SMALL, LARGE = "all-MiniLM-L6-v2", "all-mpnet-base-v2"
#: the short names the guide's cells use
SHORT = {SMALL: "MiniLM", LARGE: "mpnet"}
#: the ablation directory of the headline block's runs (its ablation 'mpnet encoder' changes the encoder only)
LARGE_BENCHMARK = "mpnet-encoder"
#: (regime, [(label, scenario, ablation directory on MiniLM, ablation directory on mpnet, approach)])
REGIMES: Sequence[Tuple[str, List[Tuple[str, str, str, str, str]]]] = (
    (
        "EE: a few entities marked per document (1,000 in all), no document complete",
        [
            (approach_label(a), "EE", "", LARGE_BENCHMARK, a)
            for a in ("sns_shortest", "eer_shortest", "eer_short", "cbl_bert_shortest", "raw_cd_shortest")
        ],
    ),
    (
        "EE, 20 of the documents annotated completely (within the 1,000)",
        [
            (
                "EER-short, estimate, then bind (`--ratio-estimate`)",
                "EE",
                "estimate-then-bind",
                "estimate-then-bind",
                "eer_short",
            ),
            ("EER-short, paper's band", "EE", "20-complete-training-documents-plan-s-ratio", "", "eer_short"),
            (
                "SNS-shortest",
                "EE",
                "20-complete-training-documents-plan-s-ratio",
                "20-complete-training-documents-plan-s-ratio",
                "sns_shortest",
            ),
        ],
    ),
    (
        "NNS: every document annotated, half the entities missed, 10% wrong",
        [
            (
                "EER-short, binding control (`-o model.ratio_control=bind`)",
                "NNS",
                "binding-ratio-control",
                "binding-ratio-control",
                "eer_short",
            ),
            ("EER-shortest, binding control", "NNS", "binding-ratio-control", "", "eer_shortest"),
            ("EER-short", "NNS", "", LARGE_BENCHMARK, "eer_short"),
            ("SNS-shortest", "NNS", "", LARGE_BENCHMARK, "sns_shortest"),
            ("CBL-BERT-shortest", "NNS", "", "", "cbl_bert_shortest"),
        ],
    ),
)


def dictionary_regime(scenario: str, coverage: str) -> Tuple[str, List[Tuple[str, str, str, str, str]]]:
    """The guide's regime of a dictionary scenario of the plan (issue 48; MiniLM only)."""
    candidates = [
        (approach_label(a), scenario, "", "", a)
        for a in ("eer_short", "eer_shortest", "sns_shortest", "raw_cd_shortest", "raw_shortest")
    ]
    candidates.append(
        (
            "EER-short, estimate, then bind (`--ratio-estimate`), with 20 documents annotated completely",
            scenario,
            "estimate-then-bind-dictionary",
            "",
            "eer_short",
        )
    )
    return (
        f"I have a dictionary: a list of names ({coverage} of the corpus's entity forms) matched over the text "
        "(`eer-ner eer-dictionary`)",
        candidates,
    )


#: the dictionary scenarios of the plan (``Dict-<coverage>``), a regime each
DICTIONARY_REGIMES = tuple(
    dictionary_regime(name, coverage) for name, coverage in (("Dict-20", "20%"), ("Dict-50", "50%"))
)
#: the corpus of each data set of the plans, named in every row of the guide
CORPORA = {"eng-c": "CoNLL-2003 English", "esp": "CoNLL-2002 Spanish"}
#: the learning curve's comparisons (``docs/results/learning_curve_claims.csv``): the partial-vs-exhaustive sentence
CURVE_CLAIMS_CSV = "learning_curve_claims.csv"
#: the results of a further corpus's plan, beside ``results.csv`` (``results-<dataset>.csv``)
CORPUS_CSV = "results-{dataset}.csv"


def read_rows(text: str) -> List[Dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def cell(rows: List[Dict[str, str]], scenario: str, ablation: str, encoder: str, approach: str) -> Optional[dict]:
    """``{f1: [...], minutes: mean, planned: n}`` of one selection of ``results.csv`` (None: the plan has no such run)."""
    chosen = [
        r
        for r in rows
        if (r["scenario"], r["ablation"], r["encoder"], r["approach"]) == (scenario, ablation, encoder, approach)
        and (ablation or "benchmark" in r["study"].split(";"))  # the benchmark's own runs, not the ratio grid's
    ]
    if not chosen:
        return None
    done = [r for r in chosen if r["status"] == "done"]
    return {
        "f1": [100 * float(r["f1"]) for r in done],
        "by_seed": {r["seed"]: 100 * float(r["f1"]) for r in done},
        "planned": len(chosen),
        "minutes": mean([float(r["seconds"]) / 60 for r in done]) if done else None,
        # the minutes are a GPU's when every finished run of the cell ran on one (results.csv's machine column)
        "on_gpu": bool(done) and all(r.get("machine", "").startswith("GPU ") for r in done),
    }


def cell_text(found: Optional[dict], with_cost: bool = True) -> str:
    """``74.3 ± 1.0 (3 seeds, 15 min)`` (``4 min on a GPU`` where its runs ran on one); ``not run yet (0 of 3
    seeds)``; ``–`` (not in the plan)."""
    if found is None:
        return "–"
    values = found["f1"]
    if not values:
        return f"not run yet (0 of {found['planned']})"
    text = f"{mean(values):.1f}" + (f" ± {std(values):.1f}" if len(values) > 1 else "")
    seeds = (
        f"{len(values)} seed{'s' if len(values) > 1 else ''}"
        if len(values) == found["planned"]
        else f"{len(values)} of {found['planned']} seeds"
    )
    cost = f", {found['minutes']:.0f} min" + (" on a GPU" if found.get("on_gpu") else "")
    return text + f" ({seeds}" + (cost if with_cost else "") + ")"


def ranking_encoder(found: Sequence[Tuple[str, Optional[dict], Optional[dict]]]) -> str:
    """The encoder a regime's candidates ``(label, MiniLM cell, mpnet cell)`` are ranked on: mpnet when at least
    two of them are planned there and each of those has every planned mpnet seed finished (a fair comparison on
    the stronger encoder; a candidate the plan runs on MiniLM only is not in it), else MiniLM."""
    planned = [large for _, _, large in found if large is not None]
    complete = len(planned) >= 2 and all(large["f1"] and len(large["f1"]) == large["planned"] for large in planned)
    return LARGE if complete else SMALL


def candidate_text(label: str, small: Optional[dict], large: Optional[dict], say_missing: bool = False) -> str:
    """``EER-short: mpnet 85.1 (1 of 3 seeds), MiniLM 66.3 ± 2.4 (3 seeds)``; ``say_missing`` (others in the
    regime are run on mpnet): ``CBL-BERT-shortest: MiniLM 79.0 (1 seed), not run on mpnet``."""
    parts = [
        f"{name} {cell_text(found, False)}" for name, found in ((SHORT[LARGE], large), (SHORT[SMALL], small)) if found
    ]
    if say_missing and large is None:
        parts.append(f"not run on {SHORT[LARGE]}")
    return f"{label}: {', '.join(parts)}"


def eer_minus_sns(rows: List[Dict[str, str]], scenario: str) -> List[str]:
    """``-7.9 with all-MiniLM-L6-v2 (3 seeds)`` per encoder: the mean of the per-seed differences of the plan's
    EER-short and SNS-shortest over the seeds both finished."""
    parts = []
    for encoder, ablation in ((SMALL, ""), (LARGE, LARGE_BENCHMARK)):
        eer, sns = (cell(rows, scenario, ablation, encoder, a) for a in ("eer_short", "sns_shortest"))
        seeds = sorted(set(eer["by_seed"]) & set(sns["by_seed"])) if eer and sns else []
        if seeds:
            difference = mean([eer["by_seed"][s] - sns["by_seed"][s] for s in seeds])
            parts.append(f"{difference:+.1f} with {encoder} ({len(seeds)} seed{'s' if len(seeds) > 1 else ''})")
    return parts


def guide_markdown(
    rows: List[Dict[str, str]],
    paper_rows: Dict[tuple, Dict[str, float]],
    curve_rows: Optional[List[Dict[str, str]]] = None,
) -> str:
    """The guide: per regime and corpus (the ``dataset`` of ``rows``, :data:`CORPORA`) the best measured approach
    (ranked as :func:`ranking_encoder` says) and the alternatives, mpnet and MiniLM, then where our numbers and the
    paper's part (EER-short against SNS-shortest on EE, CoNLL-2003 English) and, from ``curve_rows`` (the learning
    curve's comparisons), whether to annotate partially or exhaustively."""
    lines = [
        "| your annotation | corpus | train (best measured) | test F1, mpnet (seeds, min per run) | test F1, MiniLM (seeds, min per run) | the others |",
        "|:---|:---|:---|---:|---:|:---|",
    ]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    for regime, candidates in (*REGIMES, *DICTIONARY_REGIMES):
        for dataset in datasets:
            mine = [r for r in rows if r["dataset"] == dataset]
            found = [
                (label, cell(mine, s, a, SMALL, x), cell(mine, s, b, LARGE, x) if b else None)
                for label, s, a, b, x in candidates
            ]
            if not any(small or large for _, small, large in found):
                continue  # not in this corpus's plan
            corpus = CORPORA.get(dataset, dataset)
            encoder = ranking_encoder(found)
            column = 2 if encoder == LARGE else 1
            measured = [f for f in found if f[column] and f[column]["f1"]]
            if not measured:
                planned = sum(f[column]["planned"] for f in found if f[column])
                lines.append(f"| {regime} | {corpus} | pending (0 of {planned} runs finished) | – | – | – |")
                continue
            best = max(measured, key=lambda f: mean(f[column]["f1"]))
            on_large = any(large for _, _, large in found)
            others = "; ".join(
                candidate_text(label, small, large, on_large)
                for label, small, large in found
                if label != best[0] and (small or large)
            )
            lines.append(
                f"| {regime} | {corpus} | {best[0]} (ranked on {SHORT[encoder]}) | {cell_text(best[2])} | {cell_text(best[1])} | {others} |"
            )
    first = datasets[0] if datasets else ""
    rows = [r for r in rows if r["dataset"] == first]  # the paper's comparison below: the main plan's corpus
    sentences = []
    for scenario in ("EE", "NNS"):
        # the paper's NNS block has -all rows only: paper_value falls back to them, and the sentence names them
        (eer, eer_row), (sns, sns_row) = (
            paper_value(paper_rows, scenario.lower(), a, "eng-c") for a in ("eer_short", "sns_shortest")
        )
        parts = eer_minus_sns(rows, scenario)
        if eer is not None and sns is not None and parts:
            sentences.append(
                f"on {scenario} data the paper's {eer_row.replace('-BERT', '')} beats {sns_row.replace('-BERT', '')} by {eer - sns:+.1f} F1 "
                f"({eer:.1f} vs {sns:.1f}); here EER-short minus SNS-shortest is {' and '.join(parts)}"
            )
    if sentences:
        lines += [
            "",
            f"Where we disagree with the paper (RoBERTa-base on a GPU; ours on {CORPORA.get(first, first)}): "
            + "; ".join(sentences)
            + ".",
        ]
    if curve_rows:
        lines += ["", partial_or_exhaustive(curve_rows)]
    return "\n".join(lines)


def partial_or_exhaustive(curve_rows: List[Dict[str, str]]) -> str:
    """The guide's sentence on partial (EE) vs exhaustive annotation of the same number of entities, from the
    learning curve's comparisons of EE + EER against Exhaustive + Raw-shortest at 500 and 1,000 (each with its
    paired bootstrap interval, seeds pooled; pending where the runs have not finished)."""
    wanted = [
        r
        for r in curve_rows
        if r["claimed"] == "yes" and r["a"].startswith("EE + EER") and r["b"].startswith("Exhaustive + Raw")
    ]
    parts = []
    for r in wanted:
        encoder = SHORT.get(r["encoder"], r["encoder"])
        done, planned = int(r["seeds_done"]), int(r["seeds_planned"])
        seeds = f"{done} seed{'s' if done != 1 else ''}" if done == planned else f"{done} of {planned} seeds"
        if r["delta"] == "":
            parts.append(f"{r['a']} − {r['b']} at {int(r['budget']):,}, {encoder}: pending ({seeds})")
            continue
        delta, low, high = (100 * float(r[k]) for k in ("delta", "ci_low", "ci_high"))
        parts.append(
            f"{r['a']} − {r['b']} at {int(r['budget']):,}, {encoder}: {delta:+.1f} [{low:+.1f}, {high:+.1f}] ({seeds})"
        )
    if not parts:
        return "Partial or exhaustive annotation: pending (the learning curve has not run)."
    return (
        "Partial or exhaustive annotation of the same number of entities (CoNLL-2003 English, the learning curve; F1 "
        "points, paired bootstrap interval, seeds pooled; a positive difference favours partial annotation): "
        + "; ".join(parts)
        + "."
    )


def guide_inputs(assets: Path) -> Tuple[List[Dict[str, str]], Optional[List[Dict[str, str]]]]:
    """The rows the guide is written from: ``results.csv`` and each further corpus's ``results-<dataset>.csv`` of the
    docs' asset directory, and the learning curve's comparisons (None without the file)."""
    rows = read_rows((assets / "results.csv").read_text(encoding="utf-8"))
    for path in sorted(assets.glob(CORPUS_CSV.format(dataset="*"))):
        rows += read_rows(path.read_text(encoding="utf-8"))
    claims = assets / CURVE_CLAIMS_CSV
    return rows, (read_rows(claims.read_text(encoding="utf-8")) if claims.is_file() else None)


def replace_region(text: str, body: str) -> Optional[str]:
    """``text`` (the guide's page) with the region between :data:`START` and :data:`END` replaced by ``body``; None
    when it has no such region."""
    pattern = re.compile(re.escape(START) + r"\n.*?" + re.escape(END), re.S)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda _: f"{START}\n{body}\n{END}", text)


def between(text: str, start: str, end: str) -> Optional[str]:
    """What ``text`` holds between the marker lines ``start`` and ``end`` (None without them)."""
    match = re.search(re.escape(start) + r"\n(.*?)\n" + re.escape(end), text, re.S)
    return match.group(1) if match else None


def region(text: str) -> Optional[str]:
    """The guide between the page's markers (None without them)."""
    return between(text, START, END)


def write_guide(readme: Path, results_csv: Path, paper_rows) -> None:
    """The guide from the report's CSV (and :func:`guide_inputs`' other files beside it) into the region of
    ``readme`` (the docs directory's :data:`GUIDE_PAGE`), when that page has one."""
    from eer_plugin.common.atomic import atomic_write_text

    if readme.is_file() and results_csv.is_file():
        rows, curve_rows = guide_inputs(results_csv.parent)
        text = replace_region(readme.read_text(), guide_markdown(rows, paper_rows, curve_rows))
        if text is not None and text != readme.read_text():
            atomic_write_text(str(readme), text)
