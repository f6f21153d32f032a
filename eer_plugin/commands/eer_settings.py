"""``eer-ner eer-settings``: every ``EER_*`` setting with its default and meaning: the environment settings
with the value set here, the hyperparameters with the ``-o`` key that changes them (and a warning where
one is set as an environment variable, which no config reads).

The same listing ends ``eer-ner train --help`` (:func:`install` adds it there), with the packaged
configs that ``train`` finds by name. Both come from the table of :mod:`eer_plugin.runtime.settings`.
"""

import argparse
import os
import textwrap

from eer_plugin.commands import subcommand
from eer_plugin.runtime.config_files import packaged_configs
from eer_plugin.runtime.settings_help import settings_help

NAME = "eer-settings"
DESCRIPTION = (
    "List every setting of the training configs: the environment settings (EER_*; with the value set here) and the "
    "hyperparameters (with the -o key that changes one), their defaults and meanings."
)


def configs_help() -> str:
    return textwrap.fill(
        "configs: a file, or a packaged config by name from any directory (a local file of that name wins): "
        + ", ".join(packaged_configs()),
        100,
    )


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    return parser


def run(args: argparse.Namespace) -> str:
    text = settings_help(os.environ) + "\n" + configs_help()
    print(text)
    return text


def install() -> None:
    """Adds the settings and the packaged configs to ``train --help`` (idempotent)."""
    from allennlp.commands.train import Train

    original = Train.add_subparser
    if getattr(original, "eer_settings", False):
        return

    def add_subparser(self, parser):
        subparser = original(self, parser)
        subparser.formatter_class = argparse.RawDescriptionHelpFormatter
        subparser.epilog = f"{configs_help()}\n\n{settings_help()}\n\n(eer-ner {NAME} also shows the values set here)"
        return subparser

    add_subparser.eer_settings = True  # type: ignore[attr-defined]
    add_subparser.__wrapped__ = original  # type: ignore[attr-defined]
    Train.add_subparser = add_subparser


run_or_exit, main = subcommand.define(NAME, DESCRIPTION, add_arguments, run, ())
