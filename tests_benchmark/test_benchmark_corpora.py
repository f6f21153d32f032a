"""Issues 48 and 53 in the plan language and the report, on fabricated run directories: a scenario's own
approaches, the learning curve's further cells (more seeds, an ablation setting's env, another encoder), the
dictionary block of docs/results.md, a second corpus rendered as a section of the page with the paper's column
beside ours, and the guide's corpus column and partial-vs-exhaustive sentence."""

import csv
import json
import re

import pytest
from conftest import FIXTURES
from test_benchmark import fabricate, plan_data
from test_benchmark_studies import DOCS, rerun_plan

from eer_benchmark import PlanError, Report, Runner, parse_plan
from eer_benchmark.report.claims import pooled
from eer_benchmark.report.dictionary import dictionary_section
from eer_benchmark.report.docs import DEFAULT_PAPER, render_docs
from eer_benchmark.report.guide import END, GUIDE_PAGE, START, partial_or_exhaustive, region


def quality_of(run):
    """SNS-shortest 5 right and 1 wrong per document (of 6), Raw-shortest 4 right, everything else 6 right."""
    return {"sns_shortest": (6, 5, 1), "raw_shortest": (6, 4, 0)}.get(run.approach, (6, 6, 0))


# ----------------------------------------------------------------------------------- plan language
def test_a_scenario_trains_its_own_approaches():
    scenarios = [
        {"name": "EE-15", "type": "ee", "budget": 15},
        {"name": "D", "type": "dictionary", "coverage": 0.5, "approaches": ["eer_short"]},
    ]
    plan = parse_plan(plan_data(scenarios=scenarios, approaches=["gold", "raw_shortest", "eer_short"])).expand()
    assert [(r.scenario_name, r.approach) for r in plan.runs] == [
        ("gold", "gold"),
        ("EE-15", "raw_shortest"),
        ("EE-15", "eer_short"),
        ("D", "eer_short"),
    ]
    report = Report(plan, Runner(plan, "/tmp/unused-benchmark-dir"))
    assert [[a for _, a, _ in rows] for _, rows in report.row_specs()] == [
        ["gold"],
        ["raw_shortest", "eer_short"],
        ["eer_short"],
    ]
    wrong = {"name": "D", "type": "dictionary", "coverage": 0.5}
    with pytest.raises(PlanError, match=r"scenario 'D': 'approaches' lists gold, which ignores the scenario's data"):
        parse_plan(plan_data(scenarios=[{**wrong, "approaches": ["gold"]}]))
    with pytest.raises(PlanError, match=r"scenario 'D': 'approaches' lists sns_shortest, not among the plan's"):
        parse_plan(plan_data(scenarios=[{**wrong, "approaches": ["sns_shortest"]}]))


CELLS = [
    {"budgets": [10], "approaches": ["eer_short", "raw_shortest"], "seeds": [0, 1]},
    {
        "budgets": [10],
        "schemes": ["ee"],
        "approaches": ["eer_short"],
        "seeds": [0, 1],
        "setting": "no calibrated start",
    },
    {"budgets": [10], "schemes": ["exhaustive"], "approaches": ["raw_shortest"], "encoder": "encoder-b"},
]


def curve_plan(cells=CELLS):
    curve = {"budgets": [5, 10], "approaches": ["eer_short", "raw_shortest"], "seeds": [0], "min_steps": 40}
    return parse_plan(rerun_plan(learning_curve={**curve, "cells": cells})).expand()


def test_learning_curve_cells_add_seeds_a_setting_and_an_encoder_each_run_once(tmp_path):
    plan = curve_plan()
    names = [run.name for _, _, _, run in plan.lc_entries]
    assert len(names) == len(set(names)) == 2 * 2 * 2 + 2 * 2 + 2 + 1  # the first curve, seed 1, the setting, encoder-b
    bound = next(run for _, _, _, run in plan.lc_entries if run.ablation)
    assert bound.name.startswith("fx/ablations/no-calibrated-start/EE-10/eer_short/")
    assert dict(bound.overrides) == {"EER_RATIO_INIT": "none"}
    assert Runner(plan, str(tmp_path)).settings(bound)["EER_MIN_STEPS"] == "40"
    other = [run for _, _, _, run in plan.lc_entries if run.encoder == "encoder-b"]
    assert [run.name for run in other] == ["fx/Exh-10/raw_shortest/encoder-b/seed0"]
    with pytest.raises(PlanError, match=r"learning_curve.cells\[0\]: 'setting' 'nothing' is not an ablation setting"):
        curve_plan([{"setting": "nothing"}])
    with pytest.raises(PlanError, match=r"learning_curve.cells\[0\]: unknown key\(s\) 'budget'"):
        curve_plan([{"budget": [10]}])


def test_the_curve_table_counts_each_run_once_and_says_what_is_pending(tmp_path):
    plan = curve_plan()
    runner = Runner(plan, str(tmp_path / "bench"))
    # every curve run finished but seed 1 of EE-10 Raw-shortest and the setting's runs
    for _, scheme, _budget, run in plan.lc_entries:
        if not (run.ablation or (run.approach, run.seed, scheme) == ("raw_shortest", 1, "ee")):
            fabricate(runner, run, [quality_of(run)] * DOCS)
    report = Report(plan, runner)
    md = "\n".join(report_sections(report))
    table = md.split("annotation + training")[1].split("documents annotated")[0]
    assert "| EE + EER-short | 100.0 | 100.0 ± 0.0 |" in table  # seeds 0 and 1 at 10, seed 0 counted once
    assert "| EE + Raw-shortest | 80.0 | 80.0 (1 of 2 seeds) |" in table
    assert "| EE + EER-short, no calibrated start | – | pending (0 of 2 seeds) |" in table
    assert "| Exhaustive + Raw-shortest (encoder-b) | – | 80.0 |" in table
    claims = md.split("The paper's learning-curve claims")[1]
    assert "| fx | 10 | EE + EER-short − Exhaustive + Raw-shortest | +20.0 [" in claims and "(2 seeds) |" in claims
    rows = list(csv.DictReader((tmp_path / "bench" / "learning_curve_claims.csv").open()))
    partial = [r for r in rows if r["a"] == "EE + EER-short" and r["b"] == "Exhaustive + Raw-shortest"]
    assert [(r["budget"], r["seeds_done"], r["seeds_planned"]) for r in partial] == [("5", "1", "1"), ("10", "2", "2")]
    assert float(partial[1]["delta"]) == pytest.approx(0.2)


def report_sections(report):
    from eer_benchmark.report import sections

    return sections.learning_curve(report, {})


def test_the_partial_or_exhaustive_sentence_quotes_the_intervals_and_what_is_pending():
    rows = [
        {
            "dataset": "eng-c",
            "encoder": "all-MiniLM-L6-v2",
            "budget": "1000",
            "a": "EE + EER-shortest",
            "b": "Exhaustive + Raw-shortest",
            "claimed": "yes",
            "seeds_planned": "3",
            "seeds_done": "3",
            "delta": "0.012",
            "ci_low": "-0.004",
            "ci_high": "0.031",
            "significant": "no",
        },
        {
            "dataset": "eng-c",
            "encoder": "all-mpnet-base-v2",
            "budget": "1000",
            "a": "EE + EER-shortest (all-mpnet-base-v2)",
            "b": "Exhaustive + Raw-shortest (all-mpnet-base-v2)",
            "claimed": "yes",
            "seeds_planned": "3",
            "seeds_done": "0",
            "delta": "",
            "ci_low": "",
            "ci_high": "",
            "significant": "",
        },
    ]
    sentence = partial_or_exhaustive(rows)
    assert "EE + EER-shortest − Exhaustive + Raw-shortest at 1,000, MiniLM: +1.2 [-0.4, +3.1] (3 seeds)" in sentence
    assert "at 1,000, mpnet: pending (0 of 3 seeds)" in sentence


# ----------------------------------------------------------------------------------- dictionary block
def test_the_dictionary_block_shows_the_labels_quality_the_f1_and_the_bootstrap(tmp_path):
    settings = [
        {
            "name": "estimate, then bind, dictionary",
            "estimate_ratio": {"complete_documents": 1},
            "env": {"EER_RATIO_CONTROL": "bind"},
            "scenarios": ["D"],
        }
    ]
    data = plan_data(
        scenarios=[{"name": "D", "type": "dictionary", "coverage": 0.5, "seeds": [0, 1]}],
        approaches=["gold", "raw_shortest", "sns_shortest", "eer_short"],
        reference="sns_shortest",
        seeds=[0, 1],
        bootstrap={"resamples": 2000},
        ablations={"approach": "eer_short", "scenarios": ["D"], "seeds": [0], "settings": settings},
    )
    plan = parse_plan(data).expand()
    runner = Runner(plan, str(tmp_path / "bench"), echo=lambda *_: None)
    runner.prepare_data([r for r in plan.runs if r.scenario is not None and not r.ablation])
    for run in plan.runs:
        if not run.ablation and not (run.approach == "eer_short" and run.seed == 1):
            fabricate(runner, run, [quality_of(run)] * DOCS)
    report = Report(plan, runner)
    text = "\n".join(dictionary_section(report))
    stats = [json.loads((tmp_path / "bench" / "data" / "fx" / "D" / f"seed{s}.stats.json").read_text()) for s in (0, 1)]
    precision = (stats[0]["precision"] + stats[1]["precision"]) / 2
    assert f"labels' precision {precision:.3f}" in text and "(mean over 2 seeds)" in text
    assert "Best baseline: SNS-shortest." in text  # 5 right and 1 wrong per document beats 4 right
    test, _ = pooled(report, "fx", "D", "eer_short", "sns_shortest", plan.encoders[0])
    expected = f"{100 * test['delta']:+.1f}† [{100 * test['ci_low']:+.1f}, {100 * test['ci_high']:+.1f}] (1 seed)"
    assert f"| EER-short | 100.0 (1 of 2 seeds) | {expected} |" in text
    assert "| SNS-shortest | 83.3 ± 0.0 (2 seeds) | the best baseline |" in text
    assert "| EER-short, estimate, then bind, dictionary | pending (0 of 1 seeds) | pending |" in text
    assert "| Gold-all | 100.0 ± 0.0 (2 seeds) | – |" in text


# ----------------------------------------------------------------------------------- a second corpus
EE_15 = [{"name": "EE", "type": "ee", "budget": 15}]


def two_corpora(seeds=(0,)):
    """(the English plan, the Spanish plan on ``seeds`` with its binding-control ablation), both expanded."""
    main = parse_plan(
        plan_data(scenarios=EE_15, approaches=["raw_shortest", "eer_short"], reference="raw_shortest")
    ).expand()
    spanish = plan_data(
        datasets=[
            {
                "name": "esp",
                "train": str(FIXTURES / "conll2003_tiny.txt"),
                "dev": str(FIXTURES / "conll2003_tiny_dev.txt"),
                "test": str(FIXTURES / "conll2003_tiny_dev.txt"),
                "file_encoding": "latin-1",
                "sentences_per_document": 15,
            }
        ],
        scenarios=EE_15,
        approaches=["raw_shortest", "eer_short"],
        reference="raw_shortest",
        seeds=list(seeds),
    )
    spanish["ablations"] = {
        "approach": "eer_short",
        "scenarios": ["EE"],
        "seeds": [0],
        "settings": [{"name": "binding ratio control", "env": {"EER_RATIO_CONTROL": "bind"}}],
    }
    return main, parse_plan(spanish).expand()


def test_a_second_corpus_is_a_section_of_the_page_and_rows_of_the_guide(tmp_path):
    main, other = two_corpora()
    runners = [Runner(main, str(tmp_path / "bench")), Runner(other, str(tmp_path / "bench-esp"))]
    for run in main.runs:
        fabricate(runners[0], run, [quality_of(run)] * DOCS)
    fabricate(runners[1], next(r for r in other.runs if r.approach == "eer_short"), [(6, 6, 0)] * DOCS)
    assert "runs trained on another machine" not in render_corpus(tmp_path, main, runners, "plain")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / GUIDE_PAGE).write_text(f"# x\n\n{START}\nold\n{END}\n")
    report, spanish_report = Report(main, runners[0]), Report(other, runners[1])
    page = render_docs(
        report,
        report.write(),
        ["bash run.sh"],
        str(DEFAULT_PAPER),
        str(docs),
        {"fx": "eng-c"},
        corpora=[spanish_report],
    ).read_text()
    section = page.split("## A second corpus: CoNLL-2002 Spanish")[1].split("\n## ")[0]
    assert "English and uncased" in section and "groups 15 consecutive sentences into a document" in section
    assert "read as latin-1" in section
    # the machines of its finished runs (a GPU block's minutes are not the English CPU block's)
    assert re.search(
        r"runs finished \(the others show as not run\)\. Machines: [^:]+: 1 run \(minutes per run", section
    )
    assert "| EE | EER-short | 100.0 | – | 1.7 | 76.5 | EER-BERT-short |" in section  # the paper's esp column
    assert "| EE | Raw-shortest | not run |" in section
    assert (docs / "results" / "results-esp.csv").is_file()
    # its own ablation, under a heading of the section (the English plan's "## Ablations" stays the English one's)
    ablations = section.split("### Ablations on CoNLL-2002 Spanish")[1]
    assert "| binding ratio control |" in ablations
    assert "\n## Ablations\n" not in page  # this English plan has none: the Spanish one adds no section of its own
    guide = region((docs / GUIDE_PAGE).read_text())
    ee = [line for line in guide.splitlines() if line.startswith("| EE: ")]
    assert [line.split(" | ")[1] for line in ee] == ["fx", "CoNLL-2002 Spanish"]
    assert "| CoNLL-2002 Spanish | EER-short (ranked on MiniLM) |" in ee[1]


def render_corpus(tmp_path, main, runners, name, checks=None) -> str:
    """The Spanish section of the page rendered into ``tmp_path/name`` (the English plan's runs: none)."""
    docs = tmp_path / name
    docs.mkdir()
    report, spanish = Report(main, runners[0]), Report(runners[1].plan, runners[1])
    page = render_docs(
        report, report.write(), ["x"], str(DEFAULT_PAPER), str(docs), {"fx": "eng-c"}, (), checks, corpora=[spanish]
    ).read_text()
    return page.split("## A second corpus: CoNLL-2002 Spanish")[1].split("\n## ")[0]


def test_a_second_corpus_sets_its_runs_trained_on_a_gpu_beside_its_own(tmp_path, monkeypatch):
    """The Spanish block runs on the CPU; runs of the same names trained on a GPU are kept as checks beside them
    (one records file for every plan), each against the CPU seeds of its approach and setting."""
    from eer_benchmark.run.records import save

    main, other = two_corpora(seeds=(0, 1, 2))
    runners = [Runner(main, str(tmp_path / "bench")), Runner(other, str(tmp_path / "bench-esp"))]
    eer_short = [r for r in other.runs if r.approach == "eer_short" and not r.ablation]
    bound = next(r for r in other.runs if r.ablation)
    for run, correct in zip(eer_short, (4, 5, 6)):  # the CPU seeds: EER-short 4, 5 and 6 of 6 right
        fabricate(runners[1], run, [(6, correct, 0)] * DOCS)
    gpu = Runner(other, str(tmp_path / "gpu"))
    machine = {"cpu": "x", "cores": 16, "torch": "2.11.0", "cuda": "13.0", "gpu": "NVIDIA H200"}
    for run, correct in [*zip(eer_short, (6, 3, 5)), (bound, 5)]:
        fabricate(gpu, run, [(6, correct, 0)] * DOCS, seconds=60.0)
        result = gpu.run_dir(run) / "result.json"
        result.write_text(json.dumps({**json.loads(result.read_text()), "machine": machine}))
    save(tmp_path / "gpu", tmp_path / "checks.jsonl")
    monkeypatch.chdir(tmp_path)  # the repository root: the page names the records file from there
    section = render_corpus(tmp_path, main, runners, "docs", "checks.jsonl")
    again = section.split("### CoNLL-2002 Spanish: runs trained on another machine")[1]
    assert "(their records: `checks.jsonl`;" in again
    rows = [line for line in again.splitlines() if line.startswith("| EE")]
    f1 = {correct: 100 * 2 * correct / (2 * correct + 6 - correct) for correct in range(7)}
    seeds = f"{f1[4]:.1f}–{f1[6]:.1f} (3 seeds)"
    gpu_text = "GPU NVIDIA H200 (torch 2.11.0, CUDA 13.0)"
    assert rows[0] == (
        f"| EE | EER-short | 0 | not recorded | {f1[4]:.1f} | 1.7 | {gpu_text} | {f1[6]:.1f} | 1.0 "
        f"| {f1[6] - f1[4]:+.1f} | {seeds} | yes |"
    )
    assert rows[1].endswith(f"| {seeds} | no |")  # seed 1: 3 of 6 right, below every CPU seed
    # the bound run has no CPU twin yet: "not run yet", and no seeds of its own setting to be held against
    assert (
        rows[3]
        == f"| EE, binding ratio control | EER-short | 0 | not run yet | – | – | {gpu_text} | {f1[5]:.1f} | 1.0 | – | – | – |"
    )
    assert len(rows) == 4
    verdict = f"- EE, EER-short: 3 seeds on {gpu_text} {f1[3]:.1f}–{f1[6]:.1f} (mean"
    assert verdict in again and "2 of 3 inside the block's range, so the check does not reproduce" in again
