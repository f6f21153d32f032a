"""Raw text where training data was expected, as a class: JSON lines with "text" and no "tokens", a folder
of .txt files, a .txt file of prose. Every reader of training data (train's, eer-inspect's,
eer-estimate-ratio's, eer-simulate's: :func:`read_documents`) names the file and line and says what to do
(:data:`RAW_TEXT_FIX`), on generated documents; the one real training-format file of each kind still reads."""

import argparse
import json
import random
import string

import pytest

from eer_plugin.commands import inspect_data
from eer_plugin.corpus.documents import RAW_TEXT_FIX
from eer_plugin.corpus.formats import FormatError, read_documents


def words(rng: random.Random, count: int) -> list:
    return ["".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(1, 9))) for _ in range(count)]


def prose(rng: random.Random, count: int) -> str:
    return " ".join(words(rng, count)) + rng.choice([".", "!", "?", ""])


def raw_jsonl(tmp_path, rng, index):
    path = tmp_path / f"raw{index}.jsonl"
    lines = [{"text": prose(rng, rng.randint(1, 30))} for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.5:  # an id, as predict's input may have, changes nothing
        lines = [dict(line, id=f"d{i}") for i, line in enumerate(lines)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path, 1


def text_folder(tmp_path, rng, index):
    root = tmp_path / f"docs{index}"
    for number in range(rng.randint(1, 3)):
        (root / f"sub{number % 2}").mkdir(parents=True, exist_ok=True)
        (root / f"sub{number % 2}" / f"doc{number}.txt").write_text(prose(rng, rng.randint(1, 50)), encoding="utf-8")
    return root, None


def prose_file(tmp_path, rng, index):
    """Lines of 5 words or more, or a first line of 1-4 words that ends a sentence ("Merkel visited Paris.")."""
    path = tmp_path / f"prose{index}.txt"
    lines = [prose(rng, rng.randint(5, 40)) for _ in range(rng.randint(1, 5))]
    if index % 2:
        lines.insert(0, " ".join(words(rng, rng.randint(1, 4))) + rng.choice(".!?"))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, 1


@pytest.mark.parametrize("make", [raw_jsonl, text_folder, prose_file], ids=["jsonl-text", "txt-folder", "prose-file"])
def test_raw_text_is_refused_by_every_training_reader_with_the_fix(make, tmp_path):
    rng = random.Random(make.__name__)
    for index in range(20):
        path, line = make(tmp_path, rng, index)
        with pytest.raises(FormatError) as info:
            read_documents(str(path))
        error = info.value
        assert (error.path, error.line) == (str(path), line), str(error)
        assert str(error).startswith(f"{path}:{line}: " if line else f"{path}: ") and RAW_TEXT_FIX in str(error)


def test_eer_inspect_prints_the_fix_and_fails(tmp_path, capsys):
    path, _ = raw_jsonl(tmp_path, random.Random(0), 0)
    args = inspect_data.add_arguments(argparse.ArgumentParser()).parse_args([str(path), "--encoder", "none"])
    with pytest.raises(SystemExit) as info:
        inspect_data.run(args)
    assert info.value.code == 1
    assert f"eer-inspect: error: {path}:1: a line of raw text" in capsys.readouterr().err


def test_training_data_beside_it_still_reads_and_short_bad_conll_lines_keep_their_message(tmp_path):
    """The hints need what raw text looks like: a training-format line with its text, a CoNLL file with
    4 columns and a wrong tag, and a folder of OntoNotes files are not raw text."""
    good = tmp_path / "good.jsonl"
    good.write_text(
        json.dumps({"id": "a", "tokens": ["John", "ran"], "text": "John ran", "spans": [[0, 1, "PER"]]}) + "\n"
    )
    assert read_documents(str(good))[0].spans == [(0, 1, "PER")]
    conll = tmp_path / "bad.txt"
    conll.write_text("John NNP B-NP PERSON\n")
    # the tag hints (another column holds tags; a bare type), not the raw-text one
    with pytest.raises(FormatError, match="in column 4 of 4 \\(the last\\), got 'PERSON'; if column 3 holds the tags"):
        read_documents(str(conll))
    for line, column in (("John NNP B-NP PERSON\n", "column 2 of 4"), ("U.S. NNP I-NP Inc.\n", "column 2 of 4")):
        conll.write_text(line)  # a tag column given by number, counted from 1 in the message
        with pytest.raises(FormatError, match=f"in {column}, got 'NNP'; if column 3 holds the tags") as info:
            read_documents(str(conll), tag_column=1)
        assert "raw text" not in str(info.value) and str(info.value).endswith("(I-NNP): one entity per run of a type")
    conll.write_text("Paris NNP B-NP I-LOC\nTitle\n")  # one word after the first line: a token without its tag
    with pytest.raises(FormatError, match="expected 4 columns \\(as on line 1\\), got 1: 'Title'$"):
        read_documents(str(conll))
    no_id = tmp_path / "no_id.jsonl"
    no_id.write_text(json.dumps({"tokens": ["a"]}) + "\n")
    with pytest.raises(FormatError, match="missing key 'id' \\(every line needs a document id of its own"):
        read_documents(str(no_id))
