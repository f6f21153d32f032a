"""Issue 50: outputs and inputs that are not regular files, full disks, and the one error printer.

Outputs (``eer_plugin/runtime/outputs.py``): a symbolic link writes its target atomically (the link stays), a
device, FIFO or ``/dev/stdout`` is written directly as a stream (the node stays), a write that fails is one
``OutputError`` and leaves no temporary file. Inputs (``eer_plugin/corpus/formats/files.py``): a FIFO or a
device is refused before it is opened (no wait on a writer, no endless read), compression is recognised by
the first bytes. The printer (``eer_plugin/runtime/errors.py:report``): Ctrl-C, a closed pipe, a full disk,
deep nesting and exhausted memory are one line (or, for the pipe, none), never a traceback."""

import argparse
import bz2
import errno
import gzip
import lzma
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import FIXTURES, eer_ner

from eer_plugin.common import outputs
from eer_plugin.common.errors import (
    BROKEN_PIPE,
    INTERRUPTED,
    TERMINATED,
    Terminated,
    UserError,
    command_name,
    report,
)
from eer_plugin.common.outputs import OutputError, check_outputs, writing
from eer_plugin.corpus.formats import FormatError, read_conll, read_documents

GOLD = FIXTURES / "conll2003_tiny.txt"


def temporaries(directory: Path) -> list:
    return [p.name for p in directory.iterdir() if outputs.TEMPORARY_MARK in p.name]


# ------------------------------------------------------------------------------------ outputs of every file type
def test_a_regular_output_is_replaced_whole(tmp_path):
    (tmp_path / "out.txt").write_text("old")
    with writing(tmp_path / "out.txt") as handle:
        handle.write("new")
    assert (tmp_path / "out.txt").read_text() == "new" and not temporaries(tmp_path)


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_output_writes_its_target_atomically_and_stays_a_link(dangling, tmp_path):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "target.txt"
    if not dangling:
        target.write_text("old")
    (tmp_path / "link.txt").symlink_to(os.path.join("data", "target.txt"))
    check_outputs([("INPUT", GOLD)], [("OUTPUT", tmp_path / "link.txt")])
    with writing(tmp_path / "link.txt") as handle:
        handle.write("new")
    assert (tmp_path / "link.txt").is_symlink() and os.readlink(tmp_path / "link.txt") == os.path.join(
        "data", "target.txt"
    )
    assert target.read_text() == "new" and not temporaries(tmp_path) and not temporaries(tmp_path / "data")


def test_a_failed_write_through_a_symlink_leaves_the_target(tmp_path):
    (tmp_path / "target.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("target.txt")
    with pytest.raises(RuntimeError):
        with writing(tmp_path / "link.txt") as handle:
            handle.write("half")
            raise RuntimeError("killed")
    assert (tmp_path / "target.txt").read_text() == "old" and (tmp_path / "link.txt").is_symlink()
    assert not temporaries(tmp_path)


def test_a_fifo_output_is_written_as_a_stream(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    check_outputs([], [("OUTPUT", fifo)])
    with writing(fifo) as handle:
        handle.write("through the pipe\n")
    reader.join(10)
    assert received == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and not temporaries(tmp_path)


def test_dev_null_is_written_and_stays_a_device():
    check_outputs([("INPUT", GOLD)], [("OUTPUT", "/dev/null")])
    with writing("/dev/null") as handle:
        handle.write("x" * 10_000)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_dev_full_is_one_output_error_and_stays_a_device():
    with pytest.raises(OutputError, match=r"^/dev/full: cannot write to it \(No space left on device\)"):
        with writing("/dev/full") as handle:
            handle.write("x" * 100_000)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_dev_stdout_is_a_stream_written_to_the_process_stdout(tmp_path):
    code = (
        "from eer_plugin.common.outputs import check_outputs, writing\n"
        "check_outputs([], [('OUTPUT', '/dev/stdout')])\n"
        "with writing('/dev/stdout') as handle:\n    handle.write('to stdout\\n')\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert shown.returncode == 0 and shown.stdout == "to stdout\n", shown.stderr
    assert not temporaries(tmp_path)


def test_a_file_too_large_to_write_removes_the_temporary_file_and_keeps_the_old_one(tmp_path):
    """A real failing write (EFBIG under RLIMIT_FSIZE): one OutputError, the previous file as it was, no temporary left."""
    (tmp_path / "out.txt").write_text("old")
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "from eer_plugin.common.outputs import OutputError, writing\n"
        "try:\n"
        "    with writing('out.txt') as handle:\n"
        "        handle.write('x' * 100_000)\n"
        "except OutputError as error:\n"
        "    print(error); sys.exit(3)\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert shown.returncode == 3, shown.stderr
    assert shown.stdout.startswith("out.txt: File too large while writing it") or "File too large" in shown.stdout
    assert (tmp_path / "out.txt").read_text() == "old" and not temporaries(tmp_path)


FULL_DISK = (
    "import sys\n"
    "from eer_plugin.common.outputs import OutputError, writing\n"
    "open(sys.argv[1] + '/out.txt', 'w').write('old')\n"
    "try:\n"
    "    with writing(sys.argv[1] + '/out.txt') as handle:\n"
    "        handle.write('x' * 1_000_000)\n"
    "except OutputError as error:\n"
    "    print(error); print(open(sys.argv[1] + '/out.txt').read()); import os; print(os.listdir(sys.argv[1])); sys.exit(3)\n"
)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare to mount a small tmpfs")
def test_a_full_disk_removes_the_temporary_file_and_says_so(tmp_path):
    """A real full disk: a 64 KiB tmpfs mounted in a private mount namespace (gone with the process)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    shown = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            f'mount -t tmpfs -o size=64k tmpfs "$1" && exec "{sys.executable}" -c "$2" "$1"',
            "sh",
            str(disk),
            FULL_DISK,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if "mount" in shown.stderr or shown.returncode not in (3, 0):
        pytest.skip(f"cannot mount a tmpfs here: {shown.stderr.strip()[:200]}")
    message, old, listing = shown.stdout.splitlines()
    assert "No space left on device while writing it; the partial temporary file was removed" in message
    assert old == "old" and listing == "['out.txt']"


def test_temporary_names_of_a_container_pid_1_never_collide(tmp_path):
    """Every run of a container is PID 1: the temporary names carry a per-process mark as well, so a killed
    run's file (this PID, another mark) counts as stale, and two writers never share a name."""
    names = {outputs.temporary_name(tmp_path / "out.jsonl") for _ in range(1000)}
    assert len(names) == 1000
    killed = tmp_path / f".out.jsonl{outputs.TEMPORARY_MARK}{os.getpid()}-0badc0de12345678"
    killed.write_text("a killed run's")
    mine = Path(outputs.temporary_name(tmp_path / "out.jsonl"))
    mine.write_text("this run's")
    assert outputs.stale_temporaries(tmp_path / "out.jsonl") == [str(killed)]


# ------------------------------------------------------------------------------------ inputs that are not regular files
@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory"])
def test_an_input_that_is_not_a_regular_file_is_refused_before_it_is_opened(kind, tmp_path):
    path = {"dev_zero": Path("/dev/zero"), "directory": tmp_path}.get(kind, tmp_path / "pipe")
    if kind == "fifo":
        os.mkfifo(path)  # no writer: opening it would wait forever
    expected = {
        "fifo": "a FIFO (named pipe), not a regular file",
        "dev_zero": "a character device, not a regular file",
        "directory": "is a directory",
    }[kind]
    from eer_plugin.annotation.dictionary_files import dictionary_lines

    def dictionary(p):
        return list(dictionary_lines(str(p)))

    for read in (
        (read_conll, read_documents, dictionary) if kind != "directory" else (read_conll, dictionary)
    ):  # a directory is OntoNotes to read_documents
        with pytest.raises(FormatError, match=re.escape(expected)):
            read(path)


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_inputs_are_recognised_by_their_first_bytes(compress, tmp_path):
    (tmp_path / "gold.txt").write_bytes(compress(GOLD.read_bytes()))  # no .gz name: the bytes say it
    assert [(d.tokens, d.spans) for d in read_documents(tmp_path / "gold.txt")] == [
        (d.tokens, d.spans) for d in read_documents(GOLD)
    ]


@pytest.mark.parametrize(
    "head,name", [(b"\x28\xb5\x2f\xfd" + b"\x00" * 20, "zstd"), (b"PK\x03\x04" + b"\x00" * 20, "zip")]
)
def test_other_compressions_are_named(head, name, tmp_path):
    (tmp_path / "gold.txt").write_bytes(head)
    with pytest.raises(FormatError, match=f"{name}-compressed: decompress it first"):
        read_documents(tmp_path / "gold.txt")


def test_a_damaged_gzip_input_is_one_error(tmp_path):
    (tmp_path / "gold.txt").write_bytes(gzip.compress(GOLD.read_bytes())[:200])
    with pytest.raises(FormatError, match="gzip-compressed but damaged"):
        read_documents(tmp_path / "gold.txt")


# ------------------------------------------------------------------------------------ the one error printer
@pytest.mark.parametrize(
    "error,status,shown",
    [
        (KeyboardInterrupt(), INTERRUPTED, "interrupted (Ctrl-C): every output is written whole or not at all"),
        (Terminated(), TERMINATED, "terminated (SIGTERM): every output is written whole or not at all"),
        (
            OSError(errno.ENOSPC, "No space left on device", "out.jsonl"),
            1,
            "error: out.jsonl: No space left on device: free space",
        ),
        (RecursionError("maximum recursion depth exceeded"), 1, "error: the input is nested too deeply"),
        (MemoryError(), 1, "error: out of memory: an input is too large to hold"),
        (OutputError("x: cannot write it"), 1, "error: x: cannot write it"),
        (UserError("bad"), 1, "error: bad"),
    ],
)
def test_the_printer_gives_one_line_naming_the_command_and_the_status(error, status, shown, capsys, monkeypatch):
    """Every line starts with the command as argparse's usage errors name it; ``error:`` for an input error."""
    monkeypatch.delenv("EER_TRACEBACK", raising=False)
    assert report(error, "eer-ner eer-split") == status
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"eer-ner eer-split: {shown}"), err


def test_without_a_command_the_line_names_the_program_as_argparse_does(capsys, monkeypatch):
    monkeypatch.delenv("EER_TRACEBACK", raising=False)
    monkeypatch.setattr(sys, "argv", ["/somewhere/bin/allennlp", "train", "x.jsonnet"])
    assert command_name() == "allennlp" and command_name({"evaluate", "train"}) == "allennlp train"
    assert argparse.ArgumentParser().prog == "allennlp"  # what argparse's usage errors start with
    assert report(UserError("bad")) == 1 and capsys.readouterr().err == "allennlp: error: bad\n"


def test_the_printer_leaves_bugs_their_traceback(monkeypatch):
    monkeypatch.delenv("EER_TRACEBACK", raising=False)
    assert report(ZeroDivisionError()) is None and report(OSError(errno.EACCES, "denied")) is None
    monkeypatch.setenv("EER_TRACEBACK", "1")
    assert report(KeyboardInterrupt()) is None


def piped(command: str, lines: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        f'"{Path(sys.executable).parent / "eer-ner"}" {command} | head -{lines}; echo "status=${{PIPESTATUS[0]}}"',
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    )


@pytest.mark.integration
def test_a_closed_pipe_ends_quietly(tmp_path):
    """``eer-ner eer-simulate ... /dev/stdout | head -1`` and ``eer-ner eer-inspect FILE | head -2``: no BrokenPipeError
    traceback; a writer that met the closed pipe ends with status 141 (128 + SIGPIPE) as Unix tools."""
    big = tmp_path / "big.txt"
    big.write_text(
        "".join(f"-DOCSTART- O\n\n{GOLD.read_text().replace('-DOCSTART- -X- -X- O', '')}\n" for _ in range(300))
    )
    shown = piped(f'eer-simulate ee "{big}" /dev/stdout --budget 5', 1)
    assert shown.stdout.splitlines()[-1] == f"status={BROKEN_PIPE}" and len(shown.stdout.splitlines()) == 2, (
        shown.stderr[-2000:]
    )
    assert "Traceback" not in shown.stderr and "BrokenPipe" not in shown.stderr, shown.stderr[-2000:]
    shown = piped(f'eer-inspect "{GOLD}"', 2)
    assert (
        shown.stdout.splitlines()[-1] in (f"status={BROKEN_PIPE}", "status=0") and len(shown.stdout.splitlines()) == 3
    )
    assert "Traceback" not in shown.stderr and "BrokenPipe" not in shown.stderr, shown.stderr


@pytest.mark.integration
@pytest.mark.parametrize("output", ["/dev/full", "/dev/null", "/dev/stdout", "link"])
def test_simulate_writes_special_outputs(output, tmp_path):
    if output == "link":
        (tmp_path / "target.jsonl").write_text("old\n")
        (tmp_path / "link").symlink_to("target.jsonl")
        output = tmp_path / "link"
    shown = eer_ner("eer-simulate", "ee", GOLD, output, "--budget", "5", capture_output=True, text=True)
    assert "Traceback" not in shown.stderr, shown.stderr
    if output == "/dev/full":
        assert shown.returncode == 1 and shown.stderr.strip().splitlines()[-1].startswith(
            "eer-ner eer-simulate: error: /dev/full: cannot write to it (No space left on device)"
        ), shown.stderr
        return
    assert shown.returncode == 0, shown.stderr
    if output == "/dev/stdout":
        assert sum(line.startswith('{"id": "conll2003_tiny-') for line in shown.stdout.splitlines()) == 4
    if isinstance(output, Path):
        assert output.is_symlink() and len((tmp_path / "target.jsonl").read_text().splitlines()) == 4


# ------------------------------------------------------------------------------------ control characters in pre-split tokens
@pytest.mark.parametrize("character", ["\x00", "\x1b", "\x7f", "\ud800"])
def test_control_characters_in_training_tokens_are_replaced_and_said_once_per_file(character, tmp_path, caplog):
    import json
    import logging

    lines = [
        json.dumps({"id": f"d{i}", "tokens": ["Pe" + character + "ter", "said", character], "spans": [[0, 1, "PER"]]})
        for i in range(3)
    ]
    (tmp_path / "train.jsonl").write_text("\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING):
        documents = read_documents(tmp_path / "train.jsonl")
    assert [d.tokens for d in documents] == [["Pe\ufffdter", "said", "\ufffd"]] * 3  # one for one, never kept
    warnings = [r.getMessage() for r in caplog.records if "U+FFFD" in r.getMessage()]
    assert len(warnings) == 1 and "in the strings of 3 line(s), first on line 1" in warnings[0], warnings


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_a_regular_file_under_dev_shm_is_still_written_atomically():
    assert (
        not outputs.is_stream("/dev/shm/eer-test-out.txt")
        and outputs.is_stream("/dev/stdout")
        and outputs.is_stream("/dev/null")
    )


def test_a_missing_file_names_where_relative_paths_start_only_for_a_relative_path(tmp_path, monkeypatch):
    """The hint "(relative paths start in DIR)" helps with a relative path and says nothing for an absolute one."""
    from eer_plugin.corpus.formats import FormatError
    from eer_plugin.corpus.formats.files import check_input_file

    monkeypatch.chdir(tmp_path)
    for path, message in [
        (tmp_path / "gone.jsonl", f"{tmp_path / 'gone.jsonl'}: no such file"),
        ("gone.jsonl", f"gone.jsonl: no such file (relative paths start in {tmp_path})"),
    ]:
        try:
            check_input_file(path)
        except FormatError as error:
            assert str(error) == message
        else:
            raise AssertionError(f"{path} was accepted")
