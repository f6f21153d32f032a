"""Each default of a command-line option is declared once, in the library that owns the behaviour: a parameter
default of a function's (or class's) signature, or a named constant of a module. A command reads it from there
with :func:`add_option`, and its ``--help`` shows it (``%(default)s``); ``tests/commands/test_defaults.py`` checks
every registered subcommand for it. No AllenNLP here."""

import argparse
import inspect
from types import ModuleType
from typing import Any, Callable, Tuple, Union

#: where a default is declared: ``(function or class, parameter)`` or ``(module, constant)``
Source = Tuple[Union[Callable, ModuleType], str]


def declared(owner: Union[Callable, ModuleType], name: str) -> Any:
    """The default of parameter ``name`` in the signature of ``owner`` (a function or class), or the constant
    ``name`` of module ``owner``. A parameter without a default is a :class:`TypeError`."""
    if inspect.ismodule(owner):
        return getattr(owner, name)
    default = inspect.signature(owner).parameters[name].default
    if default is inspect.Parameter.empty:
        raise TypeError(f"{owner.__qualname__}({name}) declares no default")
    return default


def owner_module(source: Source) -> str:
    """The module that declares the default of ``source``."""
    owner = source[0]
    return owner.__name__ if inspect.ismodule(owner) else owner.__module__


def add_option(
    parser: Union[argparse.ArgumentParser, argparse._ArgumentGroup],
    *flags: str,
    default_from: Source,
    help: str,
    given_only: bool = False,
    **kwargs: Any,
) -> argparse.Action:
    """Adds the option ``flags`` with the default declared at ``default_from`` (see :func:`declared`); ``help``
    shows it with ``%(default)s``. ``given_only``: the option parses to None when it is not given (the command
    can tell whether it was given, and the library applies its own default), the help still shows the value."""
    value = declared(*default_from)
    if given_only:
        help = help.replace("%(default)s", str(value).replace("%", "%%"))
    # argparse's own add_argument: AllenNLP's parsers (ArgumentParserWithDefaults) would append "(default = ...)"
    # a second time, and return no action
    action = argparse._ActionsContainer.add_argument(
        parser, *flags, default=None if given_only else value, help=help, **kwargs
    )
    action.declared_in = default_from  # type: ignore[attr-defined]  (read by the tests)
    action.given_only = given_only  # type: ignore[attr-defined]
    return action
