"""``allennlp eer-simulate``: simulate partial annotation of a gold corpus (paper, "Simulated
Annotation Scenarios"). A thin wrapper of :mod:`eer_plugin.commands.simulate_cli`, which also runs
without AllenNLP as ``python -m eer_plugin.simulate``."""
import argparse

from allennlp.commands.subcommand import Subcommand

from eer_plugin.commands import simulate_cli


@Subcommand.register(simulate_cli.NAME)
class Simulate(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = parser.add_parser(self.name, description=simulate_cli.DESCRIPTION, help=simulate_cli.DESCRIPTION)
        simulate_cli.add_arguments(subparser)
        subparser.set_defaults(func=simulate_cli.run_or_exit)
        return subparser
