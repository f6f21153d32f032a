"""Issue 27's block (the benchmark table again on another encoder) on fabricated run directories: the plan
language (its runs share the directory of an ablation setting that changes the encoder only, its settings
run with its encoder), its section of docs/results.md with every seed finished and with seeds missing, the
reuse of the ablation's finished runs, the machine a run records, and the byte-identity of every other
section of the page with and without the block."""

import json
import re

import pytest
from test_benchmark import PAPER_ROBUSTNESS, PAPER_TABLE, fabricate
from test_benchmark_studies import DOCS, f1, rerun_plan

from eer_benchmark import PlanError, Report, Runner, parse_plan
from eer_benchmark.machine import machine, machine_text
from eer_benchmark.report.docs import render_docs

ENCODER = "encoder-b"
ABLATIONS = {
    "approach": "eer_short",
    "scenarios": ["EE"],
    "seeds": [0],
    "settings": [
        {"name": "no calibrated start", "env": {"EER_RATIO_INIT": "none"}},
        {"name": "other encoder", "encoder": ENCODER, "approach": ["eer_short", "sns_shortest"]},
        {
            "name": "estimate, then bind",
            "estimate_ratio": {"complete_documents": 2},
            "env": {"EER_RATIO_CONTROL": "bind"},
            "seeds": [0, 1, 2],
        },
        {
            "name": "complete documents",
            "complete_documents": 2,
            "approach": ["eer_short", "sns_shortest"],
            "seeds": [0, 1, 2],
        },
    ],
}
BLOCK = {
    "name": "other encoder",
    "encoder": ENCODER,
    "approaches": ["gold", "sns_shortest", "eer_short", "eer_shortest"],
    "scenarios": [
        {"name": "EE", "seeds": [0, 1, 2]},
        {"name": "NNS", "seeds": [0], "approaches": ["sns_shortest", "eer_short"]},
    ],
    "settings": [{"name": "estimate, then bind"}, {"name": "complete documents", "approach": "sns_shortest"}],
}
#: EER-short right per document (of 6) by seed; SNS-shortest: 5 right, 1 wrong; everything else 6 right
EER_SHORT = {0: 4, 1: 5, 2: 6}


def block_plan(blocks=(BLOCK,), ablations=ABLATIONS):
    return parse_plan(rerun_plan(ablations=ablations, **({"blocks": list(blocks)} if blocks else {}))).expand()


def fabricate_runs(runner, runs):
    for run in runs:
        if run.approach == "sns_shortest":
            quality = (6, 5, 1)
        elif run.approach == "eer_short":
            quality = (6, EER_SHORT[run.seed], 0)
        else:
            quality = (6, 6, 0)
        fabricate(runner, run, [quality] * DOCS, seconds=1800.0)


def render(tmp_path, plan, name):
    paper = tmp_path / "paper.tex"
    paper.write_text(PAPER_TABLE + "\n" + PAPER_ROBUSTNESS)
    runner = Runner(plan, str(tmp_path / "bench"))
    report = Report(plan, runner)
    return render_docs(
        report, report.write(), ["bash run.sh"], str(paper), str(tmp_path / name), {"fx": "eng-c"}
    ).read_text()


def block_section(text):
    return text.split(f"## The benchmark on {ENCODER}")[1].split("## Ours next to the paper")[0]


# ----------------------------------------------------------------------------------- plan language
def test_a_block_shares_the_encoder_ablations_runs_and_runs_its_settings_with_its_encoder():
    plan = block_plan()
    names = [run.name.replace(f"/{ENCODER}/", "/") for _, _, run in plan.block_entries]
    assert names == [
        *[f"fx/ablations/other-encoder/gold/gold/seed{s}" for s in (0, 1, 2)],
        *[
            f"fx/ablations/other-encoder/EE/{a}/seed{s}"
            for a in ("sns_shortest", "eer_short", "eer_shortest")
            for s in (0, 1, 2)
        ],
        "fx/ablations/other-encoder/NNS/sns_shortest/seed0",
        "fx/ablations/other-encoder/NNS/eer_short/seed0",
        *[f"fx/ablations/estimate-then-bind/EE/eer_short/seed{s}" for s in (0, 1, 2)],
        *[f"fx/ablations/complete-documents/EE/sns_shortest/seed{s}" for s in (0, 1, 2)],
    ]
    # the ablation 'other encoder' (seed 0 of EER-short and SNS-shortest) has the same runs: one run each, in both studies
    shared = [run for run in plan.runs if run.ablation == "other-encoder" and "ablations" in run.studies]
    assert [(r.approach, r.seed, r.studies) for r in shared] == [
        ("eer_short", 0, ["ablations", "block"]),
        ("sns_shortest", 0, ["ablations", "block"]),
    ]
    assert len({run.key for run in plan.runs}) == len(plan.runs)
    # the settings' runs: the setting's data and env with the block's encoder, on the block scenario's seeds
    recipe = [run for block, setting, run in plan.block_entries if setting and setting["slug"] == "estimate-then-bind"]
    assert all(
        r.estimates_ratio and r.complete_documents == 2 and dict(r.overrides) == {"EER_RATIO_CONTROL": "bind"}
        for r in recipe
    )
    runner = Runner(plan, "/tmp/unused-benchmark-dir")
    assert runner.environment(recipe[0])["EER_ENCODER"] == ENCODER
    assert runner.data_path(recipe[0]) == runner.data_path(
        next(r for r in plan.runs if r.ablation == "estimate-then-bind" and r.encoder != ENCODER)
    )


def test_a_block_of_its_own_name_and_an_ablation_with_more_seeds(tmp_path):
    # seeds the encoder ablation adds (the lead's seeds 1 and 2) are the block's runs too: nothing twice
    more = {**ABLATIONS, "settings": [{**ABLATIONS["settings"][1], "seeds": [0, 1, 2]}] + ABLATIONS["settings"][2:]}
    plan = block_plan(ablations=more)
    shared = [run for run in plan.runs if "ablations" in run.studies and "block" in run.studies]
    assert sorted((r.approach, r.seed) for r in shared) == [
        (a, s) for a in ("eer_short", "sns_shortest") for s in (0, 1, 2)
    ]
    assert len(plan.block_entries) == 20 and len({run.key for run in plan.runs}) == len(plan.runs)
    # a block with no ablation of its name: its own directory, and every section of the page names it
    plan = block_plan([{**BLOCK, "name": "encoder b"}])
    assert {r.ablation for b, s, r in plan.block_entries if s is None} == {"encoder-b"}
    fabricate_runs(Runner(plan, str(tmp_path / "bench")), plan.runs)
    text = render(tmp_path, plan, "docs")
    assert (
        "| EER-short (ablation: encoder b) | 4 |" in text
        and "| fx | EE | EER-short, ablation: encoder b | 0.15 ± 0.05 | 3 |" in text
    )


def test_block_errors_say_the_fix():
    def fails(match, block=None, ablations=ABLATIONS):
        with pytest.raises(PlanError, match=match):
            block_plan([{**BLOCK, **(block or {})}], ablations)

    changed = {
        **ABLATIONS,
        "settings": [{"name": "other encoder", "encoder": ENCODER, "env": {"EER_RATIO_INIT": "none"}}]
        + ABLATIONS["settings"][2:],
    }
    fails(
        r"the ablation setting 'other encoder' has the same directory \('other-encoder'\) but other settings",
        ablations=changed,
    )
    fails(
        r"settings\[0\] must be \{name, approach, scenarios\} naming an ablation setting of the plan",
        {"settings": [{"name": "unknown"}]},
    )
    fails(r"'approaches' must include the plan's reference 'sns_shortest'", {"approaches": ["eer_short"]})
    fails(
        r"scenarios\[1\]: 'approaches' must be the block's approaches other than gold",
        {"scenarios": [{"name": "EE"}, {"name": "NNS", "approaches": ["raw_shortest"]}]},
    )
    fails(
        r"'approach' must be among the setting's approaches",
        {"settings": [{"name": "estimate, then bind", "approach": "sns_shortest"}]},
    )


#: a setting that changes settings only (the binding ratio control) on both scenarios; the block repeats it on NNS only
BIND = {
    "name": "binding ratio control",
    "env": {"EER_RATIO_CONTROL": "bind"},
    "approach": ["eer_short"],
    "scenarios": ["EE", "NNS"],
}


def bind_plan(scenarios=("NNS",)):
    block = {**BLOCK, "settings": BLOCK["settings"] + [{"name": BIND["name"], "scenarios": list(scenarios)}]}
    return block_plan([block], {**ABLATIONS, "settings": ABLATIONS["settings"] + [BIND]})


def test_a_block_repeats_a_setting_on_the_scenarios_it_names(tmp_path):
    plan = bind_plan()
    bound = [run for _, setting, run in plan.block_entries if setting and setting["slug"] == "binding-ratio-control"]
    assert [(r.scenario_name, r.approach, r.seed, r.encoder) for r in bound] == [("NNS", "eer_short", 0, ENCODER)]
    assert dict(bound[0].overrides) == {"EER_RATIO_CONTROL": "bind"}
    # the report: against SNS-shortest on the same data, which is the block's own NNS run (the setting changes settings only)
    fabricate_runs(Runner(plan, str(tmp_path / "bench")), plan.runs)
    rows = [
        line for line in block_section(render(tmp_path, plan, "docs")).splitlines() if line.startswith("| NNS, binding")
    ]
    assert rows[0].startswith(
        f"| NNS, binding ratio control | EER-short | 1 of 1 | {f1(4, 0):.1f} | {f1(4, 0) - f1(5, 1):+.1f}‡ ["
    )
    assert rows[1:] == [
        "| NNS, binding ratio control | EER-short | 0 | [0.10, 0.20] | 3 of 3 | 0.200 |"
    ]  # epochs to the band
    assert (
        len([r for _, s, r in bind_plan(("EE", "NNS")).block_entries if s and s["slug"] == "binding-ratio-control"])
        == 4
    )
    with pytest.raises(
        PlanError,
        match=r"settings\[2\]: 'scenarios' must be a non-empty list among the setting's scenarios \(EE, NNS\), got \['XX'\]",
    ):
        bind_plan(("XX",))


# ----------------------------------------------------------------------------------- the report
def test_block_section_with_every_seed_finished(tmp_path):
    plan = block_plan()
    fabricate_runs(Runner(plan, str(tmp_path / "bench")), plan.runs)
    # one run on a GPU: the machine it records is named
    gpu = next(run for _, _, run in plan.block_entries if run.approach == "eer_shortest")
    result = Runner(plan, str(tmp_path / "bench")).run_dir(gpu) / "result.json"
    recorded = {"cpu": "x", "cores": 16, "torch": "2.4.0", "cuda": "12.1", "gpu": "NVIDIA H100"}
    result.write_text(json.dumps({**json.loads(result.read_text()), "machine": recorded}))
    section = block_section(render(tmp_path, plan, "docs"))
    values = [f1(EER_SHORT[s], 0) for s in (0, 1, 2)]
    mean = sum(values) / 3
    sd = (sum((v - mean) ** 2 for v in values) / 2) ** 0.5
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0] == (
        "| scenario | approach | seeds finished | ours: fx F1 | Δ F1 vs SNS-shortest, seeds pooled [99% CI] | min per run | "
        "all-MiniLM-L6-v2: F1 | paper: eng-c F1 |"
    )
    assert rows[1] == "| – | Gold-all | 3 of 3 | 100.0 ± 0.0 | – | 30.0 | 100.0 ± 0.0 | 92.7 |"
    assert rows[2] == f"| EE | SNS-shortest | 3 of 3 | {f1(5, 1):.1f} ± 0.0 | – | 30.0 | {f1(5, 1):.1f} ± 0.0 | – |"
    pooled = 100 * (2 * 15 / (2 * 15 + 3)) - f1(5, 1)  # the seeds' counts summed: 15 of 18 right, none wrong
    assert re.fullmatch(
        rf"\| EE \| EER-short \| 3 of 3 \| {mean:.1f} ± {sd:.1f} \| {re.escape(format(pooled, '+.1f'))}† \[[-+]\d+\.\d, [-+]\d+\.\d\] \| 30\.0 \| .* \| 89\.0 \|",
        rows[3],
    )
    assert rows[4].startswith(f"| EE | EER-shortest | 3 of 3 | 100.0 ± 0.0 | {100 - f1(5, 1):+.1f}† [")
    assert rows[5].startswith(f"| NNS | SNS-shortest | 1 of 1 | {f1(5, 1):.1f} |") and rows[6].startswith(
        f"| NNS | EER-short | 1 of 1 | {f1(4, 0):.1f} |"
    )
    # the recipe against SNS-shortest on the same data (the setting 'complete documents' with the block's encoder)
    assert re.match(
        rf"\| EE, estimate, then bind \| EER-short \| 3 of 3 \| {mean:.1f} ± {sd:.1f} \| {re.escape(format(pooled, '+.1f'))}",
        rows[7],
    )
    assert rows[8].startswith("| EE, complete documents | SNS-shortest | 3 of 3 |")
    # the claims on the block's runs, the epochs to the band, the hours and machines; nothing missing
    assert re.search(r"\| EE \| EER-shortest − SNS-shortest \| \+\d+\.\d ± 0\.0 \| – \| \+\d+\.\d \[", section)
    assert "| EE | EER-short | 0 | [0.10, 0.20] | 3 of 3 | 0.200 |" in section
    runs = len(plan.block_entries)
    assert f"{runs} of {runs} runs finished, {runs * 1805 / 3600:.1f} hours of compute" in section
    assert (
        f"Machines: not recorded (runs from before the records kept it): {runs - 1} runs; GPU NVIDIA H100 (torch 2.4.0, CUDA 12.1): 1 run."
        in section
    )
    assert "Runs not finished" not in section


def test_block_section_with_seeds_missing_reuses_the_ablations_runs(tmp_path):
    plan = block_plan()
    runner = Runner(plan, str(tmp_path / "bench"))
    # the other encoder's runs so far: the ablation's (seed 0 of EER-short and SNS-shortest), then seed 1 of EER-short
    fabricate_runs(runner, [r for r in plan.runs if r.encoder != ENCODER or "ablations" in r.studies])
    fabricate_runs(
        runner,
        [r for _, _, r in plan.block_entries if (r.approach, r.seed, r.ablation) == ("eer_short", 1, "other-encoder")],
    )
    section = block_section(render(tmp_path, plan, "docs"))
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[1] == "| – | Gold-all | 0 of 3 | – | – | – | 100.0 ± 0.0 | 92.7 |"
    assert rows[2].startswith(f"| EE | SNS-shortest | 1 of 3 | {f1(5, 1):.1f} | – |")
    # the bootstrap pools the seeds both finished: seed 0 only
    assert (
        rows[3].startswith(f"| EE | EER-short | 2 of 3 | {(f1(4, 0) + f1(5, 0)) / 2:.1f} ± ")
        and f"| {f1(4, 0) - f1(5, 1):+.1f}‡ [" in rows[3]
    )
    assert rows[7].startswith("| EE, estimate, then bind | EER-short | 0 of 3 | – | – |")
    runs = len(plan.block_entries)
    assert f"3 of {runs} runs finished" in section
    assert f"Runs not finished ({runs - 3}):" in section
    assert f"- `fx/ablations/other-encoder/EE/eer_short/{ENCODER}/seed2`: not run yet" in section
    assert f"fx/ablations/other-encoder/EE/eer_short/{ENCODER}/seed0`" not in section


def test_the_other_sections_are_the_same_with_and_without_the_block(tmp_path):
    """Every section of docs/results.md but the block's own and the plan's run count is byte-identical, and
    results.csv keeps every row of the plan without the block (the block's runs add rows; the shared runs' study
    names both studies)."""
    without = block_plan(blocks=())
    fabricate_runs(Runner(without, str(tmp_path / "bench")), without.runs)
    before = render(tmp_path, without, "before")
    csv_before = (tmp_path / "before" / "results" / "results.csv").read_text().splitlines()
    after = render(tmp_path, block_plan(), "after")
    csv_after = (tmp_path / "after" / "results" / "results.csv").read_text().splitlines()
    drop = lambda text: re.sub(r"Plan `[^`]*`; \d+ runs: \d+ finished, 0 failed, \d+ not run", "PLAN", text)  # noqa: E731
    assert f"## The benchmark on {ENCODER}" not in before
    assert drop(after.replace(f"## The benchmark on {ENCODER}" + block_section(after), "")) == drop(before)
    shared = [line for line in csv_before if ",other-encoder" in line]
    assert len(shared) == 2 and all(line.replace(",ablations,", ",ablations;block,") in csv_after for line in shared)
    assert set(csv_before) - set(shared) <= set(csv_after)
    assert all(ENCODER in line for line in set(csv_after) - set(csv_before))  # the new rows name the block's encoder


def test_a_run_trained_again_on_a_gpu_is_set_beside_the_block_run(tmp_path, monkeypatch):
    from eer_benchmark.report import reproduction
    from eer_benchmark.run.records import save

    plan = block_plan()
    fabricate_runs(Runner(plan, str(tmp_path / "bench")), plan.runs)
    assert "trained again on another machine" not in block_section(render(tmp_path, plan, "docs"))
    # EER-short seed 0 trained again on a GPU: 5 of 6 documents right where the block's run has 4
    check = next(
        run
        for _, _, run in plan.block_entries
        if run.approach == "eer_short" and run.seed == 0 and run.scenario_name == "EE"
    )
    other = Runner(plan, str(tmp_path / "gpu"))
    fabricate(other, check, [(6, 5, 0)] * DOCS, seconds=210.0)
    result = other.run_dir(check) / "result.json"
    gpu = {"cpu": "x", "cores": 16, "torch": "2.11.0", "cuda": "13.0", "gpu": "NVIDIA H100"}
    result.write_text(json.dumps({**json.loads(result.read_text()), "machine": gpu}))
    save(tmp_path / "gpu", tmp_path / "checks.jsonl")
    paper = tmp_path / "paper.tex"
    report = Report(plan, Runner(plan, str(tmp_path / "bench")))
    monkeypatch.chdir(
        tmp_path
    )  # the repository root, as for benchmarks/results.sh: the report names its files from there
    text = render_docs(
        report,
        report.write(),
        ["x"],
        str(paper),
        str(tmp_path / "d2"),
        {"fx": "eng-c"},
        (),
        str(tmp_path / "checks.jsonl"),
    )
    rows = [
        line
        for line in block_section(text.read_text()).split("trained again on another machine")[1].splitlines()
        if line.startswith("| ")
    ]
    seeds = sorted(f1(EER_SHORT[s], 0) for s in (0, 1, 2))
    assert rows[1] == (
        f"| EE | EER-short | 0 | not recorded | {f1(4, 0):.1f} | 30.0 | GPU NVIDIA H100 (torch 2.11.0, CUDA 13.0) | {f1(5, 0):.1f} | 3.5 "
        f"| {f1(5, 0) - f1(4, 0):+.1f} | {seeds[0]:.1f}–{seeds[-1]:.1f} (3 seeds) | yes |"
    )
    assert len(rows) == 2  # the header and the one run checked
    assert "(their records: `checks.jsonl`;" in block_section(
        text.read_text()
    )  # the file it was given, from the repository
    assert reproduction._seeds_text([87.25]) == "87.2 (1 seed)" and reproduction._seeds_text([]) == "–"


def test_a_run_records_its_machine():
    here = machine(-1)
    assert set(here) == {"cpu", "cores", "torch", "cuda", "gpu"} and here["gpu"] is None and here["cores"] >= 1
    assert machine_text(here).startswith("CPU ") and machine_text(None) == "not recorded"
    assert (
        machine_text({**here, "gpu": "NVIDIA H100", "cuda": "12.1"})
        == f"GPU NVIDIA H100 (torch {here['torch']}, CUDA 12.1)"
    )


def test_the_readme_guide_is_rendered_from_the_csv(tmp_path):
    from eer_benchmark.report.guide import END, GUIDE_PAGE, START, region

    plan = block_plan()
    fabricate_runs(
        Runner(plan, str(tmp_path / "bench")),
        [r for r in plan.runs if not (r.approach == "eer_shortest" and r.seed == 2)],
    )
    readme = tmp_path / "docs" / GUIDE_PAGE
    readme.parent.mkdir(parents=True, exist_ok=True)
    readme.write_text(f"# x\n\n## Which approach should I use?\n\n{START}\nold\n{END}\n\n## Next\n")
    render(tmp_path, plan, "docs")  # DOCS = tmp_path/docs: its guide page gets the guide
    guide = region(readme.read_text())
    rows = guide.splitlines()
    assert rows[0].startswith("| your annotation | corpus | train (best measured) | test F1, mpnet")
    # EE: EER-shortest is best (every document right) on its 2 finished seeds of 3, ranked on MiniLM (the
    # fixture's block encoder is not mpnet); the plan has no CBL-BERT or Raw+CD
    assert rows[2] == (
        "| EE: a few entities marked per document (1,000 in all), no document complete | fx | EER-shortest (ranked on MiniLM) | – "
        f"| 100.0 ± 0.0 (2 of 3 seeds, 30 min) | SNS-shortest: MiniLM {f1(5, 1):.1f} ± 0.0 (3 seeds); "
        f"EER-short: MiniLM {(f1(4, 0) + f1(5, 0) + f1(6, 0)) / 3:.1f} ± 10.0 (3 seeds) |"
    )
    assert readme.read_text().endswith(f"{END}\n\n## Next\n") and "old" not in guide


def test_the_verdict_holds_gpu_checks_against_the_dropout_stream_runs_too():
    """A GPU draws dropout differently: the verdict sets the checks against the block's seeds and, where the
    block has a setting that changes only the dropout stream (EER_DROPOUT_SEED), against those runs as well."""
    from eer_benchmark.report.reproduction import _dropout_settings, _verdict

    block = {
        "settings": [
            {"setting": {"name": "binding ratio control", "env": {"EER_RATIO_CONTROL": "bind"}}},
            {"setting": {"name": "another dropout stream", "env": {"EER_DROPOUT_SEED": "100"}}},
            {"setting": {"name": "estimate, then bind", "env": {"EER_RATIO_CONTROL": "bind", "EER_DROPOUT_SEED": "1"}}},
        ]
    }
    settings = [item["setting"] for item in block["settings"]]
    assert [s["name"] for s in _dropout_settings(settings + settings)] == ["another dropout stream"]
    plain = _verdict("EE, EER-short", "GPU X", [84.1, 86.5, 81.8], [85.1, 85.8, 86.3])
    assert plain.endswith(
        "0 of 3 inside the block's range, so the check does not reproduce the block within its seeds."
    )
    again = _verdict(
        "EE, EER-short", "GPU X", [84.1, 86.5, 81.8], [85.1, 85.8, 86.3], ("another dropout stream", [77.0, 86.0, 84.5])
    )
    assert again.startswith(plain)
    assert again.endswith(
        "(setting 'another dropout stream') ended at 77.0–86.0 (3 seeds) (mean 82.5, sd 4.8); with the block's runs "
        "77.0–86.3, and 2 of 3 checks inside that range."
    )
    # one dropout run is no spread: the sentence stays as it was
    assert _verdict(
        "EE, EER-short", "GPU X", [84.1, 86.5], [85.1, 85.8], ("another dropout stream", [77.0])
    ) == _verdict("EE, EER-short", "GPU X", [84.1, 86.5], [85.1, 85.8])
