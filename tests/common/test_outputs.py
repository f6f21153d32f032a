"""Issue 32: the output policy (eer_plugin/common/outputs.py) and the text normalisation (eer_plugin/corpus/text.py)."""

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eer_plugin.common import outputs
from eer_plugin.common.outputs import OutputError, check_outputs, writing
from eer_plugin.corpus.text import REPLACEMENT, normalise, normalise_text, normalise_value


# ------------------------------------------------------------------------------------ text
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
@settings(max_examples=200, deadline=None)
def test_normalised_text_keeps_its_length_and_is_always_writable(text):
    cleaned, count = normalise_text(text)
    assert len(cleaned) == len(text)  # character offsets stay exact
    cleaned.encode("utf-8")  # no lone surrogate left
    assert all(not (c < " " or "\x7f" <= c < "\xa0") or c.isspace() for c in cleaned)
    assert count == sum(a != b for a, b in zip(text, cleaned))
    assert all(b == REPLACEMENT for a, b in zip(text, cleaned) if a != b)
    assert normalise(cleaned) == cleaned  # idempotent


@pytest.mark.parametrize(
    "text,expected",
    [
        ("bad \ud800 x", "bad \ufffd x"),
        ("a\x00b\x07c\x1bd\x7fe\x9ff", "a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf"),
        ("tab\tnew\nline\r\x0b\x0c\x1c\x85 ok", "tab\tnew\nline\r\x0b\x0c\x1c\x85 ok"),  # white space stays
        ("José \u200b 😀 \ufeff", "José \u200b 😀 \ufeff"),  # no NFC, no removal: only Cc and surrogates
    ],
)
def test_normalise_replaces_only_surrogates_and_control_characters(text, expected):
    assert normalise(text) == expected


def test_normalise_value_reaches_every_string_keys_included():
    assert normalise_value({"t\x00": ["a\ud800", {"b": "\x01"}], "n": 3, "f": None}) == {
        "t\ufffd": ["a\ufffd", {"b": "\ufffd"}],
        "n": 3,
        "f": None,
    }


# ------------------------------------------------------------------------------------ same-file checks
def test_output_equal_to_an_input_is_refused_however_spelled(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("gold")
    os.symlink("a.txt", "link.txt")
    os.link("a.txt", "hard.txt")
    (tmp_path / "sub").mkdir()
    for spelling in ["a.txt", "./a.txt", str(tmp_path / "a.txt"), "sub/../a.txt", "link.txt", "hard.txt"]:
        with pytest.raises(OutputError, match="is the same file as INPUT a.txt: writing it would destroy the input"):
            check_outputs([("INPUT", "a.txt")], [("OUTPUT", spelling)])
    check_outputs([("INPUT", "a.txt")], [("OUTPUT", "b.txt"), ("--report", None)])  # a new file: fine
    assert (tmp_path / "a.txt").read_text() == "gold"


def test_files_of_an_input_directory_two_equal_outputs_and_directory_outputs(tmp_path):
    corpus = tmp_path / "brat"
    corpus.mkdir()
    (corpus / "x.ann").write_text("T1\tPER 0 4\tJohn\n")
    with pytest.raises(OutputError, match="same file as INPUT"):
        check_outputs([("INPUT", corpus)], [("OUTPUT", corpus / "x.ann")])
    check_outputs([("INPUT", corpus)], [("OUTPUT", corpus / "new.jsonl")])
    with pytest.raises(
        OutputError, match="--complete-output .* is the same file as OUTPUT .*: one would overwrite the other"
    ):
        check_outputs([], [("OUTPUT", tmp_path / "o.jsonl"), ("--complete-output", f"{tmp_path}/./o.jsonl")])
    with pytest.raises(OutputError, match="is a directory; give a file name"):
        check_outputs([], [("OUTPUT", corpus)])


# ------------------------------------------------------------------------------------ atomic writes
def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("previous\n")
    with pytest.raises(RuntimeError):
        with writing(target) as handle:
            handle.write("half")
            raise RuntimeError("stop")
    assert target.read_text() == "previous\n" and os.listdir(tmp_path) == ["out.jsonl"]
    with writing(tmp_path / "new" / "out.jsonl") as handle:  # parent directories are created
        handle.write("whole\n")
    assert (tmp_path / "new" / "out.jsonl").read_text() == "whole\n"


def test_stale_temporaries_of_dead_writers_are_removed_live_ones_kept(tmp_path):
    target = tmp_path / "out.jsonl"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".out.jsonl{outputs.TEMPORARY_MARK}{dead.stdout.strip()}-deadbeef"
    live = tmp_path / f".out.jsonl{outputs.TEMPORARY_MARK}{os.getppid()}-cafecafe"
    stale.write_text("partial")
    live.write_text("being written")
    with writing(target) as handle:
        handle.write("new\n")
    assert not stale.exists() and live.exists() and target.read_text() == "new\n"


def test_an_output_under_a_file_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("gold")
    with pytest.raises(OutputError, match=r"a.txt/out.jsonl: cannot write in .*a.txt; choose a directory"):
        check_outputs([], [("OUTPUT", tmp_path / "a.txt" / "out.jsonl")])
    check_outputs([], [("OUTPUT", tmp_path / "new" / "deeper" / "out.jsonl")])  # directories are made


# ------------------------------------------------------------------------------------ read-only outputs, SIGTERM
EER_NER = os.path.join(os.path.dirname(sys.executable), "eer-ner")
#: root without its right to read and write any file (what the tests check is a user's view of permissions)
AS_A_USER = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
GOLD_LINE = '{"id": "d%d", "tokens": ["Kohl", "met", "Yeltsin", "."], "spans": [[0, 1, "PER"]], "is_complete": true}\n'
#: data commands and their arguments (IN: partial JSON lines, OUT: the output checked)
WRITERS = {
    "eer-simulate": ["eer-simulate", "gold", "IN", "OUT"],
    "eer-split": ["eer-split", "IN", "OUT", "dev.jsonl"],
    "eer-dictionary": ["eer-dictionary", "IN", "OUT", "--dictionary", "names.tsv"],
    "eer-import": ["eer-import", "doccano", "IN", "OUT"],
}


def _eer_ner(argv, tmp_path, documents=4, user=False, wait=True):
    (tmp_path / "names.tsv").write_text("Kohl\tPER\n")
    data = "".join(GOLD_LINE % i for i in range(documents))
    if "doccano" in argv:
        data = "".join(
            '{"id": %d, "text": "Kohl met Yeltsin.", "label": [[0, 4, "PER"]]}\n' % i for i in range(documents)
        )
    (tmp_path / "in.jsonl").write_text(data)
    command = [EER_NER] + [{"IN": "in.jsonl", "OUT": "out.jsonl"}.get(a, a) for a in argv]
    if user and os.geteuid() == 0:
        if subprocess.run(AS_A_USER + ["true"]).returncode != 0:
            pytest.skip("root, and setpriv cannot drop the right to write any file")
        command = AS_A_USER + command
    start = subprocess.run if wait else subprocess.Popen
    return start(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.integration
@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555])
@pytest.mark.parametrize("command", WRITERS)
def test_a_read_only_output_is_left_as_it_is(command, mode, tmp_path):
    """An existing output without write permission (``chmod a-w``: kept on purpose) is an error naming it, not
    replaced: the rename that writes outputs whole would replace it all the same. Made writable, it is replaced;
    root, who may write any file, replaces it as ``cp`` would."""
    (tmp_path / "out.jsonl").write_text("kept on purpose\n")
    (tmp_path / "out.jsonl").chmod(mode)
    shown = _eer_ner(WRITERS[command], tmp_path, user=True)
    errors = [line for line in shown.stderr.splitlines() if line.startswith(f"eer-ner {command}: error: ")]
    assert shown.returncode == 1 and len(errors) == 1 and "out.jsonl is read-only" in errors[0], shown.stderr
    assert (tmp_path / "out.jsonl").read_text() == "kept on purpose\n" and "Traceback" not in shown.stderr
    assert not [p for p in os.listdir(tmp_path) if outputs.TEMPORARY_MARK in p]
    (tmp_path / "out.jsonl").chmod(0o644)
    assert _eer_ner(WRITERS[command], tmp_path, user=True).returncode == 0
    assert (tmp_path / "out.jsonl").read_text() != "kept on purpose\n"


@pytest.mark.integration
@pytest.mark.parametrize("command", ["eer-simulate", "eer-dictionary", "eer-import"])
def test_sigterm_mid_write_leaves_the_old_output_and_no_temporary_file(command, tmp_path):
    """``kill``, ``timeout`` or a job scheduler's cancel (SIGTERM) while a data command writes: one line, status
    143, the previous output as it was, and no hidden temporary file left beside it (before, the partial file
    stayed until the next run of the same output)."""
    import signal
    import time

    (tmp_path / "out.jsonl").write_text("the earlier output\n")
    process = _eer_ner(WRITERS[command], tmp_path, documents=300_000, wait=False)
    deadline = time.time() + 240
    while not [p for p in os.listdir(tmp_path) if outputs.TEMPORARY_MARK in p] and time.time() < deadline:
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    # the line names the command as its errors and argparse's usage errors do
    assert process.returncode == 143 and err.strip().splitlines()[-1] == f"eer-ner {command}: " + (
        "terminated (SIGTERM): every output is written whole or not at all, so the files this run was writing are "
        "as they were before it (predict --output-file: run it again with --resume to continue; training: --recover)"
    ), err[-2000:]
    assert "Traceback" not in err and (tmp_path / "out.jsonl").read_text() == "the earlier output\n"
    assert sorted(os.listdir(tmp_path)) == ["in.jsonl", "names.tsv", "out.jsonl"]
