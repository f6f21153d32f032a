"""The arguments of ``evaluate`` and ``cbl`` that cannot work, generated, refused in one line before anything is
loaded (the model archive and the config given here do not exist: the argument's error comes first): an
``-o/--overrides`` that is no JSON object (malformed JSON or jsonnet, a list, a number, a string, null: a traceback
or an error blaming the archive's config.json before), an ``evaluate --batch-size`` below 1 or beyond any index
(0 silently fell back to the config's, -1 and 10**20 were tracebacks)."""

import json

import pytest

BAD_OVERRIDES = ["{bad", "{", "[1, 2]", "1", '"text"', "null", '{"a": }', "{a: b c}", "x" * 5000, '{"a": 1}{'] + [
    json.dumps([{"model.o_cost": 1.5}])
]


def _cli(argv, capsys):
    from eer_plugin import cli

    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exit:  # the plugin's own subcommands (cbl) exit with their status
        status = exit.code
    err = capsys.readouterr().err
    return status, [line for line in err.splitlines() if line.strip()], err


@pytest.mark.parametrize("command", ["evaluate", "cbl"])
def test_overrides_that_are_no_json_object_are_one_line_before_loading(command, tmp_path, capsys):
    for value in BAD_OVERRIDES:
        if command == "evaluate":
            argv = ["evaluate", tmp_path / "model.tar.gz", tmp_path / "test.txt", "-o", value]
        else:
            argv = ["cbl", tmp_path / "cbl.jsonnet", "-s", tmp_path / "run", "-o", value]
        status, lines, err = _cli(argv, capsys)
        assert status == 1 and len(lines) == 1 and "Traceback" not in err, (value, err[-2000:])
        assert lines[0].startswith(f"eer-ner {command}: error: -o/--overrides ") and "config.json" not in lines[0], (
            value,
            lines,
        )
        assert len(lines[0]) < 1200, lines[0]
    assert not (tmp_path / "run").exists()


def test_overrides_that_are_json_objects_pass():
    from eer_plugin.commands.overrides import check_overrides

    for value in ["", None, "{}", '{"model.o_cost": 1.5}', '{"model": {"o_cost": std.extVar("HOME") != ""}}']:
        check_overrides(value)


def test_an_evaluate_batch_size_below_one_or_beyond_any_index_is_one_line(tmp_path, capsys):
    for value in ["0", "-1", str(2**63), str(10**20)]:
        argv = ["evaluate", tmp_path / "model.tar.gz", tmp_path / "test.txt", f"--batch-size={value}"]
        status, lines, err = _cli(argv, capsys)
        assert (
            status == 1
            and lines == [lines[0]]
            and lines[0].startswith(f"eer-ner evaluate: error: --batch-size {value}: ")
        ), err


def test_evaluate_needs_data_and_one_output_per_data_file(tmp_path, capsys):
    data = ",".join(str(tmp_path / f"test{i}.txt") for i in range(3))
    cases = [[",", "--output-file", tmp_path / "m.json"], [""]]
    cases += [
        [data, option, ",".join(str(tmp_path / f"o{i}") for i in range(n))]
        for n in (1, 2, 4)
        for option in ("--output-file", "--predictions-output-file")
    ]
    for case in cases:
        status, lines, err = _cli(["evaluate", tmp_path / "model.tar.gz", *case], capsys)
        assert status == 1 and len(lines) == 1 and "Traceback" not in err, (case, err[-2000:])
        assert "no evaluation data file" in lines[0] or "give one per evaluation file" in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == []
