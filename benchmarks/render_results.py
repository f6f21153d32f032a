"""Write ``docs/results.md`` (and its plots) from a benchmark directory: the runner's report
(``allennlp eer-benchmark --report-only``) with the exact command, the hardware and software, and
the paper's numbers beside ours, read from the paper's LaTeX source. Nothing here is typed by hand::

    python benchmarks/render_results.py PLAN OUTDIR --command "bash benchmarks/results.sh" \\
        [--paper ../shared/paper/eer-paper.tex] [--docs docs]
"""
import argparse
import os
import platform
import re
import shutil
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# a paper table row label -> our approach name: "EER-BERT-short" -> "eer_short", "Gold-BERT-all" -> "gold"
PAPER_FAMILIES = {"Gold": "gold", "Raw": "raw", "Raw+CD": "raw_cd", "CBL": "cbl_bert", "SNS": "sns", "EER": "eer"}
PAPER_BLOCKS = {"Non-Native Speaker": "nns", "Exploratory Expert": "ee"}


def _latex_cell(text: str) -> Optional[float]:
    """``\\textbf{89.0}$^\\dagger$`` -> 89.0; ``02.6`` -> 2.6; a cell without a number -> None."""
    match = re.search(r"\d+(?:\.\d+)?", re.sub(r"\\[a-z]+|[{}$^:,\\]", " ", text))
    return float(match.group(0)) if match else None


def paper_table(tex: str) -> Tuple[List[str], Dict[Tuple[str, str], Dict[str, float]]]:
    """The benchmark table of the paper (``\\label{table:benchmark}``): its dataset columns and
    ``{(block, row label): {column: F1}}`` with block ``''`` (gold rows), ``'nns'`` or ``'ee'``."""
    end = tex.index(r"\label{table:benchmark}")
    start = tex.rindex(r"\begin{tabular}", 0, end)
    body = tex[start:tex.index(r"\end{tabular}", start)]
    body = re.sub(r"^\\begin\{tabular\}\{[^}]*\}", "", body)
    columns: List[str] = []
    rows: Dict[Tuple[str, str], Dict[str, float]] = {}
    block = ""
    for line in body.split(r"\\"):
        line = re.sub(r"\\(toprule|midrule|bottomrule|rule\{[^}]*\}\{[^}]*\}|cmidrule\{[^}]*\})", "", line).strip()
        if not line:
            continue
        if r"\multicolumn" in line:
            block = next((code for text, code in PAPER_BLOCKS.items() if text in line), block)
            continue
        cells = [c.strip() for c in line.split("&")]
        if not columns:
            columns = cells[1:]
            continue
        rows[(block, cells[0])] = {c: v for c, cell in zip(columns, cells[1:]) if (v := _latex_cell(cell)) is not None}
    return columns, rows


def paper_robustness(tex: str) -> Dict[Tuple[float, float], Dict[str, object]]:
    """The paper's EER hyperparameter table (``\\label{table:robustness}``, EER-short on CoNLL English EE):
    ``{(rho - gamma, rho + gamma): {"f1": [per sample...], "avg": mean, "mark": "*"/"†"/""}}``."""
    if r"\label{table:robustness}" not in tex:
        return {}
    end = tex.index(r"\label{table:robustness}")
    start = tex.rindex(r"\begin{tabular}", 0, end)
    body = tex[start:tex.index(r"\end{tabular}", start)]
    rows: Dict[Tuple[float, float], Dict[str, object]] = {}
    for line in body.split(r"\\"):
        match = re.match(r"\s*(?:\\midrule\s*)?\$\[([\d.]+),\s*([\d.]+)\]\^?(\\dagger|\*)?\$\s*&(.*)", line.strip(), re.S)
        if not match:
            continue
        values = [float(v) for v in re.findall(r"\d+\.\d+", match.group(4))]
        mark = {"\\dagger": "†", "*": "*"}.get(match.group(3) or "", "")
        rows[(float(match.group(1)), float(match.group(2)))] = {"f1": values[:-1], "avg": values[-1], "mark": mark}
    return rows


def ratio_comparison(report, tex: str) -> str:
    """Our EER hyperparameter grid beside the paper's table "Varying EER HPs", setting by setting
    (matched on the interval ``[rho - gamma, rho + gamma]``)."""
    from eer_plugin.commands.benchmark import _mean, _points, _table, approach_label

    plan = report.plan
    if not plan.ratio_entries:
        return ""
    paper = paper_robustness(tex)
    lines, stars = [], []
    for (dataset, scenario, encoder), setting, run in plan.ratio_entries:
        record = report.records[run.key]
        done = record.get("status") == "done"
        rho, gamma = setting
        interval = (round(rho - gamma, 2), round(rho + gamma, 2))
        theirs = paper.get(interval)
        if done and record.get("rho_star") is not None:
            stars.append(record["rho_star"])
        lines.append([
            dataset, scenario, f"[{interval[0]:.2f}, {interval[1]:.2f}]" + ("†" if run.ratio is None else ""),
            _points(record["f1"]) if done else "not run", f"{record['rho_hat']:.3f}" if done and record.get("rho_hat") is not None else "–",
            f"{theirs['avg']:.1f}" + str(theirs["mark"]) if theirs else "–",
        ])  # fmt: skip
    star = next((k for k, v in paper.items() if v["mark"] == "*"), None)
    header = ["dataset", "scenario", "[rho - gamma, rho + gamma]", f"ours: {approach_label(plan.ratio_grid['approach'])} F1", "ours: final rho_hat", "paper: F1 (mean of 3 samples)"]
    notes = (
        f"Ours: one seed; rho* (gold subword entity ratio of our training data) = {_mean(stars):.3f}. " if stars else "Ours: one seed. "
    ) + (f"Paper: EER-BERT-short on CoNLL English EE, three sampled data sets; * marks its rho = rho* setting [{star[0]:.2f}, {star[1]:.2f}]; " if star else "") + "† the benchmark setting."
    return _table(header, lines, ["l", "l", "l", "r", "r", "r"]) + "\n\n" + notes


def paper_convergence(tex: str) -> str:
    """The paper's sentence on the convergence of rho_hat (its MAE against rho*), markup removed."""
    text = re.sub(r"\\(rho|gamma)\b", r"\1", re.sub(r"\\rhohat", "rho_hat", tex)).replace("^", "")
    match = re.search(r"[^.]*mean absolute error of only[^.]*\.[^.]*\.[^)]*\)", text)
    if not match:
        return ""
    return re.sub(r"\s+", " ", re.sub(r"[$~{}]|\\[a-z]+", lambda m: "" if m.group(0) in "$~{}" else " ", match.group(0))).strip()


def paper_row_label(approach: str) -> Tuple[str, str]:
    """``eer_short`` -> (``'EER'``, ``'short'``); ``gold`` -> (``'Gold'``, ``'all'``)."""
    from eer_plugin.commands.benchmark import split_approach

    family, variant = split_approach(approach)
    paper_family = next(name for name, ours in PAPER_FAMILIES.items() if ours == family)
    return paper_family, variant


def paper_value(rows, scenario_type: Optional[str], approach: str, column: str) -> Tuple[Optional[float], str]:
    """The paper's F1 for our approach in a scenario block, and the paper row it comes from: the same
    approach, or, when the block has no row of that variant at all (the paper's NNS block has only
    ``-all`` rows), the same family's ``all`` row."""
    family, variant = paper_row_label(approach)
    block = "" if approach == "gold" else scenario_type
    block_variants = {label.rsplit("-", 1)[-1] for (b, label) in rows if b == block}
    for wanted in (variant,) if variant in block_variants else ("all",):
        label = f"{family}-BERT-{wanted}"
        if (block, label) in rows and column in rows[(block, label)]:
            return rows[(block, label)][column], label
    return None, ""


def paper_settings(tex: str) -> str:
    """The paper's own sentences on learning rate, batch size and epochs, LaTeX markup removed."""
    text = re.sub(r"\\footnote\{[^}]*\}|\\citep?\{[^}]*\}|~", " ", tex)
    sentences = re.split(r"(?<=\.)\s+", text)
    wanted = [s for s in sentences if re.search(r"learning rate of|batch size, we use|epochs for the", s)]
    plain = [re.sub(r"\s+", " ", re.sub(r"\\(textbf|tt)\b|[{}$]|\\times\s*", lambda m: "x" if "times" in m.group(0) else "", s)).strip() for s in wanted]
    plain = [re.sub(r"\s+([.,])", r"\1", p.replace("\\%", "%")) for p in plain]
    return " ".join(f"\"{s}\"" for s in plain[:3])


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
    from eer_plugin.commands.benchmark import GOLD_SCENARIO, _mean, _points, _table, approach_label

    lines = []
    for scenario, specs in report.row_specs():
        scenario_name = scenario.name if scenario else GOLD_SCENARIO
        for _, approach, encoder in specs:
            done = report.done(dataset, scenario_name, approach, encoder)
            ours = _points(_mean([r["f1"] for r in done.values()])) if done else "not run"
            value, label = paper_value(rows, scenario.type if scenario else None, approach, column)
            epochs = sorted({str(r.get("settings", {}).get("EER_EPOCHS", "")) for r in done.values()})
            seconds = sum(r.get("seconds") or 0 for r in done.values())
            lines.append([
                scenario.name if scenario else "–", approach_label(approach), ours, ", ".join(epochs) or "–",
                f"{seconds / 60:.1f}" if done else "–", f"{value:.1f}" if value is not None else "–", label or "–",
            ])  # fmt: skip
    header = ["scenario", "approach", f"ours: {dataset} F1", "epochs", "wall (min)", f"paper: {column} F1", "paper row"]
    return _table(header, lines, ["l", "l", "r", "r", "r", "r", "l"])


def differences(plan, report, rows, dataset: str, column: str) -> str:
    """The paper's claims as differences: each EER approach of the plan minus each baseline, in F1
    points, ours and the paper's (from the rows :func:`comparison` sets side by side)."""
    from eer_plugin.commands.benchmark import _mean, _table, approach_label, split_approach

    eer = [a for a in plan.approaches if split_approach(a)[0] == "eer" and a != "eer_all"]
    baselines = [a for a in plan.approaches if split_approach(a)[0] not in ("eer", "gold")]
    lines = []
    for scenario in plan.scenarios:
        for ours_approach in eer:
            for baseline in baselines:
                values = []
                for approach in (ours_approach, baseline):
                    done = report.done(dataset, scenario.name, approach, plan.encoders[0])
                    values.append(_mean([r["f1"] for r in done.values()]) * 100 if done else None)
                paper = [paper_value(rows, scenario.type, a, column)[0] for a in (ours_approach, baseline)]
                ours_text = f"{values[0] - values[1]:+.1f}" if None not in values else "–"
                paper_text = f"{paper[0] - paper[1]:+.1f}" if None not in paper else "–"
                agree = "–" if "–" in (ours_text, paper_text) else ("yes" if (values[0] - values[1]) * (paper[0] - paper[1]) > 0 else "no")
                lines.append([scenario.name, f"{approach_label(ours_approach)} − {approach_label(baseline)}", ours_text, paper_text, agree])
    header = ["scenario", "difference", f"ours ({dataset}, F1 points)", f"paper ({column})", "same sign"]
    return _table(header, lines, ["l", "l", "r", "r", "l"])


def render(
    plan_path: str, outdir: str, commands: List[str], paper: str, docs: str, dataset_column: Dict[str, str], notes: Sequence[str] = (),
) -> Path:
    from eer_plugin.commands.benchmark import Report, Runner, load_plan

    plan = load_plan(plan_path, check_files=False)
    runner = Runner(plan, outdir)
    report = Report(plan, runner)
    written = report.write()
    docs_dir = Path(docs)
    docs_dir.mkdir(parents=True, exist_ok=True)
    body = Path(written["md"]).read_text().split("\n")
    body = body[1:] if body and body[0].startswith("# ") else body
    text = "\n".join(body)
    assets = docs_dir / "results"  # the plots and CSV files next to docs/results.md
    assets.mkdir(exist_ok=True)
    for name in ("learning_curve.png", "rho_hat_over_epochs.png", "learning_curve.csv", "results.csv"):
        source = Path(outdir) / name
        if source.exists():
            shutil.copyfile(source, assets / name)
            text = text.replace(f"]({name})", f"](results/{name})").replace(f"`{name}`", f"`results/{name}`")
    tex = Path(paper).read_text()
    _, rows = paper_table(tex)
    settings = plan.run_env(plan.datasets[0], None, "all")
    parts = [
        f"# Results: {plan.name}",
        "",
        "Generated by `benchmarks/render_results.py` from the run directories of `allennlp eer-benchmark`; "
        "no number in this file is typed by hand (the paper's numbers are read from its LaTeX source). "
        "`results/results.csv` has one row per run (status, P/R/F1, rho_hat, seconds, tuned O-cost, ...).",
        "",
        "## How it was produced",
        "",
        "```",
        *commands,
        "```",
        "",
        f"Plan: `{os.path.relpath(plan_path, ROOT)}` (its header comment explains every reduction against the paper).",
        "",
        *hardware(runner),
        "",
        *([f"- Note: {note}" for note in notes] + [""] if notes else []),
        "## Ours next to the paper",
        "",
        f"The paper (RoBERTa-base for English, on a GPU): {paper_settings(tex)}",
        "",
        f"Ours: {', '.join(plan.encoders)} on CPU; epochs {plan.epochs_description()}; "
        f"batch size {settings['EER_BATCH_SIZE']} chunks, peak learning rate {settings['EER_LEARNING_RATE']}; "
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
    target.write_text("\n".join(parts).rstrip() + "\n")
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("plan")
    parser.add_argument("outdir")
    parser.add_argument("--command", action="append", required=True, help="a command that produced OUTDIR, quoted into the file (repeatable)")
    parser.add_argument("--paper", default=str(ROOT.parent / "shared" / "paper" / "eer-paper.tex"))
    parser.add_argument("--docs", default=str(ROOT / "docs"))
    parser.add_argument("--note", action="append", default=[], help="a remark on how the runs went (e.g. a run that shared the CPU), quoted into the file")
    parser.add_argument("--column", action="append", default=[], metavar="DATASET=PAPER_COLUMN", help="e.g. eng-c=eng-c (default: same name)")
    args = parser.parse_args(argv)
    columns = dict(item.split("=", 1) for item in args.column)
    print(render(args.plan, args.outdir, args.command, args.paper, args.docs, columns, args.note))
    return 0


if __name__ == "__main__":
    sys.exit(main())
