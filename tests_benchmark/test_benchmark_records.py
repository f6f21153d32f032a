"""The finished runs' records in one JSON-lines file (eer_benchmark/run/records.py): save and restore
round trip on fabricated runs, restore never overwrites, one sorted line per directory, and a truncated or
hand-edited file is a clear error with its line number."""

import json

import pytest
from test_benchmark import fabricate, plan_data

from eer_benchmark import Runner, parse_plan
from eer_benchmark.commands.eer_records import main
from eer_benchmark.run.records import RecordsError, read_records, restore, save


def tree(directory):
    """{relative path: bytes} of every file under ``directory``."""
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def bench(tmp_path):
    """A benchmark directory with fabricated finished runs, a failed run, data statistics and the files
    a record leaves out (model, checkpoint, log, simulated data)."""
    plan = parse_plan(plan_data(approaches=["gold", "raw_shortest", "eer_short"], seeds=[0, 1])).expand()
    outdir = tmp_path / "bench"
    runner = Runner(plan, str(outdir))
    for run in plan.runs[:-1]:
        fabricate(runner, run, [(6, 4, 1)] * 3)
    fabricate(runner, plan.runs[-1], [], status="failed")
    first = runner.run_dir(plan.runs[0])
    (first / "DONE").write_text("2026-11-25 10:00:00\n")
    (first / "model.tar.gz").write_bytes(b"\x00weights")
    (first / "model_state_e0.th").write_bytes(b"\x00")
    (first / "final").mkdir()
    (first / "final" / "metrics.json").write_text('{"best_epoch": 2}\n')  # a nested file of a run (CBL's final/)
    stats = outdir / "data" / "fx" / "EE-15"
    stats.mkdir(parents=True)
    (stats / "seed0.stats.json").write_text('{"recall": 0.5, "name": "Zoë – ü"}')  # non-ASCII text kept as is
    (stats / "seed0.jsonl").write_text("{}\n")
    (outdir / "logs").mkdir()
    (outdir / "logs" / "DONE").write_text("")  # nothing under logs/ is a record
    return plan, runner, outdir


def test_save_then_restore_gives_back_the_recorded_files(bench, tmp_path):
    plan, runner, outdir = bench
    records = tmp_path / "docs" / "records.jsonl"
    assert main(["save", str(outdir), str(records)]) == 0
    lines = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    dirs = [line["dir"] for line in lines]
    assert (
        dirs == sorted(dirs) and len(dirs) == len(plan.runs) - 1 + 1
    )  # the finished runs and the data; not the failed run
    assert dirs[0] == "data/fx/EE-15" and "Zoë – ü" in records.read_text(encoding="utf-8")
    first = runner.run_dir(plan.runs[0]).relative_to(outdir).as_posix()
    assert set(read_records(records)[first]) == {
        "DONE",
        "doc_counts.json",
        "final/metrics.json",
        "metrics_epoch_0.json",
        "metrics_epoch_1.json",
        "metrics_epoch_2.json",
        "result.json",
    }
    fresh = tmp_path / "fresh"
    assert main(["restore", str(records), str(fresh)]) == 0
    kept = {
        path: data
        for path, data in tree(outdir).items()
        if not path.startswith("logs/") and not path.endswith((".tar.gz", ".th", ".jsonl")) and "FAILED" not in path
    }
    assert tree(fresh) == kept  # byte for byte
    assert all(runner.is_done(run) for run in plan.runs[:-1])
    # saving the restored directory again gives the same file
    again = tmp_path / "again.jsonl"
    save(fresh, again)
    assert again.read_bytes() == records.read_bytes()


def test_restore_never_overwrites_and_skips_a_missing_file(bench, tmp_path):
    plan, runner, outdir = bench
    records = tmp_path / "records.jsonl"
    save(outdir, records)
    fresh = tmp_path / "fresh"
    directory = runner.run_dir(plan.runs[0]).relative_to(outdir)
    (fresh / directory).mkdir(parents=True)
    (fresh / directory / "result.json").write_text("mine")
    written = restore(records, fresh)
    assert (fresh / directory / "result.json").read_text() == "mine"
    assert fresh / directory / "result.json" not in written and fresh / directory / "DONE" in written
    assert restore(records, fresh) == []  # everything is there now
    assert (
        main(["restore", str(tmp_path / "none.jsonl"), str(tmp_path / "empty")]) == 0
    )  # no records yet: nothing to do
    assert not (tmp_path / "empty").exists()
    save(tmp_path / "no-bench", tmp_path / "nothing.jsonl")
    assert not (tmp_path / "nothing.jsonl").exists()  # nothing found: no empty file


def test_a_rerun_replaces_its_line_and_data_statistics_are_merged(bench, tmp_path):
    plan, runner, outdir = bench
    records = tmp_path / "records.jsonl"
    save(outdir, records)
    other = tmp_path / "other"  # another session: one run again with fewer epochs, another seed's data
    run = plan.runs[0]
    rerun = Runner(plan, str(other))
    fabricate(rerun, run, [(6, 6, 0)] * 3)
    (rerun.run_dir(run) / "metrics_epoch_2.json").unlink()
    stats = other / "data" / "fx" / "EE-15"
    stats.mkdir(parents=True)
    (stats / "seed1.stats.json").write_text('{"recall": 0.4}')
    save(other, records)
    saved = read_records(records)
    line = saved[runner.run_dir(run).relative_to(outdir).as_posix()]
    assert "metrics_epoch_2.json" not in line and "final/metrics.json" not in line  # the old run's files are gone
    assert json.loads(line["result.json"])["f1"] == 1.0
    assert set(saved["data/fx/EE-15"]) == {"seed0.stats.json", "seed1.stats.json"}
    assert len(saved) == len(plan.runs)  # the other runs' lines are kept


def test_a_truncated_or_edited_file_names_its_line(bench, tmp_path, capsys):
    _, _, outdir = bench
    records = tmp_path / "records.jsonl"
    save(outdir, records)
    text = records.read_text(encoding="utf-8")
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text(text[: text.index("\n", text.index("\n") + 1) + 40], encoding="utf-8")  # two lines and a part
    with pytest.raises(RecordsError, match=r"truncated.jsonl, line 3: not a complete JSON line .*restore it from git"):
        restore(truncated, tmp_path / "fresh")
    with pytest.raises(SystemExit) as exit_:  # through the one error printer: one line, status 1
        main(["restore", str(truncated), str(tmp_path / "fresh")])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("eer-records: error: ") and "truncated.jsonl, line 3" in err and len(err.splitlines()) == 1
    bad = {
        '{"dir": "runs/a", "files": {"DONE": 1}}': r"line 1: the text of 'DONE' is no JSON string",
        '{"dir": "../a", "files": {}}': r"line 1: dir '../a' is not a relative path inside the benchmark directory",
        '{"dir": "a", "files": {"/etc/x": ""}}': r"line 1: file '/etc/x' is not a relative path",
        '["a"]': r"line 1: expected one JSON object per line",
        '{"dir": "a", "files": {}}\n{"dir": "a", "files": {}}': r"line 2: directory 'a' has a record already",
    }
    for content, message in bad.items():
        (tmp_path / "bad.jsonl").write_text(content + "\n")
        with pytest.raises(RecordsError, match=message):
            read_records(tmp_path / "bad.jsonl")


def test_saving_a_directory_without_runs_says_that_nothing_was_saved(bench, tmp_path, capsys):
    """A mistyped or empty OUTDIR is said to hold nothing, and the records file is left as it was (before: "0
    finished runs ... saved")."""
    _, _, outdir = bench
    records = tmp_path / "records.jsonl"
    assert main(["save", str(outdir), str(records)]) == 0
    kept = records.read_bytes()
    capsys.readouterr()
    (tmp_path / "empty").mkdir()
    for given, said in [("empty", "holds no finished run nor data statistics"), ("bench-typo", "is no directory")]:
        assert main(["save", str(tmp_path / given), str(records)]) == 0
        assert capsys.readouterr().out == (
            f"records: nothing saved: {tmp_path / given} {said} (give the directory eer-benchmark -o wrote); "
            f"{records} is as it was\n"
        )
        assert records.read_bytes() == kept
    assert main(["save", str(tmp_path / "empty"), str(tmp_path / "new.jsonl")]) == 0
    assert not (tmp_path / "new.jsonl").exists()
