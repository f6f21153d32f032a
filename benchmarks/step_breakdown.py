"""Where a training step's time goes, how many sequential operations the CRF issues, and int8 tagging (issue 52).

Parts of the speed report (:mod:`speed_report`, ``--parts ops,breakdown,int8``), each a function
returning a JSON-ready dict:

* :func:`sequential_ops`: the ATen operations (each a kernel launch on a GPU) that one training step's
  CRF work issues at ``n = 512`` (4 rows, 17 BILUO tags): the EER loss forward + backward (partial NLL =
  two ``log Z``, the marginals for ``rho_hat``, the ratio hinge) and the Viterbi decoding of the same
  batch, counted by a ``TorchDispatchMode`` (every operation that reaches a kernel, the backward's
  included), on the sequential path (``before``) and on the parallel scan (``after``,
  :mod:`eer_plugin.core.scan`). On a GPU, where each costs a launch of a few microseconds whatever
  its size, this count bounds the CRF's time per step from below.
* :func:`step_breakdown`: one EER training step of an encoder at 4 x 512 subwords split into the encoder
  forward+backward alone, the EER loss (CRF on the tag scores: partial NLL, marginals, ratio term,
  forward+backward) alone, the optimizer step (AdamW), and a dev-pass batch split into the encoder
  forward and the decoding + metrics (Viterbi of the batch and the span counts), each as a share.
* :func:`int8_tagging`: a trained model tagging CoNLL-2003 test through ``Tagger.load(...,
  precision=...)`` in fp32, int8 (dynamic quantization of the encoder's linear layers: per-channel
  weights, 8-bit activations on VNNI CPUs, :mod:`eer_plugin.inference.precision`) and, where the CPU
  computes it natively, bf16: words per second (interleaved rounds, medians) and span F1.
"""

import statistics
import time
from pathlib import Path
from typing import Callable, Dict

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class _OpCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def count_ops(fn: Callable[[], object]) -> int:
    """The ATen operations that reach a kernel while ``fn`` runs (its backward included)."""
    counter = _OpCounter()
    with counter:
        fn()
    return counter.count


def _crf_batch(batch, n, k, seed=0):
    from eer_plugin.core.crf import LATENT, observations_to_allowed
    from eer_plugin.core.tags import BiluoScheme

    types = ["PER", "LOC", "ORG", "MISC"][: (k - 1) // 4]
    scheme = BiluoScheme(types)
    gen = torch.Generator().manual_seed(seed)
    emissions = torch.randn(batch, n, k, generator=gen)
    mask = torch.ones(batch, n, dtype=torch.bool)
    observations = torch.where(torch.rand(batch, n, generator=gen) < 0.1, 0, LATENT)
    return scheme, emissions, mask, observations_to_allowed(observations, k)


def sequential_ops(n: int = 512, batch: int = 4, k: int = 17) -> Dict:
    """ATen operations of one step's CRF work (loss forward+backward, Viterbi), sequential path vs. scan."""
    from eer_plugin.core.crf import ConstrainedCRF
    from eer_plugin.core.losses import eer_objective

    scheme, emissions, mask, allowed = _crf_batch(batch, n, k)
    result = {"n": n, "batch": batch, "tags": k}
    for name, path in (("before", "sequential"), ("after", "scan")):
        crf = ConstrainedCRF(scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end(), path=path)

        def loss():
            scores = emissions.clone().requires_grad_()
            eer_objective(crf, scores, mask, allowed, scheme.entity_mask()).loss.backward()

        def decode():
            crf.viterbi(emissions, mask)

        loss(), decode()  # warm caches (step constants)
        counts = {"loss": count_ops(loss), "decoding": count_ops(decode)}
        result[name] = counts["loss"] + counts["decoding"]
        result[f"{name}_loss"], result[f"{name}_decoding"] = counts["loss"], counts["decoding"]
    result["ratio"] = result["before"] / result["after"]
    return result


_CPU = torch.device("cpu")


def _timed(fn: Callable[[], object], device: torch.device = _CPU) -> float:
    """Seconds ``fn`` takes; on a CUDA device from an idle queue to the end of its last kernel."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start


def _interleaved(runs: Dict[str, Callable[[], object]], reps: int, device: torch.device) -> Dict[str, float]:
    """Median seconds of each run, one warm-up each, then ``reps`` interleaved rounds (A, B, A, B, ...)."""
    for run in runs.values():
        run()
    times = {name: [] for name in runs}
    for _ in range(reps):
        for name, run in runs.items():
            times[name].append(_timed(run, device))
    return {name: statistics.median(values) for name, values in times.items()}


def device_facts(device: torch.device) -> Dict:
    """What a figure measured on ``device`` must be read with: the device's name, torch, CUDA."""
    facts = {"device": str(device), "torch": torch.__version__}
    if device.type == "cuda":
        facts.update(device_name=torch.cuda.get_device_name(device), cuda=torch.version.cuda)
    return facts


def step_breakdown(
    encoder: str = "all-MiniLM-L6-v2", batch: int = 4, length: int = 512, reps: int = 3, device: str = "cpu"
) -> Dict:
    """One EER training step and one dev-pass batch of ``encoder`` at ``batch x length`` subwords, split
    into parts timed alone (interleaved rounds, medians) and given as shares of the whole:

    * training: the whole step (forward, loss, backward, AdamW), the encoder forward+backward alone
      (the transformer embedder, backward from a fixed upstream gradient), the EER loss alone (CRF on
      fixed tag scores: partial NLL, marginals, ratio hinge, forward+backward), the optimizer step alone;
    * dev pass (evaluation mode, no gradient): the model's forward on a batch with its tags (partial
      NLL, ``rho_hat`` marginals, Viterbi decoding) vs. the encoder forward alone; decoding + metrics is
      the difference (span matching against gold, Python over words, is not included);
    * the CRF on the path its ``auto`` setting takes on ``device`` (the fused kernels on CUDA where
      Triton runs, else the scan; the sequential path on a CPU); on a CUDA device also the loss, the
      decoding, the step and the dev batch on the other paths (``*_sequential``: the path before the
      scan; ``*_scan``; ``*_fused``), for comparison. On a CPU the scan is
      not timed (its ``O(n K^3 log n)`` arithmetic takes minutes there).

    ``encoder`` is a name or a model directory (its folder name labels the figures); the timings do not
    depend on the weights' values, so a randomly initialised copy of an architecture times it.
    """
    from allennlp.data import Vocabulary
    from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder

    from eer_plugin.core.crf_paths import resolve_crf_path
    from eer_plugin.core.fused import fused_unavailable_reason
    from eer_plugin.core.losses import eer_objective
    from eer_plugin.data.reader import EncoderEmbedder, PartialDocumentReader
    from eer_plugin.models.tagger import EERTagger

    torch.manual_seed(0)
    vocab = Vocabulary(non_padded_namespaces=["labels"])
    vocab.add_tokens_to_namespace(
        ["O", "_"] + [f"{p}-{t}" for t in ("PER", "LOC", "ORG", "MISC") for p in "BILU"], "labels"
    )
    device = torch.device(device)
    model = EERTagger(vocab, BasicTextFieldEmbedder({"tokens": EncoderEmbedder(encoder)}), precision="fp32")
    model.to(device)
    reader = PartialDocumentReader(model_name=encoder, max_length=length)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, reader.tokenizer.vocab_size, (batch, length), generator=gen)
    ids[:, 0], ids[:, -1] = reader.bookends
    tokens = {
        "tokens": {
            "token_ids": ids.to(device),
            "mask": torch.ones(batch, length, dtype=torch.bool, device=device),
            "type_ids": torch.zeros(batch, length, dtype=torch.long, device=device),
        }
    }
    tags = torch.full((batch, length), vocab.get_token_index("_", "labels"), dtype=torch.long)
    tags[torch.rand(batch, length, generator=gen) < 0.1] = vocab.get_token_index("O", "labels")
    tags = tags.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    mask = tokens["tokens"]["mask"]
    with torch.no_grad():
        emissions = model.emissions(tokens)
        hidden_grad = torch.randn_like(model.text_field_embedder(tokens))
    allowed = model.observations(tags, mask)

    def train_step():
        model.train()
        optimizer.zero_grad(set_to_none=True)
        model(tokens=tokens, tags=tags)["loss"].backward()
        optimizer.step()

    def encoder_forward_backward():
        model.train()
        optimizer.zero_grad(set_to_none=True)
        model.text_field_embedder(tokens).backward(hidden_grad)

    def loss():
        scores = emissions.clone().requires_grad_()
        eer_objective(
            model.crf,
            scores,
            mask,
            allowed,
            model._entity_mask,
            ratio_mask=model.ratio_mask(mask),
            entity_ratio=model.entity_ratio,
            ratio_margin=model.ratio_margin,
            ratio_loss_weight=model.ratio_loss_weight,
        ).loss.backward()

    def optimizer_step():
        optimizer.step()

    def dev_batch():
        model.eval()
        with torch.no_grad():
            model(tokens=tokens, tags=tags)

    def encoder_forward():
        model.eval()
        with torch.no_grad():
            model.text_field_embedder(tokens)

    def decoding():
        with torch.no_grad():
            model.decode(emissions, mask)

    def on_path(fn, path):
        def run():
            model.crf.path = path
            try:
                fn()
            finally:
                model.crf.path = "auto"

        return run

    model.crf.path = "auto"
    encoder_forward_backward()
    optimizer_step()  # AdamW state exists before timing
    runs = {
        "step": train_step,
        "encoder_forward_backward": encoder_forward_backward,
        "loss": loss,
        "optimizer": optimizer_step,
        "dev_batch": dev_batch,
        "encoder_forward": encoder_forward,
        "decoding": decoding,
    }
    crf_path = resolve_crf_path("auto", device, model.crf.num_tags)
    # on a GPU also the other paths: the sequential one (before the scan), the scan and, where Triton runs, the
    # fused kernels (the one of them that ``auto`` takes is the row's own)
    others = [
        p
        for p in ("sequential", "scan", "fused")
        if crf_path != "sequential" and p != crf_path and (p != "fused" or fused_unavailable_reason(device) is None)
    ]
    for path in others:
        runs.update({f"{name}_{path}": on_path(runs[name], path) for name in ("step", "loss", "decoding", "dev_batch")})
    times = _interleaved(runs, reps, device)
    step, dev = times["step"], times["dev_batch"]
    shares = {name: times[name] / step for name in ("encoder_forward_backward", "loss", "optimizer")}
    shares["other"] = 1.0 - sum(shares.values())
    dev_shares = {"encoder_forward": times["encoder_forward"] / dev}
    dev_shares["decoding_and_metrics"] = 1.0 - dev_shares["encoder_forward"]
    result = {
        "encoder": Path(encoder).name if Path(encoder).is_dir() else encoder,
        **device_facts(device),
        "crf_path": crf_path,
        "batch": batch,
        "length": length,
        "reps": reps,
        "seconds": times,
        "train_shares": shares,
        "dev_shares": dev_shares,
        "loss_and_decoding_over_encoder": (times["loss"] + times["decoding"]) / times["encoder_forward_backward"],
        "dev_pass_over_encoder_forward": dev / times["encoder_forward"],
    }
    for path in others:
        result[f"{path}_path"] = {
            "loss_and_decoding_over_encoder": (times[f"loss_{path}"] + times[f"decoding_{path}"])
            / times["encoder_forward_backward"],
            "dev_pass_over_encoder_forward": times[f"dev_batch_{path}"] / times["encoder_forward"],
        }
    return result


CONLL_TEST = Path(__file__).resolve().parents[2] / "shared" / "data" / "conll2003-en" / "test.txt"


def _span_f1(documents, outputs) -> float:
    """Micro span F1 in points (exact word boundaries and type)."""
    gold = {(d.id, s, e, t) for d in documents for s, e, t in d.spans}
    predicted = {(d.id, s["start"], s["end"], s["type"]) for d, out in zip(documents, outputs) for s in out["spans"]}
    true = len(gold & predicted)
    return 200.0 * true / max(len(gold) + len(predicted), 1)


def _timed_cpu(fn: Callable[[], object]) -> Dict[str, float]:
    """Wall-clock seconds and this process's CPU seconds of one call of ``fn``."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}


def int8_tagging(
    model_path: str, test_path: Path = CONLL_TEST, speed_documents: int = 40, reps: int = 6, batch_size: int = 8
) -> Dict:
    """A trained model (``model.tar.gz`` or an export) tagging ``test_path`` through ``Tagger.load(path,
    precision=...)``: span F1 on the whole file in fp32, int8 and (where the CPU computes bfloat16
    natively) bf16, and words per second on its first ``speed_documents`` documents: each precision
    timed against fp32 alone, ``reps`` rounds alternating the order, medians; ``speedup`` = int8 / fp32
    words per second (fp32 from the int8 pair). Words per second count this process's CPU time (with one
    torch thread, the wall time on an idle CPU: on a shared machine the wall clock also counts the time
    other processes hold the cores); the wall-clock figures are the ``*_wall`` keys."""
    from eer_plugin.api import Tagger
    from eer_plugin.corpus.formats import read_documents
    from eer_plugin.inference.precision import cpu_has_native_bf16, cpu_has_vnni

    documents = list(read_documents(str(test_path)))
    inputs = [{"id": d.id, "tokens": d.tokens, "sentence_ends": d.sentence_ends} for d in documents]
    precisions = ["fp32", "int8"] + (["bf16"] if cpu_has_native_bf16() else [])
    taggers = {p: Tagger.load(model_path, precision=p) for p in precisions}
    sample = inputs[:speed_documents]
    words = sum(len(d["tokens"]) for d in sample)
    runs = {p: (lambda t=taggers[p]: list(t.pipe(sample, batch_size=batch_size))) for p in precisions}
    times = {"cpu": {}, "wall": {}}
    for other in precisions[1:]:  # each precision against fp32 alone, alternating the order (A B, B A, ...)
        pair = {"fp32": [], other: []}
        for name in pair:
            runs[name]()
        for rep in range(reps):
            for name in ("fp32", other) if rep % 2 == 0 else (other, "fp32"):
                pair[name].append(_timed_cpu(runs[name]))
        for clock, found in times.items():
            found[other] = statistics.median(t[clock] for t in pair[other])
            found.setdefault("fp32_vs", {})[other] = statistics.median(t[clock] for t in pair["fp32"])
    result = {
        "model": str(model_path),
        "test": str(test_path),
        "documents": len(documents),
        "words": sum(len(d.tokens) for d in documents),
        "speed_documents": len(sample),
        "speed_words": words,
        "batch_size": batch_size,
        "reps": reps,
        "clock": "process CPU time (wall clock: *_wall)",
        "native_bf16": cpu_has_native_bf16(),
        "int8_weights": "per channel",
        "int8_activation_bits": 8 if cpu_has_vnni() else 7,
        "threads": torch.get_num_threads(),
    }
    for clock, found in times.items():
        tail = "" if clock == "cpu" else "_wall"
        result[f"words_per_s_fp32{tail}"] = words / found["fp32_vs"]["int8"]
        for p in precisions[1:]:
            result[f"words_per_s_{p}{tail}"] = words / found[p]
            result[("speedup" if p == "int8" else f"speedup_{p}") + tail] = found["fp32_vs"][p] / found[p]
    for p in precisions:
        result[f"f1_{p}"] = _span_f1(documents, list(taggers[p].pipe(inputs, batch_size=batch_size)))
    return result
