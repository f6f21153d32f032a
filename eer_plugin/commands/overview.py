"""``eer-ner`` and ``eer-ner --help``: eer-ner's commands by what they are for, each with its description, then
AllenNLP's other commands by name, printed without importing AllenNLP or torch (well under a second; AllenNLP's
own listing took 7 s and began "Run AllenNLP"). The descriptions are the commands' own (:func:`subcommand.define`):
importing a command module only defines its arguments. ``tests/commands/test_overview.py`` checks that the
overview names every command ``eer-ner`` registers, once."""

import shutil
import textwrap
from typing import Dict, List, Tuple

from eer_plugin.commands import subcommand

#: what eer-ner is, under the usage line
PURPOSE = "Train named-entity taggers from partially annotated text with the Expected Entity Ratio (EER) loss."
#: AllenNLP's commands that eer-ner runs with its own checks and outputs (their modules import AllenNLP)
WRAPPED = {
    "train": "Train a tagger from a config: a packaged one by name (eer_short.jsonnet, raw_shortest.jsonnet, ...) "
    "or your own; --ratio-estimate takes rho and gamma from eer-estimate-ratio.",
    "evaluate": "Evaluate a trained model on gold data: word-level span P/R/F1, per type, and rho_hat.",
    "predict": "Tag new text (raw or pre-split JSON lines, a folder of .txt files, a training-format file) with a "
    "trained model: JSON lines or CoNLL lines, resumable.",
}
#: the groups, in order; a command that none names (a plugin's) is listed under "More"
GROUPS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("Prepare your data", ("eer-import", "eer-dictionary", "eer-inspect", "eer-split", "eer-estimate-ratio")),
    ("Train", ("train", "cbl", "tune-o-cost", "eer-settings")),
    ("Use a model", ("predict", "evaluate", "serve", "eer-export", "eer-export-model", "eer-shard", "eer-merge")),
    ("Reproduce the paper", ("eer-simulate", "eer-benchmark", "eer-records")),
)
#: AllenNLP's other commands, run as AllenNLP has them
ALLENNLP_COMMANDS = (
    "build-vocab",
    "cached-path",
    "checklist",
    "count-instances",
    "diff",
    "find-lr",
    "print-results",
    "push-to-hf",
    "test-install",
)
NAME_WIDTH = 20


def commands() -> Dict[str, str]:
    """Name -> description of every command of eer-ner: its own, the plugins' and the wrapped ones."""
    subcommand.define_all()
    return {**WRAPPED, **subcommand.descriptions()}


def overview(width: int = 0) -> str:
    """The text of ``eer-ner --help`` at ``width`` columns (0: the terminal's, at most 100)."""
    width = width or min(shutil.get_terminal_size((100, 24)).columns, 100)
    described = commands()
    grouped = [(title, [n for n in names if n in described]) for title, names in GROUPS]
    named = {n for _, names in grouped for n in names}
    grouped.append(("More", [n for n in described if n not in named]))
    lines: List[str] = [
        "usage: eer-ner COMMAND [options]    (eer-ner COMMAND --help: its options, with their defaults)",
        "",
        *textwrap.wrap(PURPOSE, width),
    ]
    for title, names in (group for group in grouped if group[1]):
        lines += ["", f"{title}:"]
        for name in names:
            text = textwrap.wrap(described[name], width - NAME_WIDTH - 4) or [""]
            lines.append(f"  {name:<{NAME_WIDTH}}  {text[0]}" if len(name) <= NAME_WIDTH else f"  {name}")
            rest = text[1:] if len(name) <= NAME_WIDTH else text
            lines += [" " * (NAME_WIDTH + 4) + line for line in rest]
    lines += [
        "",
        "AllenNLP's other commands:",
        *textwrap.wrap(", ".join(ALLENNLP_COMMANDS), width, initial_indent="  ", subsequent_indent="  "),
    ]
    lines += ["", "eer-ner eer-settings lists every setting of the training configs, with its default."]
    return "\n".join(lines)
