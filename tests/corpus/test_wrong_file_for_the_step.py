"""A file of one step given to another, as a class: the dictionary (``names.tsv``, a sheet's CSV) where documents
or training data are expected, and ``predict``'s output where annotations are. Every reader of training data
(:func:`read_documents`: train's, eer-inspect's, eer-split's, eer-estimate-ratio's) and eer-dictionary's INPUT
name the file and line and say which step takes that file; nothing is written."""

import json

import pytest

from eer_plugin.commands import dictionary as eer_dictionary
from eer_plugin.commands import split
from eer_plugin.corpus.documents import PREDICTIONS_FIX
from eer_plugin.corpus.formats import FormatError, read_documents
from eer_plugin.corpus.formats.columns import DICTIONARY_FIX

DICTIONARIES = {
    "names.tsv": "Loyola de Palacio\tPER\nBrussels\tLOC\n",
    "one_word.tsv": "Brussels\tLOC\nFischler\tPER\n",
    "header.tsv": "Name\tType\r\nBrussels\tLOC\r\n",
    "names.csv": "Loyola de Palacio,PER\nBrussels,LOC\n",
    "one_word.csv": "Brussels,LOC\n",
    "semicolon.csv": "Name;Type\nBrussels;LOC\n",
    "names.txt": "Loyola de Palacio\tPER\n",
}
PREDICTION = {
    "id": "1",
    "tokens": ["Fischler", "met", "Loyola", "de", "Palacio", "."],
    "tags": ["U-PER", "O", "B-PER", "I-PER", "L-PER", "O"],
    "spans": [{"type": "PER", "start": 0, "end": 1, "probability": 0.7, "text": "Fischler"}],
    "sentence_ends": [6],
    "text": "Fischler met Loyola de Palacio.",
}


@pytest.mark.parametrize("name", sorted(DICTIONARIES))
def test_a_dictionary_given_as_training_data_names_the_step_that_takes_it(name, tmp_path):
    path = tmp_path / name
    path.write_text(DICTIONARIES[name], encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_documents(str(path))
    assert (info.value.path, info.value.line) == (str(path), 1)
    assert str(info.value).startswith(f"{path}:1: ") and str(info.value).endswith(DICTIONARY_FIX)


@pytest.mark.parametrize(
    "text",
    ["John NNP B-NP PERSON\n", "Hello, world.\n", "Paris\tB-LOC\nLyon\tLOCATION\n", "Angela Merkel visited Paris.\n"],
)
def test_column_files_and_prose_do_not_get_the_dictionary_hint(text, tmp_path):
    path = tmp_path / "data.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_documents(str(path))
    assert DICTIONARY_FIX not in str(info.value)


def test_predict_output_given_as_training_data_says_what_it_is(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps(PREDICTION) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_documents(str(path))
    assert str(info.value) == f"{path}:1: {PREDICTIONS_FIX}"
    misspelt = tmp_path / "misspelt.jsonl"  # another unknown key keeps the did-you-mean message
    misspelt.write_text(json.dumps({"id": "1", "tokens": ["a"], "spanz": []}) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"unknown key\(s\) 'spanz' \(did you mean 'spans'\?\)"):
        read_documents(str(misspelt))


def run_command(main, argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit:
        main([str(a) for a in argv])
    assert exit.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_eer_dictionary_with_its_two_files_swapped_says_so(tmp_path, capsys):
    names = tmp_path / "names.tsv"
    names.write_text(DICTIONARIES["names.tsv"], encoding="utf-8")
    docs = tmp_path / "docs.jsonl"
    docs.write_text(json.dumps({"id": "1", "text": "Fischler met Loyola de Palacio."}) + "\n", encoding="utf-8")
    output = tmp_path / "labelled.jsonl"
    err = run_command(eer_dictionary.main, [names, output, "--dictionary", docs], capsys)
    assert err == (
        f"eer-dictionary: error: {names}:1: expected a tag 'O' or B-/I-/L-/U-/S-/E-TYPE in column 4 of 4 (the last), got "
        "'PER'; a dictionary of names ('surface form<TAB>TYPE' per line) given as INPUT? Give the documents as INPUT "
        "and the dictionary with --dictionary FILE"
    )
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps(PREDICTION) + "\n", encoding="utf-8")
    err = run_command(eer_dictionary.main, [predictions, output, "--dictionary", names], capsys)
    assert err == f"eer-dictionary: error: {predictions}:1: {PREDICTIONS_FIX}"
    raw = tmp_path / "article.txt"  # raw text as one file: no "label raw text first (eer-dictionary ...)" here
    raw.write_text("Angela Merkel visited Paris.\n", encoding="utf-8")
    err = run_command(eer_dictionary.main, [raw, output, "--dictionary", names], capsys)
    assert "eer-dictionary INPUT" not in err and err.endswith('or JSON lines with "text"')
    assert not output.exists()


def test_eer_split_of_a_dictionary_names_the_step_and_writes_nothing(tmp_path, capsys):
    names = tmp_path / "names.csv"
    names.write_text(DICTIONARIES["names.csv"], encoding="utf-8")
    err = run_command(split.main, [names, tmp_path / "train.jsonl", tmp_path / "dev.jsonl"], capsys)
    assert err.startswith(f"eer-split: error: {names}:1: ") and err.endswith(DICTIONARY_FIX)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["names.csv"]
