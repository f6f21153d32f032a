"""The one way eer-ner defines a subcommand: an argparse definition and a ``run(args)`` become an
AllenNLP subcommand (``allennlp NAME`` / ``eer-ner NAME``) and a ``main(argv)`` for tests, ``python -m`` and
``eer-ner``'s commands that need no AllenNLP (:data:`eer_plugin.cli.LIGHT_COMMANDS`). The command modules
parse arguments and call the library; nothing else.

Importing a command module imports no AllenNLP: :func:`define` only lists the command, and
:func:`register_all` (called by :mod:`eer_plugin.allennlp_plugin`, the one module that registers with
AllenNLP) makes the listed commands AllenNLP subcommands; a command defined after that is registered at once.

Errors, one convention for every command: the exceptions a command expects (bad input files, bad
options, a bad plan) are printed by :func:`print_error` (the one printer, :mod:`eer_plugin.common.errors`) as
one line that names the command as argparse's usage errors do, ``PROG: error: <message>`` (``eer-ner
eer-split: error: ...``, ``allennlp eer-split: error: ...``, or ``main``'s ``prog``), and the command exits with
status 1; so is any :class:`~eer_plugin.common.errors.UserError` a command does not list (and whatever else
:func:`~eer_plugin.common.errors.report` knows: a full disk, AllenNLP's ``ConfigurationError``), however the
command was started. A command line argparse cannot parse is argparse's usage error (2). The parser puts its ``prog`` in the arguments (``args.prog``), for a command that
prints an error line of its own (``eer-inspect``'s files that do not parse)."""

import argparse
import importlib
import sys
from importlib.metadata import entry_points
from typing import Callable, Dict, List, Optional, Tuple, Type

from eer_plugin.common.errors import INPUT_ERROR, print_error, report, terminate_as_interrupt

__all__ = ["INPUT_ERROR", "define", "print_error", "register_all"]

#: ``(name, description, add_subparser)`` of each command defined and not registered with AllenNLP yet
_UNREGISTERED: List[Tuple[str, str, Callable]] = []
#: whether :func:`register_all` has run (a command defined later is registered at once)
_REGISTERING = [False]
#: name -> ``main`` of every command defined (:func:`main_of`)
_MAINS: Dict[str, Callable[..., int]] = {}
#: name -> description of every command defined, in the order defined (:func:`descriptions`)
_DESCRIPTIONS: Dict[str, str] = {}


def define(
    name: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], argparse.ArgumentParser],
    run: Callable[[argparse.Namespace], object],
    errors: Tuple[Type[BaseException], ...] = (),
    returns_status: bool = False,
    register: bool = True,
):
    """Defines subcommand ``name`` (registered with AllenNLP by :func:`register_all`) and returns
    ``(run_or_exit, main)``.

    ``errors``: the expected exceptions, printed by :func:`print_error` under the command's ``prog``
    (``args.prog``: ``eer-ner NAME`` / ``allennlp NAME``, or ``main``'s), then exit status 1 (:data:`INPUT_ERROR`).
    ``returns_status``: ``run`` returns the exit status (``main`` returns it too). ``register=False`` (a module run
    as ``__main__``, which the plugin import registers under its own name) only builds ``main``.
    """

    def status_of(args: argparse.Namespace) -> int:
        prog = getattr(args, "prog", name)  # the parser's (set_defaults below): "eer-ner NAME", main's prog
        terminate_as_interrupt()  # SIGTERM / SIGHUP stop it as Ctrl-C does, however it was started
        try:
            result = run(args)
        except (KeyboardInterrupt, BrokenPipeError) as err:  # before ``errors``: a closed pipe is an OSError too
            sys.exit(report(err, prog))
        except errors as err:
            if report(err, prog) is None:  # the one printer (a full disk, ...), else the error's own line
                print_error(err, prog)
            sys.exit(INPUT_ERROR)
        except Exception as err:  # noqa: BLE001  (the one printer decides: a bug keeps its traceback)
            status = report(err, prog)  # any UserError, AllenNLP's ConfigurationError, a full disk, ...
            if status is None:
                raise
            sys.exit(status)
        return int(result or 0) if returns_status else 0

    def run_or_exit(args: argparse.Namespace) -> None:
        status = status_of(args)
        if status:
            sys.exit(status)

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = parser.add_parser(self.name, description=description, help=description)
        add_arguments(subparser)
        subparser.set_defaults(func=run_or_exit, prog=subparser.prog)  # "eer-ner NAME", "allennlp NAME"
        return subparser

    def main(argv: Optional[List[str]] = None, prog: str = name) -> int:
        """The command on ``argv`` without the ``allennlp`` front end (run it as ``allennlp NAME``)."""
        parser = add_arguments(argparse.ArgumentParser(prog=prog, description=description))
        parser.set_defaults(prog=prog)
        return status_of(parser.parse_args(argv))

    _MAINS[name] = main
    _DESCRIPTIONS[name] = description
    if register:
        _UNREGISTERED.append((name, description, add_subparser))
        if _REGISTERING[0]:
            register_all()
    return run_or_exit, main


#: the modules of eer-ner's own commands (each defines its commands with :func:`define`; the ones that wrap
#: AllenNLP's commands, ``train`` and ``evaluate``, import AllenNLP and are imported by the plugin itself)
COMMAND_MODULES = (
    "eer_plugin.commands.cbl",
    "eer_plugin.commands.dictionary",
    "eer_plugin.commands.eer_export",
    "eer_plugin.commands.eer_import",
    "eer_plugin.commands.eer_settings",
    "eer_plugin.commands.estimate_ratio",
    "eer_plugin.commands.export_model",
    "eer_plugin.commands.inspect_data",
    "eer_plugin.commands.shard",
    "eer_plugin.commands.simulate",
    "eer_plugin.commands.split",
    "eer_plugin.commands.tune_o_cost",
)
#: the entry point group of packages that add commands (this repository's benchmark, ``eer_benchmark``, registers
#: ``eer-benchmark`` and ``eer-records`` through it; ``eer-ner serve`` too); eer_plugin itself never imports them
PLUGIN_GROUP = "eer_ner.plugins"


def load_plugins() -> None:
    """Imports the modules of :data:`PLUGIN_GROUP` (their commands are then defined); one whose package is not
    installed (a wheel of eer_plugin alone) is skipped, any other failure raises."""
    for point in entry_points(group=PLUGIN_GROUP):
        try:
            point.load()
        except ModuleNotFoundError as error:
            if error.name is None or error.name.split(".")[0] != point.value.split(".")[0]:
                raise


def define_all() -> None:
    """Imports every command module (:data:`COMMAND_MODULES`) and the plugins' (:func:`load_plugins`): their
    commands are then defined. Imports no AllenNLP."""
    for module in COMMAND_MODULES:
        importlib.import_module(module)
    load_plugins()


def descriptions() -> Dict[str, str]:
    """Name -> description of every command defined so far (the modules imported), in the order defined."""
    return dict(_DESCRIPTIONS)


def main_of(name: str) -> Callable[..., int]:
    """The ``main(argv, prog)`` of command ``name`` (its module imported)."""
    return _MAINS[name]


def register_all() -> None:
    """Registers every command :func:`define` has listed as an AllenNLP ``Subcommand`` (``allennlp NAME``,
    ``eer-ner NAME``), and every command defined from now on."""
    from allennlp.commands.subcommand import Subcommand

    _REGISTERING[0] = True
    while _UNREGISTERED:
        name, description, add_subparser = _UNREGISTERED.pop(0)
        class_name = "".join(part.title() for part in name.split("-"))
        subcommand = type(class_name, (Subcommand,), {"add_subparser": add_subparser, "__doc__": description})
        Subcommand.register(name)(subcommand)
