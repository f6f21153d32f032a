"""Each default of eer-simulate is declared once, in the simulators' signatures: the command leaves an option it
was not given to the library (:mod:`eer_plugin.annotation.scenarios`), and ``--help`` shows the library's value."""

import inspect

from conftest import FIXTURES

from eer_plugin.annotation import scenarios, simulators
from eer_plugin.commands import simulate
from eer_plugin.corpus.formats import read_documents

GOLD = str(FIXTURES / "conll2003_tiny.txt")


def test_the_help_shows_the_simulators_own_defaults():
    help_text = " ".join(simulate.build_parser().format_help().split())
    for option, function in [
        ("budget", simulators.exploratory_expert),
        ("keep_probability", simulators.exploratory_expert),
        ("max_per_document", simulators.exploratory_expert),
        ("recall", simulators.non_native_speaker),
        ("precision", simulators.non_native_speaker),
        ("max_fp_length", simulators.non_native_speaker),
        ("seed", simulators.non_native_speaker),
    ]:
        default = inspect.signature(function).parameters[option].default
        assert scenarios.DEFAULTS[option] == default
        flag = "--" + option.replace("_", "-")
        shown = help_text.split(flag + " ")[2] if help_text.count(flag + " ") > 1 else help_text.split(flag)[-1]
        assert f"default {default}" in shown[:200], (flag, shown[:200])
    assert "(default all)" in help_text and simulate.build_parser().parse_args(["gold", "a", "b"]).variant == "all"


def test_options_left_out_are_the_simulators_defaults():
    docs = read_documents(GOLD)
    ((path, documents, stats),) = scenarios.simulate("nns", docs, "out.jsonl")
    direct = simulators.non_native_speaker(docs)
    assert str(path) == "out.jsonl" and stats == direct[1]
    assert [d.spans for d in documents] == [d.spans for d in direct[0]]
    ((_, documents, stats),) = scenarios.simulate("ee", docs, "out.jsonl", budget=20)
    direct = simulators.exploratory_expert(docs, 20)  # the keep probability, cap and seed left to the simulator
    assert stats == direct[1] and [d.spans for d in documents] == [d.spans for d in direct[0]]
    ((_, documents, _),) = scenarios.simulate("ee", docs, "out.jsonl", budget=3, seed=1)
    assert [d.spans for d in documents] == [d.spans for d in simulators.exploratory_expert(docs, 3, seed=1)[0]]
