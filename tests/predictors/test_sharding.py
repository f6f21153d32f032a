"""eer-shard / eer-merge: a sharded prediction, merged, is the unsharded prediction: the same lines, tags, spans
and error records; a probability may differ in its last float32 digit (which documents share a batch changes
the encoder's rounding on some CPUs: seen on an AVX2-only EPYC), so CoNLL output is compared byte for byte and
JSON output record by record with the probabilities to 1e-5."""

import json
import os
from pathlib import Path

import pytest
from conftest import FIXTURES
from inference.test_exported import assert_same_outputs
from test_predict_outputs import run_manager

from eer_plugin.commands import shard
from eer_plugin.corpus.formats import read_conll
from eer_plugin.inference.sharding import ShardError, merge_outputs, shard_starts, shift_error_line, split_input


def corpus(path: Path) -> Path:
    """The fixtures' documents as prediction input, with what a real file has: blank lines, a CRLF line
    ending, a line that is not JSON and one that is not UTF-8 (both answered by error records)."""
    docs = [
        json.dumps({"id": d["id"], "tokens": d["tokens"][:40]})
        for d in map(json.loads, (FIXTURES / "conll2003_tiny_partial.jsonl").read_text().splitlines())
    ]
    docs += (FIXTURES / "example_document.jsonl").read_text().splitlines()
    lines = [
        docs[0].encode(),
        b"",
        docs[1].encode() + b"\r",
        b'{"id": "broken", "text": ',
        docs[2].encode(),
        b"  ",
        b'{"id": "latin", "text": "caf\xe9 in Paris"}',
        docs[3].encode(),
        docs[4].encode(),
        b"",
        docs[5].encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_shards_are_contiguous_and_about_equal():
    assert shard_starts(10, 3) == [0, 3, 6] and shard_starts(3, 3) == [0, 1, 2] and shard_starts(7, 1) == [0]
    with pytest.raises(ShardError, match="more than the 2 documents"):
        shard_starts(2, 3)
    with pytest.raises(ShardError, match="at least 1"):
        shard_starts(2, 0)


@pytest.mark.parametrize("content", ["", "\n \n\t\n", '{"id": "a", "text": "one"}\n'])
def test_more_shards_than_documents_names_the_input_and_writes_nothing(content, tmp_path, capsys):
    source = tmp_path / "docs.jsonl"
    source.write_text(content)
    with pytest.raises(SystemExit) as exit:
        shard.split_main([str(source), str(tmp_path / "shards"), "--shards", "2"])
    err = capsys.readouterr().err.strip()
    assert exit.value.code == 1 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"{source}: --shards 2 is more than the" in err, err
    assert not (tmp_path / "shards").exists() or not any((tmp_path / "shards").iterdir())


def test_error_line_numbers_move_by_the_shard_offset():
    assert (
        shift_error_line('{"line": 3, "id": "d\\"1", "error": "x"}\n', 10)
        == '{"line": 13, "id": "d\\"1", "error": "x"}\n'
    )
    assert shift_error_line('{"line": 3, "id": null, "error": "x"}\n', 10) == '{"line": 13, "id": null, "error": "x"}\n'
    assert shift_error_line("# error: line 2, id 'a': bad\n", 5) == "# error: line 7, id 'a': bad\n"
    ordinary = '{"line": 3, "tokens": ["a"]}\n'
    assert shift_error_line(ordinary, 10) == ordinary


def test_split_keeps_every_byte_in_order(tmp_path):
    source = corpus(tmp_path / "docs.jsonl")
    manifest = split_input(str(source), str(tmp_path / "shards"), 3)
    files = [tmp_path / "shards" / entry["file"] for entry in manifest["shards"]]
    assert b"".join(f.read_bytes() for f in files) == source.read_bytes()
    assert [e["documents"] for e in manifest["shards"]] == [2, 3, 3] and manifest["documents"] == 8
    assert [e["first_line"] for e in manifest["shards"]] == [1, 4, 8]  # a shard starts at a document line
    assert json.loads(Path(manifest["manifest"]).read_text())["shards"] == manifest["shards"]


@pytest.mark.parametrize("output_format", ["json", "conll"])
def test_sharded_prediction_merged_is_the_unsharded_prediction(output_format, archive, tmp_path):  # noqa: F811
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    tagger = Predictor.from_archive(
        load_archive(str(archive)), "eer_tagger", extra_args={"output_format": output_format}
    )
    source = corpus(tmp_path / "docs.jsonl")
    assert run_manager(tagger, source, tmp_path / "whole.out") == 1  # the two bad lines
    assert shard.split_main([str(source), str(tmp_path / "shards"), "--shards", "3"]) == 0
    manifest = tmp_path / "shards" / "docs.shards.json"
    parts = []
    for entry in json.loads(manifest.read_text())["shards"]:
        parts.append(tmp_path / "shards" / (entry["file"] + ".out"))
        run_manager(tagger, tmp_path / "shards" / entry["file"], parts[-1])
    argv = [str(manifest), str(tmp_path / "merged.out"), *map(str, parts), "--format", output_format]
    assert shard.merge_main(argv) == 0
    whole = (tmp_path / "whole.out").read_bytes()
    merged = (tmp_path / "merged.out").read_bytes()
    if output_format == "conll":
        assert merged == whole
        tagged = []  # the ids of the input lines that were tagged, in order
        for line in filter(bytes.strip, source.read_bytes().splitlines()):
            try:
                tagged.append(json.loads(line.decode())["id"])
            except ValueError:  # the line that is no JSON, the one that is no UTF-8: error records
                continue
        assert [d.id for d in read_conll(tmp_path / "merged.out")] == tagged and len(tagged) == 6
    else:
        assert_same_outputs(list(map(json.loads, whole.splitlines())), list(map(json.loads, merged.splitlines())))
    assert (b'"line": 4,' if output_format == "json" else b"# error: line 4,") in whole  # numbered in the whole input


def test_merge_refuses_incomplete_or_misordered_outputs(tmp_path, capsys):
    source = corpus(tmp_path / "docs.jsonl")
    manifest = split_input(str(source), str(tmp_path), 2)["manifest"]
    parts = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    parts[0].write_text('{"id": 1}\n' * 4)  # shard 0: 4 documents
    with pytest.raises(ShardError, match=r"b.jsonl: no output of shard 1"):
        merge_outputs(manifest, list(map(str, parts)), str(tmp_path / "out.jsonl"))
    parts[1].write_text('{"id": 1}\n' * 3)  # shard 1 has 4
    with pytest.raises(ShardError, match=r"b.jsonl: 3 output lines but shard 1 .* has 4 documents"):
        merge_outputs(manifest, list(map(str, parts)), str(tmp_path / "out.jsonl"))
    with pytest.raises(ShardError, match="2 shards but 1 outputs"):
        merge_outputs(manifest, [str(parts[0])], str(tmp_path / "out.jsonl"))
    assert not (tmp_path / "out.jsonl").exists()
    # an output that is one of its inputs: one line, nothing touched
    before = parts[0].read_bytes()
    with pytest.raises(SystemExit):
        shard.merge_main([manifest, str(parts[0]), *map(str, parts)])
    assert capsys.readouterr().err.startswith("eer-merge: error: ") and parts[0].read_bytes() == before
    with pytest.raises(SystemExit):
        shard.merge_main([str(source), str(tmp_path / "out.jsonl"), *map(str, parts)])
    assert "not a shard manifest" in capsys.readouterr().err
    with pytest.raises(ShardError, match="missing.jsonl: no such file"):
        split_input(str(tmp_path / "missing.jsonl"), str(tmp_path), 2)


@pytest.mark.parametrize(
    "given, message",
    [
        ("/dev/null", "/dev/null: a character device, not a regular file"),
        ("a folder", "a folder: is a directory; give a data file"),
        ("no-read.jsonl", "no-read.jsonl: cannot read file: Permission denied"),
    ],
)
def test_an_input_that_is_no_readable_file_is_named_as_every_reader_names_it(given, message, tmp_path, monkeypatch):
    """Before, a device or a folder was "no such file" and an unreadable file an OSError's own words."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a folder").mkdir()
    (tmp_path / "no-read.jsonl").write_text('{"text": "Paris ."}\n')
    (tmp_path / "no-read.jsonl").chmod(0)
    if given == "no-read.jsonl" and os.access(tmp_path / "no-read.jsonl", os.R_OK):
        pytest.skip("root reads any file")
    with pytest.raises(ShardError, match=f"^{message}"):
        split_input(given, "shards", 2)
    assert not (tmp_path / "shards").exists()


def test_a_manifest_without_fingerprints_still_merges_and_a_part_line_not_json_is_named(tmp_path):
    """Manifests of eer-shard before fingerprints have no "sha256": still read. A part's line that is no JSON (cut,
    a number too long to read) names the part and its line."""
    source = corpus(tmp_path / "docs.jsonl")
    manifest = split_input(str(source), str(tmp_path), 2)["manifest"]
    data = json.loads(Path(manifest).read_text())
    for entry in data["shards"]:
        del entry["sha256"]
    Path(manifest).write_text(json.dumps(data))
    # each shard's output as error records (the output predict gives a line it cannot read), one per document line
    outputs = []
    for entry in data["shards"]:
        lines = (tmp_path / entry["file"]).read_text(encoding="utf-8", errors="replace").split("\n")
        outputs.append([json.dumps({"line": n, "id": None, "error": "x"}) for n, t in enumerate(lines, 1) if t.strip()])
    parts = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for part, records in zip(parts, outputs):
        part.write_text("\n".join(records) + "\n")
    merge_outputs(manifest, list(map(str, parts)), str(tmp_path / "out.jsonl"))  # no fingerprints: merged
    for bad in ('{"line": 1, "err', '{"line": ' + "9" * 5000 + "}"):
        parts[1].write_text(outputs[1][0] + "\n\n" + bad + "\n" + "\n".join(outputs[1][2:]) + "\n")
        with pytest.raises(ShardError, match=r"b\.jsonl:3: not a JSON-lines output of eer-ner predict"):
            merge_outputs(manifest, list(map(str, parts)), str(tmp_path / "again.jsonl"))
    assert not (tmp_path / "again.jsonl").exists()


@pytest.mark.parametrize("case", ["swapped", "repeated", "shard edited", "shard missing"])
def test_merge_refuses_parts_that_are_not_their_shards_output(case, archive, tmp_path, capsys):  # noqa: F811
    """Issue 50: the manifest holds each shard's fingerprint, and every record is checked against its shard's line:
    parts swapped or given twice, or a shard changed after the split, stop the merge with one line, nothing written."""
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    tagger = Predictor.from_archive(load_archive(str(archive)), "eer_tagger")
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps({"id": f"d{i}", "text": f"Paris {i} ."}) + "\n" for i in range(6)))
    manifest = split_input(str(source), str(tmp_path / "shards"), 3)
    assert all(len(e["sha256"]) == 64 for e in manifest["shards"]) and len(manifest["input_sha256"]) == 64
    parts = []
    for entry in manifest["shards"]:
        parts.append(tmp_path / "shards" / (entry["file"] + ".out"))
        run_manager(tagger, tmp_path / "shards" / entry["file"], parts[-1])
    shards = [tmp_path / "shards" / e["file"] for e in manifest["shards"]]
    expected = {
        "swapped": "is not that line's output",
        "repeated": "is given for shard 0 and for shard 1",
        "shard edited": "changed since eer-shard wrote it",
        "shard missing": "shard 2 is missing",
    }[case]
    if case == "swapped":
        parts[0], parts[1] = parts[1], parts[0]
    elif case == "repeated":
        parts[1] = parts[0]
    elif case == "shard edited":
        shards[2].write_text(shards[2].read_text().replace("Paris", "Berlin"))
    else:
        shards[2].unlink()
    with pytest.raises(SystemExit) as exit:
        shard.merge_main([manifest["manifest"], str(tmp_path / "merged.jsonl"), *map(str, parts)])
    assert exit.value.code == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and expected in err, err
    assert not (tmp_path / "merged.jsonl").exists()
