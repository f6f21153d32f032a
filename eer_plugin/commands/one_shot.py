"""The shared shell of eer-ner's one-shot subcommands (``eer-import``, ``eer-estimate-ratio``): an
argparse definition and a ``run(args)`` become an AllenNLP subcommand whose expected errors are
one ``error: ...`` line on stderr and exit status 1, plus a ``main(argv)`` for tests."""
import argparse
import sys
from typing import Callable, List, Optional, Tuple, Type


def define(
    name: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], argparse.ArgumentParser],
    run: Callable[[argparse.Namespace], object],
    errors: Tuple[Type[BaseException], ...],
):
    """Registers subcommand ``name`` and returns ``(run_or_exit, main)``."""
    from allennlp.commands.subcommand import Subcommand

    def run_or_exit(args: argparse.Namespace) -> None:
        try:
            run(args)
        except errors as err:
            print(f"error: {err}", file=sys.stderr)
            sys.exit(1)

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        subparser = parser.add_parser(self.name, description=description, help=description)
        add_arguments(subparser)
        subparser.set_defaults(func=run_or_exit)
        return subparser

    def main(argv: Optional[List[str]] = None) -> int:
        """The command on ``argv`` without the ``allennlp`` front end (run it as ``allennlp NAME``)."""
        run_or_exit(add_arguments(argparse.ArgumentParser(prog=name, description=description)).parse_args(argv))
        return 0

    class_name = "".join(part.title() for part in name.split("-"))
    Subcommand.register(name)(type(class_name, (Subcommand,), {"add_subparser": add_subparser, "__doc__": description}))
    return run_or_exit, main
