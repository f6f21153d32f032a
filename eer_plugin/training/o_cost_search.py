"""The Raw+CD baseline's cost-aware decoding (paper, "Cost-aware Decoding"): the search behind
``allennlp tune-o-cost`` (:mod:`eer_plugin.commands.tune_o_cost` parses its arguments).

Searches the O-cost ``b_O >= 0`` subtracted from the ``O`` score at decoding, maximising dev span F1
with Gaussian-process Bayesian optimisation (scikit-optimize ``gp_minimize``; 30 evaluations,
log-uniform on [1e-4, 1e2], seeded), as the authors did. The encoder runs once per data set: its
tag scores do not depend on ``b_O``, so each evaluation only re-decodes cached emissions.

Writes ``<archive dir>/o_cost.json`` (every evaluation, the best cost, dev and test metrics) and a
copy of the archive whose config sets ``model.o_cost`` (``model_o_cost.tar.gz`` by default), so
``allennlp predict`` / ``evaluate`` on that archive decode with the tuned cost.
"""

import json
import logging
import tarfile
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import torch
from allennlp.models.archival import CONFIG_NAME
from tqdm import tqdm

from eer_plugin.common.atomic import write_json
from eer_plugin.common.errors import UserError
from eer_plugin.common.outputs import check_outputs, replacing
from eer_plugin.core.spans import SpanCounts
from eer_plugin.corpus import strict_json
from eer_plugin.inference.decoding import batches
from eer_plugin.runtime.archive import check_members, load_model_archive
from eer_plugin.runtime.errors import check_entity_types

logger = logging.getLogger(__name__)


class CachedDecoder:
    """Encoder outputs of a data set computed once; decodes them under any O-cost."""

    def __init__(self, model, reader, path: str, batch_size: int = 8, cuda_device: int = -1):
        self.model = model
        check_entity_types(model, reader.read_documents(path), path)
        instances = list(reader.read(path))
        self.batches: List[Tuple[torch.Tensor, torch.Tensor, List[dict]]] = []
        model.eval()
        with torch.no_grad():
            for part in batches(instances, batch_size, desc=f"encoding {Path(path).name}"):
                emissions, mask = model.scores(reader.tensorize(part, model.vocab, cuda_device)["tokens"])
                self.batches.append((emissions, mask, [i["metadata"].metadata for i in part]))

    def metrics(self, o_cost: float) -> Dict[str, float]:
        counts = SpanCounts()
        model = self.model
        # Viterbi runs many tiny ops; intra-op threads only add synchronisation to them (measured:
        # 60x slower with 2 threads on a loaded 2-core machine), so decode single-threaded.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return self._metrics(o_cost, counts, model)
        finally:
            torch.set_num_threads(threads)

    def _metrics(self, o_cost: float, counts: SpanCounts, model) -> Dict[str, float]:
        with torch.no_grad():
            for emissions, mask, metadata in self.batches:
                tags = model.decode(emissions, mask, o_cost)
                for spans, meta in zip(model.word_spans(tags, mask, metadata), metadata):
                    counts.add(spans, meta["gold_spans"] or [])
        return counts.metrics()


def search_o_cost(f1_of_cost, n_calls: int = 30, low: float = 1e-4, high: float = 1e2, seed: int = 0):
    """GP search maximising ``f1_of_cost(cost)``; returns (best cost, best f1, [(cost, f1), ...])."""
    from skopt import gp_minimize
    from skopt.space import Real

    evaluations: List[Tuple[float, float]] = []

    def objective(point):
        f1 = f1_of_cost(float(point[0]))
        evaluations.append((float(point[0]), f1))
        return -f1

    result = gp_minimize(
        objective,
        [Real(low, high, prior="log-uniform")],
        n_calls=n_calls,
        random_state=seed,
        n_initial_points=min(10, n_calls),
    )
    return float(result.x[0]), -float(result.fun), evaluations


def archive_with_o_cost(archive_path: str, o_cost: float, output_path: str) -> None:
    """Copies a model archive, setting ``model.o_cost`` in its config (written under a temporary
    name, then renamed: never a half-written archive)."""
    with replacing(output_path) as temporary:
        _copy_with_o_cost(archive_path, o_cost, temporary)


def _copy_with_o_cost(archive_path: str, o_cost: float, output_path: str) -> None:
    with (
        tarfile.open(archive_path) as source,
        tarfile.open(output_path, "w:gz") as target,
        tempfile.TemporaryDirectory() as tmp,
    ):
        check_members(source, archive_path)
        for member in source.getmembers():
            data = source.extractfile(member) if member.isfile() else None
            if member.name.lstrip("./") == CONFIG_NAME:
                config = strict_json.loads(data.read().decode("utf-8"))
                config["model"]["o_cost"] = o_cost
                path = Path(tmp) / CONFIG_NAME
                path.write_text(json.dumps(config, indent=2))
                member.size = path.stat().st_size
                with open(path, "rb") as handle:
                    target.addfile(member, handle)
            else:
                target.addfile(member, data)


def tune_o_cost(
    archive_file: str,
    dev_file: str,
    test_file: Optional[str] = None,
    n_calls: int = 30,
    low: float = 1e-4,
    high: float = 1e2,
    seed: int = 0,
    batch_size: int = 8,
    cuda_device: int = -1,
    output_archive: Optional[str] = None,
) -> Tuple[Dict, str, str]:
    """Searches the O-cost of an archive on ``dev_file``; writes ``o_cost.json`` beside the archive and
    the archive with the tuned cost. Returns ``(report, path of o_cost.json, path of the new archive)``."""
    for name, path in (("dev file", dev_file), ("test file", test_file)):
        if path is not None and not Path(path).is_file():
            raise UserError(f"{path}: no such {name}")
    directory = Path(archive_file).parent
    output = output_archive or str(directory / "model_o_cost.tar.gz")
    check_outputs(
        [("archive_file", archive_file), ("dev_file", dev_file), ("--test-file", test_file)],
        [("--output-archive", output), ("o_cost.json", str(directory / "o_cost.json"))],
    )
    archive = load_model_archive(archive_file, cuda_device=cuda_device)
    model, reader = archive.model, archive.validation_dataset_reader
    dev = CachedDecoder(model, reader, dev_file, batch_size, cuda_device)
    progress = tqdm(total=n_calls, desc="O-cost search")

    def dev_f1(cost: float) -> float:
        progress.update()
        return dev.metrics(cost)["f1-measure-overall"]

    best_cost, best_f1, evaluations = search_o_cost(dev_f1, n_calls, low, high, seed)
    progress.close()
    report = {
        "o_cost": best_cost,
        "dev_f1": best_f1,
        "dev_f1_without_cost": dev.metrics(0.0)["f1-measure-overall"],
        "evaluations": [{"o_cost": c, "dev_f1": f} for c, f in evaluations],
        "seed": seed,
    }
    if test_file:
        test = CachedDecoder(model, reader, test_file, batch_size, cuda_device)
        report["test"] = test.metrics(best_cost)
        report["test_without_cost"] = test.metrics(0.0)
    write_json(report, str(directory / "o_cost.json"))
    archive_with_o_cost(archive_file, best_cost, output)
    return report, str(directory / "o_cost.json"), output
