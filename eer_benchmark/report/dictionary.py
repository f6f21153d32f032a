"""The dictionary block of ``docs/results.md`` (issue 48): per dictionary scenario of the plan (``type:
'dictionary'``, one per coverage), the scenario's own precision and recall against gold (as the EE/NNS rows show
theirs), each approach's test F1 (mean ± sd over its finished seeds, "pending" while none finished), the ablation
settings run on the scenario (e.g. "estimate, then bind" with 20 complete documents), and the paired bootstrap of
each approach against the best baseline (the non-EER approach with the best mean F1, seeds both finished pooled).
Every number comes from the runs' records; nothing is typed by hand."""

from typing import Dict, List, Optional, Tuple

from eer_benchmark.analyse.convergence import ablation_names
from eer_benchmark.plan.approaches import approach_label, family_of
from eer_benchmark.plan.plan import GOLD_SCENARIO
from eer_benchmark.report.claims import pooled
from eer_benchmark.tables import markdown_table, mean, read_json, std


def dictionary_scenarios(plan) -> list:
    return [s for s in plan.scenarios if s.type == "dictionary"]


def scenario_quality(report, dataset: str, scenario) -> Optional[Dict[str, float]]:
    """Precision and recall of the scenario's labels against gold (mean over its seeds' data, from the simulator's
    statistics) and the seeds they come from; None before its data were made."""
    found = []
    for seed in report.plan.scenario_seeds(scenario):
        stats = read_json(report.runner.data.path(dataset, scenario.name, seed, ".stats.json"))
        if stats and stats.get("precision") is not None:
            found.append(stats)
    if not found:
        return None
    return {
        "precision": mean([s["precision"] for s in found]),
        "recall": mean([s["recall"] for s in found]),
        "seeds": len(found),
    }


def rows_of(report, scenario) -> List[Tuple[str, str, Optional[str], str]]:
    """(label, approach, ablation directory, scenario name) of the block's rows: the plan's gold runs, the scenario's
    approaches, then the ablation settings run on it."""
    plan = report.plan
    rows = [(approach_label(a), a, None, GOLD_SCENARIO) for a in plan.approaches if family_of(a).gold]
    rows += [(approach_label(a), a, None, scenario.name) for a in plan.scenario_approaches(scenario)]
    names = ablation_names(plan)
    seen = set()
    for _, run in plan.ablation_entries:
        if run.scenario_name == scenario.name and (run.ablation, run.approach) not in seen:
            seen.add((run.ablation, run.approach))
            rows.append(
                (f"{approach_label(run.approach)}, {names[run.ablation]}", run.approach, run.ablation, scenario.name)
            )
    return rows


def f1_cell(report, dataset, scenario_name, approach, encoder, ablation) -> Tuple[str, Optional[float]]:
    done = report.done(dataset, scenario_name, approach, encoder, None, ablation)
    planned = sum(
        1
        for run in report.plan.runs
        if run.key[:4] == (dataset, scenario_name, approach, encoder) and run.ablation == ablation and run.ratio is None
    )
    values = [100 * done[s]["f1"] for s in sorted(done)]
    if not values:
        return f"pending (0 of {planned} seeds)", None
    text = f"{mean(values):.1f}" + (f" ± {std(values):.1f}" if len(values) > 1 else "")
    return text + (
        f" ({len(values)} of {planned} seeds)" if len(values) < planned else f" ({len(values)} seeds)"
    ), mean(values)


def best_baseline(report, dataset, scenario, encoder) -> Optional[str]:
    """The scenario's non-EER, non-gold approach with the best mean F1 over its finished seeds (None: none finished)."""
    scored = []
    for approach in report.plan.scenario_approaches(scenario):
        if family_of(approach).ratio:
            continue
        done = report.done(dataset, scenario.name, approach, encoder)
        if done:
            scored.append((mean([r["f1"] for r in done.values()]), approach))
    return max(scored)[1] if scored else None


def bootstrap_cell(report, dataset, scenario, approach, encoder, ablation, baseline) -> str:
    if baseline is None:
        return "pending (no baseline finished)"
    if ablation is None and approach == baseline:
        return "the best baseline"
    test, per_seed = pooled(report, dataset, scenario.name, approach, baseline, encoder, ablations=(ablation, None))
    if test is None:
        return "pending"
    mark = ("†" if test["delta"] > 0 else "‡") if test["significant"] else ""
    seeds = len(per_seed)
    return (
        f"{100 * test['delta']:+.1f}{mark} [{100 * test['ci_low']:+.1f}, {100 * test['ci_high']:+.1f}] "
        f"({seeds} seed{'s' if seeds > 1 else ''})"
    )


def dictionary_section(report) -> List[str]:
    """The lines of the section (none when the plan has no dictionary scenario)."""
    plan = report.plan
    scenarios = dictionary_scenarios(plan)
    if not scenarios:
        return []
    confidence = plan.bootstrap["confidence"]
    encoder = plan.encoders[0]
    parts = [
        "## Starting from a dictionary",
        "",
        "A dictionary of a share of the training set's distinct gold entity surface forms (drawn with the run's seed), "
        "matched over the training text by `eer-ner eer-dictionary`'s matcher (longest match on token boundaries), so "
        "its false positives are real; the labels' precision and recall against gold are the scenario's own (mean over "
        f"its seeds' data). Encoder {encoder}; test F1 mean ± sd over the finished seeds; Δ: the paired bootstrap over "
        f"test documents ({confidence:.0%}) against the best baseline (the approach without the ratio with the best "
        "mean F1 on the same data), the seeds both finished pooled; † / ‡ significantly better / worse. An ablation "
        "setting's row (e.g. 20 training documents annotated completely) is compared with the same baseline on the "
        "dictionary's data alone. Pending: the plan's runs have not finished yet.",
        "",
    ]
    for dataset in plan.datasets:
        for scenario in scenarios:
            quality = scenario_quality(report, dataset.name, scenario)
            said = (
                f"labels' precision {quality['precision']:.3f}, recall {quality['recall']:.3f} against gold "
                f"(mean over {quality['seeds']} seed{'s' if quality['seeds'] > 1 else ''})"
                if quality
                else "labels' precision and recall pending (its data not made yet)"
            )
            baseline = best_baseline(report, dataset.name, scenario, encoder)
            lines = []
            for label, approach, ablation, scenario_name in rows_of(report, scenario):
                text, _ = f1_cell(report, dataset.name, scenario_name, approach, encoder, ablation)
                gold = scenario_name == GOLD_SCENARIO
                delta = (
                    "–"
                    if gold
                    else bootstrap_cell(report, dataset.name, scenario, approach, encoder, ablation, baseline)
                )
                lines.append([label, text, delta])
            best = approach_label(baseline) if baseline else "pending"
            parts += [
                f"**{dataset.name}, {scenario.name}**: {scenario.describe()}; {said}. Best baseline: {best}.",
                "",
                markdown_table(
                    ["approach", "test F1", f"Δ F1 vs the best baseline [{confidence:.0%} CI]"], lines, ["l", "r", "r"]
                ),
                "",
            ]
    return parts
