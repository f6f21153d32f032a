"""Convergence of EER's training rho_hat: the final rho_hat of every EER run against rho* (the gold
subword entity ratio of its training data), as in the paper's analysis."""
from typing import Dict, List, Tuple

from eer_plugin.benchmark.plan import approach_label
from eer_plugin.benchmark.tables import markdown_table, mean


def convergence(report) -> str:
    """MAE of the final rho_hat against rho* per (dataset, scenario, approach, ratio, encoder), over the
    paper's own selection (EER-short, EE scenarios, benchmark setting) and over all EER runs."""
    groups: Dict[Tuple, List[dict]] = {}
    for run in report.plan.runs:
        record = report.records[run.key]
        if run.family != "eer" or record.get("status") != "done" or record.get("rho_hat") is None or record.get("rho_star") is None:
            continue
        groups.setdefault((run.dataset.name, run.scenario_name, run.approach, run.ratio, run.encoder), []).append(record)
    if not groups:
        return ""
    rows, all_errors, all_bound_errors = [], [], []
    # the paper's comparison: final EER-short models of the EE data sets, benchmark setting
    ee_scenarios = {s.name for s in report.plan.scenarios if s.type == "ee"}
    paper_errors, paper_bound_errors = [], []
    for (dataset, scenario, approach, ratio, encoder), records in groups.items():
        errors = [abs(r["rho_hat"] - r["rho_star"]) for r in records]
        bound_errors = [abs(r["entity_ratio"] + r["ratio_margin"] - r["rho_star"]) for r in records]
        all_errors += errors
        all_bound_errors += bound_errors
        if approach == "eer_short" and ratio is None and scenario in ee_scenarios:
            paper_errors += errors
            paper_bound_errors += bound_errors
        rho, gamma = records[0]["entity_ratio"], records[0]["ratio_margin"]
        rows.append([
            dataset, scenario, approach_label(approach) + (f" ({report.plan.encoder_slugs[encoder]})" if len(report.plan.encoders) > 1 else ""),
            f"{rho:g} ± {gamma:g}", str(len(records)), f"{mean([r['rho_hat'] for r in records]):.3f}",
            f"{mean([r['rho_star'] for r in records]):.3f}", f"{mean(errors):.3f}", f"{mean(bound_errors):.3f}",
        ])  # fmt: skip
    if paper_errors:
        rows.append([
            "**EER-short, EE scenarios, benchmark setting** (the paper's comparison)", "", "", "", str(len(paper_errors)), "", "",
            f"**{mean(paper_errors):.3f}**", f"**{mean(paper_bound_errors):.3f}**",
        ])  # fmt: skip
    rows.append(["**all EER runs**", "", "", "", str(len(all_errors)), "", "", f"**{mean(all_errors):.3f}**", f"**{mean(all_bound_errors):.3f}**"])
    header = ["dataset", "scenario", "approach", "rho ± gamma", "runs", "final rho_hat", "rho*", "MAE(rho_hat, rho*)", "MAE(rho + gamma, rho*)"]
    return markdown_table(header, rows, ["l", "l", "l", "l", "r", "r", "r", "r", "r"])
