"""The report's figures (matplotlib, Agg backend): the learning curves and training rho_hat per epoch."""

import math
from pathlib import Path
from typing import Dict, List

from eer_benchmark.analyse.convergence import rho_hat_per_epoch
from eer_benchmark.analyse.studies import curve_label
from eer_benchmark.plan.plan import GOLD_SCENARIO
from eer_benchmark.tables import mean
from eer_plugin.common.outputs import replacing


def _save(figure, path) -> None:
    """``figure.savefig(path)``, atomically (the format from ``path``'s extension)."""
    with replacing(str(path)) as temporary:
        figure.savefig(temporary, dpi=120, format=Path(path).suffix.lstrip(".") or "png")


def plot_learning_curve(report, rows: List[dict], path: Path) -> bool:
    """Test F1 against the budget per dataset (one panel each), Gold as a dotted line; False when nothing to draw."""
    if not any(r["mean_f1"] is not None for r in rows):
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    figure, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.5), squeeze=False)
    for axis, dataset in zip(axes[0], datasets):
        lines = dict.fromkeys(
            (r["scheme"], r["approach"], r["encoder"], r.get("setting", "")) for r in rows if r["dataset"] == dataset
        )
        for scheme, approach, encoder, setting in lines:
            curve_points = sorted(
                (r["budget"], r["mean_f1"], r["std_error"])
                for r in rows
                if (r["dataset"], r["scheme"], r["approach"], r["encoder"], r.get("setting", ""))
                == (dataset, scheme, approach, encoder, setting)
                and r["mean_f1"] is not None
            )
            if not curve_points:
                continue
            x = [p[0] for p in curve_points]
            y = [100 * p[1] for p in curve_points]
            e = [100 * p[2] for p in curve_points]
            label = curve_label(report.plan, scheme, approach, encoder, setting)
            (line,) = axis.plot(x, y, marker="o", linestyle="-" if scheme == "EE" else "--", label=label)
            axis.fill_between(
                x, [a - b for a, b in zip(y, e)], [a + b for a, b in zip(y, e)], color=line.get_color(), alpha=0.2
            )
        for encoder in report.plan.encoders:
            gold = [r["f1"] for r in report.done(dataset, GOLD_SCENARIO, "gold", encoder).values()]
            if gold:
                axis.axhline(100 * mean(gold), color="black", linestyle=":", label="Gold-all (all annotations)")
        axis.set_xscale("log")
        budgets = report.plan.learning_curve["budgets"]
        axis.set_xticks(budgets)
        axis.set_xticklabels([f"{b:,}" for b in budgets])
        axis.minorticks_off()
        axis.set_xlabel("annotated entities (budget)")
        axis.set_ylabel("test F1")
        axis.set_title(dataset)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    _save(figure, path)
    plt.close(figure)
    return True


def plot_rho_hat(report, path: Path) -> bool:
    """Training rho_hat per epoch of the benchmark's EER runs, one panel per (dataset, scenario), with the
    band [rho - gamma, rho + gamma] and rho* dotted; False when no run has per-epoch metrics."""
    series = []
    for run in report.plan.runs:
        record = report.records[run.key]
        if not run.trains_with_ratio or "benchmark" not in run.studies or record.get("status") != "done":
            continue
        epochs = rho_hat_per_epoch(report.runner.run_dir(run))
        if epochs:
            series.append((run, epochs, record))
    if not series:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    panels = list(dict.fromkeys((run.dataset.name, run.scenario_name) for run, _, _ in series))
    columns = min(3, len(panels))
    rows_count = math.ceil(len(panels) / columns)
    figure, axes = plt.subplots(rows_count, columns, figsize=(5.5 * columns, 4 * rows_count), squeeze=False)
    colors: Dict[str, str] = {}
    for index, panel in enumerate(panels):
        axis = axes[index // columns][index % columns]
        labelled = set()
        for run, epochs, record in series:
            if (run.dataset.name, run.scenario_name) != panel:
                continue
            label = report.plan.label(run.approach, run.encoder)
            color = colors.setdefault(label, f"C{len(colors) % 10}")
            axis.plot(
                [e + 1 for e, _ in epochs],
                [v for _, v in epochs],
                color=color,
                marker="o",
                markersize=3,
                label=None if label in labelled else label,
                alpha=0.8,
            )
            labelled.add(label)
            if record.get("rho_star") is not None:
                axis.axhline(record["rho_star"], color=color, linestyle=":", linewidth=1)
            rho, gamma = record["entity_ratio"], record["ratio_margin"]
        axis.axhspan(rho - gamma, rho + gamma, color="grey", alpha=0.15, label="[rho - gamma, rho + gamma]")
        axis.set_title(f"{panel[0]}, {panel[1]}")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.set_xlabel("epoch")
        axis.set_ylabel("training rho_hat (dotted: rho*)")
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    for index in range(len(panels), rows_count * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    _save(figure, path)
    plt.close(figure)
    return True
