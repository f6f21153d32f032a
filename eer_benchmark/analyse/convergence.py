"""Convergence of EER's training rho_hat: the final rho_hat of every EER run against rho* (the gold
subword entity ratio of its training data), as in the paper's analysis, the first epoch at which
rho_hat entered the band [rho - gamma, rho + gamma] of the ratio loss, and the epoch from which it
stayed there (a run can enter the band early and leave it again)."""

from pathlib import Path
from typing import Dict, List, Optional, Tuple

from eer_benchmark.plan.plan import BIND_SLUG
from eer_benchmark.tables import markdown_table, mean, read_json

#: slack of the band test, so that a rho_hat printed as the band's edge counts as inside
BAND_TOLERANCE = 1e-9


def rho_hat_per_epoch(run_dir: Path) -> List[Tuple[int, float]]:
    """``(epoch, training rho_hat)`` of a run directory's ``metrics_epoch_<k>.json`` files (AllenNLP's,
    ``k`` from 0), sorted by epoch; epochs without ``training_rho_hat`` are left out."""
    epochs = []
    for file in run_dir.glob("metrics_epoch_*.json"):
        data = read_json(file)
        if data and data.get("training_rho_hat") is not None:
            epochs.append((int(file.stem.rsplit("_", 1)[1]), float(data["training_rho_hat"])))
    return sorted(epochs)


def in_band(value: float, rho: float, gamma: float) -> bool:
    return rho - gamma - BAND_TOLERANCE <= value <= rho + gamma + BAND_TOLERANCE


def first_epoch_in_band(epochs: List[Tuple[int, float]], rho: float, gamma: float) -> Optional[int]:
    """The first epoch (counted from 1) whose rho_hat lies in [rho - gamma, rho + gamma]; None: never."""
    return next((epoch + 1 for epoch, value in epochs if in_band(value, rho, gamma)), None)


def epoch_in_band_to_the_end(epochs: List[Tuple[int, float]], rho: float, gamma: float) -> Optional[int]:
    """The first epoch (counted from 1) from which every epoch's rho_hat lies in [rho - gamma, rho + gamma]
    up to the last one; None: the last epoch's rho_hat is outside the band (or there are no epochs)."""
    settled = None
    for epoch, value in epochs:
        settled = (settled or epoch + 1) if in_band(value, rho, gamma) else None
    return settled


def band_text(epochs: List[Tuple[int, float]], rho: float, gamma: float) -> Tuple[str, str]:
    """("first epoch in band", "in band from ... to the end") cells: an epoch number or "never"."""
    first, settled = first_epoch_in_band(epochs, rho, gamma), epoch_in_band_to_the_end(epochs, rho, gamma)
    return ("never" if first is None else str(first)), ("never" if settled is None else str(settled))


def band_entry_table(report) -> str:
    """Per finished EER run: the epochs it trained, the first epoch whose training rho_hat lies inside
    [rho - gamma, rho + gamma] (or "never"), the epoch from which it stayed inside to the end (or
    "never": the last epoch's is outside) and the final rho_hat; "" when no run has per-epoch metrics."""
    plan = report.plan
    rows = []
    for run in plan.runs:
        if not run.trains_with_ratio or report.records[run.key].get("status") != "done":
            continue
        epochs = rho_hat_per_epoch(report.runner.run_dir(run))
        if not epochs:
            continue
        rho, gamma = plan.ratio_of(run, report.records[run.key])
        rows.append(
            [
                run.dataset.name,
                run.scenario_name,
                _label(plan, run.approach, run.encoder, run.ablation),
                str(run.seed),
                f"[{rho - gamma:.2f}, {rho + gamma:.2f}]",
                str(len(epochs)),
                *band_text(epochs, rho, gamma),
                f"{epochs[-1][1]:.3f}",
            ]
        )
    if not rows:
        return ""
    header = [
        "dataset",
        "scenario",
        "approach",
        "seed",
        "[rho - gamma, rho + gamma]",
        "epochs",
        "first epoch in band",
        "in band from (to the end)",
        "final rho_hat",
    ]
    return markdown_table(header, rows, ["l", "l", "l", "r", "l", "r", "r", "r", "r"])


def ablation_names(plan) -> Dict[str, str]:
    """Ablation setting directory name -> its name in the plan (the ratio grid's bands under the binding
    control live in ``binding-ratio-control`` whether or not the plan has an ablation of that name; a block's runs
    in the directory of its name)."""
    names = {BIND_SLUG: "binding ratio control", **{block["slug"]: block["name"] for block in plan.blocks}}
    return {**names, **{setting["slug"]: setting["name"] for setting in (plan.ablations or {}).get("settings", [])}}


def _label(plan, approach: str, encoder: str, ablation: Optional[str]) -> str:
    """``EER-short``; with several encoders ``EER-short (MiniLM)``; an ablation run ``EER-short, ablation: <name>``."""
    return plan.label(approach, encoder) + (f", ablation: {ablation_names(plan)[ablation]}" if ablation else "")


def convergence(report) -> str:
    """MAE of the final rho_hat against rho* per (dataset, scenario, approach, ratio, encoder), over the
    paper's own selection (EER-short, EE scenarios, benchmark setting) and over all EER runs."""
    groups: Dict[Tuple, List[dict]] = {}
    for run in report.plan.runs:
        record = report.records[run.key]
        if (
            not run.trains_with_ratio
            or record.get("status") != "done"
            or record.get("rho_hat") is None
            or record.get("rho_star") is None
        ):
            continue
        groups.setdefault(
            (run.dataset.name, run.scenario_name, run.approach, run.ratio, run.encoder, run.ablation), []
        ).append(record)
    if not groups:
        return ""
    rows, all_errors, all_bound_errors = [], [], []
    # the paper's comparison: final EER-short models of the EE data sets, benchmark setting
    ee_scenarios = {s.name for s in report.plan.scenarios if s.type == "ee"}
    paper_errors, paper_bound_errors = [], []
    for (dataset, scenario, approach, ratio, encoder, ablation), records in groups.items():
        errors = [abs(r["rho_hat"] - r["rho_star"]) for r in records]
        bound_errors = [abs(r["entity_ratio"] + r["ratio_margin"] - r["rho_star"]) for r in records]
        all_errors += errors
        all_bound_errors += bound_errors
        if approach == "eer_short" and ratio is None and ablation is None and scenario in ee_scenarios:
            paper_errors += errors
            paper_bound_errors += bound_errors
        rho, gamma = records[0]["entity_ratio"], records[0]["ratio_margin"]
        rows.append(
            [
                dataset,
                scenario,
                _label(report.plan, approach, encoder, ablation),
                f"{rho:g} ± {gamma:g}",
                str(len(records)),
                f"{mean([r['rho_hat'] for r in records]):.3f}",
                f"{mean([r['rho_star'] for r in records]):.3f}",
                f"{mean(errors):.3f}",
                f"{mean(bound_errors):.3f}",
            ]
        )
    if paper_errors:
        rows.append(
            [
                "**EER-short, EE scenarios, benchmark setting** (the paper's comparison)",
                "",
                "",
                "",
                str(len(paper_errors)),
                "",
                "",
                f"**{mean(paper_errors):.3f}**",
                f"**{mean(paper_bound_errors):.3f}**",
            ]
        )
    rows.append(
        [
            "**all EER runs**",
            "",
            "",
            "",
            str(len(all_errors)),
            "",
            "",
            f"**{mean(all_errors):.3f}**",
            f"**{mean(all_bound_errors):.3f}**",
        ]
    )
    header = [
        "dataset",
        "scenario",
        "approach",
        "rho ± gamma",
        "runs",
        "final rho_hat",
        "rho*",
        "MAE(rho_hat, rho*)",
        "MAE(rho + gamma, rho*)",
    ]
    return markdown_table(header, rows, ["l", "l", "l", "l", "r", "r", "r", "r", "r"])
