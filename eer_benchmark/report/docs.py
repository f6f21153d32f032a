"""``docs/results.md``: the benchmark report of :mod:`~eer_plugin.benchmark.report` behind a header
with the exact commands, the hardware and software, and the paper's numbers beside ours (read from
the paper's LaTeX into ``paper_numbers.json`` by :mod:`~eer_plugin.benchmark.paper`). Nothing here is typed by hand.

Written by ``allennlp eer-benchmark PLAN -o OUTDIR --report-only --docs docs --command ...`` (what
``benchmarks/results.sh`` runs, from the repository root). When the docs directory is inside the current
directory (the repository, for ``results.sh``), absolute paths of this machine (the benchmark directory, the
current directory) are written relative to the current directory; the plan is always named relative to it.
"""
import os
import platform
import shutil
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from eer_plugin.benchmark.paper import PAPER_NUMBERS, paper_value, read_paper
from eer_plugin.benchmark.parse import load_plan
from eer_plugin.benchmark.approaches import approach_label, family_of, split_approach
from eer_plugin.benchmark.plan import GOLD_SCENARIO
from eer_plugin.benchmark.report import Report
from eer_plugin.benchmark.runner import Runner
from eer_plugin.benchmark.sections import DEFAULT_HEAD_LEARNING_RATE
from eer_plugin.benchmark.studies import direction_verdict
from eer_plugin.benchmark.tables import markdown_table, mean, mean_sd_cell, std
from eer_plugin.common.atomic import atomic_write_text
from eer_plugin.common.outputs import replacing

#: the paper's numbers when ``--paper`` is not given: the package's ``paper_numbers.json`` (``--paper``
#: also takes the LaTeX source itself)
DEFAULT_PAPER = PAPER_NUMBERS


def ratio_comparison(report, paper: Dict[tuple, dict]) -> str:
    """Our EER hyperparameter grid beside the paper's table "Varying EER HPs" (``paper``: as
    :func:`~eer_plugin.benchmark.paper.paper_robustness`), setting by setting (matched on the interval
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
        lines.append([
            dataset, scenario, f"[{interval[0]:.2f}, {interval[1]:.2f}]" + ("†" if dagger[((dataset, scenario, encoder), (rho, gamma))] else ""),
            mean_sd_cell([r["f1"] for r in done], None) if done else "not run", f"{mean(rho_hats):.3f}" if rho_hats else "–",
            f"{theirs['avg']:.1f}" + str(theirs["mark"]) if theirs else "–",
        ])  # fmt: skip
    star = next((k for k, v in paper.items() if v["mark"] == "*"), None)
    header = ["dataset", "scenario", "[rho - gamma, rho + gamma]", f"ours: {approach_label(plan.ratio_grid['approach'])} F1", "ours: final rho_hat", "paper: F1 (mean of 3 samples)"]
    grid_seeds = sorted({run.seed for _, _, run in plan.ratio_entries})
    seeds = "one seed" if len(grid_seeds) == 1 else f"mean ± sd over seeds {', '.join(map(str, grid_seeds))}"
    notes = (
        f"Ours: {seeds}; rho* (gold subword entity ratio of our training data) = {mean(stars):.3f}. " if stars else f"Ours: {seeds}. "
    ) + (f"Paper: EER-BERT-short on CoNLL English EE, three sampled data sets; * marks its rho = rho* setting [{star[0]:.2f}, {star[1]:.2f}]; " if star else "") + "† the benchmark setting."
    return markdown_table(header, lines, ["l", "l", "l", "r", "r", "r"]) + "\n\n" + notes


def hardware(runner) -> List[str]:
    import torch
    import transformers

    from eer_plugin.benchmark.machine import cpu_name, memory_gib

    return [
        f"- CPU: {cpu_name()}, {os.cpu_count()} cores visible; {memory_gib():.0f} GiB memory; no GPU (`cuda_device` -1)",
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
                f"{seconds / 60 / len(done):.1f}" if done else "–", f"{value:.1f}" if value is not None else "–", label or "–",
            ])  # fmt: skip
    header = ["scenario", "approach", f"ours: {dataset} F1", "epochs", "min per run", f"paper: {column} F1", "paper row"]
    return markdown_table(header, lines, ["l", "l", "r", "r", "r", "r", "l"])


#: a paper difference smaller than this (F1 points) is read as the claim "about equal"
EQUAL_MARGIN = 1.0


def verdict(paper_delta: Optional[float], test: Optional[dict]) -> str:
    """Whether one of the paper's claims holds here, from its difference (F1 points) and our paired
    bootstrap: ``holds`` / ``does not hold`` / ``not significant`` (``–``: not run or not in the paper).
    A claim "A better than B" holds when our difference is significant with the paper's sign, does not
    hold when it is significant with the other sign; a claim "about equal" (|paper| < EQUAL_MARGIN)
    holds when ours is not significant."""
    if paper_delta is None or test is None:
        return "–"
    if abs(paper_delta) < EQUAL_MARGIN:
        return "does not hold" if test["significant"] else "holds"
    return direction_verdict(test, paper_delta)


def _claim_text(a: str, b: str, paper_delta: Optional[float]) -> str:
    if paper_delta is None:
        return f"{a} vs {b}"
    if abs(paper_delta) < EQUAL_MARGIN:
        return f"{a} ≈ {b}"
    return f"{a} > {b}" if paper_delta > 0 else f"{a} < {b}"


def pooled(report, dataset, scenario, a, b, encoder, ratios=(None, None), ablations=(None, None)) -> Tuple[Optional[dict], List[float]]:
    """The paired bootstrap of A vs B with their common seeds pooled (per-document counts summed), and
    the per-seed F1 differences (points); ``ablations``: each side's setting or block directory (None: the benchmark's)."""
    from eer_plugin.annotation.bootstrap import paired_bootstrap

    mine = report.done(dataset, scenario, a, encoder, ratios[0], ablations[0])
    theirs = report.done(dataset, scenario, b, encoder, ratios[1], ablations[1])
    per_seed = [100 * (mine[s]["f1"] - theirs[s]["f1"]) for s in sorted(set(mine) & set(theirs))]
    pair, _ = report.pair_counts(dataset, scenario, a, encoder, reference=b, ratios=ratios, ablations=ablations)
    if pair is None:
        return None, per_seed
    return paired_bootstrap(*pair, **report.bootstrap_settings), per_seed


def claims(plan, report, rows, robustness: Dict[tuple, dict], dataset: str, column: str, block: Optional[dict] = None) -> List[dict]:
    """The paper's claims that this plan can check, each with the paper's difference, ours (per seed,
    and pooled over seeds with the paired bootstrap) and the :func:`verdict`: every EER approach
    (short, shortest) against every baseline in each scenario (the paper's NNS block: its -all rows),
    EER-short against EER-shortest, and each setting of the ratio grid against the benchmark setting
    (the paper's "Varying EER HPs", ``robustness``: as :func:`~eer_plugin.benchmark.paper.paper_robustness`).
    Computed once per report and data set. ``block``: the claims on a block's runs (its encoder, scenarios
    and approaches; no ratio grid) instead of the benchmark's."""
    cache = report.__dict__.setdefault("_claims", {})
    key = (dataset, column, block["slug"] if block else None)
    if key not in cache:
        cache[key] = _claims(plan, report, rows, robustness, dataset, column, block)
    return cache[key]


def claim_pairs(scenarios, approaches_of) -> List[tuple]:
    """(scenario, A, B) of the paper's claims: EER-short and -shortest against every baseline (the approaches
    without the ratio, not gold) of each scenario, and EER-short against EER-shortest (``approaches_of``: a
    scenario's approaches)."""
    pairs = []
    for scenario in scenarios:
        approaches = approaches_of(scenario)
        eer = [a for a in approaches if family_of(a).ratio and split_approach(a)[1] != "all"]
        pairs += [(scenario, a, b) for a in eer for b in approaches if not family_of(b).ratio and not family_of(b).gold]
    for scenario in scenarios:
        if "eer_short" in approaches_of(scenario) and "eer_shortest" in approaches_of(scenario):
            pairs.append((scenario, "eer_short", "eer_shortest"))
    return pairs


def _claims(plan, report, rows, robustness: Dict[tuple, dict], dataset: str, column: str, block: Optional[dict] = None) -> List[dict]:
    if block is None:
        encoder, ablation, pairs = plan.encoders[0], None, claim_pairs(plan.scenarios, lambda scenario: plan.approaches)
    else:
        scenarios = {s.name: s for s in plan.scenarios}
        own = {entry["name"]: entry["approaches"] for entry in block["scenarios"]}
        pairs = claim_pairs([scenarios[name] for name in own], lambda scenario: own[scenario.name])
        encoder, ablation = block["encoder"], block["slug"]
    out = []
    for scenario, a, b in pairs:
        (value_a, row_a), (value_b, row_b) = (paper_value(rows, scenario.type, x, column) for x in (a, b))
        # both set beside the same paper row (the NNS block's -all rows): the paper says nothing on the pair
        paper_delta = value_a - value_b if None not in (value_a, value_b) and row_a != row_b else None
        test, per_seed = pooled(report, dataset, scenario.name, a, b, encoder, ablations=(ablation, ablation))
        out.append({
            "scenario": scenario.name, "difference": f"{approach_label(a)} − {approach_label(b)}",
            "claim": _claim_text(approach_label(a), approach_label(b), paper_delta), "paper": paper_delta,
            "per_seed": per_seed, "test": test, "verdict": verdict(paper_delta, test),
        })  # fmt: skip
    if plan.ratio_entries and block is None:
        base_of: Dict[tuple, tuple] = {}  # group -> (base setting, the ratio key of its runs)
        for group, setting, run in plan.ratio_entries:
            if setting == plan.base_ratio(run.dataset):
                base_of[group] = (setting, run.ratio)
        approach = plan.ratio_grid["approach"]
        seen = set()
        for group, setting, run in plan.ratio_entries:
            if group[0] != dataset or group not in base_of or setting == base_of[group][0] or (group, setting) in seen:
                continue
            seen.add((group, setting))
            base, base_key = base_of[group]
            interval = lambda r: (round(r[0] - r[1], 2), round(r[0] + r[1], 2))  # noqa: E731
            theirs = [robustness.get(interval(x)) for x in (setting, base)]
            paper_delta = theirs[0]["avg"] - theirs[1]["avg"] if None not in theirs else None
            test, per_seed = pooled(report, dataset, group[1], approach, approach, group[2], ratios=(run.ratio, base_key))
            names = [f"[{interval(x)[0]:.2f}, {interval(x)[1]:.2f}]" for x in (setting, base)]
            out.append({
                "scenario": group[1], "difference": f"{approach_label(approach)} {names[0]} − {names[1]}",
                "claim": _claim_text(names[0], names[1], paper_delta), "paper": paper_delta,
                "per_seed": per_seed, "test": test, "verdict": verdict(paper_delta, test),
            })  # fmt: skip
    return out


def differences(plan, report, rows, dataset: str, column: str, robustness: Optional[Dict[tuple, dict]] = None, block: Optional[dict] = None) -> str:
    """The paper's claims as differences (see :func:`claims`), in F1 points: ours (mean ± sd over the
    common seeds), the paired bootstrap with the seeds pooled, the paper's, and the verdict."""
    lines = []
    confidence = plan.bootstrap["confidence"]
    for c in claims(plan, report, rows, robustness or {}, dataset, column, block):
        ours = "–"
        if c["per_seed"]:
            ours = f"{mean(c['per_seed']):+.1f}" + (f" ± {std(c['per_seed']):.1f}" if len(c["per_seed"]) > 1 else "")
        test = c["test"]
        pooled = f"{100 * test['delta']:+.1f} [{100 * test['ci_low']:+.1f}, {100 * test['ci_high']:+.1f}]" if test else "–"
        paper = f"{c['paper']:+.1f}" if c["paper"] is not None else "–"
        lines.append([c["scenario"], c["difference"], ours, paper, pooled, c["claim"], c["verdict"]])
    header = [
        "scenario", "difference", f"ours ({dataset}, F1 points)", f"paper ({column})",
        f"ours, seeds pooled [{confidence:.0%} CI]", "the paper's claim", "here",
    ]  # fmt: skip
    return markdown_table(header, lines, ["l", "l", "r", "r", "r", "l", "l"])


def claims_paragraph(plan, report, rows, robustness: Dict[tuple, dict], dataset: str, column: str, block: Optional[dict] = None) -> str:
    """The claims in words, generated from :func:`claims` (no number typed by hand), with the ablation
    that comes closest to the plan's reference approach (not for a ``block``'s claims)."""
    found = [c for c in claims(plan, report, rows, robustness, dataset, column, block) if c["verdict"] != "–"]
    if not found:
        return ""
    groups: Dict[str, List[str]] = {}
    for c in found:
        groups.setdefault(c["verdict"], []).append(f"{c['claim']} ({c['scenario']})")
    plural = {"holds": "hold", "does not hold": "do not hold"}
    counts = ", ".join(
        f"{len(groups[v])} {v if len(groups[v]) == 1 else plural.get(v, v)}" for v in ("holds", "does not hold", "not significant") if v in groups
    )  # fmt: skip
    text = [
        f"**Which of the paper's claims hold here** ({dataset}; {plan.bootstrap['confidence']:.0%} paired bootstrap over test "
        f"documents, seeds pooled; a paper difference under {EQUAL_MARGIN:g} point reads as \"about equal\"): of {len(found)} "
        f"claims checked, {counts}."
    ]
    for v in ("holds", "does not hold", "not significant"):
        if v in groups:
            text.append(f"{v[0].upper() + v[1:]}: {'; '.join(groups[v])}.")
    from eer_plugin.benchmark.studies import pooled_ablation_differences

    if plan.reference and block is None:
        closing, tested = [], 0
        pooled = pooled_ablation_differences(report)
        scenarios: Dict[tuple, set] = {}  # (setting, approach) -> its scenarios: named when there are several
        for entry in pooled:
            scenarios.setdefault((entry["setting"]["name"], entry["run"].approach), set()).add(entry["run"].scenario_name)
        for entry in pooled:
            if entry["run"].dataset.name != dataset:
                continue
            tested += 1
            test, seeds = entry["test"], entry["seeds"]
            if not (test["significant"] and test["delta"] < 0):
                which = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))} pooled"
                where = f"{entry['run'].scenario_name}, " if len(scenarios[(entry["setting"]["name"], entry["run"].approach)]) > 1 else ""
                closing.append(f"{entry['setting']['name']} ({approach_label(entry['run'].approach)}, {where}{which}: {100 * test['delta']:+.1f})")
        if tested:
            label = approach_label(plan.reference)
            text.append(
                f"Ablations: of {tested} finished ablation settings (an approach's seeds pooled), "
                + (f"these are not significantly worse than {label}: {'; '.join(closing)}." if closing else f"none comes within significance of {label}.")
            )
    return " ".join(text)


def render(
    plan_path: str, outdir: str, commands: List[str], paper: str, docs: str, dataset_column: Dict[str, str], notes: Sequence[str] = (),
    checks: Optional[str] = None,
) -> Path:
    """Writes the report of OUTDIR (``results.md``, ``results.csv``, plots) and ``DOCS/results.md``
    with its assets in ``DOCS/results/``; returns the path of ``DOCS/results.md``."""
    plan = load_plan(plan_path, check_files=False)
    report = Report(plan, Runner(plan, outdir))
    return render_docs(report, report.write(), commands, paper, docs, dataset_column, notes, checks)


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
    report: Report, written: Dict[str, str], commands: List[str], paper: str, docs: str, dataset_column: Dict[str, str],
    notes: Sequence[str] = (), checks: Optional[str] = None,
) -> Path:
    """``DOCS/results.md`` from a written report (``written``: what :meth:`Report.write` returned);
    ``paper``: the paper's numbers (``paper_numbers.json``) or its LaTeX source; ``checks``: a records
    file of block runs trained again on another machine (:mod:`~eer_plugin.benchmark.reproduction`)."""
    from eer_plugin.benchmark.blocks import block_sections  # it builds on this module's claims
    from eer_plugin.benchmark.guide import write_guide

    plan, runner = report.plan, report.runner
    numbers = read_paper(Path(paper))
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
                atomic_write_text(str(assets / name), repository_relative(source.read_text(), runner.outdir, docs_dir))
            else:
                with replacing(str(assets / name)) as temporary:
                    shutil.copyfile(source, temporary)
            text = text.replace(f"]({name})", f"](results/{name})").replace(f"`{name}`", f"`results/{name}`")
    write_guide(docs_dir.parent / "README.md", assets / "results.csv", numbers.rows)  # the README's "Which approach should I use?"
    rows = numbers.rows
    settings = plan.run_env(plan.datasets[0], None, "all")
    parts = [
        f"# Results: {plan.name}",
        "",
        "Generated by `allennlp eer-benchmark --report-only --docs` (`eer_plugin/benchmark/docs.py`) from the run directories "
        "of `allennlp eer-benchmark`; "
        "no number in this file is typed by hand (the paper's numbers come from `eer_plugin/benchmark/paper_numbers.json`, "
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
            "the ratio grid: the paper's \"Varying EER HPs\", mean of its 3 samples):",
            "",
            differences(plan, report, rows, dataset.name, column, numbers.robustness),
            "",
        ]
        paragraph = claims_paragraph(plan, report, rows, numbers.robustness, dataset.name, column)
        if paragraph:
            parts += [paragraph, ""]
    grid = ratio_comparison(report, numbers.robustness)
    if grid:
        parts += [
            "EER hyperparameters: our grid beside the paper's table \"Varying EER HPs\" (its finding: settings with "
            "rho + gamma above rho* do much worse, the low end of the interval matters little):",
            "",
            grid,
            "",
        ]
    said = numbers.convergence
    if said and report.plan.scenarios:
        parts += [
            f"Convergence of rho_hat: the paper: \"{said}\" Ours: the row \"EER-short, EE scenarios, benchmark setting\" "
            "in \"Convergence of rho_hat towards rho*\" below.",
            "",
        ]
    parts.append(text)
    target = docs_dir / "results.md"
    atomic_write_text(str(target), repository_relative("\n".join(parts).rstrip() + "\n", runner.outdir, docs_dir))
    return target
