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

import io
import json
import logging
import math
import tarfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import torch
from tqdm import tqdm

from eer_plugin.common.atomic import write_json
from eer_plugin.common.errors import ArchiveError, UserError, one_line, relative_paths_hint
from eer_plugin.common.outputs import check_outputs, replacing
from eer_plugin.core.spans import SpanCounts
from eer_plugin.corpus import strict_json
from eer_plugin.inference.decoding import batches
from eer_plugin.runtime.archive import CONFIG_NAME, check_members, load_model_archive
from eer_plugin.runtime.errors import check_entity_types, check_unannotated_tag

logger = logging.getLogger(__name__)


class CachedDecoder:
    """Encoder outputs of a data set computed once; decodes them under any O-cost."""

    def __init__(self, model, reader, path: str, batch_size: int = 8, cuda_device: int = -1):
        self.model = model
        documents = reader.read_documents(path)
        check_entity_types(model, documents, path)
        check_unannotated_tag(model, documents, path)
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


#: the seeds numpy's random state (hence scikit-optimize's) takes
SEEDS = range(2**32)


def check_search(n_calls: int, low: float, high: float, seed: int, batch_size: int) -> None:
    """:class:`UserError` (one line, the option and the values it takes) for settings the search cannot run with;
    checked before the model is loaded."""
    problems = [
        (n_calls < 1, f"--n-calls {n_calls}: the search needs at least 1 evaluation"),
        (
            not (math.isfinite(low) and math.isfinite(high) and 0 < low < high),
            f"--low {low} --high {high}: the costs are searched log-uniformly, so both must be finite and "
            "0 < low < high",
        ),
        (seed not in SEEDS, f"--seed {seed}: a seed is an integer from 0 to {SEEDS.stop - 1}"),
        (batch_size < 1, f"--batch-size {batch_size}: at least 1 document per batch"),
    ]
    for failed, message in problems:
        if failed:
            raise UserError(message)


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


def model_config(archive_path: str) -> dict:
    """The ``config.json`` of a model archive or serialization directory, read before the search so that a config
    the copy cannot rewrite is one :class:`ArchiveError` before the work, not a traceback after it."""
    source = Path(archive_path)
    try:
        if source.is_dir():
            data = (source / CONFIG_NAME).read_bytes()
        else:
            with tarfile.open(source) as archive:
                check_members(archive, archive_path)
                member = next(m for m in archive.getmembers() if m.name.lstrip("./") == CONFIG_NAME and m.isfile())
                data = archive.extractfile(member).read()
        config = strict_json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, strict_json.JsonError) as error:
        raise ArchiveError(
            f"{archive_path}: its {CONFIG_NAME} is no UTF-8 JSON ({one_line(error)[:200]}): edited by hand? the copy "
            "with the tuned cost rewrites it; use the model.tar.gz that eer-ner train wrote"
        ) from None
    if not isinstance(config, dict) or not isinstance(config.get("model"), dict):
        raise ArchiveError(
            f"{archive_path}: its {CONFIG_NAME} has no model object; use the model.tar.gz that eer-ner train wrote"
        )
    return config


def archive_with_o_cost(archive_path: str, o_cost: float, output_path: str, config: Optional[dict] = None) -> None:
    """Copies a model archive (or packs a serialization directory as ``allennlp train`` archives it: its config,
    ``best.th`` as ``weights.th``, its vocabulary), setting ``model.o_cost`` in its config (written under a
    temporary name, then renamed: never a half-written archive)."""
    config = dict(config if config is not None else model_config(archive_path))
    config["model"] = {**config["model"], "o_cost": o_cost}
    text = json.dumps(config, indent=2).encode("utf-8")
    with replacing(output_path) as temporary, tarfile.open(temporary, "w:gz") as target:
        member = tarfile.TarInfo(CONFIG_NAME)
        member.size, member.mode = len(text), 0o644
        target.addfile(member, io.BytesIO(text))
        if Path(archive_path).is_dir():
            target.add(str(Path(archive_path) / "best.th"), arcname="weights.th")
            target.add(str(Path(archive_path) / "vocabulary"), arcname="vocabulary")
            return
        with tarfile.open(archive_path) as source:
            for member in check_members(source, archive_path):
                if member.name.lstrip("./") != CONFIG_NAME:
                    target.addfile(member, source.extractfile(member) if member.isfile() else None)


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
    check_search(n_calls, low, high, seed, batch_size)
    for name, path in (("dev file", dev_file), ("test file", test_file)):
        if (
            path is not None and not Path(path).exists()
        ):  # the reader names what else it cannot read (a folder of *_conll files it can)
            raise UserError(f"{path}: no such {name}{relative_paths_hint(path)}")
    # beside the archive, or inside the serialization directory given as the model
    directory = Path(archive_file) if Path(archive_file).is_dir() else Path(archive_file).parent
    output = output_archive or str(directory / "model_o_cost.tar.gz")
    check_outputs(
        [("archive_file", archive_file), ("dev_file", dev_file), ("--test-file", test_file)],
        [("--output-archive", output), ("o_cost.json", str(directory / "o_cost.json"))],
    )
    archive = load_model_archive(archive_file, cuda_device=cuda_device)
    config = model_config(archive_file)
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
    archive_with_o_cost(archive_file, best_cost, output, config)  # the model first: the report says it is there
    write_json(report, str(directory / "o_cost.json"))
    return report, str(directory / "o_cost.json"), output
