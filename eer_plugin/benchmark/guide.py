"""The README's "Which approach should I use?": a short guide written from the measured tables only, generated
from ``docs/results/results.csv`` (and the paper's numbers) so that it cannot drift from the report.

:func:`render_docs <eer_plugin.benchmark.docs.render_docs>` writes it between the README's markers
(:data:`START`, :data:`END`) when the README beside the docs directory has them; ``tests/test_docs.py`` checks
that the committed README holds exactly what :func:`guide_markdown` makes of the committed CSV.

Each regime names the runs it compares (a ``results.csv`` selection: scenario, ablation directory, approach);
the approach recommended is the one with the best mean F1 over its finished seeds on the plan's encoder
(MiniLM), the headline block's encoder (all-mpnet-base-v2) shown beside it with its seed count."""
import csv
import io
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from eer_plugin.benchmark.approaches import approach_label
from eer_plugin.benchmark.tables import mean, std

START = "<!-- which-approach: generated from docs/results/results.csv by allennlp eer-benchmark --docs; do not edit -->"
END = "<!-- /which-approach -->"
SMALL, LARGE = "all-MiniLM-L6-v2", "all-mpnet-base-v2"
#: (regime, [(label, scenario, ablation directory on MiniLM, ablation directory on mpnet, approach)])
REGIMES: Sequence[Tuple[str, List[Tuple[str, str, str, str, str]]]] = (
    ("EE: a few entities marked per document (1,000 in all), no document complete", [
        (approach_label(a), "EE", "", "mpnet-encoder", a)
        for a in ("sns_shortest", "eer_shortest", "eer_short", "cbl_bert_shortest", "raw_cd_shortest")
    ]),
    ("EE, 20 of the documents annotated completely (within the 1,000)", [
        ("EER-short, estimate, then bind (`--ratio-estimate`)", "EE", "estimate-then-bind", "estimate-then-bind", "eer_short"),
        ("EER-short, paper's band", "EE", "20-complete-training-documents-plan-s-ratio", "", "eer_short"),
        ("SNS-shortest", "EE", "20-complete-training-documents-plan-s-ratio", "20-complete-training-documents-plan-s-ratio", "sns_shortest"),
    ]),
    ("NNS: every document annotated, half the entities missed, 10% wrong", [
        ("EER-short, binding control (`-o model.ratio_control=bind`)", "NNS", "binding-ratio-control", "", "eer_short"),
        ("EER-shortest, binding control", "NNS", "binding-ratio-control", "", "eer_shortest"),
        ("EER-short", "NNS", "", "mpnet-encoder", "eer_short"),
        ("SNS-shortest", "NNS", "", "mpnet-encoder", "sns_shortest"),
        ("CBL-BERT-shortest", "NNS", "", "", "cbl_bert_shortest"),
    ]),
)  # fmt: skip


def read_rows(text: str) -> List[Dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def cell(rows: List[Dict[str, str]], scenario: str, ablation: str, encoder: str, approach: str) -> Optional[dict]:
    """``{f1: [...], minutes: mean, planned: n}`` of one selection of ``results.csv`` (None: the plan has no such run)."""
    chosen = [
        r for r in rows if (r["scenario"], r["ablation"], r["encoder"], r["approach"]) == (scenario, ablation, encoder, approach)
        and (ablation or "benchmark" in r["study"].split(";"))  # the benchmark's own runs, not the ratio grid's
    ]  # fmt: skip
    if not chosen:
        return None
    done = [r for r in chosen if r["status"] == "done"]
    return {
        "f1": [100 * float(r["f1"]) for r in done], "by_seed": {r["seed"]: 100 * float(r["f1"]) for r in done}, "planned": len(chosen),
        "minutes": mean([float(r["seconds"]) / 60 for r in done]) if done else None,
    }  # fmt: skip


def cell_text(found: Optional[dict], with_cost: bool = True) -> str:
    """``74.3 ± 1.0 (3 seeds, 15 min)``; ``not run yet (0 of 3 seeds)``; ``–`` (not in the plan)."""
    if found is None:
        return "–"
    values = found["f1"]
    if not values:
        return f"not run yet (0 of {found['planned']})"
    text = f"{mean(values):.1f}" + (f" ± {std(values):.1f}" if len(values) > 1 else "")
    seeds = f"{len(values)} seed{'s' if len(values) > 1 else ''}" if len(values) == found["planned"] else f"{len(values)} of {found['planned']} seeds"
    return text + f" ({seeds}" + (f", {found['minutes']:.0f} min" if with_cost else "") + ")"


def guide_markdown(rows: List[Dict[str, str]], paper_rows: Dict[tuple, Dict[str, float]]) -> str:
    """The guide: per regime the best measured approach and the alternatives, MiniLM and mpnet, then where
    our numbers and the paper's part (EER-short against SNS-shortest on EE)."""
    lines = [
        "| your annotation | train (best measured, MiniLM) | test F1, MiniLM (seeds, min per run) | test F1, mpnet | the others, MiniLM |",
        "|:---|:---|---:|---:|:---|",
    ]
    for regime, candidates in REGIMES:
        found = [(label, cell(rows, s, a, SMALL, x), cell(rows, s, b, LARGE, x) if b else None) for label, s, a, b, x in candidates]
        measured = [f for f in found if f[1] and f[1]["f1"]]
        if not measured:
            lines.append(f"| {regime} | not measured yet | – | – | – |")
            continue
        best = max(measured, key=lambda f: mean(f[1]["f1"]))
        others = "; ".join(f"{label} {cell_text(small, False)}" for label, small, _ in found if label != best[0] and small)
        lines.append(f"| {regime} | {best[0]} | {cell_text(best[1])} | {cell_text(best[2])} | {others} |")
    ours = {enc: [cell(rows, "EE", abl, enc, a) for a in ("eer_short", "sns_shortest")] for enc, abl in ((SMALL, ""), (LARGE, "mpnet-encoder"))}
    parts = []
    for encoder, (eer, sns) in ours.items():
        seeds = sorted(set(eer["by_seed"]) & set(sns["by_seed"])) if eer and sns else []
        if seeds:  # the mean of the per-seed differences over the seeds both finished
            difference = mean([eer["by_seed"][s] - sns["by_seed"][s] for s in seeds])
            parts.append(f"{difference:+.1f} with {encoder} ({len(seeds)} seed{'s' if len(seeds) > 1 else ''})")
    paper = [paper_rows.get(("ee", label), {}).get("eng-c") for label in ("EER-BERT-short", "SNS-BERT-shortest")]
    if None not in paper and parts:
        lines += [
            "",
            f"Where we disagree with the paper: on EE data the paper's EER-short beats SNS-shortest by {paper[0] - paper[1]:+.1f} F1 "
            f"(RoBERTa-base on a GPU, {paper[0]:.1f} vs {paper[1]:.1f}); here EER-short minus SNS-shortest is {' and '.join(parts)}.",
        ]
    return "\n".join(lines)


def replace_region(text: str, body: str) -> Optional[str]:
    """``text`` (the README) with the region between :data:`START` and :data:`END` replaced by ``body``; None
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
    """The guide between the README's markers (None without them)."""
    return between(text, START, END)


def write_guide(readme: Path, results_csv: Path, paper_rows) -> None:
    """The guide from the report's CSV into the README's region, when the README (beside the docs directory) has one."""
    from eer_plugin.runtime.atomic import atomic_write_text

    if readme.is_file() and results_csv.is_file():
        text = replace_region(readme.read_text(), guide_markdown(read_rows(results_csv.read_text()), paper_rows))
        if text is not None and text != readme.read_text():
            atomic_write_text(str(readme), text)
