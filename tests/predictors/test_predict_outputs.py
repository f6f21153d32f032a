"""Issue 32 (and 33.2) for ``predict``: arguments checked before anything is written, an atomic
output file, clean JSON lines, and one bad line (whatever fails on it) never ends a batch."""

import argparse
import bz2
import gzip
import json
import lzma
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eer_plugin.common.errors import UserError, report

PREVIOUS = b'{"id": "old", "tokens": ["kept"]}\n'


def manager(predictor, source, output, batch_size=2, print_to_console=False):
    from allennlp.commands import predict

    return predict._PredictManager(
        predictor, str(source), None if output is None else str(output), batch_size, print_to_console, False
    )


def run_manager(predictor, source, output, batch_size=2) -> int:
    try:
        manager(predictor, source, output, batch_size).run()
    except UserError as error:  # some lines failed: the command's error line, status 1
        return report(error, "eer-ner predict")
    return 0


def records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ------------------------------------------------------------------------------------ one bad line never ends a batch
def test_a_lone_surrogate_in_line_2_of_6_is_tagged_and_lines_3_to_6_too(predictor, tmp_path):
    lines = ['{"id": 1, "text": "John Smith visited London."}', '{"id": 2, "text": "bad \\ud800 text \\u0000 here"}']
    lines += [json.dumps({"id": i, "text": f"Paris number {i}."}) for i in range(3, 7)]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    assert run_manager(predictor, tmp_path / "in.jsonl", tmp_path / "out.jsonl") == 0
    out = records(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == ["1", "2", "3", "4", "5", "6"] and all("error" not in r for r in out)
    assert out[1]["tokens"] == ["bad", "\ufffd", "text", "\ufffd", "here"]  # normalised, offsets kept
    assert {(s["char_start"], s["char_end"]) for s in out[1]["spans"]} <= {(0, 3), (4, 5), (6, 10), (11, 12), (13, 17)}


def test_any_exception_on_one_document_becomes_its_error_record(predictor, tmp_path, monkeypatch):
    original = predictor.tag_chunks

    def failing(chunks):
        if any("boom" in chunk.words for chunk in chunks):
            raise RuntimeError("the model failed")
        return original(chunks)

    monkeypatch.setattr(predictor, "tag_chunks", failing)
    reader = predictor._dataset_reader
    chunk = reader.chunk

    def failing_chunk(doc):
        if "crash" in doc.tokens:
            raise TypeError("unexpected")
        return chunk(doc)

    monkeypatch.setattr(reader, "chunk", failing_chunk)
    lines = ["John Smith .", "a boom here", "Paris .", "a crash here", "Rome ."]
    (tmp_path / "in.jsonl").write_text(
        "".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(lines, 1))
    )
    (tmp_path / "in.jsonl").open("ab").write(b'{"id": "7", "text": "caf\xe9"}\n')  # line 6: not UTF-8
    assert run_manager(predictor, tmp_path / "in.jsonl", tmp_path / "out.jsonl", batch_size=3) == 1
    out = records(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == ["1", "2", "3", "4", "5", None]
    assert out[1] == {"line": 2, "id": "2", "error": "tagging failed: RuntimeError: the model failed"}
    assert out[3] == {"line": 4, "id": "4", "error": "TypeError: unexpected"}
    assert out[5]["line"] == 6 and "not UTF-8 (byte 0xe9 at column 25); save the file as UTF-8" in out[5]["error"]
    assert all("error" not in out[i] for i in (0, 2, 4))


# ------------------------------------------------------------------------------------ arguments checked before writing
@pytest.mark.parametrize(
    "case", ["output-is-input", "missing-input", "batch-size-0", "batch-size-negative", "input-is-directory"]
)
def test_bad_arguments_are_one_line_errors_and_touch_nothing(case, predictor, tmp_path):
    source, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text('{"text": "Paris ."}\n')
    output.write_bytes(PREVIOUS)
    batch_size = {"batch-size-0": 0, "batch-size-negative": -1}.get(case, 2)
    if case == "output-is-input":
        output = Path(f"{tmp_path}/./in.jsonl")
    if case == "missing-input":
        source = tmp_path / "missing.jsonl"
    if case == "input-is-directory":
        source = tmp_path
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(UserError) as error:
        manager(predictor, source, output, batch_size)
    assert "\n" not in str(error.value)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def _args(archive, source, output, **changes) -> argparse.Namespace:
    values = dict(
        archive_file=str(archive),
        input_file=str(source),
        output_file=output,
        weights_file=None,
        batch_size=1,
        silent=True,
        predictor="eer_tagger",
        predictor_args="",
    )
    values.update(changes)
    return argparse.Namespace(**values)


@pytest.mark.parametrize(
    "changes,message",
    [
        (dict(output_file="ARCHIVE"), "is the same file as the model archive"),
        (dict(output_file=None), "--silent without --output-file would write nothing"),
        (dict(predictor_args='{"output_format": "xml"}'), "output_format must be 'json' or 'conll'"),
        (dict(predictor_args='{"chunk_batch_size": 0}'), "chunk_batch_size must be an integer of at least 1"),
        (dict(predictor_args='{"output_fromat": "conll"}'), "unknown argument(s) 'output_fromat'"),
        (dict(predictor_args='{"precision": "int4"}'), "precision must be one of fp32, bf16, auto, int8 ("),
        (dict(predictor_args='{"output_format": "conll", "tag_scheme": "BMES"}'), 'tag_scheme "BMES" is not a tag'),
        (dict(predictor_args='{"tag_scheme": "BIOES"}'), 'is the tag scheme of CoNLL output: add "output_format"'),
        (dict(predictor_args='{"output_format": '), "--predictor-args"),
        (dict(predictor_args='{"output_format": "json", "output_format": "conll"}'), 'repeated key "output_format"'),
        (
            dict(predictor="eer_taggr"),
            "--predictor eer_taggr: no predictor is registered under this name; the registered ones are",
        ),
        (dict(cuda_device=0 if not __import__("torch").cuda.is_available() else 999), "--cuda-device"),
    ],
)
def test_predict_command_checks_its_arguments_before_loading_the_model(
    changes, message, archive, tmp_path, monkeypatch
):
    from allennlp.commands import predict

    monkeypatch.setattr(predict, "_get_predictor", lambda args: pytest.fail("the model was loaded"), raising=True)
    (tmp_path / "in.jsonl").write_text('{"text": "Paris ."}\n')
    if changes.get("output_file") == "ARCHIVE":
        changes["output_file"] = str(archive)
    size = archive.stat().st_size
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        predict._predict(_args(archive, tmp_path / "in.jsonl", str(tmp_path / "out.jsonl"), **changes))
    assert archive.stat().st_size == size and not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    "predictor_args",
    [
        '{"precision": "int8"}',
        '{"precision": "fp32", "output_format": "conll"}',
        '{"output_format": "conll", "tag_scheme": "BIOES"}',
    ],
)
def test_the_documented_predictor_args_pass_the_early_check(predictor_args, archive, tmp_path, monkeypatch):
    """docs/use-a-model.md: ``--predictor-args '{"precision": "int8"}'`` reaches the model (it was refused as unknown)."""
    from allennlp.commands import predict

    class Loaded(Exception):
        pass

    def loading(args):
        raise Loaded(args.predictor_args)

    monkeypatch.setattr(predict, "_get_predictor", loading, raising=True)
    (tmp_path / "in.jsonl").write_text('{"text": "Paris ."}\n')
    with pytest.raises(Loaded):
        predict._predict(
            _args(
                archive,
                tmp_path / "in.jsonl",
                str(tmp_path / "out.jsonl"),
                predictor_args=predictor_args,
                file_friendly_logging=False,
            )
        )


def test_an_archive_without_weights_is_a_one_line_error(archive, tmp_path):
    import tarfile

    from allennlp.models.archival import load_archive

    broken = tmp_path / "no_weights.tar.gz"
    with tarfile.open(archive) as source, tarfile.open(broken, "w:gz") as target:
        for member in source.getmembers():
            if "weights" not in member.name:
                target.addfile(member, source.extractfile(member) if member.isfile() else None)
    with pytest.raises(UserError, match=f"{broken}: no weights file"):
        load_archive(str(broken))


# ------------------------------------------------------------------------------------ atomic output, clean stdout
def test_a_run_stopped_half_way_leaves_the_previous_output(predictor, tmp_path, monkeypatch):
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"text": f"Paris {i} ."}) + "\n" for i in range(6)))
    (tmp_path / "out.jsonl").write_bytes(PREVIOUS)
    calls = []
    original = predictor.predict_batch_json

    def interrupted(inputs):
        calls.append(len(inputs))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(inputs)

    monkeypatch.setattr(predictor, "predict_batch_json", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_manager(predictor, tmp_path / "in.jsonl", tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_bytes() == PREVIOUS
    unfinished = [
        name for name in os.listdir(tmp_path) if ".eer-tmp-" in name
    ]  # Ctrl-C keeps the complete lines for --resume
    assert len(unfinished) == 1 and len((tmp_path / unfinished[0]).read_text().splitlines()) == 2
    monkeypatch.setattr(predictor, "predict_batch_json", original)
    from allennlp.commands import predict

    predict._PredictManager(
        predictor, str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), 2, False, False, resume=True
    ).run()
    assert len(records(tmp_path / "out.jsonl")) == 6 and sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.jsonl"]
    assert calls == [2, 2]  # the kept lines were not tagged again


def test_stdout_gets_json_lines_without_internal_keys(predictor, tmp_path, capsys):
    (tmp_path / "in.jsonl").write_text('{"id": "a", "text": "John Smith ."}\n\nnot json\n')
    with pytest.raises(UserError, match="1 of 2 input lines"):
        manager(predictor, tmp_path / "in.jsonl", None, print_to_console=True).run()
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in lines] == ["a", None] and lines[1]["line"] == 3
    assert not any(key.startswith("_") for r in lines for key in r)


@given(
    lines=st.lists(
        st.one_of(
            st.text(max_size=20).map(lambda t: json.dumps({"text": t})),
            st.text(st.characters(codec=None, exclude_categories=()), max_size=20).map(
                lambda t: json.dumps({"text": t, "id": 1})
            ),
            st.text(max_size=20).filter(lambda t: "\n" not in t and "\r" not in t),
        ),
        min_size=1,
        max_size=5,
    )
)
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_generated_predict_inputs_give_one_record_per_line(lines, predictor, tmp_path_factory):
    directory = tmp_path_factory.mktemp("generated")
    source, output = directory / "in.jsonl", directory / "out.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status = run_manager(predictor, source, output)
    out = records(output)
    expected = [number for number, line in enumerate(source.read_text().split("\n"), 1) if line.strip()]
    assert len(out) == len(expected) and status == (1 if any("error" in r for r in out) else 0)
    assert [r["line"] for r in out if "error" in r] == [n for n, r in zip(expected, out) if "error" in r]


def dead_pid() -> int:
    return int(
        subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout
    )


def test_resume_keeps_the_killed_runs_lines_and_tags_the_rest(predictor, tmp_path):
    from allennlp.commands import predict

    lines = [json.dumps({"id": f"d{i}", "text": f"Paris {i} ."}) for i in range(6)]
    (tmp_path / "in.jsonl").write_text(lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n")  # a blank line, counted
    (tmp_path / "out.jsonl").write_bytes(PREVIOUS)
    kept = (
        '{"id": "d0", "text": "Paris 0 .", "kept": 0}\n{"line": 3, "id": "d1", "error": "was bad"}\n'
        '{"id": "d2", "text": "Paris 2 .", "kept": 2}\n{"id": "cut'
    )  # killed mid-line
    (tmp_path / f".out.jsonl.eer-tmp-{dead_pid()}-0badc0de").write_text(kept)
    with pytest.raises(UserError, match=" failed "):  # the kept error record still counts
        predict._PredictManager(
            predictor, str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), 2, False, False, resume=True
        ).run()
    out = records(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == ["d0", "d1", "d2", "d3", "d4", "d5"]
    assert [r.get("kept") for r in out] == [0, None, 2, None, None, None]  # the kept lines were not tagged again
    assert out[3]["tokens"] == ["Paris", "3", "."] and sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.jsonl"]


@pytest.mark.parametrize("edit", ["text", "id", "swap", "error_line"])
def test_resume_refuses_an_input_edited_since_the_killed_run(edit, predictor, tmp_path):
    """Issue 50: the kept records are checked against the input lines they claim to tag; an edited input
    (same line count) stops the run with one UserError, and the killed run's output stays for a later --resume."""
    from allennlp.commands import predict

    from eer_plugin.common.errors import UserError

    lines = [{"id": f"d{i}", "text": f"Paris {i} ."} for i in range(4)]
    kept = '{"id": "d0", "text": "Paris 0 ."}\n{"line": 2, "id": "d1", "error": "was bad"}\n'
    if edit == "text":
        lines[0]["text"] = "Berlin 0 ."
    elif edit == "id":
        lines[0]["id"] = "other"
    elif edit == "swap":
        lines[0], lines[2] = lines[2], lines[0]
    else:
        kept = kept.replace('"line": 2', '"line": 3')
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "out.jsonl").write_bytes(PREVIOUS)
    unfinished = tmp_path / f".out.jsonl.eer-tmp-{dead_pid()}-0badc0de"
    unfinished.write_text(kept)
    with pytest.raises(UserError, match="the input changed since that run"):
        predict._PredictManager(
            predictor, str(tmp_path / "in.jsonl"), str(tmp_path / "out.jsonl"), 2, False, False, resume=True
        ).run()
    assert (tmp_path / "out.jsonl").read_bytes() == PREVIOUS
    left = [p for p in tmp_path.iterdir() if ".eer-tmp-" in p.name]
    assert len(left) == 1 and left[0].read_text() == kept  # the killed run's lines, kept for a resume with its input


# ------------------------------------------------------------------------------------ the real command
def eer_ner(*argv, **kwargs):
    command = [str(Path(sys.executable).parent / "eer-ner"), *map(str, argv)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, **kwargs)


@pytest.mark.integration
def test_documented_predict_command(archive, tmp_path):
    """The README's command: JSON lines to stdout, or to --output-file; same-path output refused."""
    source = tmp_path / "docs.jsonl"
    source.write_text('{"id": "a", "text": "Fischler met Loyola de Palacio in Brussels."}\n')
    shown = eer_ner("predict", archive, source, "--predictor", "eer_tagger")
    assert shown.returncode == 0 and [json.loads(line)["id"] for line in shown.stdout.splitlines()] == ["a"]
    written = eer_ner(
        "predict", archive, source, "--predictor", "eer_tagger", "--output-file", tmp_path / "tagged.jsonl", "--silent"
    )
    assert written.returncode == 0 and written.stdout == ""
    assert [json.loads(line) for line in (tmp_path / "tagged.jsonl").read_text().splitlines()] == [
        json.loads(shown.stdout)
    ]
    before = source.read_bytes()
    same = eer_ner("predict", archive, source, "--predictor", "eer_tagger", "--output-file", source, "--silent")
    assert same.returncode == 1 and source.read_bytes() == before
    assert same.stderr.strip().startswith("eer-ner predict: error: --output-file") and "Traceback" not in same.stderr
    silent = eer_ner("predict", archive, source, "--predictor", "eer_tagger", "--silent")
    assert silent.returncode == 1 and silent.stderr.startswith("eer-ner predict: error: --silent without --output-file")


@pytest.mark.integration
def test_sigkill_half_way_leaves_the_previous_output_byte_identical(archive, tmp_path):
    """A run killed half-way leaves the previous output file as it was; ``--resume`` then finishes the
    job into the output an uninterrupted run writes; a run without it removes the killed run's file."""
    source, output = tmp_path / "docs.jsonl", tmp_path / "tagged.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": i, "text": "John Smith visited New York and London. " * 2}) + "\n" for i in range(300)
        )
    )
    output.write_bytes(PREVIOUS)
    command = [
        str(Path(sys.executable).parent / "eer-ner"),
        "predict",
        str(archive),
        str(source),
        "--predictor",
        "eer_tagger",
        "--output-file",
        str(output),
        "--silent",
    ]
    process = subprocess.Popen(command, env={**os.environ, "OMP_NUM_THREADS": "1"}, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and process.poll() is None:  # wait until some predictions are written
            partial = [p for p in tmp_path.iterdir() if p.name.startswith(".tagged.jsonl.eer-tmp-")]
            if partial and partial[0].stat().st_size > 16000:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it could be killed half-way"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
    assert output.read_bytes() == PREVIOUS
    assert len([p for p in tmp_path.iterdir() if p.name.startswith(".tagged.jsonl.eer-tmp-")]) == 1
    reference = tmp_path / "reference.jsonl"
    assert (
        eer_ner(
            "predict", archive, source, "--predictor", "eer_tagger", "--output-file", reference, "--silent"
        ).returncode
        == 0
    )
    resumed = eer_ner(
        "predict", archive, source, "--predictor", "eer_tagger", "--output-file", output, "--silent", "--resume"
    )
    assert resumed.returncode == 0 and "--resume: kept " in resumed.stderr, resumed.stderr[-2000:]
    assert output.read_bytes() == reference.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", "reference.jsonl", "tagged.jsonl"]


@pytest.mark.integration
def test_a_new_run_removes_a_killed_runs_file(archive, tmp_path):
    source, output = tmp_path / "docs.jsonl", tmp_path / "tagged.jsonl"
    source.write_text('{"id": "new", "text": "Paris ."}\n')
    (tmp_path / f".tagged.jsonl.eer-tmp-{dead_pid()}-0badc0de").write_text('{"id": "old"}\n{"id"')
    rerun = eer_ner("predict", archive, source, "--predictor", "eer_tagger", "--output-file", output, "--silent")
    assert rerun.returncode == 0 and json.loads(output.read_text())["id"] == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl", "tagged.jsonl"]


# ------------------------------------------------------------------------------------ issue 50: outputs that are not regular files
def _tag_into(predictor, source, output, **options) -> None:
    from allennlp.commands import predict

    predict._PredictManager(predictor, str(source), str(output), 2, False, False, **options).run()


def _inputs(path: Path, count: int = 3) -> Path:
    path.write_text("".join(json.dumps({"id": f"d{i}", "text": f"Paris {i} ."}) + "\n" for i in range(count)))
    return path


@pytest.mark.parametrize("dangling", [False, True])
def test_predict_into_a_symlink_writes_its_target(dangling, predictor, tmp_path):
    source = _inputs(tmp_path / "in.jsonl")
    if not dangling:
        (tmp_path / "target.jsonl").write_bytes(PREVIOUS)
    (tmp_path / "out.jsonl").symlink_to("target.jsonl")
    _tag_into(predictor, source, tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").is_symlink() and [r["id"] for r in records(tmp_path / "target.jsonl")] == [
        "d0",
        "d1",
        "d2",
    ]
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "out.jsonl", "target.jsonl"]


def test_predict_into_dev_null_keeps_the_device(predictor, tmp_path):
    _tag_into(predictor, _inputs(tmp_path / "in.jsonl"), "/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_predict_into_dev_full_is_one_line(predictor, tmp_path):
    from eer_plugin.common.errors import UserError

    with pytest.raises(UserError, match=r"^/dev/full: cannot write to it \(No space left on device\)"):
        _tag_into(predictor, _inputs(tmp_path / "in.jsonl", 40), "/dev/full")
    with pytest.raises(UserError, match="--resume needs a regular --output-file; /dev/null is a stream"):
        _tag_into(predictor, _inputs(tmp_path / "in.jsonl"), "/dev/null", resume=True)


def test_predict_into_a_fifo_streams_to_its_reader(predictor, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    _tag_into(predictor, _inputs(tmp_path / "in.jsonl"), fifo)
    reader.join(30)
    assert [json.loads(line)["id"] for line in received[0].splitlines()] == ["d0", "d1", "d2"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and sorted(os.listdir(tmp_path)) == ["in.jsonl", "pipe"]


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_predict_reads_compressed_input_by_its_first_bytes(compress, predictor, tmp_path):
    plain = _inputs(tmp_path / "in.jsonl")
    (tmp_path / "in.data").write_bytes(compress(plain.read_bytes()))  # no .gz name
    _tag_into(predictor, tmp_path / "in.data", tmp_path / "out.jsonl")
    assert [r["id"] for r in records(tmp_path / "out.jsonl")] == ["d0", "d1", "d2"]


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_predict_refuses_an_input_that_is_not_a_regular_file(kind, tmp_path):
    from eer_plugin.common.errors import UserError
    from eer_plugin.predictors.predict_manager import check_arguments

    path = kind
    if kind == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)  # no writer: opening it would block
    with pytest.raises(UserError, match="not a regular file") as error:
        check_arguments(path, str(tmp_path / "out.jsonl"), 1)
    assert "no such file" not in str(error.value)


def test_a_line_longer_than_the_limit_is_an_error_record_read_in_bounded_memory(predictor, tmp_path, monkeypatch):
    from eer_plugin.predictors import predict_manager as manager_module

    monkeypatch.setattr(manager_module, "MAX_LINE", 64)
    (tmp_path / "in.jsonl").write_text(
        '{"id": "a", "text": "Paris ."}\n' + '{"text": "' + "x" * 1000 + '"}\n{"id": "c", "text": "Rome ."}\n'
    )
    with pytest.raises(UserError, match=" failed "):
        _tag_into(predictor, tmp_path / "in.jsonl", tmp_path / "out.jsonl")
    out = records(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == ["a", None, "c"] and "a line longer than 64 characters" in out[1]["error"]


@pytest.mark.integration
def _default_ctrl_c():
    """In the child: Ctrl-C's default action and SIGINT unblocked, whatever this process left (a child
    inherits an ignored disposition and the signal mask)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _waiting(pid: int) -> bool:
    """Whether process ``pid`` sleeps and used no CPU time for half a second (blocked reading its input)."""

    def state():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0], int(fields[11]) + int(fields[12])  # state, utime + stime of all its threads

    first = state()
    time.sleep(0.5)
    second = state()
    return second[0] == "S" and second[1] == first[1]


@pytest.mark.integration  # starts eer-ner predict as a process (16 s)
def test_ctrl_c_during_predict_is_one_line_and_keeps_the_old_output(archive, tmp_path):
    """SIGINT while predict waits for input: one line saying the data is safe, status 130, the old file as it was
    and the unfinished output kept for --resume."""
    (tmp_path / "out.jsonl").write_bytes(PREVIOUS)
    command = [
        str(Path(sys.executable).parent / "eer-ner"),
        "predict",
        str(archive),
        "-",
        "--predictor",
        "eer_tagger",
        "--output-file",
        str(tmp_path / "out.jsonl"),
        "--silent",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # Ctrl-C's default action in the child whatever this process's handler and mask are: a child inherits an
    # ignored or blocked SIGINT (another test, or a run under nohup), and predict would then just finish at EOF
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_default_ctrl_c,
    )
    process.stdin.write('{"id": "a", "text": "Paris ."}\n')
    process.stdin.flush()
    deadline = time.time() + 240
    while time.time() < deadline and not any(".eer-tmp-" in name for name in os.listdir(tmp_path)):
        time.sleep(0.2)  # the model is loaded and the output opened
    while time.time() < deadline and not _waiting(process.pid):
        pass  # the line tagged: predict waits for the next one (a loaded machine takes seconds)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err[-3000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith(
        "eer-ner predict: interrupted (Ctrl-C): every output is written whole"
    )
    assert (tmp_path / "out.jsonl").read_bytes() == PREVIOUS
    assert (
        len([name for name in os.listdir(tmp_path) if ".eer-tmp-" in name]) == 1
    )  # the unfinished output, for --resume


# ------------------------------------------------------------------------------------ a folder of .txt files
def test_predict_tags_a_folder_of_text_files_one_record_per_file(predictor, tmp_path, capsys):
    """The folder eer-dictionary labelled can be tagged as it is: one record per .txt file in path order, its id
    the path in the folder, its text exactly the file's (any marked encoding, compressed too); an empty or
    undecodable file, or a link to a file no longer there, gets its error record and the others are tagged; --resume continues a killed run."""
    from allennlp.commands import predict

    folder = tmp_path / "docs"
    (folder / "b").mkdir(parents=True)
    (folder / "a.txt").write_text("Paris is big .\r\nRome too .", encoding="utf-8")
    (folder / "b" / "c.txt").write_bytes("Zürich .".encode("utf-16"))
    (folder / "b" / "d.txt.gz").write_bytes(gzip.compress(b"Berlin ."))
    (folder / "b" / "e.txt").write_bytes("Oslo .".encode("utf-16-le"))  # no byte-order mark: unreadable
    (folder / "f.txt").write_text("  \n")
    (folder / "notes.pdf").write_bytes(b"%PDF")
    (folder / ".hidden.txt").write_text("Lima .")
    (folder / "g.txt").symlink_to(tmp_path / "moved-away.txt")  # a dangling link: reported, never dropped unseen
    assert run_manager(predictor, folder, tmp_path / "out.jsonl") == 1  # three files failed
    out = records(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == ["a.txt", "b/c.txt", "b/d.txt.gz", "b/e.txt", "f.txt", "g.txt"]
    assert [r.get("text") for r in out[:3]] == ["Paris is big .\r\nRome too .", "Zürich .", "Berlin ."]
    assert [r.get("line") for r in out] == [None, None, None, 4, 5, 6]
    assert "looks like UTF-16 (LE) text without a byte-order mark" in out[3]["error"]
    assert "empty or only white space" in out[4]["error"]
    assert "no such file" in out[5]["error"]
    err = capsys.readouterr().err
    assert f"folder {folder} document 4, id 'b/e.txt': " in err
    assert err.endswith(
        f"eer-ner predict: error: 3 of 6 input documents of {folder} failed (documents 4, 5, 6); the other 3 were tagged\n"
    )

    kept = "".join(json.dumps(r) + "\n" for r in out[:2])  # a killed run that wrote two records
    (tmp_path / f".again.jsonl.eer-tmp-{dead_pid()}-0badc0de").write_text(kept)
    with pytest.raises(UserError, match=" failed "):
        predict._PredictManager(
            predictor, str(folder), str(tmp_path / "again.jsonl"), 2, False, False, resume=True
        ).run()
    assert records(tmp_path / "again.jsonl") == out


def test_predict_refuses_a_folder_without_text_files(tmp_path):
    from eer_plugin.predictors.predict_manager import check_arguments

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.docx").write_bytes(b"PK")
    with pytest.raises(
        UserError, match=r"docs: no \.txt files below this folder \(it holds 1 other file, e\.g\. a\.docx\)"
    ):
        check_arguments(str(tmp_path / "docs"), str(tmp_path / "out.jsonl"), 1)


@pytest.mark.integration
def test_the_command_tags_a_folder(archive, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "one.txt").write_text("Paris is big .")
    (tmp_path / "docs" / "two.txt").write_bytes("Zürich .".encode("utf-16"))
    done = eer_ner(
        "predict",
        archive,
        tmp_path / "docs",
        "--predictor",
        "eer_tagger",
        "--output-file",
        tmp_path / "out.jsonl",
        "--silent",
    )
    assert done.returncode == 0, done.stderr
    assert [(r["id"], r["text"]) for r in records(tmp_path / "out.jsonl")] == [
        ("one.txt", "Paris is big ."),
        ("two.txt", "Zürich ."),
    ]


def test_the_failure_summary_says_what_became_of_the_other_lines():
    """The last stderr line names the input and never claims that "the others were tagged" when none was."""
    from eer_plugin.predictors.predict_manager import failure_summary

    assert (
        failure_summary([2], 3, "d.jsonl") == "1 of 3 input lines of d.jsonl failed (line 2); the other 2 were tagged"
    )
    assert (
        failure_summary([1, 3], 3, "-") == "2 of 3 input lines of <stdin> failed (lines 1, 3); the other 1 was tagged"
    )
    assert (
        failure_summary([1, 2], 2, "d.jsonl") == "all 2 input lines of d.jsonl failed (lines 1, 2); nothing was tagged"
    )
    assert failure_summary([4], 1, "d.jsonl") == "the one input line of d.jsonl failed (line 4); nothing was tagged"
    many = failure_summary(list(range(1, 31)), 40, "d.jsonl")
    assert many.endswith("19, 20, ...); the other 10 were tagged") and "21" not in many


@pytest.mark.integration
def test_types_with_spaces_and_tag_like_parts_survive_conll_output_and_the_brat_loop(tiny_encoder, tmp_path):
    """A model whose types hold a space (a Label Studio label), ``L-`` and ``U-`` (``NATIONAL-PARK``,
    ``EU-UNIT``): CoNLL output in BIOES writes each type whole, spaces as ``_`` (said once on stderr), and reads
    back through the column reader; the JSON output exported to brat and imported again gives the types as they
    were."""
    from untrained_tagger import TEXT, build_archive

    from eer_plugin.core.tags import biluo_to_spans
    from eer_plugin.corpus.formats.conll import read_conll

    types = ("Product Name", "NATIONAL-PARK", "EU-UNIT")
    archive = build_archive(tmp_path / "model", tiny_encoder, types=types)
    source = tmp_path / "docs.jsonl"
    source.write_text(json.dumps({"id": "a", "text": TEXT}) + "\n")
    tagged, conll = tmp_path / "tagged.jsonl", tmp_path / "tagged.conll"
    as_json = eer_ner("predict", archive, source, "--predictor", "eer_tagger", "--output-file", tagged, "--silent")
    assert as_json.returncode == 0, as_json.stderr[-2000:]
    args = json.dumps({"output_format": "conll", "tag_scheme": "BIOES"})
    as_conll = eer_ner(
        "predict",
        archive,
        source,
        "--predictor",
        "eer_tagger",
        "--output-file",
        conll,
        "--silent",
        "--predictor-args",
        args,
    )
    assert as_conll.returncode == 0, as_conll.stderr[-2000:]
    assert as_conll.stderr.count("entity type 'Product Name' is written 'Product_Name'") == 1, as_conll.stderr
    (document,) = [json.loads(line) for line in tagged.read_text().splitlines()]
    predicted = biluo_to_spans(document["tags"])
    assert {label for _, _, label in predicted} == set(types), predicted  # every type is predicted somewhere
    (read,) = read_conll(conll, encoding="BIOES", sentences_per_document=len(document["sentence_ends"]))
    starts = [0, *document["sentence_ends"][:-1]]
    assert read.spans == [
        (max(b, s), min(e, t), label.replace(" ", "_"))
        for s, t in zip(starts, document["sentence_ends"])
        for b, e, label in predicted
        if b < t and e > s
    ]
    exported = eer_ner("eer-export", "brat", tagged, tmp_path / "brat")
    assert exported.returncode == 0, exported.stderr
    visual = (tmp_path / "brat" / "visual.conf").read_text()
    assert visual.startswith("[labels]\nProduct_Name | Product Name\n[drawing]\n"), visual
    imported = eer_ner("eer-import", "brat", tmp_path / "brat", tmp_path / "back.jsonl")
    assert imported.returncode == 0, imported.stderr
    (back,) = [json.loads(line) for line in (tmp_path / "back.jsonl").read_text().splitlines()]
    assert [tuple(span) for span in back["spans"]] == [(s["start"], s["end"], s["type"]) for s in document["spans"]]
