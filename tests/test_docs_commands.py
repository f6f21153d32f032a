"""The commands the README and ``docs/*.md`` show are the commands users get: every ``eer-ner COMMAND`` /
``allennlp COMMAND`` line (shell blocks and inline code) names a registered command and only options its parser
has, every config named is a file of the repository or a packaged config found from any directory, and the
printed lines the pages quote (the own-data recipe's, ``eer-inspect``'s, ``eer-dictionary``'s) are what those
commands print when run as written."""

import argparse
import codecs
import importlib
import re
import shlex
from pathlib import Path

from conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
PROGRAMS = ("eer-ner", "allennlp")
#: a config as the pages name it: a path or a name, ``{all,short}`` alternatives included
CONFIG = re.compile(r"[\w./{},-]*[\w}]\.(?:jsonnet|libsonnet)")


def blocks(page: Path):
    """(language, text) of each fenced block of ``page``."""
    return FENCE.findall(page.read_text(encoding="utf-8"))


def shell_commands(text: str):
    """The simple commands of shell ``text``: lines joined at a trailing backslash, comments dropped, split at
    ``|``, ``;``, ``&&``, ``&`` and parentheses, redirections and leading ``NAME=value`` assignments removed."""
    for line in re.sub(r"\\\n", " ", text).splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split, lexer.commenters = True, "#"
        try:
            tokens = list(lexer)
        except ValueError:  # an unclosed quote: prose, not a command
            continue
        command, redirected = [], False
        for token in tokens + [";"]:
            if redirected:
                redirected = False
            elif token in (">", ">>", "<", "2>", "&>"):
                redirected = True
            elif set(token) <= set("|;&()"):
                while command and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", command[0]):
                    command.pop(0)
                if command:
                    yield command
                command = []
            else:
                command.append(token)


def documented_command_lines(pages=PAGES):
    """(where, words) of every ``eer-ner``/``allennlp`` command line of ``pages``: in shell blocks, and in inline
    code that starts with one."""
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for language, body in blocks(page):
            if language in ("bash", "sh", ""):
                for words in shell_commands(body):
                    if words[0] in PROGRAMS and len(words) > 1:
                        yield f"{page.name} (shell block)", words
        prose = FENCE.sub("", text).replace("\n", " ")
        for span in re.findall(r"`([^`]+)`", prose):
            for words in shell_commands(span):
                if words[0] in PROGRAMS and len(words) > 1 and re.fullmatch(r"[a-z][\w-]*", words[1]):
                    yield f"{page.name} (`{span[:60]}`)", words


def command_parsers() -> dict:
    """``{name: parser}`` of every subcommand as ``eer-ner NAME`` builds it (the plugin's and AllenNLP's)."""
    from allennlp.commands import ArgumentParserWithDefaults
    from allennlp.commands.subcommand import Subcommand

    import eer_plugin.allennlp_plugin  # noqa: F401  (registers the plugin's commands and patches)

    subparsers = ArgumentParserWithDefaults(prog="eer-ner").add_subparsers()
    parsers = {}
    for name in Subcommand.list_available():
        subcommand = Subcommand.by_name(name)
        parsers[name] = subcommand().add_subparser(subparsers)
        if subcommand.requires_plugins:
            parsers[name].add_argument("--include-package", action="append", default=[])
    return parsers


def options_of(parser, words) -> set:
    """The option strings of ``parser``, of the subcommand that ``words`` choose (``eer-simulate ee``)."""
    for word in (w for w in words if not w.startswith("-")):
        chosen = [
            a.choices[word] for a in parser._actions if isinstance(a, argparse._SubParsersAction) and word in a.choices
        ]
        if not chosen:
            break
        parser = chosen[0]
    return {option for action in parser._actions for option in action.option_strings}


def problems_of_command_lines(lines, parsers) -> list:
    problems = []
    for where, (program, name, *arguments) in lines:
        if name not in parsers:
            problems.append(f"{where}: {program} {name}: no such command")
            continue
        options = options_of(parsers[name], arguments)
        for word in arguments:
            option = re.match(r"\[?(--[a-z][\w-]*)", word)
            if option and option.group(1) not in options:
                problems.append(f"{where}: {program} {name} has no option {option.group(1)}")
    return problems


def test_every_command_line_of_the_docs_names_a_command_and_its_options():
    lines = list(documented_command_lines())
    names = {words[1] for _, words in lines}
    assert {"train", "predict", "eer-import", "eer-split", "eer-estimate-ratio", "serve", "eer-benchmark"} <= names
    problems = problems_of_command_lines(lines, command_parsers())
    assert not problems, "the docs show commands or options that do not exist:\n" + "\n".join(problems)


def test_the_command_line_reader_finds_bad_commands_and_options(tmp_path):
    """The checker's parts, on a generated page: continuation lines, comments, pipes, assignments, redirections and
    inline code are read as the shell reads them; an unknown command or option is reported, a real one is not."""
    parsers = command_parsers()
    real = sorted(options_of(parsers["eer-split"], []) - {"-h", "--help"})
    for option in real:
        bad = option + "x"
        text = (
            f"```bash\nA=1 B='x y' eer-ner eer-split in.jsonl a b \\\n  {option} 1 # {bad} in a comment\n"
            f"eer-ner eer-split a b c {bad} | head > out.txt; allennlp eer-bogus {option}\n```\n"
            f"Run `eer-ner eer-simulate ee in out {option}` or `eer-ner eer-simulate: error: {bad}`.\n"
        )
        page = tmp_path / "page.md"
        page.write_text(text)
        found = list(documented_command_lines([page]))
        assert [words[:2] for _, words in found] == [
            ["eer-ner", "eer-split"],
            ["eer-ner", "eer-split"],
            ["allennlp", "eer-bogus"],
            ["eer-ner", "eer-simulate"],
        ]
        assert found[0][1][-2:] == [option, "1"] and found[1][1][-1] == bad
        problems = problems_of_command_lines(found, parsers)
        assert (
            problems[0].endswith(f"eer-ner eer-split has no option {bad}")
            and "eer-bogus: no such command" in (problems[1])
        )
        assert len(problems) == 2 + (option not in options_of(parsers["eer-simulate"], ["ee"]))


def expand(name: str):
    """``raw_{all,short}.jsonnet`` -> ``raw_all.jsonnet``, ``raw_short.jsonnet``."""
    found = re.search(r"\{([^{}]*)\}", name)
    if not found:
        yield name
        return
    for choice in found.group(1).split(","):
        yield from expand(name[: found.start()] + choice + name[found.end() :])


def test_every_config_the_docs_name_exists(tmp_path, monkeypatch):
    """A config named with a folder is that file of the repository; a packaged one (by name, or under
    ``training_configs/``) is found from any directory, as ``eer-ner train NAME`` finds it."""
    from eer_plugin.common.errors import UserError
    from eer_plugin.runtime.config_files import resolve_config

    named = {(page.name, n) for page in PAGES for found in CONFIG.findall(page.read_text()) for n in expand(found)}
    named = {(page, n) for page, n in named if not re.fullmatch(r"[A-Z_]+\.jsonnet", n)}  # NAME.jsonnet
    assert ("README.md", "eer_short.jsonnet") in named and len(named) > 10
    monkeypatch.chdir(tmp_path)
    missing = []
    for page, name in sorted(named):
        if "/" in name and not name.startswith("training_configs/"):
            if not (REPO / name).is_file():
                missing.append(f"{page}: {name}")
            continue
        try:
            resolve_config(name)
        except UserError:
            missing.append(f"{page}: {name} (no packaged config)")
    assert not missing, f"the docs name configs that do not exist: {missing}"


# --- the printed lines the docs quote -----------------------------------------------------------------------------


def run_as_written(words, capsys) -> list:
    """The lines (stdout, then stderr) that ``eer-ner NAME ...`` prints, run in this process as ``eer-ner``
    runs a command through its own ``main``."""
    from eer_plugin.commands import subcommand

    program, name, *arguments = words
    assert program in PROGRAMS
    importlib.import_module("eer_plugin.allennlp_plugin")
    capsys.readouterr()
    status = subcommand.main_of(name)(arguments, prog=f"eer-ner {name}")
    out, err = capsys.readouterr()
    assert not status, (words, err)
    return out.splitlines() + err.splitlines()


def quoted_output(page: Path, first_line: str) -> list:
    """The lines of the plain fenced block of ``page`` whose first line starts with ``first_line``."""
    found = [body.splitlines() for language, body in blocks(page) if not language and body.startswith(first_line)]
    assert len(found) == 1, f"{page.name}: no single output block starting {first_line!r}"
    return found[0]


def matches(quoted: str, printed: str) -> bool:
    """``quoted`` is ``printed``, where ``...`` in ``quoted`` stands for any text (a path cut short)."""
    return re.fullmatch(".*".join(map(re.escape, quoted.split("..."))), printed) is not None


def test_the_recipe_prints_what_data_md_quotes(tmp_path, monkeypatch, capsys):
    """Steps 1-3 of the README's recipe (import, split, estimate), run as the README writes them, print the lines
    docs/data.md quotes: everything the import and the split print, and the estimate's last lines."""
    (recipe,) = [body for language, body in blocks(PAGES[0]) if "eer-import doccano" in body]
    commands = {
        words[1]: [word.replace("$REPO", str(REPO)) for word in words]
        for words in shell_commands(recipe)
        if words[0] == "eer-ner"
    }
    quoted = quoted_output(REPO / "docs" / "data.md", "warning: .../doccano.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EER_ENCODER", raising=False)
    printed = []
    for name in ("eer-import", "eer-split", "eer-estimate-ratio"):
        lines = run_as_written(commands[name], capsys)
        if name != "eer-estimate-ratio":  # the page shows all the lines of these two
            unquoted = [line for line in lines if not any(matches(q, line) for q in quoted)]
            assert not unquoted, f"{name} prints lines that docs/data.md does not quote: {unquoted}"
        printed += lines
    missing = [q for q in quoted if not any(matches(q, line) for line in printed)]
    assert not missing, f"docs/data.md quotes lines that the README's recipe does not print: {missing}"


def test_the_inspect_example_is_what_eer_inspect_prints(monkeypatch, capsys):
    """docs/data.md's ``$ allennlp eer-inspect FILE`` block, run from the repository root, prints its lines."""
    quoted = quoted_output(REPO / "docs" / "data.md", "$ allennlp eer-inspect ")
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("EER_ENCODER", raising=False)
    assert run_as_written(shlex.split(quoted[0][2:]), capsys) == quoted[1:]


def test_the_dictionary_example_prints_what_data_md_shows(tmp_path, monkeypatch, capsys):
    """docs/data.md's "Start from a dictionary" block, its files written as its printf and here-document write
    them, prints the summary the page shows."""
    (example,) = [body for language, body in blocks(REPO / "docs" / "data.md") if "eer-dictionary docs.jsonl" in body]
    monkeypatch.chdir(tmp_path)
    printf = re.search(r"^printf '([^']*)' > (\S+)$", example, re.M)
    Path(printf.group(2)).write_text(codecs.decode(printf.group(1), "unicode_escape"))
    heredoc = re.search(r"^cat > (\S+) <<'END'\n(.*?)^END$", example, re.S | re.M)
    Path(heredoc.group(1)).write_text(heredoc.group(2))
    (words,) = [words for words in shell_commands(example) if words[:2] == ["eer-ner", "eer-dictionary"]]
    assert run_as_written(words, capsys) == quoted_output(REPO / "docs" / "data.md", "eer-dictionary: ")


def test_the_plan_sizes_the_benchmark_page_states_are_the_plans(monkeypatch):
    """A comment in docs/benchmark.md's shell blocks that says how many runs a plan has ("75 runs") is followed by
    the ``eer-benchmark PLAN`` line of that plan, and the plan has that many runs."""
    from eer_benchmark import load_plan

    monkeypatch.chdir(REPO)  # the plans' data paths start in the repository root
    checked, wrong = 0, []
    for _, body in blocks(REPO / "docs" / "benchmark.md"):
        stated = None
        for line in body.splitlines():
            if line.lstrip().startswith("#"):
                count = re.search(r"(\d+) runs", line)
                stated = int(count.group(1)) if count else stated
            elif "eer-benchmark" in line and stated is not None:
                plan = re.search(r"\S+\.jsonnet", line).group(0)
                runs = len(load_plan(plan, check_files=False).runs)
                checked += 1
                if runs != stated:
                    wrong.append(f"{plan}: the page says {stated} runs, the plan has {runs}")
                stated = None
    assert checked >= 2 and not wrong, wrong
