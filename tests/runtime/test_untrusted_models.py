"""A model from someone else is untrusted input: any value in any setting of an export, or an archive whose
config or vocabulary was edited, loads and tags exactly, or is one :class:`ArchiveError` (or ``UserError``) at
load, never an exception of another kind and never an error on every document tagged later.

The classes: the export's settings (``eer_tagger.json``) with a generated value of any JSON type in one key, the
encoder's ``config.json`` and ``tokenizer_config.json`` with a generated value in one key that shapes the
subwords (their count, the chunk length, the bookends, the tokenizer class); archives whose reader names another
encoder or an encoder that is gone, whose vocabulary repeats a label, whose chunks are too short, whose
``o_cost`` jsonnet wrote as an integer of 309 digits."""

import json
import math
import shutil
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_model_checks import relabelled

from eer_plugin.common.errors import ArchiveError, UserError

TEXT = "John Smith visited New York. He met the mayor of London! " * 4
#: JSON values of every type, with the shapes of the settings (lists of booleans, lists of lists)
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.integers(-4, 40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(["fp32", "bf16", "int8", "O", "PER", "eer-ner exported tagger"]),
    st.lists(st.one_of(st.booleans(), st.integers(-1, 2), st.sampled_from(["PER", "LOC", "O", ""])), max_size=10),
    st.lists(st.lists(st.booleans(), min_size=9, max_size=9), min_size=9, max_size=9),
    st.lists(st.lists(st.one_of(st.booleans(), st.integers(0, 5)), max_size=9), max_size=9),
)
SETTING_KEYS = [
    "format_version", "entity_types", "tags", "allowed_transitions", "allowed_start", "allowed_end", "o_cost",
    "precision", "max_length", "sentence_level", "encoder", "entity_ratio",
]  # fmt: skip
ENCODER_KEYS = [
    ("config.json", "max_position_embeddings"), ("config.json", "vocab_size"), ("config.json", "type_vocab_size"),
    ("tokenizer_config.json", "model_max_length"), ("tokenizer_config.json", "cls_token"),
    ("tokenizer_config.json", "sep_token"), ("tokenizer_config.json", "pad_token"),
    ("tokenizer_config.json", "do_lower_case"), ("tokenizer_config.json", "tokenizer_class"),
]  # fmt: skip
TOKENIZER_CLASSES = st.sampled_from(["RobertaTokenizer", "GPT2Tokenizer", "BertTokenizer", "XLNetTokenizer", "Nope"])


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    from eer_plugin.models.export import export_model

    directory = tmp_path_factory.mktemp("export") / "tagger"
    export_model(archive, directory)
    return directory


def edited_copy(exported, directory, name: str, key: str, value):
    copy = directory / uuid.uuid4().hex
    shutil.copytree(exported, copy)
    path = copy / name
    path.write_text(json.dumps({**json.loads(path.read_text()), key: value}))
    return copy


def loads_and_tags_or_refuses(copy) -> str:
    """``"tagged"`` when the model loads and tags :data:`TEXT` exactly, ``"refused"`` for one ArchiveError line."""
    from eer_plugin.api import Tagger

    try:
        tagger = Tagger.load(copy)
    except ArchiveError as error:
        assert "\n" not in str(error) and str(copy) in str(error)
        return "refused"
    output = tagger(TEXT)  # a model that loads tags: never a failure on every document
    for span in output["spans"]:
        assert span["type"] in tagger.entity_types and span["text"] == TEXT[span["char_start"] : span["char_end"]]
        assert math.isfinite(span["probability"]) and 0.0 <= span["probability"] <= 1.0
    return "tagged"


@given(key=st.sampled_from(SETTING_KEYS), value=VALUES)
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_any_value_of_any_export_setting_loads_and_tags_or_is_one_archive_error(key, value, exported, tmp_path_factory):
    copy = edited_copy(exported, tmp_path_factory.mktemp("edited"), "eer_tagger.json", key, value)
    loads_and_tags_or_refuses(copy)
    shutil.rmtree(copy)


@given(file_key=st.sampled_from(ENCODER_KEYS), value=VALUES, tokenizer_class=TOKENIZER_CLASSES)
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_any_value_of_the_encoders_subword_settings_loads_and_tags_or_is_one_archive_error(
    file_key, value, tokenizer_class, exported, tmp_path_factory
):
    name, key = file_key
    value = tokenizer_class if key == "tokenizer_class" else value
    copy = edited_copy(exported, tmp_path_factory.mktemp("edited"), f"encoder/{name}", key, value)
    loads_and_tags_or_refuses(copy)
    shutil.rmtree(copy)


@pytest.mark.parametrize(
    "name, key, value, message",
    [
        ("eer_tagger.json", "allowed_start", [True] * 9, "the CRF grammar .* is not the BILUO grammar of its 9 tags"),
        ("eer_tagger.json", "allowed_start", [5] * 9, "the CRF grammar .* is not the BILUO grammar of its 9 tags"),
        (
            "eer_tagger.json",
            "allowed_transitions",
            [["x"] * 9] * 9,
            "the CRF grammar .* is not the BILUO grammar of its 9 tags",
        ),
        ("eer_tagger.json", "entity_types", [1, 2], "'entity_types': entity types must be strings"),
        ("eer_tagger.json", "entity_types", ["PER", "PER"], "'entity_types': entity types must be distinct"),
        ("eer_tagger.json", "precision", "int8", "'precision': precision must be one of"),
        ("encoder/tokenizer_config.json", "model_max_length", 2, "chunks of at most 2 subwords"),
        ("encoder/tokenizer_config.json", "tokenizer_class", "RobertaTokenizer", "the tokenizer cannot split words"),
        ("encoder/tokenizer_config.json", "cls_token", None, "expected one start and one end special token"),
    ],
)
def test_an_export_whose_files_do_not_go_together_is_refused_at_load(name, key, value, message, exported, tmp_path):
    from eer_plugin.api import Tagger

    copy = edited_copy(exported, tmp_path, name, key, value)
    with pytest.raises(ArchiveError, match=message):
        Tagger.load(copy)


@pytest.mark.parametrize("key", ["o_cost", "entity_ratio", "ratio_margin"])
def test_a_number_too_large_for_a_float_in_the_export_settings_is_one_archive_error(key, exported, tmp_path):
    """A whole number of 400 digits is finite, but no float holds it: refused as a number that is not finite."""
    from eer_plugin.api import Tagger

    copy = edited_copy(exported, tmp_path, "eer_tagger.json", key, 10**400)
    with pytest.raises(ArchiveError, match=f"'{key}' is 1000.*, not a finite number"):
        Tagger.load(copy)


@pytest.mark.parametrize("key", ["max_position_embeddings", "vocab_size", "type_vocab_size"])
@pytest.mark.parametrize("value", [2**63, 2**40, -1])
def test_an_encoder_config_torch_cannot_build_is_one_archive_error_line(key, value, exported, tmp_path):
    """Sizes torch refuses with a multi-line C++ trace (found by the generated test above): one line still."""
    assert loads_and_tags_or_refuses(edited_copy(exported, tmp_path, "encoder/config.json", key, value)) == "refused"


def test_an_export_whose_chunks_are_longer_than_its_encoders_positions_is_refused(exported, tmp_path):
    from eer_plugin.api import Tagger

    copy = edited_copy(exported, tmp_path, "encoder/tokenizer_config.json", "model_max_length", 10**6)
    settings = json.loads((copy / "eer_tagger.json").read_text())
    (copy / "eer_tagger.json").write_text(json.dumps({**settings, "max_length": 600}))
    with pytest.raises(ArchiveError, match="its chunks have up to 600 subwords, its encoder has 512 positions"):
        Tagger.load(copy)


def test_an_export_whose_tokenizer_has_more_subwords_than_its_encoder_is_refused(exported, tmp_path):
    from eer_plugin.api import Tagger

    copy = tmp_path / "copy"
    shutil.copytree(exported, copy)
    path = copy / "encoder" / "tokenizer.json"
    tokenizer = json.loads(path.read_text())
    vocabulary = tokenizer["model"]["vocab"]
    vocabulary.update({f"zz{i}": len(vocabulary) + i for i in range(100)})
    path.write_text(json.dumps(tokenizer))
    with pytest.raises(ArchiveError, match=r"its tokenizer has \d+ subwords, its encoder embeds \d+"):
        Tagger.load(copy)


def _reader_encoder(name):
    def edit(config):
        config["dataset_reader"]["model_name"] = name

    return edit


def _both_encoders(name):
    def edit(config):
        config["dataset_reader"]["model_name"] = name
        config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["model_name"] = name

    return edit


@pytest.mark.parametrize(
    "edit, error, message",
    [
        (
            _reader_encoder("all-MiniLM-L6-v2"),
            UserError,
            r"the model's dataset reader tokenizes for another encoder \('all-MiniLM-L6-v2'; its tokenizer has 30522",
        ),
        (
            _both_encoders("/no/such/encoder"),
            ArchiveError,
            "the encoder its config.json names, /no/such/encoder: no such directory",
        ),
        *(
            (
                lambda c, n=n: c["dataset_reader"].update(max_length=n),
                ArchiveError,
                rf"dataset_reader\.max_length must be an integer of at least 3 .*, got {n}\)",
            )
            for n in (2, -5)
        ),
    ],
)
def test_an_edited_archive_is_one_line_at_load_not_an_error_per_document(edit, error, message, archive, tmp_path):
    from eer_plugin.api import Tagger

    with pytest.raises(error, match=message) as raised:
        Tagger.load(relabelled(archive, tmp_path, "edited", edit))
    assert "\n" not in str(raised.value)


def test_an_o_cost_jsonnet_wrote_as_an_integer_and_a_repeated_label_still_tag(archive, tmp_path):
    """1e308 in config.json is an int of 309 digits after jsonnet, which decoding could not subtract from float
    scores; a vocabulary whose labels.txt repeats a label has an index with no line of its own."""
    import io
    import tarfile

    from eer_plugin.api import Tagger

    edited = relabelled(archive, tmp_path, "o-cost", lambda c: c["model"].update(o_cost=10**308))
    output = Tagger.load(edited)(TEXT)
    assert output["spans"] and all(math.isfinite(span["probability"]) for span in output["spans"])
    repeated = tmp_path / "repeated.tar.gz"
    with tarfile.open(archive) as source, tarfile.open(repeated, "w:gz") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            if member.name.lstrip("./") == "vocabulary/labels.txt":
                data = data.replace(b"B-PER", b"B-LOC")
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    assert Tagger.load(repeated)(TEXT) == Tagger.load(archive)(TEXT)
