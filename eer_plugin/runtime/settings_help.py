"""The listing of every ``EER_*`` setting (:mod:`eer_plugin.runtime.settings`'s table) shown by ``eer-ner train
--help`` and ``eer-ner eer-settings``."""

import textwrap
from typing import List, Mapping, Optional

from eer_plugin.runtime.settings import ENVIRONMENT, HYPERPARAMETERS, Setting


def _default_text(setting: Setting) -> str:
    return repr(setting.default) if setting.default == "" else setting.default


def settings_help(environ: Optional[Mapping[str, str]] = None, width: int = 100) -> str:
    """Every setting with its default and meaning, by kind and group (a hyperparameter with its ``-o``
    key; the value set here, where ``environ`` sets one), as shown by ``eer-ner train --help`` and
    ``eer-ner eer-settings``."""
    lines: List[str] = []
    for title, rows in (
        ("environment settings (NAME=value before the command sets one):", ENVIRONMENT),
        (
            "hyperparameters (literals of the packaged configs; -o '{\"KEY\": value}' sets one for a run):",
            HYPERPARAMETERS,
        ),
    ):
        lines.append(title)
        for group in dict.fromkeys(s.group for s in rows):
            lines.append(f"  {group}:")
            for s in (s for s in rows if s.group == group):
                set_here = environ is not None and s.name in environ
                if s.is_hyperparameter:
                    where = s.path + "".join(f" ({a}: {p})" for a, p in s.other_paths)
                    current = f"; {s.name} IS SET HERE, which no config reads: give -o instead" if set_here else ""
                    head = f"    {where} (default {_default_text(s)}; plans: {s.name}{current}): "
                else:
                    current = f"; set here: {environ[s.name]}" if set_here else ""
                    head = f"    {s.name} (default {_default_text(s)}{current}): "
                lines.extend(textwrap.wrap(head + s.meaning, width, subsequent_indent=" " * 6))
    return "\n".join(lines)
