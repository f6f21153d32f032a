"""The sections of ``OUTDIR/results.md`` in order (:meth:`Report.write <eer_benchmark.report.report.Report.write>`
joins them): each function takes the report and returns the section's lines (none when the plan has no
such analysis); the learning curve and the convergence sections also write their CSV and plot files
and name them in ``written``."""

import csv
import io
from typing import Dict, List

from eer_benchmark.analyse import convergence, studies
from eer_benchmark.plan.approaches import approach_label
from eer_benchmark.report import plots
from eer_plugin.common.atomic import atomic_write_text

#: the head learning rate of the configs when the plan and the config defaults name none
DEFAULT_HEAD_LEARNING_RATE = "1e-3"


def csv_text(fields, rows) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def header(report, status: Dict[str, int]) -> List[str]:
    plan = report.plan
    return [
        f"# Benchmark: {plan.name}",
        "",
        (
            f"Plan `{plan.path}`; {len(plan.runs)} runs: {status['done']} finished, {status['failed']} failed, "
            f"{status['missing']} not run (yet). {'Encoder' if len(plan.encoders) == 1 else 'Encoders'}: {', '.join(plan.encoders)}; seeds {plan.seeds_description()}; "
            f"epochs {plan.epochs_description()}{'; ' + plan.min_steps_description() if plan.min_steps_description() else ''}. "
            f"Learning rate: encoder {report.setting('EER_LEARNING_RATE')}, freshly initialised heads "
            f"{report.setting('EER_HEAD_LEARNING_RATE', DEFAULT_HEAD_LEARNING_RATE)} (EER_LEARNING_RATE, EER_HEAD_LEARNING_RATE); "
            f"encoder precision {report.precision_text()} (EER_PRECISION). "
            "All numbers below are computed from the run directories by `allennlp eer-benchmark`."
        ),
    ]


def test_f1(report) -> List[str]:
    """The main table, with what its marks mean, and the failed runs."""
    plan = report.plan
    md = ["", "## Test F1", ""]
    seeds_text = "mean ± standard deviation over seeds" if len(plan.all_seeds) > 1 else "one seed"
    md.append(
        f"Word-level span F1 × 100 on each data set's test file ({seeds_text}); **bold**: best of its scenario group. "
        "The Gold row is trained on the complete annotation and does not depend on the scenario. "
        "avg: mean over the data sets (only when every data set has a result)."
    )
    main_table = report.main_table()
    if plan.reference:
        confidence = plan.bootstrap["confidence"]
        md.append(
            f"† / ‡: significantly better / worse than {approach_label(plan.reference)} (paired percentile bootstrap over test "
            f"documents, {plan.bootstrap['resamples']:,} resamples, the two-sided {confidence:.0%} interval of the F1 difference "
            "excludes 0; with several seeds the per-document counts are summed over the seeds both runs finished; "
            "avg: the data sets' documents pooled)."
        )
    md += ["", main_table, ""]
    failed = [(run, report.records[run.key]) for run in plan.runs if report.records[run.key].get("status") == "failed"]
    if failed:
        md += ["### Failed runs", ""]
        md += [f"- `{run.name}`: {record.get('error')} (log `{report.runner.log_path(run)}`)" for run, record in failed]
        md.append("")
    return md


def significance(report) -> List[str]:
    boot = report.bootstrap_table()
    if not boot:
        return []
    reference = approach_label(report.plan.reference)
    return [
        "## Significance (paired bootstrap)",
        "",
        f"Δ = F1(approach) − F1({reference}), in F1 points; p: two-sided bootstrap share.",
        "",
        boot,
        "",
    ]


def wall_time(report, status: Dict[str, int]) -> List[str]:
    times, total = report.time_table()
    if not times:
        return []
    blocks = "; ".join(
        f"{block}: {count} run{'s' if count > 1 else ''}, {seconds / 3600:.1f} h"
        for block, (count, seconds) in report.compute_by_block().items()
    )
    return [
        "## Wall time",
        "",
        f"CPU cost: {total / 3600:.1f} wall hours of compute for the {status['done']} finished runs ({blocks}): the sum of "
        "the wall times of training, decoding-cost search and test evaluation of every run directory once (runs in "
        "parallel with --jobs take less elapsed time). Training time per run is the wall time of its training "
        "subprocess(es); Raw+CD includes the training of its Raw model. " + report.speed_text(),
        "",
        times,
        "",
    ]


def ratio_grid(report) -> List[str]:
    grid = studies.ratio_grid_table(report)
    return ["## EER hyperparameters (rho, gamma)", "", "Test F1 × 100 per seed.", "", grid, ""] if grid else []


#: ``learning_curve_claims.csv``: the learning-curve comparisons, read by the guide's partial-vs-exhaustive sentence
CURVE_CLAIM_FIELDS = (
    "dataset",
    "encoder",
    "budget",
    "a",
    "b",
    "claimed",
    "seeds_planned",
    "seeds_done",
    "delta",
    "ci_low",
    "ci_high",
    "significant",
)


def curve_claim_rows(comparisons: List[dict]) -> List[dict]:
    """The rows of ``learning_curve_claims.csv`` (F1 differences as fractions, empty while pending)."""
    rows = []
    for item in comparisons:
        test = item["test"] or {}
        rows.append(
            {
                "dataset": item["dataset"],
                "encoder": item["encoder"],
                "budget": item["budget"],
                "a": item["label_a"],
                "b": item["label_b"],
                "claimed": "yes" if item["claimed"] else "no",
                "seeds_planned": item["planned"],
                "seeds_done": item["pairs"],
                "delta": test.get("delta", ""),
                "ci_low": test.get("ci_low", ""),
                "ci_high": test.get("ci_high", ""),
                "significant": ("yes" if test["significant"] else "no") if test else "",
            }
        )
    return rows


def learning_curve(report, written: Dict[str, str]) -> List[str]:
    """The learning curves, their claims and plot; writes ``learning_curve.csv`` and ``.png``."""
    outdir = report.runner.outdir
    curve, curve_rows = studies.learning_curve(report)
    if not curve:
        return []
    fields = [
        "dataset",
        "scheme",
        "approach",
        "encoder",
        "setting",
        "budget",
        "seeds_done",
        "seeds_planned",
        "mean_f1",
        "std_error",
        "f1_per_seed",
        "documents_annotated",
    ]
    atomic_write_text(
        outdir / "learning_curve.csv",
        csv_text(fields, ({k: ("" if v is None else v) for k, v in r.items()} for r in curve_rows)),
    )
    written["learning_curve_csv"] = str(outdir / "learning_curve.csv")
    md = [
        "## Learning curves: EE vs exhaustive annotation",
        "",
        "EE: the Exploratory Expert with the given budget; Exhaustive: whole documents annotated completely, in "
        "random order, until the budget is spent (EE with keep probability 1 and no per-document cap).",
        "",
        curve,
        "",
        "Data: `learning_curve.csv`.",
    ]
    curve_claims = studies.learning_curve_claims(report)
    if curve_claims:
        md += [
            "",
            'The paper\'s learning-curve claims (its section "EE vs. Exhaustive Experiments"), each A − B on the '
            "same test documents (paired bootstrap, seeds pooled):",
            "",
            curve_claims,
        ]
        comparisons = studies.curve_comparisons(report)
        if any(item["a"][1:] != ("eer_short", "") for item in comparisons):
            md += [
                "",
                "The paper claims EE + EER-short > Exhaustive + Raw-shortest at 500 and 1,000 annotations; the rows with "
                "EER-shortest (EER's best variant on our EE data) or EER-short under the binding control ask the same of them, "
                "and EE + EER > Exhaustive + the same EER follows from the paper's two other claims. Pending: the plan's "
                "runs of that pair have not finished yet.",
            ]
        atomic_write_text(
            outdir / "learning_curve_claims.csv", csv_text(CURVE_CLAIM_FIELDS, curve_claim_rows(comparisons))
        )
        written["learning_curve_claims_csv"] = str(outdir / "learning_curve_claims.csv")
    if plots.plot_learning_curve(report, curve_rows, outdir / "learning_curve.png"):
        written["learning_curve_png"] = str(outdir / "learning_curve.png")
        md += ["", "![learning curve](learning_curve.png)"]
    md.append("")
    return md


def rho_hat_convergence(report, written: Dict[str, str]) -> List[str]:
    """rho_hat against rho*, and the plot of rho_hat over the epochs (``rho_hat_over_epochs.png``)."""
    table = convergence.convergence(report)
    if not table:
        return []
    md = [
        "## Convergence of rho_hat towards rho*",
        "",
        "Final training rho_hat of every finished EER run against rho*, the share of entity subword tags in the gold "
        "annotation of the documents the run trained on (its train-data variant, tokenized by its encoder). "
        "MAE(rho + gamma, rho*) is the error of a model that would just settle at the top of the interval.",
        "",
        table,
        "",
    ]
    outdir = report.runner.outdir
    if plots.plot_rho_hat(report, outdir / "rho_hat_over_epochs.png"):
        written["rho_hat_png"] = str(outdir / "rho_hat_over_epochs.png")
        md += ["![rho_hat over epochs](rho_hat_over_epochs.png)", ""]
    return md


def band_entry(report) -> List[str]:
    band = convergence.band_entry_table(report)
    if not band:
        return []
    return [
        "## Epochs until rho_hat entered the band",
        "",
        "For every finished EER run: the first epoch (counted from 1) at whose end the training rho_hat "
        "(`metrics_epoch_*.json`) lay inside [rho - gamma, rho + gamma], the band of the ratio loss (never: no epoch did), "
        "and the first epoch from which it stayed inside up to the last one (never: the last epoch's lay outside).",
        "",
        band,
        "",
    ]


def ablations(report) -> List[str]:
    table = studies.ablations_table(report)
    if not table:
        return []
    settings, reference = report.plan.ablations, report.plan.reference
    return [
        "## Ablations",
        "",
        f"Each setting changes the named EER_* settings of the plan and nothing else, on "
        f'{approach_label(settings["approach"])} unless the row names another approach. "benchmark setting" is the '
        "benchmark's own run of that approach (same data, encoder and seed); Δ F1 in points against it"
        + (
            f" and against {approach_label(reference)} (same data and seed; the setting's own run of it when "
            "the setting has one, as with a setting's own encoder; for a setting whose training or dev data differ "
            "from the benchmark's, its run on those same data with the plan's settings where the plan has one)"
            if reference
            else ""
        )
        + "; † / ‡: significantly better / worse (paired bootstrap over test documents, as above). First epoch in band: "
        "the first epoch (of those trained) whose training rho_hat lay inside [rho - gamma, rho + gamma]; "
        '"in band from k": it left the band again and stayed inside from epoch k to the end; "not at the end": '
        "the last epoch's lay outside." + studies.ablation_notes(settings["settings"]),
        "",
        table,
        "",
    ]
