"""The sections of ``docs/results.md`` for the plan's ``blocks`` (the benchmark table again on another
encoder, issue 27): per scenario and approach the test F1 over the block's seeds (mean ± sd, "k of n seeds"
while runs are missing) with the paired bootstrap against the reference approach (seeds pooled), the runs
of the ablation settings the block repeats with its encoder (each against the reference approach on the
same data), the paper's claims on the block's runs, the epochs until rho_hat entered the band, the hours
and machines, and the runs not finished yet. Written by :func:`~eer_benchmark.report.docs.render_docs`
from the same records, bootstrap and claims as the rest of the page."""

from typing import Dict, List, Optional

from eer_benchmark.analyse.paper import paper_value
from eer_benchmark.analyse.studies import band_of_run, on_benchmark_data, same_data_reference
from eer_benchmark.machine import machine_text
from eer_benchmark.plan.approaches import approach_label
from eer_benchmark.plan.plan import GOLD_SCENARIO
from eer_benchmark.report.cells import cell, runs_of
from eer_benchmark.report.claims import claims_paragraph, differences, pooled
from eer_benchmark.report.reproduction import read_checks, reproduction_lines
from eer_benchmark.tables import markdown_table, mean_sd_cell


def _delta_text(test: Optional[dict]) -> str:
    if test is None:
        return "–"
    mark = ("†" if test["delta"] > 0 else "‡") if test["significant"] else ""
    return f"{100 * test['delta']:+.1f}{mark} [{100 * test['ci_low']:+.1f}, {100 * test['ci_high']:+.1f}]"


def _minutes(records: Dict[int, dict]) -> str:
    seconds = [float(r.get("seconds") or 0) for r in records.values()]
    return f"{sum(seconds) / 60 / len(seconds):.1f}" if seconds else "–"


def _row(label, approach, seeds, done, test, ours, paper) -> list:
    """One row of a block's table: F1 over the block's seeds (``done``), the paired difference ``test``, minutes,
    the benchmark's own runs (``ours``) and the paper's number."""
    return [
        label,
        approach_label(approach),
        seeds,
        mean_sd_cell([done[s]["f1"] for s in sorted(done)], None),
        _delta_text(test),
        _minutes(done),
        mean_sd_cell([ours[s]["f1"] for s in sorted(ours)], None),
        paper,
    ]


def block_table(report, block, rows, dataset: str, column: str) -> str:
    """One row per scenario and approach of the block, then one per setting the block repeats."""
    plan = report.plan
    runs, reference, lines = runs_of(plan, block), plan.reference, []
    groups = (
        [(None, [a for a in block["approaches"] if a in ("gold", "gold_sns")])]
        if any(r.scenario is None for r in runs)
        else []
    )
    scenarios = {s.name: s for s in plan.scenarios}
    groups += [(scenarios[entry["name"]], entry["approaches"]) for entry in block["scenarios"]]
    for scenario, approaches in groups:
        name = scenario.name if scenario else GOLD_SCENARIO
        for approach in approaches:
            done, seeds = cell(report, runs, approach, name)
            test = None
            if scenario is not None and reference and approach != reference:
                test, _ = pooled(
                    report,
                    dataset,
                    name,
                    approach,
                    reference,
                    block["encoder"],
                    ablations=(block["slug"], block["slug"]),
                )
            ours = report.done(dataset, name, approach, plan.encoders[0])
            value, _ = paper_value(rows, scenario.type if scenario else None, approach, column)
            paper = f"{value:.1f}" if value is not None else "–"
            lines.append(_row(scenario.name if scenario else "–", approach, seeds, done, test, ours, paper))
    for item in block["settings"]:
        setting, setting_runs = item["setting"], runs_of(plan, block, item["setting"])
        for name in dict.fromkeys(r.scenario_name for r in setting_runs):
            for approach in item["approaches"]:
                done, seeds = cell(report, setting_runs, approach, name)
                test = None
                other = _reference_directory(plan, block, next(r for r in setting_runs if r.scenario_name == name))
                if other is not None and approach != reference:
                    test, _ = pooled(
                        report, dataset, name, approach, reference, block["encoder"], ablations=(setting["slug"], other)
                    )
                ours = report.done(dataset, name, approach, plan.encoders[0], ablation=setting["slug"])
                lines.append(_row(f"{name}, {setting['name']}", approach, seeds, done, test, ours, "–"))
    header = [
        "scenario",
        "approach",
        "seeds finished",
        f"ours: {dataset} F1",
        f"Δ F1 vs {approach_label(reference)}, seeds pooled [{plan.bootstrap['confidence']:.0%} CI]",
        "min per run",
        f"{plan.encoders[0]}: F1",
        f"paper: {column} F1",
    ]
    return markdown_table(header, lines, ["l", "l", "r", "r", "r", "r", "r", "r"])


def _reference_directory(plan, block, run) -> Optional[str]:
    """The directory of the reference approach's runs on the same training and dev data as a block setting's
    ``run``: the block's own for a setting on the scenario's own data (one that changes settings only, such as
    the binding ratio control), else that of the run :func:`~eer_benchmark.analyse.studies.same_data_reference`
    finds (complete documents, with the block's encoder); None when the plan has none."""
    if on_benchmark_data(run):
        return block["slug"]
    found = same_data_reference(plan, run)
    return found.ablation if found is not None else None


def band_table(report, block) -> str:
    """Per finished EER run of the block: its band, the first epoch with the training rho_hat inside it, the final rho_hat."""
    lines = []
    for _, setting, run in report.plan.block_entries:
        if _ is block and run.trains_with_ratio and report.records[run.key].get("status") == "done":
            rho, gamma = report.plan.ratio_of(run, report.records[run.key])
            first, final = band_of_run(report, run, report.records[run.key])
            where = f"{run.scenario_name}, {setting['name']}" if setting else run.scenario_name
            lines.append(
                [
                    where,
                    approach_label(run.approach),
                    str(run.seed),
                    f"[{rho - gamma:.2f}, {rho + gamma:.2f}]",
                    first,
                    final,
                ]
            )
    header = ["scenario", "approach", "seed", "[rho - gamma, rho + gamma]", "first epoch in band", "final rho_hat"]
    return markdown_table(header, lines, ["l", "l", "r", "l", "r", "r"]) if lines else ""


def machines_text(records) -> str:
    """The machines finished runs' records name, with their counts: ``'GPU NVIDIA H200 (...): 18 runs'``."""
    machines: Dict[str, int] = {}
    for record in records:
        text = machine_text(record.get("machine")).replace(
            "not recorded", "not recorded (runs from before the records kept it)"
        )
        machines[text] = machines.get(text, 0) + 1
    return "; ".join(f"{text}: {count} run{'s' if count > 1 else ''}" for text, count in machines.items())


def cost_text(report, block) -> str:
    """The block's compute hours and the machines its finished runs record."""
    runs = [run for b, _, run in report.plan.block_entries if b is block]
    done = [report.records[r.key] for r in runs if report.records[r.key].get("status") == "done"]
    hours = sum(report.compute_seconds(r) for r in done) / 3600
    where = machines_text(done)
    return (
        f"{len(done)} of {len(runs)} runs finished, {hours:.1f} hours of compute (training, decoding-cost search and "
        f"test evaluation, each run once)" + (f". Machines: {where}" if where else "") + "."
    )


def missing_runs(report, block) -> List[str]:
    return [
        f"- `{run.name}`: {report.records[run.key].get('status', 'missing').replace('missing', 'not run yet')}"
        for b, _, run in report.plan.block_entries
        if b is block and report.records[run.key].get("status") != "done"
    ]


def block_sections(report, paper, dataset_column: Dict[str, str], checks_file: Optional[str] = None) -> List[str]:
    """The lines of one section per block of the plan (none without blocks); ``checks_file``: the records
    of runs trained again on another machine (:func:`~eer_benchmark.report.reproduction.read_checks`),
    named as given (the report's absolute paths become relative to the repository when written)."""

    parts: List[str] = []
    plan = report.plan
    checks = read_checks(checks_file)
    for block in plan.blocks:
        parts += [
            f'## The benchmark on {block["encoder"]} (block "{block["name"]}")',
            "",
            f"The benchmark table again with the encoder {block['encoder']}, every other setting the plan's; seeds "
            + "; ".join(f"{e['name']}: {', '.join(map(str, e['seeds']))}" for e in block["scenarios"])
            + f". {cost_text(report, block)} Δ: the paired bootstrap over test documents against "
            f"{approach_label(plan.reference)} with the same encoder, the seeds both finished pooled (for a setting: the "
            f"reference approach on the same data); † / ‡ significantly better / worse. The column {plan.encoders[0]} is "
            "the plan's table (a setting: its ablation runs) for comparison.",
            "",
        ]
        for dataset in plan.datasets:
            column = dataset_column.get(dataset.name, dataset.name)
            parts += [block_table(report, block, paper.rows, dataset.name, column), ""]
            parts += [
                'The paper\'s claims on these runs (as in "Ours next to the paper" below):',
                "",
                differences(plan, report, paper.rows, dataset.name, column, paper.robustness, block),
                "",
            ]
            paragraph = claims_paragraph(plan, report, paper.rows, paper.robustness, dataset.name, column, block)
            parts += [paragraph, ""] if paragraph else []
        band = band_table(report, block)
        if band:
            parts += [
                'Epochs until the training rho_hat entered the band (as in "Epochs until rho_hat entered the band"):',
                "",
                band,
                "",
            ]
        parts += reproduction_lines(
            report,
            block,
            checks,
            "Runs trained again on another machine, to check that it reproduces them (their records: "
            f"`{checks_file}`; the block's seeds: its finished runs of the same approach and data):",
        )
        missing = missing_runs(report, block)
        if missing:
            parts += [f"Runs not finished ({len(missing)}):", "", *missing, ""]
    return parts
