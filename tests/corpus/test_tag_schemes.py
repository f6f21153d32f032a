"""Tag schemes beyond IOB1, BIO and BIOUL, as a class: BIOES (alias IOBES; ``S-`` single, ``E-`` end: flair's and
many toolkits' output) decodes exactly as its BIOUL twin (every sequence of up to 4 tags over two types), is
detected from the first ``S-``/``E-`` tag or given by name, and a CoNLL file in it reads to the documents of its
BIO twin; a tag in a shape no scheme writes (the prefix joined with ``_``, lower case or after the type, BMES's
``M-``, a bare type, the digit 0, no type, the tags in another column) names its line and the rewrite, in every
reader and command that meets it (generated from the CoNLL-2003 fixture)."""

import itertools
import random
from pathlib import Path
from typing import Callable, Dict, List

import pytest
from conftest import FIXTURES

from eer_plugin.commands import simulate, split
from eer_plugin.core.tags import (
    TagSequenceError,
    detect_encoding,
    normalize_encoding,
    spans_to_biluo,
    tags_to_spans,
)
from eer_plugin.corpus.formats import FormatError, read_conll, read_documents
from eer_plugin.corpus.formats.conll import conll_documents

CONLL2003 = FIXTURES / "conll2003_tiny.txt"
TO_BIOES = {"U": "S", "L": "E"}
TO_BIOUL = {"S": "U", "E": "L"}


def decoded(tags, encoding):
    """The spans, or ``("error", position)``."""
    try:
        return tags_to_spans(list(tags), encoding)
    except TagSequenceError as error:
        return ("error", error.position)


def renamed(tags, prefixes: Dict[str, str]) -> List[str]:
    return [prefixes.get(tag[0], tag[0]) + tag[1:] if tag != "O" else tag for tag in tags]


def test_every_bioes_sequence_decodes_as_its_bioul_twin():
    alphabet = ["O"] + [f"{p}-{t}" for t in "AB" for p in "BIES"]
    checked = 0
    for length in range(1, 5):
        for tags in itertools.product(alphabet, repeat=length):
            assert decoded(tags, "BIOES") == decoded(renamed(tags, TO_BIOUL), "BIOUL"), tags
            checked += 1
    assert checked == 9 + 9**2 + 9**3 + 9**4
    assert normalize_encoding("iobes") == normalize_encoding("BIOES") == "BIOES"


@pytest.mark.parametrize(
    "tags,encoding,position",
    [
        (["S-PER", "U-LOC"], "BIOES", 1),
        (["B-PER", "L-PER"], "BIOES", 1),
        (["U-PER", "S-LOC"], "BIOUL", 1),
        (["B-PER", "E-PER"], "BIOUL", 1),
        (["O", "S-PER"], "BIO", 1),
        (["E-PER"], "IOB1", 0),
        (["B-PER", "I-PER"], "BIOES", 2),  # not closed at the end
        (["B-PER", "S-PER"], "BIOES", 1),  # not closed before S-
    ],
)
def test_a_tag_of_another_scheme_or_an_open_entity_names_its_position(tags, encoding, position):
    with pytest.raises(TagSequenceError) as error:
        tags_to_spans(tags, encoding)
    assert error.value.position == position


def test_the_first_tag_only_one_scheme_writes_decides():
    assert detect_encoding([["O", "B-PER", "E-PER"], ["U-LOC"]]) == "BIOES"
    assert detect_encoding([["U-LOC"], ["S-PER"]]) == "BIOUL"
    assert detect_encoding([["B-PER", "I-PER"], ["I-LOC"]]) == "IOB1"


def twin(tmp_path: Path, name: str, convert: Callable[[List[str]], List[str]]) -> Path:
    """The CoNLL-2003 fixture with every sentence's tags converted (its spans as BILUO, then ``convert``)."""
    lines, sentence = [], []

    def flush():
        tags = convert(spans_to_biluo(tags_to_spans([f[-1] for f in sentence], "IOB1"), len(sentence)))
        lines.extend(" ".join([*fields[:-1], tag]) for fields, tag in zip(sentence, tags))
        sentence.clear()

    for line in CONLL2003.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields and fields[0] != "-DOCSTART-":
            sentence.append(fields)
            continue
        if sentence:
            flush()
        lines.append(line)
    if sentence:
        flush()
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def as_bio(tags: List[str]) -> List[str]:
    return [{"L": "I", "U": "B"}.get(tag[0], tag[0]) + tag[1:] if tag != "O" else tag for tag in tags]


def test_a_bioes_file_reads_as_its_bio_twin_detected_or_given(tmp_path):
    bioes = twin(tmp_path, "bioes.txt", lambda tags: renamed(tags, TO_BIOES))
    bio = read_conll(twin(tmp_path, "bio.txt", as_bio))
    documents, reading = conll_documents(bioes)
    lines = bioes.read_text().splitlines()
    first = next(n for n, line in enumerate(lines, 1) if line.split() and line.split()[-1][:2] in ("S-", "E-"))
    assert (reading.tag_scheme, reading.tag_scheme_reason) == ("BIOES", f"auto: S-/E- tags, first on line {first}")
    read = list(documents)
    assert [(d.tokens, d.spans, d.sentence_ends) for d in read] == [(d.tokens, d.spans, d.sentence_ends) for d in bio]
    assert sum(len(d.spans) for d in read) == 82  # the fixture's entities, none lost
    assert [d.spans for d in read_conll(bioes, encoding="IOBES")] == [d.spans for d in bio]
    with pytest.raises(
        FormatError, match=rf"bioes.txt:{first}: tag '[SE]-\w+' at position \d+ is not allowed in BIOUL"
    ):
        read_conll(bioes, encoding="BIOUL")


def test_a_file_mixing_bioul_and_bioes_names_the_line_of_the_other_scheme(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_text("Paris U-LOC\nis O\n\nJohn B-PER\nSmith E-PER\n", encoding="utf-8")
    with pytest.raises(FormatError) as error:
        read_conll(path)
    assert (error.value.line, str(error.value)) == (
        5,
        f"{path}:5: tag 'E-PER' at position 1 is not allowed in BIOUL (reading the tags as BIOUL)",
    )


#: a tag in a shape no scheme writes -> the end of the error's fix
SHAPES: Dict[str, Callable[[str], str]] = {
    "joined": lambda tag: tag.replace("-", "_", 1),
    "lower case": lambda tag: tag[0].lower() + tag[1:],
    "type first": lambda tag: f"{tag[2:]}-{tag[0]}",
    "BMES middle": lambda tag: "M" + tag[1:],
    "bare type": lambda tag: tag[2:],
    "no type": lambda tag: tag[:2],
}
FIXES: Dict[str, Callable[[str], str]] = {
    "joined": lambda tag: f"; the prefix is joined to the type by '_': write {tag} in the file",
    "lower case": lambda tag: f"; the prefix is lower case: write {tag} in the file",
    "type first": lambda tag: f"; the prefix follows the type: write {tag} in the file",
    "BMES middle": lambda tag: "; M- is BMES's middle tag, I- in BIOES: replace M- with I- and the file reads as BIOES",
    "bare type": lambda tag: (
        "; a type without a prefix (IO tagging, 'PER PER O') reads as IOB1 once each such tag is written I-TYPE "
        f"(I-{tag[2:]}): one entity per run of a type"
    ),
    "no type": lambda tag: f"; {tag[:2]} names no entity type after its prefix",
}
COLUMN_FIX = "; if column 4 holds the tags, read it with tag_column / --tag-column 3; or "


def misshaped(tmp_path: Path, shape: str, seed: int):
    """The fixture with one entity tag, drawn by ``seed``, in ``shape``: the file, the line and the tag."""
    lines = CONLL2003.read_text(encoding="utf-8").splitlines()
    tagged = [n for n, line in enumerate(lines) if line.split()[-1:] not in ([], ["O"]) and "DOCSTART" not in line]
    n = random.Random(seed).choice(tagged)
    fields = lines[n].split()
    tag, fields[-1] = fields[-1], SHAPES[shape](fields[-1])
    lines[n] = " ".join(fields)
    path = tmp_path / f"{shape.replace(' ', '_')}-{seed}.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, n + 1, tag, fields[-1]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_misshaped_tag_names_its_line_and_the_rewrite_in_every_reader_and_command(shape, tmp_path, capsys):
    for seed in range(3):
        path, line, tag, written = misshaped(tmp_path, shape, seed)
        fix = FIXES[shape](tag)
        fix = COLUMN_FIX + fix[2:] if line == 3 else fix  # the first token line: the chunk column holds tags too
        expected = (
            f"{path}:{line}: expected a tag 'O' or B-/I-/L-/U-/S-/E-TYPE in column 4 of 4 (the last), got "
            f"{written!r}{fix}"
        )
        for read in (read_conll, read_documents, lambda p: read_conll(p, encoding="BIOES")):
            with pytest.raises(FormatError) as error:
                read(path)
            assert (str(error.value), error.value.line) == (expected, line)
        out = tmp_path / "out.jsonl"
        commands = [
            (simulate.main, ["ee", str(path), str(out), "--budget", "5"], "eer-simulate: error"),
            (split.main, [str(path), str(out), str(tmp_path / "dev.jsonl")], "eer-split: error"),
        ]
        for main, argv, name in commands:  # name: how the command's errors start (main's prog, then error:)
            with pytest.raises(SystemExit) as exit_:
                main(argv)
            err = capsys.readouterr().err.strip()
            assert exit_.value.code == 1 and err == f"{name}: {expected}", err
            assert not out.exists()


def test_the_tags_in_another_column_are_named_beside_the_shape(tmp_path):
    with pytest.raises(FormatError) as error:
        read_conll(CONLL2003, tag_column=1)  # the part-of-speech column
    assert str(error.value) == (
        f"{CONLL2003}:3: expected a tag 'O' or B-/I-/L-/U-/S-/E-TYPE in column 2 of 4, got 'NNP'{COLUMN_FIX}a type "
        "without a prefix (IO tagging, 'PER PER O') reads as IOB1 once each such tag is written I-TYPE (I-NNP): one "
        "entity per run of a type"
    )
    zero = tmp_path / "zero.txt"
    zero.write_text("Paris B-LOC\nis 0\n", encoding="utf-8")
    with pytest.raises(
        FormatError, match=r"zero.txt:2: .*got '0'; that is the digit zero: outside tags are the letter O$"
    ):
        read_conll(zero)
