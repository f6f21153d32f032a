"""The plan's analyses beside the main table: the EER hyperparameter grid (rho, gamma) and the
learning curves (EE vs exhaustive annotation at each budget). Each function takes a
:class:`~eer_plugin.benchmark.report.Report` and returns Markdown (and, for the learning curve, its rows)."""
from typing import Dict, List, Tuple

from eer_plugin.benchmark.plan import approach_label
from eer_plugin.benchmark.tables import markdown_table, mean, mean_sd_cell, points, read_json, stderr


def ratio_grid_table(report) -> str:
    """Test F1 per seed and (rho, gamma) setting of the ratio grid, one table per (dataset, scenario, encoder)."""
    if not report.plan.ratio_entries:
        return ""
    groups: Dict[Tuple, Dict[Tuple[float, float], Dict[int, dict]]] = {}
    for group, setting, run in report.plan.ratio_entries:
        record = report.records[run.key]
        cells = groups.setdefault(group, {}).setdefault(setting, {})
        if record.get("status") == "done":
            cells[run.seed] = record
    parts = []
    for (dataset, scenario, encoder), settings in groups.items():
        base = report.plan.base_ratio(next(d for d in report.plan.datasets if d.name == dataset))
        rho_stars = [r["rho_star"] for cells in settings.values() for r in cells.values() if r.get("rho_star") is not None]
        title = f"**{dataset}, scenario {scenario}, {approach_label(report.plan.ratio_grid['approach'])}**"
        if len(report.plan.encoders) > 1:
            title += f", encoder {encoder}"
        if rho_stars:
            title += f" (gold subword ratio of the training data rho* = {mean(rho_stars):.3f}, mean over runs)"
        rows = []
        for (rho, gamma), cells in settings.items():
            label = f"[{rho - gamma:.2f}, {rho + gamma:.2f}] (rho {rho:g}, gamma {gamma:g})" + ("†" if (rho, gamma) == base else "")
            values = [cells[s]["f1"] for s in sorted(cells)]
            per_seed = [points(cells[s]["f1"]) if s in cells else _missing(report, dataset, scenario, encoder, s, (rho, gamma), base) for s in report.plan.seeds]
            rho_hats = [cells[s]["rho_hat"] for s in cells if cells[s].get("rho_hat") is not None]
            rows.append([label, *per_seed, mean_sd_cell(values, None), f"{mean(rho_hats):.3f}" if rho_hats else "–"])
        header = ["[rho - gamma, rho + gamma]", *[f"seed {s}" for s in report.plan.seeds], "mean", "final rho_hat"]
        parts.append(title + "\n\n" + markdown_table(header, rows))
    return "\n\n".join(parts) + "\n\n† the benchmark setting (the plan's EER_ENTITY_RATIO / EER_RATIO_MARGIN)."


def _missing(report, dataset, scenario, encoder, seed, setting, base) -> str:
    """The cell of a grid run without a result: "failed" or "–" (not run)."""
    record = report.lookup(dataset, scenario, report.plan.ratio_grid["approach"], encoder, seed, None if setting == base else setting)
    return "failed" if record and record.get("status") == "failed" else "–"


def learning_curve(report) -> Tuple[str, List[dict]]:
    """F1 (mean ± standard error over seeds) per budget and annotation scheme, and the rows of
    ``learning_curve.csv`` (with the documents annotated, from the simulator's statistics)."""
    if not report.plan.lc_entries:
        return "", []
    cells: Dict[Tuple, List[float]] = {}
    expected: Dict[Tuple, int] = {}
    documents: Dict[Tuple, Dict[int, int]] = {}  # (dataset, scheme, budget) -> seed -> documents annotated
    for dataset, scheme, budget, run in report.plan.lc_entries:
        key = (dataset, scheme, run.approach, run.encoder, budget)
        expected[key] = expected.get(key, 0) + 1
        record = report.records[run.key]
        cells.setdefault(key, [])
        if record.get("status") == "done":
            cells[key].append(record["f1"])
        seeds = documents.setdefault((dataset, scheme, budget), {})
        if run.seed not in seeds:  # one statistics file per data set, scenario and seed, shared by the approaches
            stats = read_json(report.runner.simulated_path(dataset, run.scenario_name, run.seed, ".stats.json"))
            seeds[run.seed] = stats.get("documents_touched") if stats else None
    rows = []
    for (dataset, scheme, approach, encoder, budget), values in cells.items():
        docs = [n for n in documents[(dataset, scheme, budget)].values() if n is not None]
        rows.append({
            "dataset": dataset, "scheme": "EE" if scheme == "ee" else "Exhaustive", "approach": approach, "encoder": encoder,
            "budget": budget, "seeds_done": len(values), "seeds_planned": expected[(dataset, scheme, approach, encoder, budget)],
            "mean_f1": mean(values) if values else None, "std_error": stderr(values) if values else None,
            "f1_per_seed": " ".join(f"{v:.4f}" for v in values),
            "documents_annotated": mean(docs) if docs else None,
        })  # fmt: skip
    budgets = report.plan.learning_curve["budgets"]
    parts = []
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        table_rows = []
        for scheme, approach, encoder in dict.fromkeys((r["scheme"], r["approach"], r["encoder"]) for r in rows if r["dataset"] == dataset):
            label = f"{scheme} + {approach_label(approach)}" + (f" ({report.plan.encoder_slugs[encoder]})" if len(report.plan.encoders) > 1 else "")
            line = [label]
            for budget in budgets:
                r = next(x for x in rows if (x["dataset"], x["scheme"], x["approach"], x["encoder"], x["budget"]) == (dataset, scheme, approach, encoder, budget))
                if r["mean_f1"] is None:
                    line.append("–")
                else:
                    line.append(f"{100 * r['mean_f1']:.1f} ± {100 * r['std_error']:.1f}" if r["seeds_done"] > 1 else points(r["mean_f1"]))
            table_rows.append(line)
        # how many documents carry the budget's annotations: the data the short/shortest variants train on
        for scheme in dict.fromkeys(r["scheme"] for r in rows if r["dataset"] == dataset):
            line = [f"documents annotated ({scheme}, mean over seeds)"]
            for budget in budgets:
                docs = next((x["documents_annotated"] for x in rows if (x["dataset"], x["scheme"], x["budget"]) == (dataset, scheme, budget)), None)
                line.append("–" if docs is None else f"{docs:g}")
            table_rows.append(line)
        parts.append(f"**{dataset}** (test F1, mean ± standard error over seeds)\n\n" + markdown_table(["annotation + training", *map(str, budgets)], table_rows))
    return "\n\n".join(parts), rows
