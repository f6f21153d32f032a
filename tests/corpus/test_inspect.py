"""eer-inspect and the readers' visible choices: span counts checked against conlleval's chunk rule
counted here (and by hand), tag scheme / encoding / grouping reports, the readers' log lines, and
the reader options of eer-inspect, eer-estimate-ratio and eer-simulate."""

import argparse
import json
import logging
from collections import Counter

import pytest
from conftest import FIXTURES

from eer_plugin.commands import estimate_ratio, inspect_data, simulate
from eer_plugin.corpus.formats import FormatError, read_documents, read_jsonl
from eer_plugin.corpus.inspection import inspect_file

INSPECT = FIXTURES / "inspect"


def conlleval_chunks(path, codec="utf-8", column=-1):
    """Chunks per type by conlleval's rule, straight from the file: a chunk starts at B- (or U-), or at
    I- after O, after another type or at a sentence start; blank and -DOCSTART- lines end sentences."""
    chunks, previous = Counter(), "O"
    for line in path.read_text(encoding=codec).splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            previous = "O"
            continue
        tag = fields[column]
        if tag != "O" and (tag[0] in "BU" or previous == "O" or previous[2:] != tag[2:] or previous[0] in "LU"):
            chunks[tag[2:]] += 1
        previous = tag
    return dict(chunks)


@pytest.mark.parametrize(
    "name, codec, scheme, by_hand",
    [
        (
            "iob1.txt",
            "utf-8",
            "IOB1",
            {"LOC": 5, "MISC": 1, "ORG": 1, "PER": 1},
        ),  # Germany | France, Britain | Spain: B- splits
        ("iob2.txt", "utf-8", "BIO", {"LOC": 3, "ORG": 1, "PER": 2}),
        ("bioul.txt", "utf-8", "BIOUL", {"LOC": 2, "ORG": 1, "PER": 1}),
        ("latin1.txt", "latin-1", "BIO", {"LOC": 1, "ORG": 1, "PER": 1}),
        ("no_docstart.txt", "utf-8", "IOB1", {"LOC": 4, "ORG": 2, "PER": 3}),  # "Real Madrid": a stray I- chunk
    ],
)
def test_span_counts_equal_conllevals(name, codec, scheme, by_hand):
    report = inspect_file(str(INSPECT / name))
    docs = read_documents(str(INSPECT / name))
    assert report["spans"] == conlleval_chunks(INSPECT / name, codec) == by_hand
    assert report["spans_total"] == sum(by_hand.values()) and report["tag_scheme"] == scheme
    assert report["tag_scheme_reason"].startswith("auto: ")
    lines = [line.split() for line in (INSPECT / name).read_text(encoding=codec).splitlines()]
    tokens = [f for f in lines if f and f[0] != "-DOCSTART-"]
    assert report["tokens"] == len(tokens) == sum(len(d.tokens) for d in docs)


def test_scheme_reasons_and_i_starts():
    iob1 = inspect_file(str(INSPECT / "iob1.txt"))
    # chunks starting with I-: EU (3), German (5), Peter (9), BRUSSELS (14), Germany (17), Britain (20)
    assert iob1["i_starts"] == 6 and [s["line"] for s in iob1["i_start_lines"]] == [3, 5, 9, 14, 17]
    assert iob1["i_start_lines"][1] == {"line": 5, "tag": "I-MISC", "after": "O"}
    assert iob1["tag_scheme_reason"] == "auto: 6 chunks start with I- after O or another type, first on line 3"
    assert iob1["warnings"] == []  # IOB1 proper: nearly every chunk starts with I-
    assert inspect_file(str(INSPECT / "bioul.txt"))["tag_scheme_reason"] == "auto: L-/U- tags, first on line 4"
    assert inspect_file(str(INSPECT / "iob2.txt"))["tag_scheme_reason"] == "auto: every chunk starts with B-"
    given = inspect_file(str(INSPECT / "iob1.txt"), encoding="IOB1")
    assert (given["tag_scheme"], given["tag_scheme_reason"]) == ("IOB1", "given")


def test_file_without_docstart_is_grouped_and_stray_i_is_reported():
    report = inspect_file(str(INSPECT / "no_docstart.txt"))
    docs = read_documents(str(INSPECT / "no_docstart.txt"))
    assert (report["documents_from"], report["group_size"], report["documents"], report["sentences"]) == (
        "grouped",
        10,
        2,
        12,
    )
    assert [len(d.sentence_ends) for d in docs] == [10, 2]
    assert report["i_start_lines"] == [{"line": 8, "tag": "I-ORG", "after": "O"}]
    assert (
        "grouped into 2 documents of 10 sentences" in report["warnings"][0]
        and "--sentences-per-document" in report["warnings"][0]
    )
    assert report["warnings"][1].startswith(
        "only 1 of 9 chunks start with I- after O or another type: the file looks like IOB2"
    )
    four = inspect_file(str(INSPECT / "no_docstart.txt"), sentences_per_document=4)
    assert (four["documents"], four["group_size"]) == (3, 4)
    with pytest.raises(FormatError, match=r"no_docstart.txt:8: .*'I-ORG'.*read the file as IOB1") as err:
        inspect_file(str(INSPECT / "no_docstart.txt"), encoding="IOB2")
    assert err.value.line == 8
    docstart = inspect_file(str(INSPECT / "iob2.txt"))
    assert (docstart["documents_from"], docstart["group_size"], docstart["documents"]) == ("docstart", None, 2)


def test_latin1_file_encoding_reported():
    report = inspect_file(str(INSPECT / "latin1.txt"))
    docs = read_documents(str(INSPECT / "latin1.txt"))
    assert (report["file_encoding"], report["file_encoding_reason"]) == (
        "latin-1",
        "auto: not valid UTF-8 (byte 0xe9 on line 3)",
    )
    assert docs[0].tokens[:2] == ["Jos\u00e9", "P\u00e9rez"]
    given = inspect_file(str(INSPECT / "latin1.txt"), file_encoding="cp1252")
    assert (given["file_encoding"], given["file_encoding_reason"]) == ("cp1252", "given")
    assert inspect_file(str(INSPECT / "iob2.txt"))["file_encoding_reason"] == "auto: valid UTF-8"


def test_tag_column_option():
    # the chunk column: EU | German call | Peter Blackburn | BRUSSELS 1996-08-22 | Germany France | Britain Spain; rejects | met
    report = inspect_file(str(INSPECT / "iob1.txt"), tag_column=2)
    assert report["spans"] == conlleval_chunks(INSPECT / "iob1.txt", column=2) == {"NP": 6, "VP": 2}


def test_partial_json_lines():
    report = inspect_file(str(INSPECT / "partial.jsonl"))
    records = [json.loads(line) for line in (INSPECT / "partial.jsonl").read_text().splitlines()]
    assert report["spans_total"] == sum(len(r["spans"]) for r in records) == 4
    assert report["spans"] == dict(Counter(s[2] for r in records for s in r["spans"]))
    assert report["negative_spans"] == sum(len(r.get("negative_spans", [])) for r in records) == 3
    assert report["complete_documents"] == sum(r["is_complete"] for r in records) == 1
    assert (report["format"], report["tag_scheme"], report["documents_from"], report["documents"]) == (
        "jsonl",
        None,
        "json_lines",
        3,
    )


def test_broken_file_names_file_line_and_reason():
    with pytest.raises(FormatError) as err:
        inspect_file(str(INSPECT / "broken.txt"))
    assert (err.value.line, err.value.path) == (6, str(INSPECT / "broken.txt")) and "got 'PLACE'" in err.value.reason


# ----------------------------------------------------------------------------------- the readers' log lines
def test_conll_reader_logs_its_choices_once_per_file(caplog):
    caplog.set_level(logging.INFO, logger="eer_plugin")
    read_documents(str(INSPECT / "iob1.txt"))
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    path = INSPECT / "iob1.txt"
    assert infos == [
        f"{path}: tag scheme IOB1 (auto: 6 chunks start with I- after O or another type, first on line 3)",
        f"{path}: character encoding utf-8 (auto: valid UTF-8)",
        f"{path}: 2 documents from -DOCSTART- lines (4 sentences)",
    ]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    caplog.clear()
    read_documents(str(INSPECT / "no_docstart.txt"), sentences_per_document=5)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert (
        len(warnings) == 1
        and "its 12 sentences were grouped into 3 documents of 5 consecutive sentences" in warnings[0]
    )
    assert "sentences_per_document / --sentences-per-document" in warnings[0]
    assert any(
        r.getMessage().endswith(
            "3 documents of up to 5 sentences (12 sentences; no -DOCSTART- line, sentences grouped)"
        )
        for r in caplog.records
        if r.levelno == logging.INFO
    )


def test_jsonl_reader_logs_encoding_and_documents(caplog):
    caplog.set_level(logging.INFO, logger="eer_plugin")
    read_jsonl(str(INSPECT / "partial.jsonl"))
    assert [r.getMessage().split(": ", 1)[1] for r in caplog.records] == [
        "character encoding utf-8 (auto: valid UTF-8)",
        "3 documents, one per JSON line (1 complete); spans as word offsets, no tag scheme",
    ]


def test_training_reader_takes_the_reader_options(tiny_encoder, caplog):
    from eer_plugin.data.reader import PartialDocumentReader

    caplog.set_level(logging.INFO, logger="eer_plugin")
    reader = PartialDocumentReader(model_name=tiny_encoder, tag_scheme="IOB1", tag_column=2, sentences_per_document=4)
    docs = reader.read_documents(str(INSPECT / "iob1.txt"))
    assert {label for d in docs for _, _, label in d.spans} == {"NP", "VP"}
    assert f"{INSPECT / 'iob1.txt'}: tag scheme IOB1 (given)" in caplog.text
    assert PartialDocumentReader(model_name=tiny_encoder, encoding="BIO").tag_scheme == "BIO"  # the old name
    with pytest.raises(ValueError, match="disagree"):
        PartialDocumentReader(model_name=tiny_encoder, encoding="BIO", tag_scheme="IOB1")


# ----------------------------------------------------------------------------------- the commands
def parse(module, *argv):
    return module.add_arguments(argparse.ArgumentParser()).parse_args([str(a) for a in argv])


def test_inspect_command_json_with_reader_options(tiny_encoder, capsys):
    from transformers import AutoTokenizer

    files = [INSPECT / "no_docstart.txt", INSPECT / "partial.jsonl"]
    reports = inspect_data.run(
        parse(
            inspect_data,
            *files,
            "--encoder",
            tiny_encoder,
            "--json",
            "--sentences-per-document",
            4,
            "--tag-scheme",
            "IOB1",
        )
    )
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == json.loads(json.dumps(reports)) and len(printed) == 2
    conll, partial = printed
    for key in ("file_encoding", "tag_scheme", "documents", "documents_from", "sentences", "tokens", "spans"):
        assert key in conll and key in partial
    assert (conll["documents"], conll["documents_from"], conll["tag_scheme_reason"]) == (3, "grouped", "given")
    tokenizer = AutoTokenizer.from_pretrained(tiny_encoder)
    subwords = [
        len(tokenizer(d.tokens, is_split_into_words=True, add_special_tokens=False)["input_ids"])
        for d in read_documents(str(files[1]))
    ]
    assert partial["longest_document_subwords"]["subwords"] == max(subwords) and partial["chunk_subwords"] == 510
    # the ratio of the one complete document (d2: one chunk), counted here with the tokenizer's word ids
    d2 = json.loads((files[1]).read_text().splitlines()[1])
    word_ids = tokenizer(d2["tokens"], is_split_into_words=True, add_special_tokens=False).word_ids()
    inside = {i for s, e, _ in d2["spans"] for i in range(s, e)}
    assert partial["subword_entity_ratio"] == pytest.approx(sum(w in inside for w in word_ids) / len(word_ids))


def test_inspect_command_broken_file_exits_1_after_the_others(tiny_encoder, capsys):
    with pytest.raises(SystemExit) as exit_:
        inspect_data.main([str(INSPECT / "broken.txt"), str(INSPECT / "iob2.txt"), "--encoder", "none"])
    assert exit_.value.code == 1
    out, err = capsys.readouterr()
    assert f"eer-inspect: error: {INSPECT / 'broken.txt'}:6: expected a tag" in err
    assert (
        "tag scheme          BIO (auto: every chunk starts with B-)" in out
        and "entity spans        6 (LOC 3, ORG 1, PER 2)" in out
    )


def test_inspect_command_runs_with_the_default_encoder(capsys):
    inspect_data.run(parse(inspect_data, INSPECT / "latin1.txt"))
    out = capsys.readouterr().out
    assert "character encoding  latin-1 (auto: not valid UTF-8 (byte 0xe9 on line 3))" in out
    assert "(all-MiniLM-L6-v2, the package's default encoder; bookends excluded)" in out
    assert "subwords (document latin1-0" in out and "of a chunk's 510" in out


def test_estimate_ratio_runs_without_encoder_and_takes_reader_options(capsys):
    data = INSPECT / "no_docstart.txt"
    result = estimate_ratio.run(parse(estimate_ratio, data, "--resamples", 50))
    out = capsys.readouterr().out
    assert out.startswith("encoder: all-MiniLM-L6-v2 (the package's default encoder; choose another with --encoder)")
    assert result["encoder"] == "all-MiniLM-L6-v2" and result["documents"] == 2  # groups of 10 sentences
    grouped = estimate_ratio.run(
        parse(estimate_ratio, data, "--resamples", 50, "--sentences-per-document", 3, "--tag-scheme", "IOB1")
    )
    assert grouped["documents"] == 4 and grouped["subwords"] == result["subwords"]
    chunks = estimate_ratio.run(parse(estimate_ratio, INSPECT / "iob1.txt", "--resamples", 50, "--tag-column", 2))
    assert set(chunks["per_type"]) == {"NP", "VP"}


def test_simulate_takes_the_reader_options(tmp_path, capsys):
    out = tmp_path / "gold.jsonl"
    simulate.main(
        [
            "gold",
            str(INSPECT / "no_docstart.txt"),
            str(out),
            "--sentences-per-document",
            "6",
            "--tag-column",
            "1",
            "--tag-scheme",
            "IOB1",
        ]
    )
    docs = read_jsonl(str(out))
    assert len(docs) == 2 and sum(len(d.spans) for d in docs) == 9
    with pytest.raises(SystemExit):
        simulate.build_parser().parse_args(["gold", "a", "b", "--tag-scheme", "IOB3"])
    assert "unknown tag encoding 'IOB3'" in capsys.readouterr().err


def test_benchmark_dataset_entries_take_the_reader_options(tmp_path, tiny_encoder, monkeypatch):
    """A dataset entry's reader options reach the simulator's gold reading and, through EER_*, the configs' reader."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader
    from conftest import REPO

    from eer_benchmark import PlanError, Runner, parse_plan
    from eer_benchmark.run.simulated import SimulatedData

    gold = str(INSPECT / "no_docstart.txt")
    entry = {
        "name": "es",
        "train": gold,
        "dev": gold,
        "test": gold,
        "tag_scheme": "IOB1",
        "sentences_per_document": 4,
        "tag_column": -1,
        "file_encoding": "utf-8",
    }
    plan = parse_plan(
        {
            "datasets": [entry],
            "scenarios": [{"name": "EE", "type": "ee", "budget": 5}],
            "approaches": ["eer_short"],
            "encoders": [tiny_encoder],
        }
    ).expand()
    run = plan.runs[0]
    env = Runner(plan, str(tmp_path / "bench")).environment(
        run
    )  # the subprocess environment: environment settings only
    assert {
        k: env[k] for k in ("EER_TAG_SCHEME", "EER_SENTENCES_PER_DOCUMENT", "EER_TAG_COLUMN", "EER_FILE_ENCODING")
    } == {
        "EER_TAG_SCHEME": "IOB1",
        "EER_SENTENCES_PER_DOCUMENT": "4",
        "EER_TAG_COLUMN": "-1",
        "EER_FILE_ENCODING": "utf-8",
    }
    assert len(SimulatedData(tmp_path)._gold(gold, run.dataset)) == 3  # 12 sentences in groups of 4
    for key, value in env.items():
        if key.startswith("EER_"):
            monkeypatch.setenv(key, value)
    monkeypatch.setenv(
        "EER_TRAIN_DATA", gold
    )  # the simulated file is not written here; the config checks that data exist
    config = Params.from_file(str(REPO / "training_configs" / "eer_short.jsonnet"))
    reader = DatasetReader.from_params(config.pop("validation_dataset_reader"))
    assert (reader.tag_scheme, reader.sentences_per_document, reader.file_encoding) == ("IOB1", 4, "utf-8")
    assert len(reader.read_documents(gold)) == 3
    with pytest.raises(
        PlanError, match="dataset 'es': 'sentences_per_document' must be a whole number \\(at least 1\\), got 0"
    ):
        parse_plan({**plan_data_of(entry, sentences_per_document=0)})
    with pytest.raises(PlanError, match="dataset 'es': 'tag_scheme': unknown tag encoding 'IOB3'"):
        parse_plan({**plan_data_of(entry, tag_scheme="IOB3")})
    with pytest.raises(
        PlanError, match="EER_TAG_SCHEME is set by the runner from the plan's datasets\\[\\].tag_scheme"
    ):
        parse_plan({**plan_data_of(entry), "env": {"EER_TAG_SCHEME": "BIO"}})


def plan_data_of(entry, **changes):
    return {
        "datasets": [{**entry, **changes}],
        "scenarios": [{"name": "EE", "type": "ee"}],
        "approaches": ["eer_short"],
    }


def test_words_the_encoder_sees_only_as_unknown_are_counted_and_the_first_is_named(tmp_path, capsys):
    """Words whose characters the default encoder's tokenizer has no subword for (symbols outside its vocabulary)
    or drops (invisible format characters, a lone combining mark) reach the model as [UNK]: eer-inspect counts
    them, as the tokenizer itself decides for each word, and names the first by its code points."""
    import random

    from transformers import AutoTokenizer

    from eer_plugin.runtime.encoders import DEFAULT_ENCODER, resolve_model_name

    pool = [
        "Paris",
        "John",
        "visited",
        "\u200b",
        "\u00ad",
        "\u2060\u2060",
        "\ufeff",
        "\u0301",
        "☃",
        "🙂",
        "Zürich",
        "3.5",
    ]
    draw = random.Random(7)
    documents = [
        {"id": f"d{n}", "tokens": [draw.choice(pool) for _ in range(draw.randint(1, 12))], "spans": []}
        for n in range(40)
    ]
    path = tmp_path / "words.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_name(DEFAULT_ENCODER))
    unknown = [
        (d["id"], i, word)
        for d in documents
        for i, word in enumerate(d["tokens"])
        if tokenizer.tokenize(word) in ([], [tokenizer.unk_token])
    ]
    assert {w for _, _, w in unknown} >= {"\u200b", "\ufeff", "☃"} and "Paris" not in {w for _, _, w in unknown}
    (report,) = inspect_data.run(parse(inspect_data, path, "--json"))
    words = sum(len(d["tokens"]) for d in documents)
    first_id, position, word = unknown[0]
    assert report["unknown_words"] == {
        "words": len(unknown),
        "first": {
            "word": word,
            "position": position,
            "document": first_id,
            "source": f"{path}:{int(first_id[1:]) + 1}",
        },
    }
    codes = " ".join(f"U+{ord(c):04X}" for c in word)
    shown = f"'{word}' ({codes})" if word.isprintable() else codes
    assert report["warnings"][-1].startswith(
        f"{len(unknown)} of {words} words ({len(unknown) / words:.1%}) reach all-MiniLM-L6-v2 only as its unknown "
        f"subword (its tokenizer has none for their characters, or drops them), first {shown} at word {position} of "
        f"document {first_id} ({path}:{int(first_id[1:]) + 1})"
    )
    clean = tmp_path / "clean.jsonl"
    clean.write_text(json.dumps({"id": "a", "tokens": ["Paris", "Zürich"], "spans": []}) + "\n", encoding="utf-8")
    (report,) = inspect_data.run(parse(inspect_data, clean, "--json"))
    assert report["unknown_words"]["words"] == 0 and not any("unknown subword" in w for w in report["warnings"])
