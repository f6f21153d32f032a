"""``-o/--overrides`` that is wrong for a model archive's config (``evaluate``, ``predict``, any ``load_archive`` of
the plugin): one line naming the override, never the archive's ``config.json`` (which the user did not write and
which is fine). Generated from the archive's own config: every setting of its model and reader given a value of
every other JSON type, a key under each object that it lacks, each object replaced whole by one of its settings
(an override replaces, it does not merge), keys under a key the config lacks or under a number, and top-level keys
no model's config is read for."""

import json
import tarfile

import pytest

from eer_plugin.common.errors import UserError

#: a value of each JSON type (and out of every range: a negative length, an empty name)
VALUES = ["x", "", -5, 2.5, True, None, [1], {"a": 1}]


def _config(archive) -> dict:
    with tarfile.open(archive) as packed:
        member = next(m for m in packed.getmembers() if m.name.lstrip("./") == "config.json")
        return json.loads(packed.extractfile(member).read())


def _leaves(value, path=""):
    """``(dotted key, value)`` of every setting below ``value`` (a config object)."""
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        if isinstance(item, dict) and item:
            yield from _leaves(item, where)
        else:
            yield where, item


def _objects(value, path=""):
    """``(dotted key, object)`` of every object below ``value``, itself included."""
    yield path, value
    for key, item in value.items():
        if isinstance(item, dict):
            yield from _objects(item, f"{path}.{key}" if path else key)


def _wrong_overrides(config):
    """``(override, what is expected)``: ``may`` build (a number for another number: it then loads), is ``refused``
    (a key no part is read for or takes, a key under one the config lacks or under a number), or ``replaces`` an
    object whole (it may build: a reader of other defaults; when it does not, the message says what it dropped)."""
    cases = []
    for part in ("model", "dataset_reader"):
        for key, value in _leaves(config[part], part):
            others = [v for v in VALUES if v != value]
            if key.endswith("model_name"):  # a name that is no path would be looked up on the Hugging Face hub
                others = ["./no/such/encoder" if v == "x" else v for v in others if v != ""]
            cases += [({key: other}, "may") for other in others]
        for key, settings in _objects(config[part], part):
            cases.append(({f"{key}.no_such_setting": 1}, "refused"))
            if len(settings) > 1:
                first = next(iter(settings))
                cases.append(({key: {first: settings[first]}}, "replaces"))
    cases += [
        ({"no_such": 1}, "refused"),
        ({"no_such.key": 1}, "refused"),
        ({"no_such_part": {"type": "x"}}, "refused"),
    ]
    cases += [({f"{key}.below": 1}, "refused") for key in sorted(config) if not isinstance(config[key], (dict, list))]
    return cases


def _refused_naming_the_override(error: BaseException, override: dict, archive) -> str:
    message = str(error)
    assert isinstance(error, UserError), (override, type(error).__name__, message)
    assert message.startswith(f"-o/--overrides {json.dumps(override)}: "), (override, message)
    assert "\n" not in message and "does not build its" not in message and "edited" not in message, message
    return message


@pytest.mark.integration  # loads every command or model once per case
def test_every_wrong_override_loads_or_is_one_line_naming_it(archive):
    """Through the loader every model command and the Python API share (load_model_archive: AllenNLP's
    load_archive with the plugin's checks)."""
    from eer_plugin.runtime.archive import load_model_archive

    refused = 0
    for override, expected in _wrong_overrides(_config(archive)):
        try:
            load_model_archive(archive, overrides=json.dumps(override))
        except Exception as error:  # noqa: BLE001  (what it raises is what is checked)
            message = _refused_naming_the_override(error, override, archive)
            key = next(iter(override))
            if expected == "replaces":
                assert f"{key!r} replaces the whole {key!r} of {archive}'s config" in message, message
            elif "sets nothing" not in message:
                assert f"{key}=" in message and f"not {archive}'s config.json" in message, message
            refused += 1
        else:
            assert expected != "refused", override
    assert refused > 20


@pytest.mark.integration  # evaluate and predict load the model once per case
@pytest.mark.parametrize(
    "override, says",
    [
        ({"model": {"dropout": "x"}}, "'model' replaces the whole 'model' of"),
        ({"model.dropout": "x"}, 'the override model.dropout="x" is what changed it, not'),
        ({"model.no_such": 1}, "unexpected keyword argument 'no_such'"),
        ({"dataset_reader.max_length": "x"}, "the dataset reader of"),
        ({"no_such": 1}, "'no_such' sets nothing: a model's config has no such key"),
        ({"no_such.key": 1}, "'no_such.key' sets nothing: the config has no 'no_such'"),
    ],
)
def test_evaluate_and_predict_name_the_override(override, says, archive, tmp_path, capsys):
    from eer_plugin import cli

    (tmp_path / "docs.jsonl").write_text('{"id": "a", "text": "John Smith visited London."}\n')
    for argv in (
        ["evaluate", archive, tmp_path / "docs.jsonl", "--output-file", tmp_path / "metrics.json"],
        ["predict", archive, tmp_path / "docs.jsonl", "--predictor", "eer_tagger", "--output-file", tmp_path / "out"],
    ):
        status = cli.main([str(a) for a in argv] + ["-o", json.dumps(override)])
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert status == 1 and len(lines) == 1 and says in lines[0], (argv[0], lines)
        assert (
            lines[0].startswith(f"eer-ner {argv[0]}: error: -o/--overrides {json.dumps(override)}: ")
            and "edited" not in lines[0]
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs.jsonl"]


def test_an_override_that_builds_still_applies(archive):
    from eer_plugin.runtime.archive import load_model_archive

    loaded = load_model_archive(archive, overrides=json.dumps({"model.o_cost": 1.5, "dataset_reader.max_length": 20}))
    assert loaded.model.o_cost == 1.5 and loaded.dataset_reader.max_length == 20
