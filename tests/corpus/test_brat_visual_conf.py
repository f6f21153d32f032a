"""brat's ``visual.conf`` as brat finds and parses it (its server, ``server/src/projectconfig.py``).

brat reads a document's configuration from the document's own directory, else the nearest directory above it that
has the file (``__read_first_in_directory_tree``), and the nearest file is used even where brat cannot parse it (it
then falls back to a minimal configuration, never to a file further up). So ``eer-import brat`` names each document's
types by the nearest ``visual.conf`` from its directory up to the imported directory: sibling directories may name a
type differently, and a file brat would not read is refused, naming its line, only when a document uses it.

brat parses every section of the file alike (``__parse_configs``: ``[labels]`` splits names from settings at a tab,
the others at white space), so a ``[drawing]`` or ``[options]`` line it cannot parse drops the whole file too; only
the top-level lines of ``[labels]`` name types (``get_labels``). ``eer-export brat`` writes the ``[labels]`` and the
``[drawing]`` that brat expects (without ``[drawing]`` it warns "missing section"), which :func:`brat_sections`, a
reading that follows brat's rules, parses without a warning, and whose names come back through the import.
"""

import json
import random
import re
from pathlib import Path, PurePosixPath
from typing import Dict, List, Tuple

import pytest

from eer_plugin.commands import eer_export
from eer_plugin.corpus.brat_names import label_lines, storage_form
from eer_plugin.corpus.exporters.brat import PALETTE, SPAN_DEFAULT, visual_conf
from eer_plugin.corpus.importers import AnnotationImportError, ImportReport, brat

#: brat's reserved names (projectconfig.py ``reserved_config_name``)
RESERVED_NAMES = (
    "ANY ENTITY RELATION EVENT NONE EMPTY REL-TYPE URL URLBASE UNICODE GLYPH-POS DEFAULT NORM OVERLAP OVL-TYPE INHERIT"
).split()
#: the sections brat expects in visual.conf, and those of them it does not warn about when missing
EXPECTED, OPTIONAL = {"options", "labels", "drawing"}, {"options"}


class Unread(ValueError):
    """brat cannot parse the file: it falls back to its minimal configuration (none of the file's names)."""


def brat_sections(text: str) -> Tuple[Dict[str, list], List[str]]:
    """``({section: [(depth, names, {key: values})]}, warnings)`` of a ``visual.conf``, as brat parses it: lines by
    ``[section]`` (those above the first under ``general``), each section a hierarchy of lines; :class:`Unread` where
    brat would drop the file. The warnings are brat's about sections it does not know or misses."""
    section, lines, warnings = "general", {"general": []}, []
    for line in text.split("\n"):
        header = re.match(r"^\s*\[(.*)\]\s*$", line)
        if header:
            section = header.group(1)
            if section not in EXPECTED:
                warnings.append(f"unexpected section [{section}]")
            lines.setdefault(section, [])
        else:
            lines[section].append(line)
    warnings += [f"missing section [{s}]" for s in sorted(EXPECTED - set(lines) - OPTIONAL)]
    return {name: hierarchy(body, tab=name == "labels") for name, body in lines.items()}, warnings


def hierarchy(lines: List[str], tab: bool) -> list:
    """brat's ``__read_term_hierarchy`` of one section's lines."""
    nodes, parent_settings, macros = [], {}, {}
    for line in lines:
        if not line.strip() or re.match(r"^\s*#", line) or re.match(r"^\s*-+\s*$", line):
            continue  # blank, comment, separator
        definition = re.match(r"^<([a-zA-Z_-]+)>=\s*(.*?)\s*$", line)
        if definition:
            if definition.group(1) in RESERVED_NAMES:
                raise Unread(f"redefines <{definition.group(1)}>")
            macros[f"<{definition.group(1)}>"] = definition.group(2)
            continue
        for macro, value in macros.items():
            line = line.replace(macro, value)
        if any(m[1:-1] not in RESERVED_NAMES for m in re.findall(r"<.*?>", line)):
            raise Unread(f"undefined macro in {line!r}")
        indent, names, settings = split(line, tab)
        if "\t" in line and any(re.search(r"\s", s) for s in settings):
            indent, names, settings = split(line, True)  # brat's reading of older files
        depth = len(indent)
        if depth and depth - 1 not in parent_settings:
            raise Unread(f"no parent for {line!r}")
        if "<INHERIT>" in settings and depth - 1 not in parent_settings:
            raise Unread(f"<INHERIT> without a parent in {line!r}")
        inherited = parent_settings.get(depth - 1, [])
        settings = [x for s in settings for x in (inherited if s == "<INHERIT>" else [s])]
        if not names:
            raise Unread(f"empty term in {line!r}")
        nodes.append((depth, [n[1:] if n.startswith("!") else n for n in names], keys(settings)))
        parent_settings[depth] = settings
    return nodes


def split(line: str, tab: bool) -> Tuple[str, List[str], List[str]]:
    pattern = r"^(\s*)([^\t]+)(?:\t(.*))?$" if tab else r"^(\s*)(\S+)(?:\s+(.*))?$"
    indent, names, settings = re.match(pattern, line).groups()
    return (
        indent,
        [n.strip() for n in names.split("|") if n.strip()],
        [s.strip() for s in (settings or "").split(",") if s.strip()],
    )


def keys(settings: List[str]) -> Dict[str, List[str]]:
    """brat's ``TypeHierarchyNode`` reading of a line's ``KEY:VALUE`` settings."""
    read: Dict[str, List[str]] = {}
    for setting in settings:
        parts = re.match(r"^(\S*?):(\S*)$", setting)
        if not parts:
            raise Unread(f"no KEY:VALUE: {setting!r}")
        key, values = parts.groups()
        if key in {f"<{n}>" for n in RESERVED_NAMES}:
            continue
        counted = re.match(r"^(\S+?)(\{\S+\}|\?|\*|\+|)$", key)
        if not counted:
            raise Unread(f"bad key in {setting!r}")
        key, repeat = counted.groups()
        most = {"": 1, "?": 1, "*": 2, "+": 2}.get(repeat)
        if most is None:
            limits = re.match(r"\{(\d+)(?:-(\d+))?\}$", repeat)
            if not limits or (limits[2] is None and int(limits[1]) == 0):
                raise Unread(f"bad count in {setting!r}")
            if limits[2] is not None and int(limits[1]) > int(limits[2]):
                raise Unread(f"bad range in {setting!r}")
            most = int(limits[2] or limits[1])
        if most > 1 and key[-1].isdigit():
            raise Unread(f"repeated key ending in a digit: {setting!r}")
        if key in read:
            raise Unread(f"{key!r} twice")
        if any(not v.strip() for v in values.split("|")):
            raise Unread(f"empty value in {setting!r}")
        read[key] = values.split("|")
    return read


def brat_labels(sections: Dict[str, list]) -> Dict[str, List[str]]:
    """``get_labels``: the top-level ``[labels]`` lines, ``{brat's storage form of the first name: the others}``."""
    return {
        re.sub(r"[^a-zA-Z0-9_-]", "_", names[0].replace(" ", "_")): names[1:]
        for depth, names, _ in sections.get("labels", [])
        if depth == 0
    }


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def labels_of(root: Path) -> Dict[str, List[str]]:
    """``{document id: its span types}`` as ``eer-import brat`` reads the directory."""
    return {d.id: [s.label for s in d.spans] for d in brat.read(root, ImportReport("brat"))}


# -- the nearest visual.conf ------------------------------------------------------------------------------------------

#: directories of depth 0 to 3, siblings included
DIRECTORIES = [PurePosixPath(d) for d in [".", "a", "b", "a/c", "a/d", "b/c", "a/c/e", "a/d/e", "b/c/f"]]
#: names that brat stores (and eer-export writes) as X_Y
NAMES = ["X Y", "X:Y", "X,Y", "X=Y", "X#Y", "X/Y"]
BAD = "[labels]\nX_Y | <UNDEFINED>\n[drawing]\n"  # brat drops it at line 2


def document(root: Path, directory: PurePosixPath) -> None:
    write(root / directory / "x.txt", "Xy Ab")
    write(root / directory / "x.ann", "T1\tX_Y 0 2\tXy\nT2\tPER 3 5\tAb\n#1\tAnnotatorNotes T1\tnote\n")


@pytest.mark.parametrize("seed", range(16))
def test_each_document_takes_the_nearest_visual_conf_up_to_the_imported_directory(seed, tmp_path):
    """Generated trees (depths 0-3, sibling directories): a ``visual.conf`` at some directories, naming X_Y each its
    own way, or one brat cannot read, or a directory so named (brat cannot open it, and looks further up); documents
    at some directories. Each document's X_Y takes the name of the nearest file, PER stays PER; a file brat cannot
    read is refused naming its line at the first document that uses it, and changes nothing when none does."""
    generator = random.Random(seed)
    root = tmp_path / "collection"
    write(tmp_path / "visual.conf", "[labels]\nX_Y | Above\nPER | Person\n")  # above the imported directory: not read
    confs = {d: generator.choice([*NAMES, BAD]) for d in DIRECTORIES if generator.random() < 0.45}
    for directory, text in confs.items():
        write(root / directory / "visual.conf", text if text == BAD else f"[labels]\nX_Y | {text}\n[drawing]\n")
    for directory in DIRECTORIES:
        if directory not in confs and generator.random() < 0.15:
            (root / directory / "visual.conf").mkdir(parents=True)
    documents = generator.sample(DIRECTORIES, generator.randint(1, len(DIRECTORIES)))
    for directory in documents:
        document(root, directory)
    expected, refused = {}, None
    for directory in sorted(documents, key=lambda d: root / d / "x.ann"):  # the order of the import
        nearest = next((d for d in [directory, *directory.parents] if d in confs), None)
        if nearest is not None and confs[nearest] == BAD:
            refused = root / nearest / "visual.conf"
            break
        expected[str(directory / "x")] = ["X_Y" if nearest is None else confs[nearest], "PER"]
    if refused:
        with pytest.raises(AnnotationImportError, match=r"\[labels\] uses '<UNDEFINED>'") as info:
            labels_of(root)
        assert (info.value.path, info.value.line) == (str(refused), 2)
    else:
        assert labels_of(root) == expected


def test_sibling_directories_name_a_type_each_their_own_way(tmp_path):
    root = tmp_path / "c"
    write(root / "visual.conf", "[labels]\nX_Y | X=Y\n[drawing]\n")
    write(root / "a" / "visual.conf", "[labels]\nX_Y | X Y\n[drawing]\n")
    write(root / "b" / "visual.conf", "# nothing named here\n[labels]\n[drawing]\n")
    for directory in [".", "a", "a/deep/er", "b", "b/c", "d"]:
        document(root, PurePosixPath(directory))
    assert labels_of(root) == {
        "x": ["X=Y", "PER"],
        "a/x": ["X Y", "PER"],
        "a/deep/er/x": ["X Y", "PER"],  # the nearest is two directories up
        "b/x": ["X_Y", "PER"],  # the nearest names nothing: brat does not look further up
        "b/c/x": ["X_Y", "PER"],
        "d/x": ["X=Y", "PER"],
    }
    assert labels_of(root / "a" / "deep") == {"er/x": ["X_Y", "PER"]}  # a/visual.conf is above the imported directory
    assert labels_of(root / "a" / "x.ann") == {"x": ["X Y", "PER"]}  # one .ann: its own directory's file


def test_a_visual_conf_brat_cannot_read_is_refused_only_where_a_document_uses_it(tmp_path):
    root = tmp_path / "c"
    bad = write(root / "visual.conf", "[labels]\n[drawing]\nX_Y\tbgColor:\n")
    write(root / "a" / "visual.conf", "[labels]\nX_Y | X:Y\n[drawing]\n")
    document(root, PurePosixPath("a"))
    assert labels_of(root) == {"a/x": ["X:Y", "PER"]}  # the root file is nobody's nearest
    document(root, PurePosixPath("b"))
    with pytest.raises(AnnotationImportError) as info:
        labels_of(root)
    assert (info.value.path, info.value.line) == (str(bad), 3)
    assert "[drawing] has the setting 'bgColor:', which brat does not read (an empty value)" in str(info.value)


# -- every section, as brat parses it ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, why",
    [
        ("[drawing]\nX_Y\tbgColor:red, bgColor:blue\n", "[drawing] has the setting 'bgColor:blue', which brat does"),
        ("[drawing]\nX_Y bgColor red\n", "[drawing] has the setting 'bgColor red', which brat does not read (no KEY"),
        ("[drawing]\n<C>=bgColor:red\nX_Y\t<C>, <D>\n", "[drawing] uses '<D>', which is no macro"),
        ("[options]\nArcs\tbundle:\n", "[options] has the setting 'bundle:'"),
        ("[unknown]\n  X\n", "[unknown] indents a line more than one deeper"),
        ("X_Y\t<INHERIT>\n[labels]\n", "a line above the first [section] has <INHERIT> on a line indented under none"),
        ("[labels]\n<C>=X_Y | X Y\n[drawing]\n<C>\n", "[drawing] uses '<C>'"),  # macros are a section's own
    ],
)
def test_a_line_brat_cannot_parse_in_any_section_is_refused(text, why, tmp_path):
    conf = write(tmp_path / "b" / "visual.conf", text)
    document(tmp_path / "b", PurePosixPath("."))
    with pytest.raises(Unread):
        brat_sections(text)
    with pytest.raises(AnnotationImportError) as info:
        labels_of(tmp_path / "b")
    assert info.value.path == str(conf) and why in str(info.value), str(info.value)


def test_drawing_options_and_other_sections_name_no_type(tmp_path):
    """brat's sections besides ``[labels]``, each written as brat's example configurations write them, and the
    lines of ``[labels]`` under another (children, which ``get_labels`` does not read), name nothing."""
    text = """# the drawing first, as brat's CoNLL-2002 configuration has it
[drawing]
X_Y\tbgColor:#ffccaa
PER	fgColor:black, bgColor:lightgreen, borderColor:darken
SPAN_DEFAULT\tfgColor:black, bgColor:lightgreen, borderColor:darken
ARC_DEFAULT\tcolor:black, dashArray:-, arrowHead:triangle-5, labelArrow:none
Mention         glyph:(N)|(n)|(o), position:left
Negation\tbox:crossed, glyph:<NONE>, dashArray:<NONE>
[options]
Arcs bundle:all
Text direction:rtl
[labels]
X_Y | X Y
 PER | P:E:R
[unknown]
PER|Person
"""
    sections, warnings = brat_sections(text)
    assert brat_labels(sections) == label_lines(write(tmp_path / "b" / "visual.conf", text)) == {"X_Y": ["X Y"]}
    assert warnings == ["unexpected section [unknown]"]
    document(tmp_path / "b", PurePosixPath("."))
    assert labels_of(tmp_path / "b") == {"x": ["X Y", "PER"]}


#: pieces of generated visual.conf files: names, settings, other lines
GENERATED_NAMES = ["A_B", "Org", "X_Y", "Product Name", "a:b", "!Org", "Ünï", "#x", "a-b", "<EMPTY>", "PER", "<ENTITY>"]
GENERATED_SETTINGS = ["bgColor:red", "fgColor:black", "glyph:*", "Arg:a", "Arg?:a", "Arg*:b", "<URL>:x", "Arg{1-2}:a"]
RISKY = ["!", "<M>", "<U>", "bgColor:", ":x", "Arg{0}:a", "Arg{2-1}:a", "Arg1*:a", "a b:c", "x", "k:a||b", "<INHERIT>"]
OTHER_LINES = ["[labels]", "[drawing]", "[options]", "[ labels ]", "# c", "  ---", "", "<M>=Org", "<M>=k:v"]


def generated_line(generator: random.Random, risk: float) -> str:
    if generator.random() < 0.15:
        return generator.choice(OTHER_LINES if generator.random() > risk else ["<ENTITY>=x", " \t"])

    def pick(pool: List[str]) -> str:
        return generator.choice(RISKY if generator.random() < risk else pool)

    line = " " * generator.choice([0] * 8 + [1, 1, 2] + [3] * (generator.random() < risk)) + " | ".join(
        pick(GENERATED_NAMES) for _ in range(generator.randint(1, 3))
    )
    if generator.random() < 0.5:
        settings = generator.choice([", ", ",", " , "]).join(pick(GENERATED_SETTINGS) for _ in range(3))
        line += generator.choice(["\t", " ", "  ", " \t"]) + settings
    return line


def test_generated_files_are_read_as_brat_parses_them(tmp_path):
    """Generated files (seeded) of names, settings, macros, sections, indentation: the import refuses a file exactly
    when brat drops it, and otherwise reads the names brat reads. (The same generator, run against brat's own
    projectconfig.py, agreed on 8000 files.)"""
    generator, read, refused = random.Random(11), 0, 0
    for _ in range(400):
        risk = generator.choice([0, 0, 0.2])
        text = "[labels]\n" + "\n".join(generated_line(generator, risk) for _ in range(generator.randint(1, 8)))
        conf = write(tmp_path / "visual.conf", text)
        try:
            expected = brat_labels(brat_sections(text)[0])
        except Unread:
            with pytest.raises(AnnotationImportError):
                label_lines(conf)
            refused += 1
            continue
        assert label_lines(conf) == expected, text
        read += 1
    assert read > 100 and refused > 100, (read, refused)


# -- the exported visual.conf -----------------------------------------------------------------------------------------


def export(tmp_path: Path, ids_and_types: List[Tuple[str, List[str]]], out: str = "brat") -> Path:
    records = [
        {
            "id": doc_id,
            "tokens": [f"w{i}" for i in range(len(types))],
            "spans": [{"type": t, "start": i, "end": i + 1, "probability": 0.5} for i, t in enumerate(types)],
            "sentence_ends": [len(types)],
        }
        for doc_id, types in ids_and_types
    ]
    source = write(tmp_path / f"{out}.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    assert eer_export.main(["brat", str(source), str(tmp_path / out)]) == 0
    return tmp_path / out


TYPES = ["PER", "Product Name", "a:b", "Ünïcode", "人名", "-", "SPAN_DEFAULT", "ORG", "LOC", "x=y", "C++", "#tag"]


def test_the_exported_visual_conf_parses_as_brat_parses_it_and_comes_back(tmp_path):
    out = export(tmp_path, [("news/d1", TYPES[:7]), ("d2", TYPES[7:])])
    text = (out / "visual.conf").read_text(encoding="utf-8")
    sections, warnings = brat_sections(text)
    assert warnings == [] and set(sections) == {"general", "labels", "drawing"} and sections["general"] == []
    forms = sorted(storage_form(t) for t in TYPES)
    assert brat_labels(sections) == {storage_form(t): [t] for t in TYPES if storage_form(t) != t}
    drawing = {names[0]: settings for _, names, settings in sections["drawing"]}
    assert drawing.pop("SPAN_DEFAULT") == {"fgColor": ["black"], "bgColor": ["lightgreen"], "borderColor": ["darken"]}
    drawn = [f for f in forms if f != "SPAN_DEFAULT"]  # a type written SPAN_DEFAULT is drawn by the default
    assert drawing == {f: {"bgColor": [PALETTE[n % len(PALETTE)]]} for n, f in enumerate(drawn)}
    assert len({drawing[f]["bgColor"][0] for f in drawn[: len(PALETTE)]}) == len(PALETTE)  # ten types, ten colours
    assert labels_of(out) == {"news/d1": TYPES[:7], "d2": TYPES[7:]}  # the names come back, in the subdirectory too
    again = export(tmp_path, [("d2", TYPES[7:]), ("news/d1", TYPES[:7])], "again")
    assert (again / "visual.conf").read_text(encoding="utf-8") == text  # the same types, the same file


def test_an_export_of_types_brat_takes_as_they_are_draws_them(tmp_path):
    out = export(tmp_path, [("d", ["PER", "ORG"])])
    assert (out / "visual.conf").read_text(encoding="utf-8") == (
        f"[labels]\n[drawing]\n{SPAN_DEFAULT}\nORG\tbgColor:{PALETTE[0]}\nPER\tbgColor:{PALETTE[1]}\n"
    )
    assert brat_sections((out / "visual.conf").read_text(encoding="utf-8"))[1] == []
    assert visual_conf({}) == f"[labels]\n[drawing]\n{SPAN_DEFAULT}\n"  # no type: brat's default alone
