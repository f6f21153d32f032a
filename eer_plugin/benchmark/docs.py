"""``docs/results.md``: the benchmark report of :mod:`~eer_plugin.benchmark.report` behind a header
with the exact commands, the hardware and software, and the paper's numbers beside ours (read from
the paper's LaTeX by :mod:`~eer_plugin.benchmark.paper`). Nothing here is typed by hand.

Written by ``allennlp eer-benchmark PLAN -o OUTDIR --report-only --docs docs --command ...`` (what
``benchmarks/results.sh`` runs). When the docs directory is inside this repository, absolute paths
of this machine (the benchmark directory, the repository) are written relative to the repository root.
"""
import os
import platform
import shutil
from pathlib import Path
from typing import Dict, List, Sequence

from eer_plugin.benchmark.paper import paper_convergence, paper_robustness, paper_settings, paper_table, paper_value
from eer_plugin.benchmark.parse import load_plan
from eer_plugin.benchmark.plan import GOLD_SCENARIO, approach_label, split_approach
from eer_plugin.benchmark.report import DEFAULT_HEAD_LEARNING_RATE, Report
from eer_plugin.benchmark.runner import Runner
from eer_plugin.benchmark.tables import markdown_table, mean, mean_sd_cell
from eer_plugin.encoders import REPO_ROOT

#: where the paper's LaTeX source is expected when ``--paper`` is not given
DEFAULT_PAPER = REPO_ROOT.parent / "shared" / "paper" / "eer-paper.tex"


def ratio_comparison(report, tex: str) -> str:
    """Our EER hyperparameter grid beside the paper's table "Varying EER HPs", setting by setting
    (matched on the interval ``[rho - gamma, rho + gamma]``)."""
    plan = report.plan
    if not plan.ratio_entries:
        return ""
    paper = paper_robustness(tex)
    lines, stars = [], []
    settings: Dict[tuple, List[dict]] = {}  # (group, setting) -> the records of its seeds, in plan order
    dagger: Dict[tuple, bool] = {}
    for group, setting, run in plan.ratio_entries:
        settings.setdefault((group, setting), []).append(report.records[run.key])
        dagger[(group, setting)] = run.ratio is None
    for ((dataset, scenario, encoder), (rho, gamma)), records in settings.items():
        done = [r for r in records if r.get("status") == "done"]
        interval = (round(rho - gamma, 2), round(rho + gamma, 2))
        theirs = paper.get(interval)
        stars += [r["rho_star"] for r in done if r.get("rho_star") is not None]
        rho_hats = [r["rho_hat"] for r in done if r.get("rho_hat") is not None]
        lines.append([
            dataset, scenario, f"[{interval[0]:.2f}, {interval[1]:.2f}]" + ("†" if dagger[((dataset, scenario, encoder), (rho, gamma))] else ""),
            mean_sd_cell([r["f1"] for r in done], None) if done else "not run", f"{mean(rho_hats):.3f}" if rho_hats else "–",
            f"{theirs['avg']:.1f}" + str(theirs["mark"]) if theirs else "–",
        ])  # fmt: skip
    star = next((k for k, v in paper.items() if v["mark"] == "*"), None)
    header = ["dataset", "scenario", "[rho - gamma, rho + gamma]", f"ours: {approach_label(plan.ratio_grid['approach'])} F1", "ours: final rho_hat", "paper: F1 (mean of 3 samples)"]
    seeds = "one seed" if len(plan.seeds) == 1 else f"mean ± sd over seeds {', '.join(map(str, plan.seeds))}"
    notes = (
        f"Ours: {seeds}; rho* (gold subword entity ratio of our training data) = {mean(stars):.3f}. " if stars else f"Ours: {seeds}. "
    ) + (f"Paper: EER-BERT-short on CoNLL English EE, three sampled data sets; * marks its rho = rho* setting [{star[0]:.2f}, {star[1]:.2f}]; " if star else "") + "† the benchmark setting."
    return markdown_table(header, lines, ["l", "l", "l", "r", "r", "r"]) + "\n\n" + notes


def hardware(runner) -> List[str]:
    import torch
    import transformers

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), platform.processor())
    memory = next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    return [
        f"- CPU: {cpu}, {os.cpu_count()} cores visible; {memory / 2**20:.0f} GiB memory; no GPU (`cuda_device` -1)",
        f"- {platform.system()} {platform.release()}, Python {platform.python_version()}, torch {torch.__version__}, "
        f"transformers {transformers.__version__}; one run at a time (`--jobs 1`), {runner.threads} torch threads per run",
    ]


def comparison(plan, report, rows, dataset: str, column: str) -> str:
    """Our F1 next to the paper's for the plan's rows on one dataset."""
    lines = []
    for scenario, specs in report.row_specs():
        scenario_name = scenario.name if scenario else GOLD_SCENARIO
        for _, approach, encoder in specs:
            done = report.done(dataset, scenario_name, approach, encoder)
            ours = mean_sd_cell([done[s]["f1"] for s in sorted(done)], None) if done else "not run"
            value, label = paper_value(rows, scenario.type if scenario else None, approach, column)
            epochs = sorted({str(r.get("settings", {}).get("EER_EPOCHS", "")) for r in done.values()})
            seconds = sum(r.get("seconds") or 0 for r in done.values())
            lines.append([
                scenario.name if scenario else "–", approach_label(approach), ours, ", ".join(epochs) or "–",
                f"{seconds / 60:.1f}" if done else "–", f"{value:.1f}" if value is not None else "–", label or "–",
            ])  # fmt: skip
    header = ["scenario", "approach", f"ours: {dataset} F1", "epochs", "wall (min)", f"paper: {column} F1", "paper row"]
    return markdown_table(header, lines, ["l", "l", "r", "r", "r", "r", "l"])


def differences(plan, report, rows, dataset: str, column: str) -> str:
    """The paper's claims as differences: each EER approach of the plan minus each baseline, in F1
    points, ours and the paper's (from the rows :func:`comparison` sets side by side)."""
    eer = [a for a in plan.approaches if split_approach(a)[0] == "eer" and a != "eer_all"]
    baselines = [a for a in plan.approaches if split_approach(a)[0] not in ("eer", "gold")]
    lines = []
    for scenario in plan.scenarios:
        for ours_approach in eer:
            for baseline in baselines:
                values = []
                for approach in (ours_approach, baseline):
                    done = report.done(dataset, scenario.name, approach, plan.encoders[0])
                    values.append(mean([r["f1"] for r in done.values()]) * 100 if done else None)
                paper = [paper_value(rows, scenario.type, a, column)[0] for a in (ours_approach, baseline)]
                ours_text = f"{values[0] - values[1]:+.1f}" if None not in values else "–"
                paper_text = f"{paper[0] - paper[1]:+.1f}" if None not in paper else "–"
                agree = "–" if "–" in (ours_text, paper_text) else ("yes" if (values[0] - values[1]) * (paper[0] - paper[1]) > 0 else "no")
                lines.append([scenario.name, f"{approach_label(ours_approach)} − {approach_label(baseline)}", ours_text, paper_text, agree])
    header = ["scenario", "difference", f"ours ({dataset}, F1 points)", f"paper ({column})", "same sign"]
    return markdown_table(header, lines, ["l", "l", "r", "r", "l"])


def render(
    plan_path: str, outdir: str, commands: List[str], paper: str, docs: str, dataset_column: Dict[str, str], notes: Sequence[str] = (),
) -> Path:
    """Writes the report of OUTDIR (``results.md``, ``results.csv``, plots) and ``DOCS/results.md``
    with its assets in ``DOCS/results/``; returns the path of ``DOCS/results.md``."""
    plan = load_plan(plan_path, check_files=False)
    report = Report(plan, Runner(plan, outdir))
    return render_docs(report, report.write(), commands, paper, docs, dataset_column, notes)


def repository_relative(text: str, outdir: Path, docs_dir: Path) -> str:
    """``text`` with the absolute paths of this machine (the benchmark directory, the repository)
    relative to the repository root, when ``docs_dir`` is inside the repository; else unchanged."""
    root = REPO_ROOT.resolve()
    if not docs_dir.resolve().is_relative_to(root):
        return text
    text = text.replace(str(outdir), os.path.relpath(outdir, root))
    return text.replace(str(root) + "/", "")


def render_docs(
    report: Report, written: Dict[str, str], commands: List[str], paper: str, docs: str, dataset_column: Dict[str, str],
    notes: Sequence[str] = (),
) -> Path:
    """``DOCS/results.md`` from a written report (``written``: what :meth:`Report.write` returned)."""
    plan, runner = report.plan, report.runner
    paper_path = Path(paper)
    if not paper_path.is_file():
        raise FileNotFoundError(f"the paper's LaTeX source is not at {paper_path}: pass its path with --paper")
    docs_dir = Path(docs)
    docs_dir.mkdir(parents=True, exist_ok=True)
    body = Path(written["md"]).read_text().split("\n")
    body = body[1:] if body and body[0].startswith("# ") else body
    text = "\n".join(body)
    assets = docs_dir / "results"  # the plots and CSV files next to docs/results.md
    assets.mkdir(exist_ok=True)
    for name in ("learning_curve.png", "rho_hat_over_epochs.png", "learning_curve.csv", "results.csv"):
        source = runner.outdir / name
        if source.exists():
            if name.endswith(".csv"):
                (assets / name).write_text(repository_relative(source.read_text(), runner.outdir, docs_dir))
            else:
                shutil.copyfile(source, assets / name)
            text = text.replace(f"]({name})", f"](results/{name})").replace(f"`{name}`", f"`results/{name}`")
    tex = paper_path.read_text()
    _, rows = paper_table(tex)
    settings = plan.run_env(plan.datasets[0], None, "all")
    parts = [
        f"# Results: {plan.name}",
        "",
        "Generated by `allennlp eer-benchmark --report-only --docs` (`eer_plugin/benchmark/docs.py`) from the run directories "
        "of `allennlp eer-benchmark`; "
        "no number in this file is typed by hand (the paper's numbers are read from its LaTeX source). "
        "`results/results.csv` has one row per run (status, P/R/F1, rho_hat, seconds, tuned O-cost, ...).",
        "",
        "## How it was produced",
        "",
        "```",
        *commands,
        "```",
        "",
        f"Plan: `{os.path.relpath(plan.path, REPO_ROOT)}` (its header comment explains every reduction against the paper).",
        "",
        *hardware(runner),
        "",
        *([f"- Note: {note}" for note in notes] + [""] if notes else []),
        "## Ours next to the paper",
        "",
        f"The paper (RoBERTa-base for English, on a GPU): {paper_settings(tex)}",
        "",
        f"Ours: {', '.join(plan.encoders)} on CPU; epochs {plan.epochs_description()}; "
        f"batch size {settings['EER_BATCH_SIZE']} chunks, peak learning rate {settings['EER_LEARNING_RATE']} (encoder) and "
        f"{report.setting('EER_HEAD_LEARNING_RATE', DEFAULT_HEAD_LEARNING_RATE)} (freshly initialised heads); "
        f"seeds {', '.join(map(str, plan.seeds))}. "
        "The paper's NNS block reports `-all` variants only, so our NNS rows are set beside the same approach's `-all` row.",
        "",
    ]
    for dataset in plan.datasets:
        column = dataset_column.get(dataset.name, dataset.name)
        parts += [comparison(plan, report, rows, dataset.name, column), ""]
        parts += [
            "Does the paper's ordering hold here? EER (short, shortest) minus each baseline, in F1 points, "
            "ours next to the paper's (NNS: the paper's -all rows; the significance of ours is in \"Significance\" below):",
            "",
            differences(plan, report, rows, dataset.name, column),
            "",
        ]
    grid = ratio_comparison(report, tex)
    if grid:
        parts += [
            "EER hyperparameters: our grid beside the paper's table \"Varying EER HPs\" (its finding: settings with "
            "rho + gamma above rho* do much worse, the low end of the interval matters little):",
            "",
            grid,
            "",
        ]
    said = paper_convergence(tex)
    if said and report.plan.scenarios:
        parts += [
            f"Convergence of rho_hat: the paper: \"{said}\" Ours: the row \"EER-short, EE scenarios, benchmark setting\" "
            "in \"Convergence of rho_hat towards rho*\" below.",
            "",
        ]
    parts.append(text)
    target = docs_dir / "results.md"
    target.write_text(repository_relative("\n".join(parts).rstrip() + "\n", runner.outdir, docs_dir))
    return target
