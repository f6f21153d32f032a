"""The paper's numbers, read from its LaTeX source (nothing typed by hand): the benchmark table
(``\\label{table:benchmark}``), the EER hyperparameter table (``\\label{table:robustness}``), and its
sentences on training settings and on the convergence of rho_hat."""
import re
from typing import Dict, List, Optional, Tuple

from eer_plugin.benchmark.plan import GOLD_APPROACHES, split_approach

# a paper table row label -> our approach name: "EER-BERT-short" -> "eer_short", "Gold-BERT-all" -> "gold",
# "Gold-SNS-BERT-all" -> "gold_sns", "CBL-LSTM-shortest" -> "cbl_lstm_shortest" (the LSTM rows name no BERT)
PAPER_FAMILIES = {
    "Gold": "gold", "Gold-SNS": "gold_sns", "Raw": "raw", "Raw+CD": "raw_cd", "CBL": "cbl_bert", "CBL-LSTM": "cbl_lstm",
    "SNS": "sns", "EER": "eer",
}  # fmt: skip
PAPER_NO_ENCODER = ("CBL-LSTM",)  # families whose row label has no "-BERT"
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
    body = tex[start:tex.index(r"\end{tabular}", start)]
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
    body = tex[start:tex.index(r"\end{tabular}", start)]
    rows: Dict[Tuple[float, float], Dict[str, object]] = {}
    for line in body.split(r"\\"):
        match = re.match(r"\s*(?:\\midrule\s*)?\$\[([\d.]+),\s*([\d.]+)\]\^?(\\dagger|\*)?\$\s*&(.*)", line.strip(), re.S)
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
    return re.sub(r"\s+", " ", re.sub(r"[$~{}]|\\[a-z]+", lambda m: "" if m.group(0) in "$~{}" else " ", match.group(0))).strip()


def paper_row_label(approach: str) -> Tuple[str, str]:
    """``eer_short`` -> (``'EER'``, ``'short'``); ``gold`` -> (``'Gold'``, ``'all'``)."""
    family, variant = split_approach(approach)
    paper_family = next(name for name, ours in PAPER_FAMILIES.items() if ours == family)
    return paper_family, variant


def paper_value(rows, scenario_type: Optional[str], approach: str, column: str) -> Tuple[Optional[float], str]:
    """The paper's F1 for our approach in a scenario block, and the paper row it comes from: the same
    approach, or, when the block has no row of that variant at all (the paper's NNS block has only
    ``-all`` rows), the same family's ``all`` row."""
    family, variant = paper_row_label(approach)
    block = "" if approach in GOLD_APPROACHES else scenario_type
    block_variants = {label.rsplit("-", 1)[-1] for (b, label) in rows if b == block}
    for wanted in (variant,) if variant in block_variants else ("all",):
        label = f"{family}-{wanted}" if family in PAPER_NO_ENCODER else f"{family}-BERT-{wanted}"
        if (block, label) in rows and column in rows[(block, label)]:
            return rows[(block, label)][column], label
    return None, ""


def paper_settings(tex: str) -> str:
    """The paper's own sentences on learning rate, batch size and epochs, LaTeX markup removed."""
    text = re.sub(r"\\footnote\{[^}]*\}|\\citep?\{[^}]*\}|~", " ", tex)
    sentences = re.split(r"(?<=\.)\s+", text)
    wanted = [s for s in sentences if re.search(r"learning rate of|batch size, we use|epochs for the", s)]
    plain = [re.sub(r"\s+", " ", re.sub(r"\\(textbf|tt)\b|[{}$]|\\times\s*", lambda m: "x" if "times" in m.group(0) else "", s)).strip() for s in wanted]
    plain = [re.sub(r"\s+([.,])", r"\1", p.replace("\\%", "%")) for p in plain]
    return " ".join(f"\"{s}\"" for s in plain[:3])
