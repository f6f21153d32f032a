"""The plan language of issue 11's rerun and what the report makes of it, on fabricated run directories:
Gold-SNS (the paper's Gold-SNS-BERT row), per-scenario seeds, study seeds and step budgets, the
ablation study (its runs, its report section), the CPU hours, stale runs from before a setting existed,
and the paper's claims with a verdict in docs/results.md. The end-to-end run with the tiny encoder is
marked slow."""

import json
import re
from pathlib import Path

import pytest
from test_benchmark import PAPER_ROBUSTNESS, PAPER_TABLE, fabricate, plan_data, read_csv

from eer_benchmark import PlanError, Report, Runner, parse_plan
from eer_benchmark.analyse.paper import paper_robustness, paper_table, paper_value
from eer_benchmark.commands import benchmark
from eer_benchmark.plan.selection import block_counts
from eer_benchmark.report.docs import claims_paragraph, differences, render_docs, verdict

DOCS = 30
ABLATIONS = {
    "approach": "eer_short",
    "settings": [
        {"name": "no calibrated start", "env": {"EER_RATIO_INIT": "none"}},
        {"name": "paper's schedule (2e-5, 50 epochs)", "env": {"EER_LEARNING_RATE": "2e-5", "EER_EPOCHS": 50}},
        {"name": "bf16 encoder", "env": {"EER_PRECISION": "bf16"}, "approach": "eer_shortest"},
    ],
}
PAPER_WITH_GOLD_SNS = PAPER_TABLE.replace(
    "Gold-BERT-all & 92.7 & 85.6\\\\", "Gold-BERT-all & 92.7 & 85.6\\\\\nGold-SNS-BERT-all & 91.1 & 82.8\\\\"
)


def rerun_plan(**changes):
    """Issue 11's shape in small: Gold, Gold-SNS and EE on seeds 0, 1, 2; NNS on seed 0; studies on seed 0."""
    data = plan_data(
        scenarios=[{"name": "EE", "type": "ee", "budget": 15}, {"name": "NNS", "type": "nns", "seeds": [0]}],
        approaches=["gold", "gold_sns", "sns_shortest", "eer_short", "eer_shortest"],
        seeds=[0, 1, 2],
        reference="sns_shortest",
        bootstrap={"resamples": 2000},
        ratio_grid={"settings": [[0.15, 0.05], [0.3, 0.0]], "scenarios": ["EE"], "seeds": [0]},
        learning_curve={"budgets": [5], "approaches": ["eer_short"], "seeds": [0], "min_steps": 40},
        ablations={**ABLATIONS, "scenarios": ["EE"], "seeds": [0]},
    )
    data.update(changes)
    return data


# ----------------------------------------------------------------------------------- plan language
def test_gold_sns_per_scenario_seeds_study_seeds_and_ablation_runs(tmp_path):
    plan = parse_plan(rerun_plan()).expand()
    names = [r.name.replace("/all-MiniLM-L6-v2", "") for r in plan.runs]
    assert names[:6] == [
        f"fx/gold/{a}/seed{s}" for a in ("gold", "gold_sns") for s in (0, 1, 2)
    ]  # gold approaches: the plan's seeds
    assert [n for n in names if n.startswith("fx/EE/eer_short/")] == [f"fx/EE/eer_short/seed{s}" for s in (0, 1, 2)]
    assert [n for n in names if n.startswith("fx/NNS/")] == [
        f"fx/NNS/{a}/seed0" for a in ("sns_shortest", "eer_short", "eer_shortest")
    ]
    assert [n for n in names if "rho" in n] == [
        "fx/EE/eer_short_rho0.3_gamma0/seed0"
    ]  # grid seeds [0]; (0.15, 0.05) is the EE run
    assert [n for n in names if "ablations" in n] == [
        "fx/ablations/no-calibrated-start/EE/eer_short/seed0",
        "fx/ablations/paper-s-schedule-2e-5-50-epochs/EE/eer_short/seed0",
        "fx/ablations/bf16-encoder/EE/eer_shortest/seed0",  # the setting's own approach
    ]
    assert block_counts(plan.runs) == {
        "gold": 6,
        "benchmark EE": 9,
        "benchmark NNS": 3,
        "ratio grid": 1,
        "learning curve": 2,
        "ablations": 3,
    }
    runner = Runner(plan, str(tmp_path / "out"))
    by_name = {r.name.replace("/all-MiniLM-L6-v2", ""): r for r in plan.runs}
    gold_sns = runner.run_settings(by_name["fx/gold/gold_sns/seed1"])
    assert (
        gold_sns["EER_TRAIN_DATA"] == gold_sns["EER_GOLD_TRAIN_DATA"] == plan.datasets[0].train
        and gold_sns["EER_SEED"] == "1"
    )
    assert runner.commands(by_name["fx/gold/gold_sns/seed1"])[0][2].endswith("training_configs/gold_sns.jsonnet")
    # an ablation run: the scenario's data and the plan's settings, its env over them; recorded for stale checks
    base, ablation = (
        by_name["fx/EE/eer_short/seed0"],
        by_name["fx/ablations/paper-s-schedule-2e-5-50-epochs/EE/eer_short/seed0"],
    )
    assert runner.run_settings(ablation)["EER_TRAIN_DATA"] == runner.run_settings(base)["EER_TRAIN_DATA"]
    assert runner.settings(ablation) == {**runner.settings(base), "EER_LEARNING_RATE": "2e-5", "EER_EPOCHS": "50"}
    assert runner.settings(by_name["fx/ablations/no-calibrated-start/EE/eer_short/seed0"])["EER_RATIO_INIT"] == "none"
    assert (
        plan.reference_run(ablation) is base
        and plan.reference_run(by_name["fx/ablations/bf16-encoder/EE/eer_shortest/seed0"]).approach == "eer_shortest"
    )
    # the learning curve's budget differs from the EE scenario's: its own runs, with EER_MIN_STEPS
    assert (
        runner.settings(by_name["fx/EE-5/eer_short/seed0"])["EER_MIN_STEPS"] == "40"
        and runner.settings(base)["EER_MIN_STEPS"] == "0"
    )
    assert plan.seeds_description() == "0, 1, 2 (scenario NNS: 0)"
    assert "learning curve: 40" in plan.min_steps_description()
    # a curve point with the same data and settings as a benchmark scenario shares its runs
    shared = parse_plan(
        rerun_plan(learning_curve={"budgets": [15], "approaches": ["eer_short"], "keep_probability": 0.8})
    ).expand()
    assert not [r for r in shared.runs if r.scenario_name.startswith("EE-")]
    # with its own budget, even the curve point with the benchmark's data gets its own runs
    own = parse_plan(
        rerun_plan(learning_curve={"budgets": [15], "approaches": ["eer_short"], "min_steps": 40})
    ).expand()
    assert {r.scenario_name for r in own.runs if "learning_curve" in r.studies} == {"EE-15", "Exh-15"}
    # a ratio grid with a budget of its own: its benchmark setting is a run of its own too
    grid = parse_plan(rerun_plan(ratio_grid={"settings": [[0.15, 0.05]], "seeds": [0], "min_steps": 40})).expand()
    (grid_run,) = [r for _, _, r in grid.ratio_entries]
    assert grid_run.ratio == (0.15, 0.05) and dict(grid_run.overrides) == {"EER_MIN_STEPS": "40"}


def test_plan_language_errors_say_the_fix():
    def fails(match, **changes):
        with pytest.raises(PlanError, match=match):
            parse_plan(rerun_plan(**changes))

    fails(
        r"scenario 'NNS': 'seeds' must be a non-empty list of non-negative integers, got \[\]",
        scenarios=[{"name": "NNS", "type": "nns", "seeds": []}],
    )
    fails(r"scenario 'ablations': the name 'ablations' is reserved", scenarios=[{"name": "ablations", "type": "ee"}])
    fails(r"ablations setting 'x': 'env' is empty", ablations={"settings": [{"name": "x", "env": {}}]})
    fails(
        r"ablations setting 'x': env: EER_SEED is set by the runner",
        ablations={"settings": [{"name": "x", "env": {"EER_SEED": 1}}]},
    )
    fails(
        r"ablations setting 'X!': its directory name 'x' is another setting's",
        ablations={
            "settings": [
                {"name": "x", "env": {"EER_RATIO_INIT": "none"}},
                {"name": "X!", "env": {"EER_PRECISION": "bf16"}},
            ]
        },
    )
    fails(
        r"ablations setting 'x': 'approach': unknown approach 'gold'",
        ablations={"settings": [{"name": "x", "env": {"A": 1}, "approach": "gold"}]},
    )
    fails(r"ablations: unknown key\(s\) 'setting'", ablations={"setting": []})
    fails(r"ablations.scenarios: unknown name 'EX'", ablations={**ABLATIONS, "scenarios": ["EX"]})
    fails(
        r"learning_curve.approaches: 'gold_sns' ignores the budget",
        learning_curve={"budgets": [5], "approaches": ["gold_sns"]},
    )
    fails(
        r"'reference' 'gold_sns' must be one of the plan's approaches other than gold and gold_sns",
        reference="gold_sns",
    )
    fails(r"ratio_grid.min_steps must be a positive integer", ratio_grid={"settings": [[0.3, 0.0]], "min_steps": 0})


# ----------------------------------------------------------------------------------- report
def fabricate_rerun(runner, plan):
    """EER-short: 5 of 6 spans right per document (seed 0), 4 (seed 1), 6 (seed 2); SNS: 3 right, 2 wrong;
    the ablations: 'no calibrated start' 3 right (worse), the others as the benchmark run; Gold-SNS 6 right."""
    eer = {0: 5, 1: 4, 2: 6}
    for run in plan.runs:
        if run.approach == "sns_shortest":
            quality = (6, 3, 2)
        elif run.approach in ("gold", "gold_sns"):
            quality = (6, 6, 0)
        elif run.ablation == "no-calibrated-start":
            quality = (6, 3, 0)
        elif run.ablation == "paper-s-schedule-2e-5-50-epochs":
            continue  # not run yet
        else:
            quality = (6, eer[run.seed], 0)
        fabricate(runner, run, [quality] * DOCS, seconds=1800.0)
    # rho_hat per epoch: the benchmark run enters the band at epoch 2, the uncalibrated one at epoch 3,
    # the bf16 one at epoch 1, leaves it and is back from epoch 3
    for run in plan.runs:
        if not runner.run_dir(run).exists():
            continue
        series = {"no-calibrated-start": [0.85, 0.4, 0.19], "bf16-encoder": [0.15, 0.45, 0.17, 0.18]}.get(
            run.ablation, [0.3, 0.18, 0.17]
        )
        for epoch, value in enumerate(series):
            (runner.run_dir(run) / f"metrics_epoch_{epoch}.json").write_text(json.dumps({"training_rho_hat": value}))


def f1(correct, wrong, gold=6):
    return 100 * 2 * correct / (2 * correct + wrong + gold - correct)


def test_rerun_report_gold_sns_seeds_ablations_and_cpu_hours(tmp_path):
    plan = parse_plan(rerun_plan()).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    fabricate_rerun(runner, plan)
    written = Report(plan, runner).write()
    text = Path(written["md"]).read_text()
    lines = text.splitlines()
    # the main table: Gold-SNS beside Gold (3 seeds), EE over 3 seeds, NNS over its one seed (no "(1/3 seeds)")
    assert f"| Gold-all | **{f1(6, 0):.1f} ± 0.0** | **{f1(6, 0):.1f} ± 0.0** |" in lines
    assert f"| Gold-SNS-all | **{f1(6, 0):.1f} ± 0.0** | **{f1(6, 0):.1f} ± 0.0** |" in lines
    values = [f1(c, 0) for c in (5, 4, 6)]
    mean = sum(values) / 3
    sd = (sum((v - mean) ** 2 for v in values) / 2) ** 0.5
    assert f"| EER-short | **{mean:.1f} ± {sd:.1f}**† | **{mean:.1f} ± {sd:.1f}**† |" in lines
    nns = lines[lines.index(next(line for line in lines if line.startswith("| **NNS**"))) + 2]
    assert nns == f"| EER-short | **{f1(5, 0):.1f}**† | **{f1(5, 0):.1f}**† |"
    assert "seeds 0, 1, 2 (scenario NNS: 0)" in text
    # convergence: the ablation runs are rows of their own, not part of the benchmark's
    assert (
        "| fx | EE | EER-short | 0.15 ± 0.05 | 3 |" in text
        and "| fx | EE | EER-short, ablation: no calibrated start | 0.15 ± 0.05 | 1 |" in text
    )
    assert "| fx | EE | EER-short, ablation: no calibrated start | 0 | [0.10, 0.20] | 3 | 3 | 3 | 0.190 |" in text
    # the CPU cost in hours, per block: 1800 s training + 5 s evaluation per finished run
    done = sum(1 for r in plan.runs if r.ablation != "paper-s-schedule-2e-5-50-epochs")
    assert (
        f"CPU cost: {done * 1805 / 3600:.1f} wall hours of compute for the {done} finished runs (gold: 6 runs, 3.0 h; benchmark EE: 9 runs,"
        in text
    )
    # the speed-ups the runs used, from the plan's settings (the config defaults: batches of 4, encoder precision auto)
    assert "Speed-ups used: training batches of 4 chunks bucketed by length" in text
    assert "in batches of 8, across document boundaries. Encoder precision: auto (bf16 where the hardware" in text
    # wall time per approach: a study's runs (other settings or data) are rows of their own
    times = text.split("## Wall time")[1].split("\n## ")[0]
    assert "| EER-shortest | 4 | 30.0 min | 2.0 h | 5 s |" in times  # EE seeds 0-2 and NNS, not the bf16 run
    assert "| EER-shortest (ablation: bf16 encoder) | 1 | 30.0 min | 30.0 min | 5 s |" in times
    assert "| EER-short (ratio grid) | 1 |" in times and "| EER-short (learning curve) | 2 |" in times
    # the ablations: the benchmark runs they are compared with first, then one row per setting
    section = text.split("## Ablations")[1]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0] == (
        "| setting | approach | seed | settings changed | P | R | F1 | Δ F1 vs benchmark setting | Δ F1 vs SNS-shortest | "
        "first epoch in band | final rho_hat | wall time |"
    )
    sns = f1(3, 2)
    assert (
        rows[1]
        == f"| benchmark setting | EER-short | 0 | the plan's | 100.0 | {100 * 5 / 6:.1f} | {f1(5, 0):.1f} | – | {f1(5, 0) - sns:+.1f}† | 2 of 3 | 0.200 | 30.0 min |"
    )
    assert rows[2].startswith(
        f"| benchmark setting | EER-shortest | 0 | the plan's | 100.0 | {100 * 5 / 6:.1f} | {f1(5, 0):.1f} | – |"
    )
    assert rows[3] == (
        f"| no calibrated start | EER-short | 0 | EER_RATIO_INIT=none | 100.0 | 50.0 | {f1(3, 0):.1f} | {f1(3, 0) - f1(5, 0):+.1f}‡ | "
        f"{f1(3, 0) - sns:+.1f}† | 3 of 3 | 0.200 | 30.0 min |"
    )
    assert rows[4].startswith(
        "| paper's schedule (2e-5, 50 epochs) | EER-short | 0 | EER_LEARNING_RATE=2e-5, EER_EPOCHS=50 | – | – | not run | – | – |"
    )
    assert rows[5].startswith(
        f"| bf16 encoder | EER-shortest | 0 | EER_PRECISION=bf16 | 100.0 | {100 * 5 / 6:.1f} | {f1(5, 0):.1f} | +0.0 |"
    )
    assert rows[5].endswith("| 1 of 4, in band from 3 | 0.200 | 30.0 min |")
    csv_rows = read_csv(written["csv"])
    assert {r["ablation"] for r in csv_rows} == {
        "",
        "no-calibrated-start",
        "paper-s-schedule-2e-5-50-epochs",
        "bf16-encoder",
    }
    # the ratio grid's columns are its own seeds
    assert "| [rho - gamma, rho + gamma] | seed 0 | mean | final rho_hat |" in text


def test_paper_gold_sns_row_and_cbl_lstm_rows_are_mapped():
    _, rows = paper_table(PAPER_WITH_GOLD_SNS)
    assert paper_value(rows, None, "gold_sns", "eng-c") == (91.1, "Gold-SNS-BERT-all")
    assert paper_value(rows, None, "gold", "eng-c") == (92.7, "Gold-BERT-all")
    tex = Path(__file__).resolve().parents[3] / "shared" / "paper" / "eer-paper.tex"
    if tex.exists():  # the paper itself: its Gold-SNS-BERT row, and CBL-LSTM rows without "-BERT"
        _, rows = paper_table(tex.read_text())
        assert paper_value(rows, None, "gold_sns", "eng-c") == (91.1, "Gold-SNS-BERT-all")
        assert paper_value(rows, "ee", "cbl_lstm_shortest", "eng-c") == (67.8, "CBL-LSTM-shortest")
        assert paper_value(rows, "nns", "cbl_lstm_shortest", "eng-c") == (79.2, "CBL-LSTM-all")


# ----------------------------------------------------------------------------------- claims
def test_verdict_rules():
    better, worse, level = ({"significant": True, "delta": d} for d in (0.05, -0.05, 0.0))
    level["significant"] = False
    assert (
        verdict(5.1, better) == "holds"
        and verdict(5.1, worse) == "does not hold"
        and verdict(5.1, level) == "not significant"
    )
    assert verdict(-3.0, worse) == "holds"  # the paper's claim "A worse than B", reproduced
    assert verdict(0.2, level) == "holds" and verdict(0.2, better) == "does not hold"  # "about equal"
    assert verdict(None, better) == verdict(5.1, None) == "–"


def test_claims_in_the_docs_from_the_numbers(tmp_path):
    plan = parse_plan(rerun_plan()).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    fabricate_rerun(runner, plan)
    report = Report(plan, runner)
    tex = PAPER_WITH_GOLD_SNS + "\n" + PAPER_ROBUSTNESS
    _, rows = paper_table(tex)
    table = differences(plan, report, rows, "fx", "eng-c", paper_robustness(tex)).splitlines()
    assert (
        table[0]
        == "| scenario | difference | ours (fx, F1 points) | paper (eng-c) | ours, seeds pooled [99% CI] | the paper's claim | here |"
    )
    per_seed = [f1(c, 0) - f1(3, 2) for c in (5, 4, 6)]
    mean = sum(per_seed) / 3
    sd = (sum((v - mean) ** 2 for v in per_seed) / 2) ** 0.5
    # the paper has no SNS-shortest row in this table: no claim to check, but our difference is shown
    assert table[2].startswith(f"| EE | EER-short − SNS-shortest | {mean:+.1f} ± {sd:.1f} | – |") and table[2].endswith(
        "| EER-short vs SNS-shortest | – |"
    )
    assert table[4].startswith("| NNS | EER-short − SNS-shortest | ")
    # EER-short vs EER-shortest: the paper has no EER-shortest row here either; the grid: [0.30, 0.30] vs the benchmark setting
    grid = next(line for line in table if "[0.30, 0.30] − [0.10, 0.20]" in line)
    assert grid.startswith(
        f"| EE | EER-short [0.30, 0.30] − [0.10, 0.20] | +0.0 | {79.4 - 87.9:+.1f} | +0.0 [+0.0, +0.0] | [0.30, 0.30] < [0.10, 0.20] | not significant |"
    )
    paragraph = claims_paragraph(plan, report, rows, paper_robustness(tex), "fx", "eng-c")
    assert paragraph.startswith(
        "**Which of the paper's claims hold here** (fx; 99% paired bootstrap over test documents, seeds pooled;"
    )
    assert "of 1 claims checked, 1 not significant. Not significant: [0.30, 0.30] < [0.10, 0.20] (EE)." in paragraph
    # the ablations against SNS-shortest: 'no calibrated start' (3 of 6 right, no error) is not significantly worse
    assert (
        "Ablations: of 2 finished ablation settings (an approach's seeds pooled), these are not significantly worse than SNS-shortest: no calibrated start (EER-short, seed 0: "
        in paragraph
    )
    # with the paper's SNS-shortest row, the EE claim gets a verdict: EER-short better, significantly here
    with_sns = tex.replace(
        "Raw-BERT-shortest & 80.7 & 65.0\\\\",
        "Raw-BERT-shortest & 80.7 & 65.0\\\\\nSNS-BERT-shortest & 83.9 & 69.6\\\\",
    )
    _, rows = paper_table(with_sns)
    report = Report(plan, runner)
    table = differences(plan, report, rows, "fx", "eng-c", paper_robustness(with_sns))
    assert re.search(
        r"\| EE \| EER-short − SNS-shortest \| .* \| \+5\.1 \| .* \| EER-short > SNS-shortest \| holds \|", table
    )
    # docs/results.md carries the table and the paragraph, the Gold-SNS row beside the paper's, and the ablations
    paper = tmp_path / "paper.tex"
    paper.write_text(with_sns)
    docs = render_docs(
        report, report.write(), ["bash run.sh"], str(paper), str(tmp_path / "docs"), {"fx": "eng-c"}
    ).read_text()
    assert "| – | Gold-SNS-all |" in docs and "| 91.1 | Gold-SNS-BERT-all |" in docs
    assert "**Which of the paper's claims hold here**" in docs and "## Ablations" in docs and "CPU cost:" in docs


# ----------------------------------------------------------------------------------- stale runs
def test_runs_from_before_a_setting_existed_are_stale_for_a_plan_that_changes_it(tmp_path):
    plan = parse_plan(
        plan_data(approaches=["eer_short"], env={"EER_LEARNING_RATE": "5e-5", "EER_PRECISION": "fp32"})
    ).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    (run,) = plan.runs
    fabricate(runner, run, [(6, 5, 0)] * 3)
    result_file = runner.run_dir(run) / "result.json"
    current = runner.settings(run)
    old = {k: v for k, v in current.items() if k not in ("EER_HEAD_LEARNING_RATE", "EER_RATIO_INIT", "EER_PRECISION")}
    result_file.write_text(json.dumps({**json.loads(result_file.read_text()), "settings": old}))
    # made when the heads learned at the encoder's rate and no start was calibrated: stale now
    (stale,) = runner.stale_runs(plan.runs)
    assert "EER_HEAD_LEARNING_RATE '5e-5' (now '1e-3')" in stale and "EER_RATIO_INIT 'none' (now 'eer')" in stale
    assert "EER_PRECISION" not in stale  # fp32 then and now
    # a plan with the old behaviour accepts it
    same = parse_plan(
        plan_data(
            approaches=["eer_short"],
            env={
                "EER_LEARNING_RATE": "5e-5",
                "EER_HEAD_LEARNING_RATE": "5e-5",
                "EER_RATIO_INIT": "none",
                "EER_PRECISION": "fp32",
            },
        )
    ).expand()
    assert Runner(same, str(tmp_path / "bench")).stale_runs(same.runs) == []
    # the configs' default precision `auto` is bf16 on some machines: an fp32 run does not stand for it
    auto = parse_plan(
        plan_data(
            approaches=["eer_short"],
            env={"EER_LEARNING_RATE": "5e-5", "EER_HEAD_LEARNING_RATE": "5e-5", "EER_RATIO_INIT": "none"},
        )
    ).expand()
    assert "EER_PRECISION 'fp32' (now 'auto')" in Runner(auto, str(tmp_path / "bench")).stale_runs(auto.runs)[0]


# ----------------------------------------------------------------------------------- end to end
@pytest.mark.integration
@pytest.mark.slow
def test_gold_sns_scenario_seeds_and_ablations_end_to_end(tiny_encoder, tmp_path, capsys):
    """Gold-SNS, a scenario with its own seeds and two ablation settings (one on another approach), 1 epoch
    each with the tiny encoder (`bash scripts/test.sh -m slow`)."""
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            plan_data(
                scenarios=[{"name": "EE-15", "type": "ee", "budget": 15, "seeds": [0, 1]}],
                approaches=["gold_sns", "eer_short", "eer_shortest"],
                reference="eer_shortest",
                bootstrap={"resamples": 1000},
                env={"EER_ENCODER": tiny_encoder, "EER_MAX_LENGTH": "128"},
                ablations={
                    "approach": "eer_short",
                    "seeds": [1],
                    "settings": [
                        {"name": "no calibrated start", "env": {"EER_RATIO_INIT": "none"}},
                        {
                            "name": "no constraints, shortest",
                            "env": {"EER_TRAIN_CONSTRAINTS": "false"},
                            "approach": "eer_shortest",
                        },
                    ],
                },
            )
        )
    )
    out = tmp_path / "bench"
    assert benchmark.main([str(plan), "-o", str(out), "--jobs", "2"]) == 0
    rows = read_csv(out / "results.csv")
    assert [(r["scenario"], r["approach"], r["seed"], r["ablation"]) for r in rows] == [
        ("gold", "gold_sns", "0", ""),
        ("EE-15", "eer_short", "0", ""),
        ("EE-15", "eer_short", "1", ""),
        ("EE-15", "eer_shortest", "0", ""),
        ("EE-15", "eer_shortest", "1", ""),
        ("EE-15", "eer_short", "1", "no-calibrated-start"),
        ("EE-15", "eer_shortest", "1", "no-constraints-shortest"),
    ]
    assert {r["status"] for r in rows} == {"done"}
    by = {(r["approach"], r["seed"], r["ablation"]): r for r in rows}
    config = json.loads((Path(by[("gold_sns", "0", "")]["run_dir"]) / "config.json").read_text())
    assert config["model"]["type"] == "sns_tagger" and config["train_data_path"].endswith("conll2003_tiny.txt")
    calibrated = json.loads((Path(by[("eer_short", "1", "")]["run_dir"]) / "config.json").read_text())
    uncalibrated = json.loads(
        (Path(by[("eer_short", "1", "no-calibrated-start")]["run_dir"]) / "config.json").read_text()
    )
    assert (
        calibrated["trainer"]["callbacks"] == [{"type": "eer_ratio_init"}]
        and uncalibrated["trainer"]["callbacks"] == []
    )
    unconstrained = json.loads(
        (Path(by[("eer_shortest", "1", "no-constraints-shortest")]["run_dir"]) / "config.json").read_text()
    )
    assert unconstrained["model"]["train_constraints"] is False
    report = (out / "results.md").read_text()
    assert (
        "| Gold-SNS-all |" in report
        and "## Ablations" in report
        and "| no constraints, shortest | EER-shortest | 1 |" in report
    )
    # resume: nothing runs again
    assert benchmark.main([str(plan), "-o", str(out)]) == 0
    assert "7 of 7 runs done already; running 0" in capsys.readouterr().out


def test_ablation_setting_with_its_own_encoder_and_several_approaches(tmp_path):
    """Issue 11's "encoder strength": a second encoder on a few approaches (not the whole plan); its EER
    run is compared with SNS on the same encoder, and each run with the plan's encoder's run."""
    setting = {"name": "mpnet encoder", "encoder": "all-mpnet-base-v2", "approach": ["eer_short", "sns_shortest"]}
    plan = parse_plan(
        plan_data(
            approaches=["sns_shortest", "eer_short"],
            reference="sns_shortest",
            bootstrap={"resamples": 2000},
            ablations={"settings": [setting]},
        )
    ).expand()
    own = [run for _, run in plan.ablation_entries]
    assert [(r.approach, r.encoder, r.seed) for r in own] == [
        ("eer_short", "all-mpnet-base-v2", 0),
        ("sns_shortest", "all-mpnet-base-v2", 0),
    ]
    assert own[0].name == "fx/ablations/mpnet-encoder/EE-15/eer_short/all-mpnet-base-v2/seed0"
    assert plan.reference_run(own[0]).encoder == "all-MiniLM-L6-v2"  # the plan's encoder's run of the same approach
    runner = Runner(plan, str(tmp_path / "bench"))
    assert runner.run_settings(own[0])["EER_ENCODER"] == "all-mpnet-base-v2"
    quality = {
        ("eer_short", "all-MiniLM-L6-v2"): (6, 3, 0),
        ("sns_shortest", "all-MiniLM-L6-v2"): (6, 4, 0),
        ("eer_short", "all-mpnet-base-v2"): (6, 6, 0),
        ("sns_shortest", "all-mpnet-base-v2"): (6, 5, 0),
    }
    for run in plan.runs:
        fabricate(runner, run, [quality[run.approach, run.encoder]] * DOCS)
    text = Path(Report(plan, runner).write()["md"]).read_text()
    rows = [line for line in text.split("## Ablations")[1].splitlines() if line.startswith("| mpnet encoder")]
    # EER with mpnet: vs EER with MiniLM (+), vs SNS with mpnet (not SNS with MiniLM); SNS with mpnet: no self-comparison
    assert rows[0].startswith(
        f"| mpnet encoder | EER-short | 0 | encoder all-mpnet-base-v2 | 100.0 | 100.0 | 100.0 | {100 - f1(3, 0):+.1f}† | {100 - f1(5, 0):+.1f}† |"
    )
    assert rows[1].startswith(
        f"| mpnet encoder | SNS-shortest | 0 | encoder all-mpnet-base-v2 | 100.0 | {100 * 5 / 6:.1f} | {f1(5, 0):.1f} | {f1(5, 0) - f1(4, 0):+.1f}† | – |"
    )
    # the main table stays the plan's encoder's: no mpnet column or row
    assert "all-mpnet-base-v2" not in text.split("## Ablations")[0].split("## Wall time")[0]
    with pytest.raises(PlanError, match=r"'approach': unknown approach 'gold'"):
        parse_plan(plan_data(ablations={"settings": [{**setting, "approach": ["eer_short", "gold"]}]}))
    with pytest.raises(PlanError, match=r"env.EER_ENCODER: give the setting's encoder as its 'encoder'"):
        parse_plan(plan_data(ablations={"settings": [{"name": "x", "env": {"EER_ENCODER": "m"}}]}))


def test_ablation_setting_with_its_own_scenarios(tmp_path):
    """A setting that matters on one annotation scenario (the ratio weight on NNS, where rho_hat stays above
    the band) runs on its own scenarios with their seeds and settings, is compared with that scenario's
    benchmark runs, and the table names the data of each row."""
    setting = {"name": "ratio weight 100", "env": {"EER_RATIO_LOSS_WEIGHT": "100"}, "scenarios": ["NNS"]}
    plan = parse_plan(
        rerun_plan(ablations={**ABLATIONS, "settings": ABLATIONS["settings"][:1] + [setting], "scenarios": ["EE"]})
    ).expand()
    own = [run for entry, run in plan.ablation_entries if entry["name"] == "ratio weight 100"]
    assert [(r.scenario_name, r.approach, r.seed) for r in own] == [("NNS", "eer_short", 0)]  # NNS has seed 0 only
    assert own[0].name == "fx/ablations/ratio-weight-100/NNS/eer_short/all-MiniLM-L6-v2/seed0"
    assert plan.env_of(own[0])["EER_RATIO_LOSS_WEIGHT"] == "100"
    assert plan.reference_run(own[0]).name == "fx/NNS/eer_short/all-MiniLM-L6-v2/seed0"
    others = [run for entry, run in plan.ablation_entries if entry["name"] != "ratio weight 100"]
    assert {r.scenario_name for r in others} == {"EE"}  # the study's scenarios stay the other settings'
    runner = Runner(plan, str(tmp_path / "bench"))
    for run in plan.runs:
        fabricate(runner, run, [(6, 5 if run.ablation else 4, 0)] * DOCS)
    text = Path(Report(plan, runner).write()["md"]).read_text()
    section = text.split("## Ablations")[1]
    assert "| benchmark setting | EER-short | fx/NNS | 0 | the plan's |" in section
    assert (
        f"| ratio weight 100 | EER-short | fx/NNS | 0 | EER_RATIO_LOSS_WEIGHT=100 | 100.0 | {100 * 5 / 6:.1f} | {f1(5, 0):.1f} | {f1(5, 0) - f1(4, 0):+.1f}† |"
        in section
    )
    with pytest.raises(
        PlanError, match=r"ablations setting 'ratio weight 100': scenarios: unknown name 'XX'; the plan has EE, NNS"
    ):
        parse_plan(rerun_plan(ablations={**ABLATIONS, "settings": [{**setting, "scenarios": ["XX"]}]}))


def test_learning_curve_claims_are_checked_per_budget_with_the_paired_bootstrap(tmp_path):
    """The paper's three learning-curve claims at each budget: EER beats Raw on EE data, Raw beats EER on
    exhaustive data, and EE + EER beats exhaustive + Raw only at 500 and 1000 (elsewhere shown, no verdict)."""
    from eer_benchmark.analyse.studies import learning_curve_claims

    plan = parse_plan(
        plan_data(learning_curve={"budgets": [100, 500], "approaches": ["eer_short", "raw_shortest"]})
    ).expand()
    runner = Runner(plan, str(tmp_path / "out"))
    correct = {
        ("ee", "eer_short"): 8,
        ("ee", "raw_shortest"): 4,
        ("exhaustive", "eer_short"): 6,
        ("exhaustive", "raw_shortest"): 6,
    }
    for _dataset, scheme, _budget, run in plan.lc_entries:  # 40 documents of 10 gold entities, the same per document
        fabricate(runner, run, [(10, correct[(scheme, run.approach)], 0)] * 40)
    table = learning_curve_claims(Report(plan, runner)).split("\n")
    assert len(table) == 2 + 2 * 3
    rows = {(cells[1], cells[2]): cells[3:] for cells in (line.strip("| ").split(" | ") for line in table[2:])}
    # F1: 8 of 10 found, none wrong = 88.9; 4 of 10 = 57.1; 6 of 10 = 75.0 (every document alike: a CI of one point)
    assert rows[("100", "EE + EER-short − EE + Raw-shortest")] == [
        "+31.7 [+31.7, +31.7] (1 seed)",
        "EE + EER-short > EE + Raw-shortest",
        "holds",
    ]
    assert rows[("500", "Exhaustive + Raw-shortest − Exhaustive + EER-short")][::2] == [
        "+0.0 [+0.0, +0.0] (1 seed)",
        "not significant",
    ]
    assert rows[("100", "EE + EER-short − Exhaustive + Raw-shortest")][1:] == ["– (no claim at this budget)", "–"]
    assert rows[("500", "EE + EER-short − Exhaustive + Raw-shortest")] == [
        "+13.9 [+13.9, +13.9] (1 seed)",
        "EE + EER-short > Exhaustive + Raw-shortest",
        "holds",
    ]
    plan.lc_entries[:] = [entry for entry in plan.lc_entries if entry[3].approach == "eer_short"]  # no pair to compare
    assert learning_curve_claims(Report(plan, runner)) == ""


# ----------------------------------------------------------------------------------- ratio grid under bind (issue 26)
def test_ratio_grid_under_the_binding_control_shares_the_ablation_run_and_reports_the_band(tmp_path):
    bind_ablation = {
        "approach": "eer_short",
        "scenarios": ["EE"],
        "seeds": [0],
        "settings": [{"name": "binding ratio control", "env": {"EER_RATIO_CONTROL": "bind"}}],
    }
    grid = {"settings": [[0.15, 0.05], [0.3, 0.0]], "scenarios": ["EE"], "seeds": [0], "controls": ["fixed", "bind"]}
    plan = parse_plan(rerun_plan(ratio_grid=grid, ablations=bind_ablation, learning_curve=None)).expand()
    names = [r.name.replace("/all-MiniLM-L6-v2", "") for r in plan.runs]
    bind = [r.name.replace("/all-MiniLM-L6-v2", "") for _, _, r in plan.bind_entries]
    assert bind == [
        "fx/ablations/binding-ratio-control/EE/eer_short/seed0",
        "fx/ablations/binding-ratio-control/EE/eer_short_rho0.3_gamma0/seed0",
    ]
    assert names.count(bind[0]) == 1  # the plan's band under bind is the ablation's run, trained once
    runner = Runner(plan, str(tmp_path / "out"))
    for _, (rho, gamma), run in plan.bind_entries:
        settings = runner.settings(run)
        assert settings["EER_RATIO_CONTROL"] == "bind" and (
            float(settings["EER_ENTITY_RATIO"]),
            float(settings["EER_RATIO_MARGIN"]),
        ) == (rho, gamma)
    for _, _, run in plan.ratio_entries:
        assert runner.settings(run)["EER_RATIO_CONTROL"] == "fixed"
    # the report: a bind row under each fixed row, and whether the final rho_hat is inside the band +- 0.01
    for run in plan.runs:
        fabricate(runner, run, [(10, 8, 1)] * DOCS, rho_hat=0.305 if run.ratio else 0.26)
    table = Path(Report(plan, runner).write()["md"]).read_text()
    rows = [line for line in table.splitlines() if line.startswith("| [0.")]
    assert [row.split("|")[2].strip() for row in rows] == ["fixed", "bind", "fixed", "bind"]
    assert [row.split("|")[-2].strip() for row in rows] == [
        "no",
        "no",
        "yes",
        "yes",
    ]  # 0.26 is outside [0.10, 0.20] + 0.01
    assert "Ratio control: `fixed` is the paper's hinge" in table
    # without an ablation of that name the bind runs still have a name in every table
    alone = parse_plan(rerun_plan(ratio_grid=grid, ablations=None, learning_curve=None)).expand()
    runner = Runner(alone, str(tmp_path / "alone"))
    for run in alone.runs:
        fabricate(runner, run, [(10, 8, 1)] * DOCS)
    assert (
        "| EER-short (ablation: binding ratio control) | 2 |" in Path(Report(alone, runner).write()["md"]).read_text()
    )


def test_ratio_grid_controls_are_checked():
    with pytest.raises(PlanError, match=r"ratio_grid.controls: unknown control 'strict'; expected 'fixed' or 'bind'"):
        parse_plan(rerun_plan(ratio_grid={"settings": [[0.3, 0.0]], "controls": ["strict"]}))


def test_an_ablation_on_other_data_is_compared_with_the_reference_on_those_data(tmp_path):
    """Estimate, then bind (20 complete documents, the band estimated from them) against SNS-shortest trained on the
    same complete documents with the plan's settings, not against the benchmark's SNS-shortest."""
    from eer_benchmark.analyse.studies import ablation_rows

    settings = [
        {"name": "complete, plan's ratio", "complete_documents": 2, "approach": ["eer_short", "sns_shortest"]},
        {
            "name": "estimate, then bind",
            "estimate_ratio": {"complete_documents": 2},
            "env": {"EER_RATIO_CONTROL": "bind"},
        },
        {"name": "no calibrated start", "env": {"EER_RATIO_INIT": "none"}},
    ]
    plan = parse_plan(
        rerun_plan(ablations={"approach": "eer_short", "scenarios": ["EE"], "seeds": [0], "settings": settings})
    ).expand()
    runner = Runner(plan, str(tmp_path / "out"))
    references = {
        row["run"].name.replace("/all-MiniLM-L6-v2", ""): row["reference"].name.replace("/all-MiniLM-L6-v2", "")
        for row in ablation_rows(Report(plan, runner))
    }
    assert (
        references["fx/ablations/estimate-then-bind/EE/eer_short/seed0"]
        == "fx/ablations/complete-plan-s-ratio/EE/sns_shortest/seed0"
    )
    assert (
        references["fx/ablations/no-calibrated-start/EE/eer_short/seed0"] == "fx/EE/sns_shortest/seed0"
    )  # same data as the benchmark


def test_an_ablation_on_two_scenarios_is_pooled_per_scenario_not_as_seeds(tmp_path):
    """A setting run on EE and NNS gets one pooled test per scenario (its seeds pooled), never EE and NNS pooled as
    if they were two seeds of one comparison."""
    from eer_benchmark.analyse.studies import pooled_ablation_differences

    setting = {"name": "binding ratio control", "env": {"EER_RATIO_CONTROL": "bind"}, "scenarios": ["EE", "NNS"]}
    plan = parse_plan(
        rerun_plan(ablations={**ABLATIONS, "settings": [setting], "scenarios": ["EE"], "seeds": [0]})
    ).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    for run in plan.runs:
        fabricate(runner, run, [(6, 5 if run.ablation else 4, 0)] * DOCS)
    pooled = pooled_ablation_differences(Report(plan, runner))
    assert sorted((e["run"].scenario_name, e["seeds"]) for e in pooled) == [("EE", [0]), ("NNS", [0])]
