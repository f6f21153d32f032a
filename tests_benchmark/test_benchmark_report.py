"""The benchmark report's issue-11 features on fabricated run directories: step budgets (plan key
``min_steps`` -> EER_MIN_STEPS of every run), the learning rates in the header, the first epoch at which
rho_hat entered the band, and several seeds (mean ± sd, the paired bootstrap with seeds pooled);
and repository-relative paths in docs/."""

import json
import re
from pathlib import Path, PurePosixPath

import pytest
from conftest import REPO
from test_benchmark import PAPER_ROBUSTNESS, PAPER_TABLE, fabricate, plan_data

from eer_benchmark import PlanError, Report, Runner, parse_plan
from eer_benchmark.analyse.convergence import epoch_in_band_to_the_end, first_epoch_in_band
from eer_benchmark.analyse.paper import paper_robustness, paper_table
from eer_benchmark.commands import benchmark
from eer_benchmark.report.docs import comparison, ratio_comparison, repository_relative
from eer_benchmark.run.records import read_records
from eer_plugin.runtime.encoders import config_defaults

DOCS_PER_RUN = 30


def f1(tp, fp, fn):
    return 2 * tp / (2 * tp + fp + fn)


# ----------------------------------------------------------------------------------- step budgets
def test_min_steps_reaches_every_run_and_the_header(tmp_path, capsys):
    data = plan_data(
        scenarios=[{"name": "EE-15", "type": "ee", "budget": 15}, {"name": "NNS", "type": "nns", "min_steps": 500}],
        approaches=["gold", "raw_shortest", "eer_short"],
        min_steps=2000,
        env={"EER_LEARNING_RATE": "5e-5"},
        ratio_grid=[[0.3, 0.0]],
        learning_curve={"budgets": [5], "approaches": ["eer_short"]},
    )
    plan = parse_plan(data).expand()
    runner = Runner(plan, str(tmp_path / "out"))
    steps = {(r.scenario_name, r.approach_dir): runner.run_settings(r)["EER_MIN_STEPS"] for r in plan.runs}
    assert steps[("gold", "gold")] == steps[("EE-15", "eer_short")] == "2000"
    assert steps[("NNS", "eer_short")] == steps[("NNS", "raw_shortest")] == "500"  # the scenario's own budget
    assert steps[("EE-15", "eer_short_rho0.3_gamma0")] == "2000"  # the ratio grid's run
    assert steps[("EE-5", "eer_short")] == steps[("Exh-5", "eer_short")] == "2000"  # the learning curve's runs
    assert runner.settings(plan.runs[0])["EER_MIN_STEPS"] == "2000"  # recorded, so a changed budget is a stale run
    # without min_steps the runner sets nothing of its own: the config default stays
    plain = parse_plan(plan_data()).expand()
    env = Runner(plain, str(tmp_path / "plain")).run_settings(plain.runs[0])
    assert env.get("EER_MIN_STEPS") == config_defaults().get("EER_MIN_STEPS")
    assert plain.min_steps_description() == ""
    # the header states the budget and both learning rates
    report = Path(Report(plan, runner).write()["md"]).read_text()
    assert "epochs 1; at least 2000 optimizer steps per run (scenario NNS: 500)." in report
    assert (
        "Learning rate: encoder 5e-5, freshly initialised heads 1e-3 (EER_LEARNING_RATE, EER_HEAD_LEARNING_RATE); "
        "encoder precision auto (bf16 where the hardware computes bfloat16 natively, else fp32) (EER_PRECISION)."
    ) in report  # the configs' default precision depends on the machine, and the header says how
    head = parse_plan(plan_data(env={"EER_HEAD_LEARNING_RATE": "2e-3", "EER_PRECISION": "fp32"})).expand()
    text = Path(Report(head, Runner(head, str(tmp_path / "head"))).write()["md"]).read_text()
    assert (
        "freshly initialised heads 2e-3 (EER_LEARNING_RATE" in text and "encoder precision fp32 (EER_PRECISION)" in text
    )
    # checks that say the fix
    with pytest.raises(
        PlanError,
        match=r"'min_steps' must be a positive integer \(the least number of optimizer steps of a run\), got 0",
    ):
        parse_plan(plan_data(min_steps=0))
    with pytest.raises(
        PlanError, match="set the step budget either with 'min_steps' or with env.EER_MIN_STEPS, not both"
    ):
        parse_plan(plan_data(min_steps=10, env={"EER_MIN_STEPS": "10"}))
    with pytest.raises(
        PlanError, match=r"scenario 'N': set the step budget with the scenario's 'min_steps', not env.EER_MIN_STEPS"
    ):
        parse_plan(plan_data(scenarios=[{"name": "N", "type": "nns", "env": {"EER_MIN_STEPS": "10"}}]))
    # the dry run lists the budget of every run
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(data))
    assert (
        benchmark.main([str(plan_file), "-o", str(tmp_path / "dry"), "--dry-run", "--runs", "fx/NNS/eer_short/*"]) == 0
    )
    assert "EER_MIN_STEPS=500" in capsys.readouterr().out


# ----------------------------------------------------------------------------------- convergence
def write_rho_hats(runner, run, values):
    directory = runner.run_dir(run)
    for old in directory.glob("metrics_epoch_*.json"):
        old.unlink()
    for epoch, value in enumerate(values):
        (directory / f"metrics_epoch_{epoch}.json").write_text(json.dumps({"training_rho_hat": value}))


def test_first_epoch_in_the_band_per_eer_run(tmp_path):
    assert first_epoch_in_band([(0, 0.85), (1, 0.4), (2, 0.2), (3, 0.15)], 0.15, 0.05) == 3  # the edge is inside
    assert first_epoch_in_band([(0, 0.85), (1, 0.35)], 0.15, 0.05) is None
    assert first_epoch_in_band([], 0.15, 0.05) is None
    # in band from an epoch to the end: an early visit that leaves the band again does not count
    assert epoch_in_band_to_the_end([(0, 0.15), (1, 0.45), (2, 0.19), (3, 0.16)], 0.15, 0.05) == 3
    assert epoch_in_band_to_the_end([(0, 0.15), (1, 0.12)], 0.15, 0.05) == 1
    assert epoch_in_band_to_the_end([(0, 0.15), (1, 0.21)], 0.15, 0.05) is None  # ended outside
    assert epoch_in_band_to_the_end([], 0.15, 0.05) is None
    plan = parse_plan(
        plan_data(approaches=["raw_shortest", "eer_short", "eer_shortest"], ratio_grid=[[0.3, 0.0]])
    ).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    for run in plan.runs:
        fabricate(runner, run, [(6, 4, 1)] * 3)
    series = {
        "eer_short": [0.85, 0.15, 0.4, 0.19, 0.16],
        "eer_shortest": [0.85, 0.5, 0.35],
        "eer_short_rho0.3_gamma0": [0.8, 0.3],
    }
    for run in plan.runs:
        if run.approach_dir in series:
            write_rho_hats(runner, run, series[run.approach_dir])
    report = Path(Report(plan, runner).write()["md"]).read_text()
    section = report.split("## Epochs until rho_hat entered the band")[1]
    assert (
        "| dataset | scenario | approach | seed | [rho - gamma, rho + gamma] | epochs | first epoch in band | in band from (to the end) | final rho_hat |"
    ) in section
    assert (
        "| fx | EE-15 | EER-short | 0 | [0.10, 0.20] | 5 | 2 | 4 | 0.160 |" in section
    )  # in band at 2, out at 3, back at 4
    assert "| fx | EE-15 | EER-shortest | 0 | [0.10, 0.20] | 3 | never | never | 0.350 |" in section
    assert (
        "| fx | EE-15 | EER-short | 0 | [0.30, 0.30] | 2 | 2 | 2 | 0.300 |" in section
    )  # the ratio grid's run, its own band
    assert "Raw-shortest" not in section  # EER runs only


# ----------------------------------------------------------------------------------- several seeds
def test_several_seeds_mean_sd_and_pooled_bootstrap(tmp_path):
    data = plan_data(
        approaches=["sns_shortest", "eer_short"],
        seeds=[0, 1, 2],
        reference="sns_shortest",
        bootstrap={"resamples": 2000},
        ratio_grid=[[0.15, 0.05], [0.3, 0.0]],
    )
    plan = parse_plan(data).expand()
    runner = Runner(plan, str(tmp_path / "bench"))
    correct = {0: 5, 1: 4, 2: 6}  # EER's correct spans per document (of 6), by seed; SNS: 3 correct, 2 wrong
    for run in plan.runs:
        quality = (6, correct[run.seed], 0) if run.approach == "eer_short" else (6, 3, 2)
        fabricate(runner, run, [quality] * DOCS_PER_RUN)
    report = Report(plan, runner)
    text = Path(report.write()["md"]).read_text()
    eer = [100 * f1(c, 0, 6 - c) for c in (5, 4, 6)]
    mean = sum(eer) / 3
    sd = (sum((v - mean) ** 2 for v in eer) / 2) ** 0.5
    cell = f"{mean:.1f} ± {sd:.1f}"
    assert f"| EER-short | **{cell}**† | **{cell}**† |" in text  # mean ± sd over the seeds, better than SNS
    # the paired bootstrap pools the seeds: per-document counts summed over seeds 0, 1, 2
    pooled = 100 * f1(5 + 4 + 6, 0, 3)
    assert re.search(
        rf"\| EE-15 \| EER-short \| fx \| 0,1,2 \| {DOCS_PER_RUN} \| {pooled:.2f} \| {100 * f1(3, 2, 3):.2f} \|.*\| yes, better \|",
        text,
    )
    # docs: our F1 beside the paper's, and the ratio grid beside the paper's table, both as mean ± sd
    _, rows = paper_table(PAPER_TABLE)
    # wall time: the mean over the seeds' runs (100 s each), comparable between rows with different seed counts
    assert f"| EE-15 | EER-short | {cell} | – | 1.7 | 89.0 | EER-BERT-short |" in comparison(
        plan, report, rows, "fx", "eng-c"
    )
    grid = ratio_comparison(report, paper_robustness(PAPER_ROBUSTNESS)).split("\n")
    assert grid[2] == f"| fx | EE-15 | [0.10, 0.20]† | {cell} | 0.200 | 87.9† |"  # one line per setting, not per seed
    assert grid[3] == f"| fx | EE-15 | [0.30, 0.30] | {cell} | 0.200 | 79.4 |" and len(grid) == 6
    assert "Ours: mean ± sd over seeds 0, 1, 2;" in grid[-1]


# ----------------------------------------------------------------------------------- docs paths
def test_docs_in_the_repository_name_no_absolute_path(tmp_path):
    outdir = tmp_path / "bench"
    text = f"run {outdir}/runs/fx/EE/eer_short/seed0, plan {REPO}/benchmarks/plans/p.jsonnet"
    relative = repository_relative(text, outdir, REPO / "docs", root=REPO)
    assert not re.search(r"(^|\s)/", relative)  # no absolute path left
    assert Path(REPO, relative.split()[1].rstrip(",")).resolve() == (outdir / "runs/fx/EE/eer_short/seed0").resolve()
    assert relative.endswith("plan benchmarks/plans/p.jsonnet")
    assert (
        repository_relative(text, outdir, tmp_path / "docs", root=REPO) == text
    )  # docs outside the repository: unchanged


@pytest.mark.integration
def test_results_script_renders_the_docs_from_finished_runs(tmp_path):
    """`RENDER_ONLY=1 bash benchmarks/results.sh` (the entry point of docs/results.md) on fabricated runs
    of the CoNLL plan, into a scratch docs directory: one code path, `allennlp eer-benchmark --docs`."""
    import os
    import subprocess

    from eer_benchmark import load_plan

    plan = load_plan(str(REPO / "benchmarks" / "plans" / "conll_en_minilm.jsonnet"), check_files=False)
    runner = Runner(plan, str(tmp_path / "bench"))
    for run in plan.runs:
        fabricate(runner, run, [(6, 5 if run.family == "eer" else 4, 1)] * 5)
    before = (REPO / "docs" / "results.md").stat().st_mtime_ns
    env = {k: v for k, v in os.environ.items() if not k.startswith("EER_")}
    env.update(RENDER_ONLY="1", OUT=str(tmp_path / "bench"), DOCS=str(tmp_path / "docs"), RESULTS_NOTES="a remark")
    done = subprocess.run(
        ["bash", "benchmarks/results.sh"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    text = (tmp_path / "docs" / "results.md").read_text()
    shown = os.path.relpath(
        tmp_path / "bench", REPO
    )  # the commands name the benchmark directory relative to the repository
    assert f"```\nOUT={shown} bash benchmarks/results.sh\n# runs these steps in order" in text
    assert (
        f"allennlp eer-benchmark benchmarks/plans/conll_en_minilm.jsonnet -o {shown} --runs 'eng-c/gold/*/*/seed0' 'eng-c/EE/[!e]*/*/seed0'"
        in text
    )
    assert (
        "**Which of the paper's claims hold here**" in text
        and "## Ablations" in text
        and "| – | Gold-SNS-all |" in text
    )
    assert "- Note: a remark" in text and "## Test F1" in text and "## Epochs until rho_hat entered the band" in text
    # issue 27: the mpnet block's steps (after the MiniLM ones) and its section, every run of it finished here
    assert "# the block on all-mpnet-base-v2 (BLOCK=mpnet runs only these):" in text
    assert (
        f"-o {shown} --runs 'eng-c/ablations/mpnet-encoder/EE/eer_short/*/seed1' 'eng-c/ablations/mpnet-encoder/EE/sns_shortest/*/seed1'"
        in text
    )
    in_block = sum(block["name"] == "mpnet encoder" for block, _, _ in plan.block_entries)  # 30 since the dropout check
    assert '## The benchmark on all-mpnet-base-v2 (block "mpnet encoder")' in text
    assert f"{in_block} of {in_block} runs finished" in text and in_block >= 27
    assert (tmp_path / "docs" / "results" / "results.csv").read_text() == (
        tmp_path / "bench" / "results.csv"
    ).read_text()
    assert (REPO / "docs" / "results.md").stat().st_mtime_ns == before  # the repository's docs are untouched
    # the finished runs' records are kept in DOCS/results/records.jsonl (no model or log files) and a fresh benchmark
    # directory (a later session on a fresh clone) is restored from them: the same report, nothing rerun
    records = read_records(tmp_path / "docs" / "results" / "records.jsonl")
    kept = sorted(PurePosixPath(directory, name) for directory, files in records.items() for name in files)
    assert sum(p.name == "DONE" for p in kept) == len(plan.runs)
    assert {p.name for p in kept} <= {
        "DONE",
        "result.json",
        "doc_counts.json",
        "metrics.json",
        "ratio_init.json",
        "ratio_estimate.json",
        "o_cost.json",
        "cbl_rounds.json",
    } | {p.name for p in kept if p.name.startswith("metrics_epoch_") or p.name.endswith(".stats.json")}
    env.update(OUT=str(tmp_path / "fresh"), DOCS=str(tmp_path / "docs"))
    again = subprocess.run(
        ["bash", "benchmarks/results.sh"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr[-3000:]
    restored = (
        (tmp_path / "fresh" / "results.csv").read_text().replace(str(tmp_path / "fresh"), str(tmp_path / "bench"))
    )
    assert restored == (tmp_path / "bench" / "results.csv").read_text()  # the same runs, only their directory moved
