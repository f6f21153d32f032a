"""Each default of a command-line option is declared once, in the library, and ``--help`` shows it.

eer-simulate's are the simulators' signatures: the command leaves an option it was not given to the library
(:mod:`eer_plugin.annotation.scenarios`). Every registered subcommand of both packages (and the options the plugin
adds to AllenNLP's ``train`` and ``predict``) reads its defaults with :func:`eer_plugin.commands.defaults.add_option`
from a library signature or constant: the generic test below builds each parser and checks each option."""

import inspect
import re

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


# --- every registered subcommand of this repository (eer_plugin and the benchmark beside it) -------------------------

#: subcommands the plugin registers (or whose parser it extends); the test below finds them all itself, this list
#: only makes sure that it finds them (a test that found none would pass)
KNOWN = {"eer-simulate", "eer-dictionary", "eer-import", "eer-export", "eer-estimate-ratio", "eer-inspect", "serve"}
KNOWN |= {"eer-split", "eer-shard", "eer-merge", "tune-o-cost", "cbl", "train", "predict", "eer-benchmark"}
KNOWN |= {"eer-records", "eer-settings", "eer-export-model"}
OURS = ("eer_plugin", "eer_benchmark")
COMMAND_MODULES = ("eer_plugin.commands", "eer_benchmark.commands", "eer_plugin.serve.command")


def _ours(function) -> bool:
    return function.__module__.split(".")[0] in OURS


def registered_subcommands():
    """``{name: Subcommand class}`` of every subcommand whose parser this repository defines or extends."""
    from allennlp.commands.subcommand import Subcommand

    return {name: cls for name, (cls, _) in Subcommand._registry[Subcommand].items() if _ours(cls.add_subparser)}


def _subparser(add_subparser, name):
    """The subcommand's parser as ``eer-ner NAME`` builds it (AllenNLP's parser class)."""
    from allennlp.commands import ArgumentParserWithDefaults
    from allennlp.commands.subcommand import Subcommand

    subcommand = Subcommand.by_name(name)()
    return add_subparser(subcommand, ArgumentParserWithDefaults(prog="eer-ner").add_subparsers())


def _allennlps_own(cls, name):
    """The dests of the options AllenNLP's own subcommand defines (``train``, ``predict``: the plugin only adds)."""
    original = getattr(cls.add_subparser, "__wrapped__", None)
    if original is None:
        bases = [b for b in cls.__mro__[1:] if b.__module__.startswith("allennlp.") and "add_subparser" in vars(b)]
        original = bases[0].add_subparser if bases and bases[0].__name__ != "Subcommand" else None
    return set() if original is None else {a.dest for a in _subparser(original, name)._actions}


def _parsers(parser, prefix):
    import argparse

    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice, subparser in action.choices.items():
                yield from _parsers(subparser, f"{prefix} {choice}")


def _empty(value) -> bool:
    import argparse

    return value is None or value is argparse.SUPPRESS or (isinstance(value, (str, list, tuple)) and not value)


def problems_of(parser, path: str, own=frozenset()):
    """What is wrong with the defaults of ``parser``'s options (and its subcommands'), leaving out ``own``
    (AllenNLP's options, by dest), flags (store_true, help, ...) and positionals; and how many were checked."""
    from eer_plugin.commands.defaults import declared, owner_module

    checked, problems = 0, []
    for where_, each in _parsers(parser, path):
        formatter = each._get_formatter()
        for action in each._actions:
            if action.dest in own or action.nargs == 0 or not action.option_strings:
                continue
            where = f"{where_} {'/'.join(action.option_strings)}"
            source = getattr(action, "declared_in", None)
            if source is None:
                if not _empty(action.default):
                    problems.append(f"{where}: default {action.default!r} is not read from the library")
                elif re.search(r"default:? '?-?\d", action.help or ""):  # a number the command applies itself
                    problems.append(f"{where}: its help names a default the library does not declare: {action.help!r}")
                continue
            checked += 1
            if owner_module(source).startswith(COMMAND_MODULES):
                problems.append(f"{where}: default declared in the command module {owner_module(source)}")
            value = declared(*source)
            if action.default != (None if action.given_only else value):
                problems.append(f"{where}: parses to {action.default!r}, the library declares {value!r}")
            shown = " ".join(formatter._expand_help(action).split()) if action.help else ""
            if not _empty(value) and (str(value) not in shown or "default" not in shown):
                problems.append(f"{where}: --help does not show the default {value!r}: {shown!r}")
            if "(default = " in shown:  # AllenNLP's parser appended it a second time
                problems.append(f"{where}: --help shows the default twice: {shown!r}")
    return checked, problems


def test_every_subcommand_finds_its_defaults_in_the_library_and_shows_them():
    """Every option of every registered subcommand that has a default (not a flag, not None or empty: "not given")
    reads it from the library (:func:`eer_plugin.commands.defaults.add_option`: a signature or a named constant
    outside the command modules), has it as its parsed default, and shows it in ``--help``. A command added with a
    literal default, or a default left out of its help, fails here."""
    found = registered_subcommands()
    assert KNOWN <= set(found), sorted(KNOWN - set(found))
    checked, problems = 0, []
    for name, cls in sorted(found.items()):
        count, wrong = problems_of(_subparser(cls.add_subparser, name), name, _allennlps_own(cls, name))
        checked, problems = checked + count, problems + wrong
    assert not problems, "\n".join(problems)
    assert checked >= 20


def test_the_check_sees_a_literal_default_and_a_default_the_help_hides():
    """What the generic check reports: a default written in the command, a number in the help of an option the
    command fills in itself, a default its help hides and one "declared" in a command module."""
    import argparse

    from eer_plugin.commands.defaults import add_option

    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=3, help="n (default %(default)s)")
    parser.add_argument("--m", type=int, default=None, help="m (default 4)")
    add_option(parser, "--seed", default_from=(simulators.exploratory_expert, "seed"), help="random seed")
    add_option(parser, "--recall", default_from=(simulators.non_native_speaker, "recall"), help="(default %(default)s)")
    add_option(
        parser,
        "--budget",
        default_from=(simulators.exploratory_expert, "budget"),
        given_only=True,
        help="(default %(default)s)",
    )
    add_option(parser, "--name", default_from=(simulate, "NAME"), help="(default %(default)s)")
    checked, problems = problems_of(parser, "test")
    assert checked == 4 and len(problems) == 4, problems
    assert "--n: default 3 is not read from the library" in problems[0]
    assert "--m: its help names a default" in problems[1] and "--seed: --help does not show" in problems[2]
    assert "--name: default declared in the command module eer_plugin.commands.simulate" in problems[3]
    arguments = parser.parse_args([])
    assert arguments.budget is None and arguments.recall == scenarios.DEFAULTS["recall"]
    assert f"(default {scenarios.DEFAULTS['budget']})" in " ".join(parser.format_help().split())
