"""A long command stopped by a signal (SIGTERM: ``kill``, ``timeout``, a job scheduler's cancel; SIGINT: Ctrl-C;
SIGHUP: the terminal or the ssh session closed) ends the same way whatever the command: one line saying the data is
safe, status 128 + the signal's number, every output as it was before and no temporary file left (``predict``
keeps its unfinished output for ``--resume``). One path: :func:`eer_plugin.common.errors.terminate_as_interrupt`,
set up by ``eer-ner`` and by every subcommand's ``main``, and :func:`eer_plugin.common.errors.report`."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eer_plugin.common import errors
from eer_plugin.common.outputs import TEMPORARY_MARK

EER_NER = str(Path(sys.executable).parent / "eer-ner")
OLD = b"the earlier output\n"
WHAT = {
    signal.SIGTERM: "terminated (SIGTERM)",
    signal.SIGINT: "interrupted (Ctrl-C)",
    signal.SIGHUP: "hung up (SIGHUP)",
}


def test_every_stopping_signal_is_one_line_and_its_status():
    for signum, what in WHAT.items():
        if signum == signal.SIGINT:
            continue
        error = errors.Terminated(signum)
        assert isinstance(error, KeyboardInterrupt) and error.message.startswith(what + ": every output is written")
    from allennlp.common.util import SigTermReceived

    assert errors.report(SigTermReceived()) == errors.TERMINATED
    assert errors.report(errors.Terminated(signal.SIGHUP)) == 128 + signal.SIGHUP


def test_a_signal_the_process_was_started_ignoring_stays_ignored():
    """``nohup eer-ner train ...`` ignores SIGHUP: the command keeps ignoring it (a closed terminal must not stop
    it), and still stops on SIGTERM."""
    saved = {s: signal.getsignal(s) for s in errors.STOPPING_SIGNALS}
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        errors.terminate_as_interrupt()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is errors._raise_terminated

        def own(*_):  # a handler set before (serve's tethered training): it stays
            pass

        signal.signal(signal.SIGHUP, own)
        signal.signal(signal.SIGTERM, own)
        errors.terminate_as_interrupt()
        assert signal.getsignal(signal.SIGHUP) is own and signal.getsignal(signal.SIGTERM) is own
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def _documents(count: int) -> str:
    line = {
        "tokens": ["John", "Smith", "visited", "London", "and", "Paris", "."],
        "spans": [[0, 2, "PER"], [3, 4, "LOC"]],
    }
    return "".join(json.dumps({"id": f"d{i}", **line, "is_complete": True}) + "\n" for i in range(count))


def _defaults_in_child():
    """In the child: every signal's default action and none blocked, whatever this process left (a child inherits
    an ignored SIGINT or SIGHUP: another test, a run under nohup)."""
    for signum in WHAT:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(WHAT))


def _temporary_files(directory: Path):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if TEMPORARY_MARK in p.name)


def _stop_when(process, ready, stderr_path: Path, timeout: float = 420) -> None:
    deadline = time.time() + timeout
    while not ready():
        assert process.poll() is None, stderr_path.read_text()[-3000:]
        assert time.time() < deadline, "the command never got to work"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def workplace(archive, tiny_encoder, tmp_path_factory):
    """A model archive (in its own directory, where tune-o-cost writes) and evaluation data large enough to take a
    while."""
    root = tmp_path_factory.mktemp("signals")
    (root / "model").mkdir()
    shutil.copy(archive, root / "model" / "model.tar.gz")
    (root / "test.jsonl").write_text(_documents(4000))
    return root


#: (command line, the old outputs it would replace, when it is at work: a file it writes, or a word on stderr)
COMMANDS = {
    "evaluate": (
        ["evaluate", "model/model.tar.gz", "test.jsonl", "--output-file", "metrics.json"]
        + ["--predictions-output-file", "predictions.jsonl", "--batch-size", "2"],
        ["metrics.json", "predictions.jsonl"],
        "predictions.jsonl",
    ),
    "predict": (
        ["predict", "model/model.tar.gz", "test.jsonl", "--predictor", "eer_tagger", "--silent"]
        + ["--output-file", "tagged.jsonl", "--batch-size", "2"],
        ["tagged.jsonl"],
        "tagged.jsonl",
    ),
    "tune-o-cost": (["tune-o-cost", "model/model.tar.gz", "test.jsonl", "--batch-size", "2"], [], "encoding"),
    "train": (
        [
            "train",
            "eer_short.jsonnet",
            "-s",
            "run",
            "-o",
            json.dumps({"trainer.num_epochs": 50, "trainer.min_steps": 0}),
        ],
        [],
        "run/out.log",
    ),
}
CASES = [(command, signal.SIGTERM) for command in COMMANDS] + [("evaluate", signal.SIGINT), ("evaluate", signal.SIGHUP)]


@pytest.mark.integration  # starts eer-ner and stops it: about 30 s each
@pytest.mark.parametrize("command, signum", CASES, ids=[f"{c}-{signal.Signals(s).name}" for c, s in CASES])
def test_a_stopped_command_says_so_in_one_line_and_leaves_its_outputs_as_they_were(
    command, signum, workplace, tiny_encoder, tmp_path
):
    argv, outputs, working = COMMANDS[command]
    for name in ("model", "test.jsonl"):
        (tmp_path / name).symlink_to(workplace / name)
    if command == "tune-o-cost":  # it writes beside the archive: a copy of its own
        (tmp_path / "model").unlink()
        shutil.copytree(workplace / "model", tmp_path / "model")
    for name in outputs:
        (tmp_path / name).write_bytes(OLD)
    before = sorted(p.name for p in (tmp_path / "model").iterdir())
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    env.update(EER_ENCODER=tiny_encoder, EER_MAX_LENGTH="128", EER_TRAIN_DATA=str(tmp_path / "test.jsonl"))
    stderr_path = tmp_path.parent / f"{tmp_path.name}.stderr"
    with open(stderr_path, "w") as stderr:
        process = subprocess.Popen(
            [EER_NER, *argv],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            preexec_fn=_defaults_in_child,
        )

        def at_work() -> bool:
            if working.endswith((".jsonl", ".log")):  # a file it is writing: a temporary one beside an output
                target = tmp_path / working
                return any(p.stat().st_size > 0 for p in target.parent.glob(f".{target.name}*{TEMPORARY_MARK}*")) or (
                    working.endswith(".log") and target.exists() and target.stat().st_size > 2000
                )
            return working in stderr_path.read_text()

        try:
            _stop_when(process, at_work, stderr_path)
            process.send_signal(signum)
            process.wait(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
    err = stderr_path.read_text()
    assert process.returncode == 128 + signum, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    said = f"eer-ner {command}: {WHAT[signum]}: every output is written whole"  # named as its errors are
    assert err.strip().splitlines()[-1].startswith(said), err[-3000:]
    for name in outputs:
        assert (tmp_path / name).read_bytes() == OLD, name
    left = _temporary_files(tmp_path)
    if command == "predict":  # its unfinished output, kept for --resume
        assert len(left) == 1 and left[0].startswith(f".tagged.jsonl{TEMPORARY_MARK}"), left
    else:
        assert left == [], left
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == before
