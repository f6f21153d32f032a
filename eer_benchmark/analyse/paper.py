"""The paper's numbers, read from its LaTeX source (nothing typed by hand): the benchmark table
(``\\label{table:benchmark}``), the EER hyperparameter table (``\\label{table:robustness}``), and its
sentences on training settings and on the convergence of rho_hat.

The report reads them from ``paper_numbers.json`` beside this module (package data), so that a clone
of the repository renders its report without the paper; that file is written from the LaTeX source by
``python scripts/paper_numbers.py ../shared/paper/eer-paper.tex`` (:func:`paper_numbers`), and a
test checks it against the source when ``../shared`` is present."""

import json
import re
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

from eer_benchmark.plan.approaches import FAMILIES, GOLD_APPROACHES, split_approach

# a paper table row label from our approach (approaches.FAMILIES: each family's paper name, and whether its rows
# name the encoder): "eer_short" -> "EER-BERT-short", "gold" -> "Gold-BERT-all", "cbl_lstm_shortest" -> "CBL-LSTM-shortest"
PAPER_BLOCKS = {"Non-Native Speaker": "nns", "Exploratory Expert": "ee"}


def _latex_cell(text: str) -> Optional[float]:
    """``\\textbf{89.0}$^\\dagger$`` -> 89.0; ``02.6`` -> 2.6; a cell without a number -> None."""
    match = re.search(r"\d+(?:\.\d+)?", re.sub(r"\\[a-z]+|[{}$^:,\\]", " ", text))
    return float(match.group(0)) if match else None


def paper_table(tex: str) -> Tuple[List[str], Dict[Tuple[str, str], Dict[str, float]]]:
    """The benchmark table of the paper (``\\label{table:benchmark}``): its dataset columns and
    ``{(block, row label): {column: F1}}`` with block ``''`` (gold rows), ``'nns'`` or ``'ee'``."""
    end = tex.index(r"\label{table:benchmark}")
    start = tex.rindex(r"\begin{tabular}", 0, end)
    body = tex[start : tex.index(r"\end{tabular}", start)]
    body = re.sub(r"^\\begin\{tabular\}\{[^}]*\}", "", body)
    columns: List[str] = []
    rows: Dict[Tuple[str, str], Dict[str, float]] = {}
    block = ""
    for line in body.split(r"\\"):
        line = re.sub(r"\\(toprule|midrule|bottomrule|rule\{[^}]*\}\{[^}]*\}|cmidrule\{[^}]*\})", "", line).strip()
        if not line:
            continue
        if r"\multicolumn" in line:
            block = next((code for text, code in PAPER_BLOCKS.items() if text in line), block)
            continue
        cells = [c.strip() for c in line.split("&")]
        if not columns:
            columns = cells[1:]
            continue
        rows[(block, cells[0])] = {c: v for c, cell in zip(columns, cells[1:]) if (v := _latex_cell(cell)) is not None}
    return columns, rows


def paper_robustness(tex: str) -> Dict[Tuple[float, float], Dict[str, object]]:
    """The paper's EER hyperparameter table (``\\label{table:robustness}``, EER-short on CoNLL English EE):
    ``{(rho - gamma, rho + gamma): {"f1": [per sample...], "avg": mean, "mark": "*"/"†"/""}}``."""
    if r"\label{table:robustness}" not in tex:
        return {}
    end = tex.index(r"\label{table:robustness}")
    start = tex.rindex(r"\begin{tabular}", 0, end)
    body = tex[start : tex.index(r"\end{tabular}", start)]
    rows: Dict[Tuple[float, float], Dict[str, object]] = {}
    for line in body.split(r"\\"):
        match = re.match(
            r"\s*(?:\\midrule\s*)?\$\[([\d.]+),\s*([\d.]+)\]\^?(\\dagger|\*)?\$\s*&(.*)", line.strip(), re.S
        )
        if not match:
            continue
        values = [float(v) for v in re.findall(r"\d+\.\d+", match.group(4))]
        mark = {"\\dagger": "†", "*": "*"}.get(match.group(3) or "", "")
        rows[(float(match.group(1)), float(match.group(2)))] = {"f1": values[:-1], "avg": values[-1], "mark": mark}
    return rows


def paper_convergence(tex: str) -> str:
    """The paper's sentence on the convergence of rho_hat (its MAE against rho*), markup removed."""
    text = re.sub(r"\\(rho|gamma)\b", r"\1", re.sub(r"\\rhohat", "rho_hat", tex)).replace("^", "")
    match = re.search(r"[^.]*mean absolute error of only[^.]*\.[^.]*\.[^)]*\)", text)
    if not match:
        return ""
    return re.sub(
        r"\s+", " ", re.sub(r"[$~{}]|\\[a-z]+", lambda m: "" if m.group(0) in "$~{}" else " ", match.group(0))
    ).strip()


def paper_row_label(approach: str) -> Tuple[str, str]:
    """``eer_short`` -> (``'EER'``, ``'short'``); ``gold`` -> (``'Gold'``, ``'all'``)."""
    family, variant = split_approach(approach)
    return FAMILIES[family].paper, variant


#: scenario types the paper has no block of (no paper numbers, no paper claims): shown in sections of their own
NO_PAPER_SCENARIO_TYPES = ("dictionary",)


def paper_value(rows, scenario_type: Optional[str], approach: str, column: str) -> Tuple[Optional[float], str]:
    """The paper's F1 for our approach in a scenario block, and the paper row it comes from: the same
    approach, or, when the block has no row of that variant at all (the paper's NNS block has only
    ``-all`` rows), the same family's ``all`` row."""
    family, variant = paper_row_label(approach)
    names_encoder = FAMILIES[split_approach(approach)[0]].paper_encoder
    block = "" if approach in GOLD_APPROACHES else scenario_type
    block_variants = {label.rsplit("-", 1)[-1] for (b, label) in rows if b == block}
    for wanted in (variant,) if variant in block_variants else ("all",):
        label = f"{family}-BERT-{wanted}" if names_encoder else f"{family}-{wanted}"
        if (block, label) in rows and column in rows[(block, label)]:
            return rows[(block, label)][column], label
    return None, ""


def paper_settings(tex: str) -> str:
    """The paper's own sentences on learning rate, batch size and epochs, LaTeX markup removed."""
    text = re.sub(r"\\footnote\{[^}]*\}|\\citep?\{[^}]*\}|~", " ", tex)
    sentences = re.split(r"(?<=\.)\s+", text)
    wanted = [s for s in sentences if re.search(r"learning rate of|batch size, we use|epochs for the", s)]
    plain = [
        re.sub(
            r"\s+", " ", re.sub(r"\\(textbf|tt)\b|[{}$]|\\times\s*", lambda m: "x" if "times" in m.group(0) else "", s)
        ).strip()
        for s in wanted
    ]
    plain = [re.sub(r"\s+([.,])", r"\1", p.replace("\\%", "%")) for p in plain]
    return " ".join(f'"{s}"' for s in plain[:3])


#: the paper's numbers as package data, written from its LaTeX source by :func:`main`
PAPER_NUMBERS = Path(__file__).with_name("paper_numbers.json")


class Paper(NamedTuple):
    """What the report sets beside its own numbers (see the module docstring)."""

    columns: List[str]
    rows: Dict[Tuple[str, str], Dict[str, float]]  # as :func:`paper_table`
    robustness: Dict[Tuple[float, float], Dict[str, object]]  # as :func:`paper_robustness`
    settings: str  # as :func:`paper_settings`
    convergence: str  # as :func:`paper_convergence`


def paper_numbers(tex: str) -> dict:
    """The paper's numbers from its LaTeX source as JSON data (the content of ``paper_numbers.json``)."""
    columns, rows = paper_table(tex)
    return {
        "source": "the paper's LaTeX source, by `python scripts/paper_numbers.py ../shared/paper/eer-paper.tex`",
        "columns": columns,
        "rows": [{"block": block, "row": label, "f1": values} for (block, label), values in rows.items()],
        "robustness": [{"interval": list(interval), **entry} for interval, entry in paper_robustness(tex).items()],
        "settings": paper_settings(tex),
        "convergence": paper_convergence(tex),
    }


def paper_from_numbers(data: dict) -> Paper:
    """:class:`Paper` from :func:`paper_numbers`' JSON data."""
    rows = {(row["block"], row["row"]): row["f1"] for row in data["rows"]}
    robustness = {tuple(e["interval"]): {k: v for k, v in e.items() if k != "interval"} for e in data["robustness"]}
    return Paper(data["columns"], rows, robustness, data["settings"], data["convergence"])


def read_paper(path: Path = PAPER_NUMBERS) -> Paper:
    """The paper's numbers from ``paper_numbers.json`` (the default) or from a LaTeX source (``.tex``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"the paper's numbers are not at {path}: pass the paper's LaTeX source or a paper_numbers.json with --paper"
        )
    if path.suffix == ".tex":
        return paper_from_numbers(paper_numbers(path.read_text()))
    try:
        return paper_from_numbers(json.loads(path.read_text()))
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(
            f"{path}: not the paper's numbers ({err!r}); write it again with `python scripts/paper_numbers.py TEX -o {path}`"
        ) from None


def numbers_text(data: dict) -> str:
    """:func:`paper_numbers`' data as the text of ``paper_numbers.json``: one table row per line."""

    def value(v):
        if isinstance(v, list) and v and isinstance(v[0], dict):
            return "[\n" + ",\n".join(f"  {json.dumps(item, ensure_ascii=False)}" for item in v) + "\n ]"
        return json.dumps(v, ensure_ascii=False)

    return "{\n" + ",\n".join(f" {json.dumps(k)}: {value(v)}" for k, v in data.items()) + "\n}\n"
