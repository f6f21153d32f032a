"""`make demo` (`scripts/demo.sh`), the README's first command: it trains, evaluates and tags end to end and
prints its results, and a failing step ends it with that step's name and the end of its log."""

import os
import subprocess
import sys

import pytest
from conftest import REPO

pytestmark = pytest.mark.integration


def _demo(tmp_path, **env):
    environment = {**os.environ, "OUT": str(tmp_path / "demo"), "VENV": str(REPO / ".venv"), **env}
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "demo.sh")],
        cwd=tmp_path,  # the script goes to the repository root itself
        env=environment,
        capture_output=True,
        text=True,
        timeout=1200,
    )


@pytest.fixture(autouse=True)
def _needs_the_checkouts_venv():
    if not (REPO / ".venv" / "bin" / "allennlp").exists() or sys.prefix != str(REPO / ".venv"):
        pytest.skip("the demo runs with the checkout's .venv (scripts/setup_env.sh)")


def test_the_demo_trains_evaluates_and_tags_and_prints_what_it_found(tmp_path):
    proc = _demo(tmp_path, EPOCHS="2")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    for step in (
        "[1/3] train training_configs/eer_short.jsonnet (2 epochs, batch size 1)",
        "[2/3] evaluate",
        "[3/3] tag",
    ):
        assert step in out, out
    assert "training: 2 epochs" in out and "dev  P " in out and "rho_hat" in out, out
    demo = tmp_path / "demo"
    predictions = (demo / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(predictions) == len((REPO / "fixtures" / "example_document.jsonl").read_text().splitlines())
    assert out.count("document ") == len(predictions)
    assert f"model: {demo}/model.tar.gz; full AllenNLP log: {demo}.log" in out
    assert (demo / "model.tar.gz").is_file() and (demo / "dev_metrics.json").is_file()


def test_a_failing_step_is_named_with_the_end_of_its_log(tmp_path):
    proc = _demo(tmp_path, EPOCHS="1", EER_TRAIN_DATA=str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 1
    assert f"demo: train failed; the last lines of the full log {tmp_path / 'demo'}.log:" in proc.stderr
    assert "missing.jsonl" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "[2/3]" not in proc.stdout
