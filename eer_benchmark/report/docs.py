"""``docs/results.md``: the benchmark report of :mod:`~eer_benchmark.report.report` behind a header
with the exact commands, the hardware and software, and the paper's numbers beside ours (read from
the paper's LaTeX into ``paper_numbers.json`` by :mod:`~eer_benchmark.analyse.paper`). Nothing here is typed by hand.

Written by ``allennlp eer-benchmark PLAN -o OUTDIR --report-only --docs docs --command ...`` (what
``benchmarks/results.sh`` runs, from the repository root). When the docs directory is inside the current
directory (the repository, for ``results.sh``), absolute paths of this machine (the benchmark directory, the
current directory) are written relative to the current directory; the plan is always named relative to it.
"""

import os
import platform
import shutil
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from eer_benchmark.analyse.paper import NO_PAPER_SCENARIO_TYPES, PAPER_NUMBERS, paper_value, read_paper
from eer_benchmark.plan.approaches import approach_label
from eer_benchmark.plan.parse import load_plan
from eer_benchmark.plan.plan import GOLD_SCENARIO
from eer_benchmark.report.blocks import block_sections
from eer_benchmark.report.claims import claims, claims_paragraph, differences, pooled, verdict  # noqa: F401  (public here too)
from eer_benchmark.report.corpora import corpus_section
from eer_benchmark.report.dictionary import dictionary_section
from eer_benchmark.report.guide import CURVE_CLAIMS_CSV, GUIDE_PAGE, write_guide
from eer_benchmark.report.report import Report
from eer_benchmark.report.reproduction import read_checks
from eer_benchmark.report.sections import DEFAULT_HEAD_LEARNING_RATE
from eer_benchmark.run.runner import Runner
from eer_benchmark.tables import markdown_table, mean, mean_sd_cell
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.outputs import replacing

#: the paper's numbers when ``--paper`` is not given: the package's ``paper_numbers.json`` (``--paper``
#: also takes the LaTeX source itself)
DEFAULT_PAPER = PAPER_NUMBERS


def ratio_comparison(report, paper: Dict[tuple, dict]) -> str:
    """Our EER hyperparameter grid beside the paper's table "Varying EER HPs" (``paper``: as
    :func:`~eer_benchmark.analyse.paper.paper_robustness`), setting by setting (matched on the interval
    ``[rho - gamma, rho + gamma]``)."""
    plan = report.plan
    if not plan.ratio_entries:
        return ""
    lines, stars = [], []
    settings: Dict[tuple, List[dict]] = {}  # (group, setting) -> the records of its seeds, in plan order
    dagger: Dict[tuple, bool] = {}
    for group, setting, run in plan.ratio_entries:
        settings.setdefault((group, setting), []).append(report.records[run.key])
        dagger[(group, setting)] = setting == plan.base_ratio(run.dataset)
    for ((dataset, scenario, encoder), (rho, gamma)), records in settings.items():
        done = [r for r in records if r.get("status") == "done"]
        interval = (round(rho - gamma, 2), round(rho + gamma, 2))
        theirs = paper.get(interval)
        stars += [r["rho_star"] for r in done if r.get("rho_star") is not None]
        rho_hats = [r["rho_hat"] for r in done if r.get("rho_hat") is not None]
        lines.append(
            [
                dataset,
                scenario,
                f"[{interval[0]:.2f}, {interval[1]:.2f}]"
                + ("†" if dagger[((dataset, scenario, encoder), (rho, gamma))] else ""),
                mean_sd_cell([r["f1"] for r in done], None) if done else "not run",
                f"{mean(rho_hats):.3f}" if rho_hats else "–",
                f"{theirs['avg']:.1f}" + str(theirs["mark"]) if theirs else "–",
            ]
        )
    star = next((k for k, v in paper.items() if v["mark"] == "*"), None)
    header = [
        "dataset",
        "scenario",
        "[rho - gamma, rho + gamma]",
        f"ours: {approach_label(plan.ratio_grid['approach'])} F1",
        "ours: final rho_hat",
        "paper: F1 (mean of 3 samples)",
    ]
    grid_seeds = sorted({run.seed for _, _, run in plan.ratio_entries})
    seeds = "one seed" if len(grid_seeds) == 1 else f"mean ± sd over seeds {', '.join(map(str, grid_seeds))}"
    notes = (
        (
            f"Ours: {seeds}; rho* (gold subword entity ratio of our training data) = {mean(stars):.3f}. "
            if stars
            else f"Ours: {seeds}. "
        )
        + (
            f"Paper: EER-BERT-short on CoNLL English EE, three sampled data sets; * marks its rho = rho* setting [{star[0]:.2f}, {star[1]:.2f}]; "
            if star
            else ""
        )
        + "† the benchmark setting."
    )
    return markdown_table(header, lines, ["l", "l", "l", "r", "r", "r"]) + "\n\n" + notes


def hardware(runner) -> List[str]:
    import torch
    import transformers

    from eer_benchmark.machine import cpu_name, memory_gib

    return [
        f"- CPU: {cpu_name()}, {os.cpu_count()} cores visible; {memory_gib():.0f} GiB memory; no GPU (`cuda_device` -1)",
        f"- {platform.system()} {platform.release()}, Python {platform.python_version()}, torch {torch.__version__}, "
        f"transformers {transformers.__version__}; one run at a time (`--jobs 1`), {runner.threads} torch threads per run",
    ]


def comparison(plan, report, rows, dataset: str, column: str) -> str:
    """Our F1 next to the paper's for the plan's rows on one dataset."""
    lines = []
    for scenario, specs in report.row_specs():
        if scenario is not None and scenario.type in NO_PAPER_SCENARIO_TYPES:
            continue  # no block of the paper (a dictionary scenario: its own section)
        scenario_name = scenario.name if scenario else GOLD_SCENARIO
        for _, approach, encoder in specs:
            done = report.done(dataset, scenario_name, approach, encoder)
            ours = mean_sd_cell([done[s]["f1"] for s in sorted(done)], None) if done else "not run"
            value, label = paper_value(rows, scenario.type if scenario else None, approach, column)
            epochs = sorted({str(r.get("settings", {}).get("EER_EPOCHS", "")) for r in done.values()})
            seconds = sum(r.get("seconds") or 0 for r in done.values())
            lines.append(
                [
                    scenario.name if scenario else "–",
                    approach_label(approach),
                    ours,
                    ", ".join(epochs) or "–",
                    f"{seconds / 60 / len(done):.1f}" if done else "–",
                    f"{value:.1f}" if value is not None else "–",
                    label or "–",
                ]
            )
    header = [
        "scenario",
        "approach",
        f"ours: {dataset} F1",
        "epochs",
        "min per run",
        f"paper: {column} F1",
        "paper row",
    ]
    return markdown_table(header, lines, ["l", "l", "r", "r", "r", "r", "l"])


def render(plan_path: str, outdir: str, *arguments, **options) -> Path:
    """Writes the report of OUTDIR (``results.md``, ``results.csv``, plots) and ``DOCS/results.md``
    with its assets in ``DOCS/results/``; returns the path of ``DOCS/results.md``. The other arguments are
    those of :func:`render_docs` after ``written`` (``commands, paper, docs, dataset_column, notes, checks,
    corpora``)."""
    plan = load_plan(plan_path, check_files=False)
    report = Report(plan, Runner(plan, outdir))
    return render_docs(report, report.write(), *arguments, **options)


def corpus_report(plan_path: str, outdir: str) -> Report:
    """The report of a further corpus's plan and benchmark directory (nothing runs)."""
    plan = load_plan(plan_path, check_files=False)
    return Report(plan, Runner(plan, outdir))


def repository_relative(text: str, outdir: Path, docs_dir: Path, root: Optional[Path] = None) -> str:
    """``text`` with the absolute paths of this machine (the benchmark directory, ``root``) relative to
    ``root`` (default: the current directory; the repository root for ``benchmarks/results.sh``), when
    ``docs_dir`` is inside ``root``; else unchanged."""
    root = Path(root or os.getcwd()).resolve()
    if not docs_dir.resolve().is_relative_to(root):
        return text
    text = text.replace(str(outdir), os.path.relpath(outdir, root))
    return text.replace(str(root) + "/", "")


def render_docs(
    report: Report,
    written: Dict[str, str],
    commands: List[str],
    paper: str,
    docs: str,
    dataset_column: Dict[str, str],
    notes: Sequence[str] = (),
    checks: Optional[str] = None,
    corpora: Sequence[Report] = (),
) -> Path:
    """``DOCS/results.md`` from a written report (``written``: what :meth:`Report.write` returned); ``corpora``: the
    reports of further corpora's plans (:func:`corpus_report`), a section each;
    ``paper``: the paper's numbers (``paper_numbers.json``) or its LaTeX source; ``checks``: a records
    file of runs trained again on another machine (:mod:`~eer_benchmark.report.reproduction`), a block's or a
    further corpus's."""

    plan, runner = report.plan, report.runner
    numbers = read_paper(Path(paper))
    docs_dir = Path(docs)
    docs_dir.mkdir(parents=True, exist_ok=True)
    body = Path(written["md"]).read_text().split("\n")
    body = body[1:] if body and body[0].startswith("# ") else body
    text = "\n".join(body)
    assets = docs_dir / "results"  # the plots and CSV files next to docs/results.md
    assets.mkdir(exist_ok=True)
    for name in (
        "learning_curve.png",
        "rho_hat_over_epochs.png",
        "learning_curve.csv",
        "results.csv",
        CURVE_CLAIMS_CSV,
    ):
        source = runner.outdir / name
        if source.exists():
            if name.endswith(".csv"):
                atomic_write_text(str(assets / name), repository_relative(source.read_text(), runner.outdir, docs_dir))
            else:
                with replacing(str(assets / name)) as temporary:
                    shutil.copyfile(source, temporary)
            text = text.replace(f"]({name})", f"](results/{name})").replace(f"`{name}`", f"`results/{name}`")
    corpus_parts = [
        line
        for other in corpora
        for line in corpus_section(
            other,
            other.write(),
            numbers,
            dataset_column,
            assets,
            comparison,
            lambda text, other=other: repository_relative(text, other.runner.outdir, docs_dir),
            read_checks(checks),
            checks,
        )
    ]
    write_guide(docs_dir / GUIDE_PAGE, assets / "results.csv", numbers.rows)  # "Which approach should I use?"
    rows = numbers.rows
    settings = plan.run_env(plan.datasets[0], None, "all")
    parts = [
        f"# Results: {plan.name}",
        "",
        "Generated by `allennlp eer-benchmark --report-only --docs` (`eer_benchmark/report/docs.py`) from the run directories "
        "of `allennlp eer-benchmark`; "
        "no number in this file is typed by hand (the paper's numbers come from `eer_benchmark/analyse/paper_numbers.json`, "
        "which `scripts/paper_numbers.py` writes from the paper's LaTeX source, and a test checks against it when the paper is beside the repository). "
        "`results/results.csv` has one row per run (status, P/R/F1, rho_hat, seconds, tuned O-cost, ...).",
        "",
        "## How it was produced",
        "",
        "```",
        *commands,
        "```",
        "",
        f"Plan: `{os.path.relpath(plan.path)}` (its header comment explains every reduction against the paper).",
        "",
        *hardware(runner),
        "",
        *([f"- Note: {note}" for note in notes] + [""] if notes else []),
        *block_sections(report, numbers, dataset_column, checks),
        *dictionary_section(report),
        "## Ours next to the paper",
        "",
        f"The paper (RoBERTa-base for English, on a GPU): {numbers.settings}",
        "",
        f"Ours: {', '.join(plan.encoders)} on CPU; epochs {plan.epochs_description()}; "
        f"batch size {settings['EER_BATCH_SIZE']} chunks, peak learning rate {settings['EER_LEARNING_RATE']} (encoder) and "
        f"{report.setting('EER_HEAD_LEARNING_RATE', DEFAULT_HEAD_LEARNING_RATE)} (freshly initialised heads); "
        f"seeds {plan.seeds_description()}. "
        "The paper's NNS block reports `-all` variants only, so our NNS rows are set beside the same approach's `-all` row.",
        "",
    ]
    for dataset in plan.datasets:
        column = dataset_column.get(dataset.name, dataset.name)
        parts += [comparison(plan, report, rows, dataset.name, column), ""]
        parts += [
            "Does the paper's ordering hold here? EER (short, shortest) minus each baseline, EER-short minus EER-shortest, "
            "and the ratio grid's settings minus the benchmark setting, in F1 points: ours (mean ± sd of the per-seed "
            "differences, and the paired bootstrap with the seeds pooled) next to the paper's (NNS: the paper's -all rows; "
            'the ratio grid: the paper\'s "Varying EER HPs", mean of its 3 samples):',
            "",
            differences(plan, report, rows, dataset.name, column, numbers.robustness),
            "",
        ]
        paragraph = claims_paragraph(plan, report, rows, numbers.robustness, dataset.name, column)
        if paragraph:
            parts += [paragraph, ""]
    parts += corpus_parts
    grid = ratio_comparison(report, numbers.robustness)
    if grid:
        parts += [
            'EER hyperparameters: our grid beside the paper\'s table "Varying EER HPs" (its finding: settings with '
            "rho + gamma above rho* do much worse, the low end of the interval matters little):",
            "",
            grid,
            "",
        ]
    said = numbers.convergence
    if said and report.plan.scenarios:
        parts += [
            f'Convergence of rho_hat: the paper: "{said}" Ours: the row "EER-short, EE scenarios, benchmark setting" '
            'in "Convergence of rho_hat towards rho*" below.',
            "",
        ]
    parts.append(text)
    target = docs_dir / "results.md"
    atomic_write_text(str(target), repository_relative("\n".join(parts).rstrip() + "\n", runner.outdir, docs_dir))
    return target
