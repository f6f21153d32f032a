"""One speed report (``make bench``): the CRF loss, prediction and bf16 training, each against its target.

In one process, each part interleaved (A, B, A, B, ...), medians:

1. **CRF loss** (:mod:`crf_speed`): forward+backward of the EER loss vs. AllenNLP's plain CRF NLL on
   14x128x17, 14x512x17 and 2x512x73 lattices (target ratio <= 0.25), with the cost of the float64
   recursion (the same loss with the recursion in float32) and the float32 marginal accuracy it
   buys (emissions ~ N(0, 100^2), n = 512, largest marginal error vs. float64 inputs; target 1e-4).
2. **Prediction**: the ``eer_tagger`` predictor (``predict_batch_json``, ``--batch-size``
   documents per call) on CoNLL-2003 dev documents as raw text (or generated text without the
   data), with MiniLM and an untrained tag scorer biased to predict many entities, vs. the bare
   encoder forward (the transformer embedder, same precision) over the same chunk batches
   (target ratio <= 1.3); words per second of the predictor. The same model archived and loaded
   with the Python API (``Tagger.load(model.tar.gz).pipe(texts, batch_size)``) and exported
   (``eer-export-model``, ``Tagger.load(DIR)``: no AllenNLP), each against the same encoder forward
   in the same interleaved rounds (target ratio <= 1.1, issue 29).
3. **bf16 training step**: one EER training step of MiniLM (4 x 512 subwords: forward, loss,
   backward, AdamW) with the encoder in fp32 and under ``torch.autocast("cpu", bfloat16)``
   (``EERTagger.precision``), interleaved; target: bf16 at most half the fp32 time (ratio <= 0.5).

4. **Dictionary labelling** (:mod:`dictionary_speed`): ``eer-dictionary``'s matcher on CoNLL-2003 text
   against tagging the same text with MiniLM (target: at least 20x), and the memory of a one-million-entry
   dictionary.
5. **Label Studio ML backend** (:func:`bench_serve`): 20 concurrent ``/predict`` requests of 10 tasks to
   ``eer-ner serve``, errors and the time per task, next to the Python API's per task.
6. **Issue 52** (:mod:`step_breakdown`): the ATen operations one training step's CRF work issues at
   n = 512 on the sequential path and on the parallel scan (``sequential_ops``), the step-time
   breakdown per encoder and device (``step_breakdown``), and int8 tagging of CoNLL-2003 test by a
   trained model (``--int8-model``; ``int8``).

``--json FILE`` writes the numbers; ``--doc docs/speed.md`` rewrites that page's generated
block (between ``<!-- speed-report:begin -->`` and ``<!-- speed-report:end -->``) from them;
``--render FILE.json --doc docs/speed.md`` does only that, from a saved report. A benchmark never
fails the build: it always exits 0.
"""

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import crf_speed  # noqa: E402
import step_breakdown  # noqa: E402

from eer_plugin.common.atomic import atomic_write_text  # noqa: E402
from eer_plugin.common.wording import counted

CONLL_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "conll2003-en" / "dev.txt"
TARGETS = {"crf_ratio": 0.25, "predictor_ratio": 1.3, "api_ratio": 1.1, "bf16_ratio": 0.5, "marginal_error": 1e-4}
BEGIN, END = "<!-- speed-report:begin -->", "<!-- speed-report:end -->"


def median_ms(values):
    return 1e3 * statistics.median(values)


# ---------------------------------------------------------------------- 1. CRF
def float32_marginal_accuracy(scale=100.0, n=512, rows=4, reps=5):
    """Largest marginal error of float32 inputs vs. float64, recursion in float64 and in float32,
    and the no-grad marginals time of both (ms)."""
    from eer_plugin.core.crf import ConstrainedCRF

    scheme = crf_speed.make_scheme(17)
    gen = torch.Generator().manual_seed(0)
    emissions = torch.randn(rows, n, 17, generator=gen) * scale
    mask = torch.ones(rows, n, dtype=torch.bool)
    result = {"scale": scale, "n": n}
    reference = None
    for name, dtype in (("float64", torch.float64), ("float32", None)):
        crf = ConstrainedCRF(
            scheme.allowed_transitions(), scheme.allowed_start(), scheme.allowed_end(), recursion_dtype=dtype
        )
        with torch.no_grad():
            crf.transitions.copy_(torch.randn(17, 17, generator=torch.Generator().manual_seed(1)))
            if reference is None:
                reference = crf.double().marginals(emissions.double(), mask)
                crf.float()
            marginals = crf.marginals(emissions, mask)
            times = [crf_speed.timed(lambda: crf.marginals(emissions, mask)) for _ in range(reps)]
        result[f"max_error_{name}_recursion"] = float((marginals.double() - reference).abs().max())
        result[f"marginals_ms_{name}_recursion"] = median_ms(times)
    return result


# ---------------------------------------------------------------------- 2. prediction
def conll_documents(limit):
    """Raw-text documents: CoNLL-2003 dev (tokens joined by spaces), else generated sentences."""
    docs = []
    if CONLL_DEV.exists():
        words = []
        for line in CONLL_DEV.read_text().splitlines():
            if line.startswith("-DOCSTART-"):
                if words:
                    docs.append(" ".join(words))
                words = []
            elif line.strip():
                words.append(line.split()[0])
            if len(docs) >= limit:
                break
        if words and len(docs) < limit:
            docs.append(" ".join(words))
        return [{"id": f"dev{i}", "text": text} for i, text in enumerate(docs)], "CoNLL-2003 dev"
    gen = torch.Generator().manual_seed(0)
    names = ["Angela Merkel", "Paris", "the United Nations", "John Smith", "New York", "Reuters", "Berlin"]
    fillers = ["said on", "met officials in", "visited", "reported that", "left", "will return to"]
    for i in range(limit):
        sentences = []
        for _ in range(20):
            a, b = (names[int(torch.randint(len(names), (), generator=gen))] for _ in range(2))
            sentences.append(f"{a} {fillers[int(torch.randint(len(fillers), (), generator=gen))]} {b} on Monday .")
        docs.append({"id": f"gen{i}", "text": " ".join(sentences)})
    return docs, "generated text"


def build_minilm_tagger(precision="fp32", o_cost=2.0):
    """An untrained EERTagger (4 CoNLL types) on the packaged MiniLM, its reader and predictor."""
    from allennlp.data import Vocabulary
    from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder

    from eer_plugin.data.reader import EncoderEmbedder, PartialDocumentReader
    from eer_plugin.models.tagger import EERTagger
    from eer_plugin.predictors.tagger import DocumentTaggerPredictor

    torch.manual_seed(0)
    vocab = Vocabulary(non_padded_namespaces=["labels"])
    vocab.add_tokens_to_namespace(
        ["O", "_"] + [f"{p}-{t}" for t in ("PER", "LOC", "ORG", "MISC") for p in "BILU"], "labels"
    )
    embedder = BasicTextFieldEmbedder({"tokens": EncoderEmbedder("all-MiniLM-L6-v2")})
    model = EERTagger(vocab, embedder, precision=precision, o_cost=o_cost)
    with torch.no_grad():
        model.tag_scorer.weight.mul_(10.0)  # confident, varied scores: many spans, varied probabilities
    reader = PartialDocumentReader(model_name="all-MiniLM-L6-v2", max_length=512)
    return model, reader, DocumentTaggerPredictor(model, reader)


def archive_and_export(model, reader, directory: Path):
    """``(model.tar.gz, export directory)`` of the benchmark's tagger (:func:`build_minilm_tagger`): what
    ``Tagger.load`` loads with and without AllenNLP."""
    from allennlp.models.archival import archive_model

    from eer_plugin.models.export import export_model

    encoder = {"type": "eer_transformer", "model_name": "all-MiniLM-L6-v2"}
    config = {
        "dataset_reader": {"type": "eer_documents", "model_name": "all-MiniLM-L6-v2", "max_length": reader.max_length},
        "model": {
            "type": "eer_tagger",
            "o_cost": model.o_cost,
            "precision": model.precision,
            "text_field_embedder": {"token_embedders": {"tokens": encoder}},
        },
        "train_data_path": "unused",
        "data_loader": {"batch_size": 2},
        "trainer": {"optimizer": "adam", "num_epochs": 1},
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    model.vocab.save_to_files(str(directory / "vocabulary"))
    torch.save(model.state_dict(), directory / "best.th")
    archive_model(str(directory))
    export_model(directory / "model.tar.gz", directory / "export")
    return directory / "model.tar.gz", directory / "export"


def bench_predictor(num_docs=24, batch_size=8, reps=3):
    from eer_plugin.inference.precision import encoder_autocast
    from eer_plugin.predictors.tagger import parse_input

    model, reader, predictor = build_minilm_tagger()
    model.eval()
    docs, source = conll_documents(num_docs)
    groups = [docs[i : i + batch_size] for i in range(0, len(docs), batch_size)]
    # the encoder's batches: the predictor's own (chunks of each call, longest first, batch_size per forward)
    encoder_batches = []
    for group in groups:
        chunks = [c for d in group for c in reader.chunk(parse_input(d)[0])]
        chunks.sort(key=lambda c: -len(c.subword_ids))
        for first in range(0, len(chunks), batch_size):
            instances = [reader.chunk_to_instance(c, with_labels=False) for c in chunks[first : first + batch_size]]
            encoder_batches.append(reader.tensorize(instances, model.vocab)["tokens"])
    subwords = sum(int(t["tokens"]["mask"].sum()) for t in encoder_batches)
    words = sum(len(parse_input(d)[0].tokens) for d in docs)
    state = {}

    def run_predictor():
        state["outputs"] = [out for group in groups for out in predictor.predict_batch_json(group)]

    def run_encoder():
        with torch.no_grad(), encoder_autocast(model.precision, torch.device("cpu")):
            for tokens in encoder_batches:
                model.text_field_embedder(tokens)

    import tempfile

    from eer_plugin.api import Tagger

    with tempfile.TemporaryDirectory(prefix="eer-speed-") as temporary:
        archive, export = archive_and_export(model, reader, Path(temporary))
        taggers = {"api": Tagger.load(archive), "exported": Tagger.load(export)}
    texts = [d["text"] for d in docs]

    def run_tagger(name):
        state[name] = list(taggers[name].pipe(texts, batch_size=batch_size))

    runs = {
        "predictor": run_predictor,
        "encoder": run_encoder,
        "api": lambda: run_tagger("api"),
        "exported": lambda: run_tagger("exported"),
    }
    times = {name: [] for name in runs}
    for run in runs.values():
        run()
    for _ in range(reps):
        for name, run in runs.items():
            times[name].append(crf_speed.timed(run))
    assert (
        [len(o["spans"]) for o in state["api"]]
        == [len(o["spans"]) for o in state["exported"]]
        == [len(o["spans"]) for o in state["outputs"]]
    )
    spans = sum(len(out["spans"]) for out in state["outputs"])
    span_words = sum(s["end"] - s["start"] for out in state["outputs"] for s in out["spans"])
    predictor_s, encoder_s = statistics.median(times["predictor"]), statistics.median(times["encoder"])
    api_s, exported_s = statistics.median(times["api"]), statistics.median(times["exported"])
    return {
        "api_s": api_s,
        "api_ratio": api_s / encoder_s,
        "exported_s": exported_s,
        "exported_ratio": exported_s / encoder_s,
        "documents": len(docs),
        "source": source,
        "words": words,
        "subwords": subwords,
        "chunks": sum(int(t["tokens"]["token_ids"].shape[0]) for t in encoder_batches),
        "batch_size": batch_size,
        "spans": spans,
        "entity_word_fraction": span_words / max(words, 1),
        "predictor_s": predictor_s,
        "encoder_s": encoder_s,
        "ratio": predictor_s / encoder_s,
        "words_per_s": words / predictor_s,
        "precision": model.precision,
    }


# ---------------------------------------------------------------------- 3. bf16 step
def bench_bf16_step(batch=4, length=512, reps=3):
    from allennlp.nn import util

    model, reader, _ = build_minilm_tagger(o_cost=0.0)
    model.train()
    gen = torch.Generator().manual_seed(0)
    vocab_size = reader.tokenizer.vocab_size
    ids = torch.randint(1000, vocab_size, (batch, length), generator=gen)
    ids[:, 0], ids[:, -1] = reader.bookends
    tokens = {
        "tokens": {
            "token_ids": ids,
            "mask": torch.ones(batch, length, dtype=torch.bool),
            "type_ids": torch.zeros(batch, length, dtype=torch.long),
        }
    }
    latent = model.vocab.get_token_index("_", "labels")
    outside = model.vocab.get_token_index("O", "labels")
    tags = torch.full((batch, length), latent, dtype=torch.long)
    tags[torch.rand(batch, length, generator=gen) < 0.1] = outside
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    assert util.get_text_field_mask(tokens).all()

    def step(precision):
        model.precision = precision
        optimizer.zero_grad(set_to_none=True)
        model(tokens=tokens, tags=tags)["loss"].backward()
        optimizer.step()

    step("fp32")
    step("bf16")
    if native_bf16() is False:
        reps = 1  # emulated bf16 is many times slower: one timed pair says as much
    times = {"fp32": [], "bf16": []}
    for _ in range(reps):
        for precision in ("fp32", "bf16"):
            times[precision].append(crf_speed.timed(lambda: step(precision)))
    fp32, bf16 = statistics.median(times["fp32"]), statistics.median(times["bf16"])
    return {
        "batch": batch,
        "length": length,
        "fp32_s": fp32,
        "bf16_s": bf16,
        "ratio": bf16 / fp32,
        "native_bf16": native_bf16(),
        "reps": reps,
    }


def native_bf16():
    """Whether oneDNN has bf16 kernels on this CPU (AVX-512 BF16 / AMX); without them bf16 is emulated."""
    with contextlib.suppress(Exception):
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    return None


# ---------------------------------------------------------------------- report
def verdict(value, target):
    return "ok" if value <= target else "MISS"


def report_lines(report):
    """The report as Markdown lines (printed by ``make bench`` and written into ``docs/speed.md``)."""
    lines = [
        f"Measured {report['date']} on {report['machine']}, torch {report['torch']}, {counted(report['threads'], 'thread')}, "
        f"load average {report['load']:.1f} at the start (other processes skew timings), medians of interleaved runs.",
        "",
    ]
    if report.get("crf"):
        lines += [
            "| CRF lattice | EER loss fwd+bwd (ms) | AllenNLP NLL (ms) | ratio | target | float64-recursion cost |",
            "|---|---:|---:|---:|---|---:|",
        ]
        for r in report["crf"]:
            lines.append(
                f"| {r['lattice']} | {r['ours_ms']:.1f} | {r['allennlp_ms']:.1f} | {r['ratio']:.2f} | "
                f"<= {TARGETS['crf_ratio']} {verdict(r['ratio'], TARGETS['crf_ratio'])} | "
                f"x{r['float64_recursion_cost']:.2f} (float32 recursion {r['ours_float32_recursion_ms']:.1f} ms) |"
            )
        lines.append("")
    ops = report.get("op_counts")
    if ops:
        lines += [
            f"Why {ops['lattice']} stays above the target: there every operation costs about the same fixed few "
            f"microseconds (tiny tensors), and one forward+backward is {ops['ours_ops']} top-level ATen operations for "
            f"the EER loss ({ops['ours_ops_per_position']:.1f} per position: the sequential forward and backward loops) "
            f"vs. {ops['allennlp_ops']} for AllenNLP's NLL, a floor of {ops['ops_ratio']:.2f} on the time ratio before "
            f"any arithmetic. Going below needs fewer sequential steps, i.e. a parallel scan: in log space K^3 "
            f"exponentials per position and level, in probability space not exact (it underflows at large score "
            f"spreads, issue 13.8's scale).",
            "",
        ]
    acc = report.get("float32_marginals")
    if acc:
        lines += [
            f"float32 marginals, emissions ~ N(0, {acc['scale']:.0f}^2), n = {acc['n']}: largest error vs. float64 "
            f"{acc['max_error_float64_recursion']:.1e} with the float64 recursion (target <= {TARGETS['marginal_error']:.0e} "
            f"{verdict(acc['max_error_float64_recursion'], TARGETS['marginal_error'])}), "
            f"{acc['max_error_float32_recursion']:.1e} with a float32 recursion; no-grad marginals "
            f"{acc['marginals_ms_float64_recursion']:.1f} ms vs. {acc['marginals_ms_float32_recursion']:.1f} ms.",
            "",
        ]
    p = report.get("predictor")
    if p:
        lines += [
            f"Prediction ({p['documents']} {p['source']} documents as raw text, {p['words']} words, {p['chunks']} chunks, "
            f"--batch-size {p['batch_size']}, MiniLM {p['precision']}, untrained scorer: {p['spans']} spans, "
            f"{100 * p['entity_word_fraction']:.0f}% of words in entities): predictor {p['predictor_s']:.2f} s vs. bare encoder "
            f"forward {p['encoder_s']:.2f} s over the same chunks, ratio {p['ratio']:.2f} (target <= {TARGETS['predictor_ratio']} "
            f"{verdict(p['ratio'], TARGETS['predictor_ratio'])}), {p['words_per_s']:.0f} words/s.",
            "",
        ]
        if "api_s" in p:
            lines += [
                "| the same documents and chunks, interleaved | time (s) | / bare encoder forward | target |",
                "|---|---:|---:|---|",
                f"| bare encoder forward | {p['encoder_s']:.2f} | 1.00 | |",
            ]
            for label, key in (
                ("Python API, `Tagger.load(model.tar.gz).pipe(texts)`", "api"),
                ("exported model, `Tagger.load(DIR).pipe(texts)` (no AllenNLP)", "exported"),
            ):
                lines.append(
                    f"| {label} | {p[key + '_s']:.2f} | {p[key + '_ratio']:.2f} | <= {TARGETS['api_ratio']} "
                    f"{verdict(p[key + '_ratio'], TARGETS['api_ratio'])} |"
                )
            lines.append("")
    b = report.get("bf16")
    if b:
        lines += [
            f"Training step (MiniLM EER tagger, {b['batch']} x {b['length']} subwords, forward + loss + backward + AdamW): "
            f"fp32 {b['fp32_s']:.2f} s, bf16 autocast {b['bf16_s']:.2f} s, bf16/fp32 {b['ratio']:.2f} "
            f"(target <= {TARGETS['bf16_ratio']} {verdict(b['ratio'], TARGETS['bf16_ratio'])})"
            + (
                "; this CPU has no native bf16 (no AVX-512 BF16 / AMX: oneDNN emulates it), so bf16 cannot pay off here"
                if b.get("native_bf16") is False
                else ""
            )
            + ".",
            "",
        ]
    if report.get("dictionary"):
        import dictionary_speed

        lines += dictionary_speed.report_lines(report["dictionary"])
    sv = report.get("serve")
    if sv:
        lines += [
            f"Label Studio ML backend (`eer-ner serve`, MiniLM, untrained scorer; measured {sv.get('date', report['date'])}, "
            f"{counted(sv.get('threads', report['threads']), 'torch thread')}, load average {sv.get('load', report['load']):.1f}): {sv['requests']} concurrent /predict requests "
            f"of {sv['tasks_per_request']} tasks ({sv['source']} paragraphs, {sv['words_per_task']:.0f} words each), "
            f"{sv['errors']} errors; {sv['serve_ms_per_task']:.0f} ms per task ({sv['wall_s']:.1f} s for all, request "
            f"latency median {sv['request_median_s']:.1f} s, max {sv['request_max_s']:.1f} s: one model call at a time). "
            f"The Python API on the same texts: {sv['api_pipe_ms_per_task']:.0f} ms per task with `pipe`, "
            f"{sv['api_pipe_rank_ms_per_task']:.0f} ms with `pipe` + `rank` (what one prediction and its score cost); single "
            f"runs one after the other, so under load they compare only roughly.",
            "",
        ]
    lines += issue52_lines(report)
    for note in report.get("errors", []):
        lines.append(f"(not measured: {note})")
    return lines


def issue52_lines(report):
    """The sequential-operation count, the step-time breakdown and int8 tagging as Markdown lines."""
    lines = []

    def when(part):
        m = part.get("measured")
        return (
            f" [measured {m['date']}, {m['machine']}, torch {m['torch']}, {counted(m['threads'], 'thread')}, load {m['load']:.1f}]"
            if m
            else ""
        )

    ops = report.get("sequential_ops")
    if ops:
        text = (
            "Sequential operations of one training step's CRF work ({batch} x {n} x {tags}: EER loss forward+backward and "
            "Viterbi; ATen operations, each a kernel launch on a GPU): sequential path {before} ({before_loss} loss + "
            "{before_decoding} decoding), parallel scan {after} ({after_loss} + {after_decoding}), {ratio:.1f}x fewer"
        ).format(**ops)
        lines += [f"{text} (target >= 10x {'ok' if ops['ratio'] >= 10 else 'MISS'}){when(ops)}.", ""]
    breakdown = report.get("step_breakdown")
    if breakdown:
        lines += [
            "| encoder, device (4 x 512) | training step (s) | encoder fwd+bwd | EER loss | optimizer | other | "
            "dev batch (s) | encoder fwd | decoding + metrics |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        encoders = {encoder: devices for encoder, devices in breakdown.items() if encoder != "measured"}
        gpu_rows = []
        for encoder, devices in encoders.items():
            for device, b in devices.items():
                t, d = b["train_shares"], b["dev_shares"]
                where = device
                if device == "gpu":
                    gpu_rows.append(b)
                    where = f"{b['device_name']} ({b['crf_path']} CRF)"
                lines.append(
                    f"| {encoder}, {where} | {b['seconds']['step']:.2f} | {100 * t['encoder_forward_backward']:.0f}% | "
                    f"{100 * t['loss']:.1f}% | {100 * t['optimizer']:.1f}% | {100 * t['other']:.0f}% | "
                    f"{b['seconds']['dev_batch']:.2f} | {100 * d['encoder_forward']:.0f}% | {100 * d['decoding_and_metrics']:.0f}% |"
                )
        lines += [
            "",
            'Shares of parts timed alone (interleaved rounds, medians); "other" is the rest of the step (tag scorer, '
            "bookkeeping) and absorbs timing noise, negative when the machine's load moved between parts"
            f"{when(breakdown)}.",
            "",
        ]
        lines += gpu_lines(gpu_rows)
    variants = report.get("scan_variants")
    if variants:
        lines += scan_variant_lines(variants)
    i8 = report.get("int8")
    if i8:
        bf16 = (
            f"; bf16 (native on this CPU) {i8['words_per_s_bf16']:.0f} words/s ({i8['speedup_bf16']:.2f}x), F1 {i8['f1_bf16']:.2f}"
            if "f1_bf16" in i8
            else "; no native bf16 on this CPU (not measured)"
        )
        scheme = (
            f": {i8['int8_weights']} weights, {i8['int8_activation_bits']}-bit activations"
            if "int8_weights" in i8
            else ""
        )
        lines += [
            f'int8 tagging (`Tagger.load(model, precision="int8")`: dynamic quantization of the encoder\'s linear layers{scheme}), '
            f"{i8['model']}: {i8['words_per_s_int8']:.0f} vs. fp32 {i8['words_per_s_fp32']:.0f} words/s on {i8['speed_documents']} "
            f"CoNLL-2003 test documents ({i8['speed_words']} words, {counted(i8['threads'], 'thread')}"
            f"{', CPU time' if 'speedup_wall' in i8 else ''}), {i8['speedup']:.2f}x (target >= 1.8 "
            f"{'ok' if i8['speedup'] >= 1.8 else 'MISS'}"
            f"{'; wall clock %.2fx under the load' % i8['speedup_wall'] if 'speedup_wall' in i8 else ''}); "
            f"span F1 on all of CoNLL-2003 test ({i8['documents']} documents): "
            f"fp32 {i8['f1_fp32']:.2f}, int8 {i8['f1_int8']:.2f} (target within 0.5 "
            f"{'ok' if abs(i8['f1_int8'] - i8['f1_fp32']) <= 0.5 else 'MISS'}){bf16}{when(i8)}.",
            "",
        ]
    return lines


#: issue 52's GPU targets: the most EER loss + decoding per encoder forward+backward, dev batch per encoder forward
GPU_TARGETS = {"loss_and_decoding_over_encoder": 0.5, "dev_pass_over_encoder_forward": 2}


def _verdict(figures, key):
    """``target <= 0.5 ok`` (or ``MISS``) for ``figures[key]`` against its GPU target."""
    bound = GPU_TARGETS[key]
    return f"target <= {bound} {'ok' if figures[key] <= bound else 'MISS'}"


def gpu_lines(rows):
    """The GPU targets of issue 52 per encoder row, with the device, torch and CUDA they were measured with."""
    if not rows:
        return ["No GPU was available for these figures: no `gpu` rows.", ""]
    lines = []
    summary = gpu_summary(rows)
    for b in rows:
        seq = b.get("sequential_path", {})
        lines.append(
            f"- {b['encoder']} on {b['device_name']} (torch {b['torch']}, CUDA {b['cuda']}, fp32, "
            f"{b['measured']['date']}, encoder weights: {b['measured']['weights']}): EER loss + decoding "
            f"{b['loss_and_decoding_over_encoder']:.2f}x the encoder's forward+backward on the {b['crf_path']} path "
            f"({_verdict(b, 'loss_and_decoding_over_encoder')}; sequential path "
            f"{seq.get('loss_and_decoding_over_encoder', float('nan')):.2f}x); a dev batch "
            f"{b['dev_pass_over_encoder_forward']:.2f}x the encoder's forward "
            f"({_verdict(b, 'dev_pass_over_encoder_forward')}; sequential path "
            f"{seq.get('dev_pass_over_encoder_forward', float('nan')):.2f}x)."
        )
        for path, text in (("fused", "one Triton kernel per recursion"), ("scan", "the parallel scan")):
            other = b.get(f"{path}_path")
            if other:
                lines[-1] += (
                    f" On the {path} path (`path='{path}'`, {text}): EER loss + decoding "
                    f"{other['loss_and_decoding_over_encoder']:.2f}x ({_verdict(other, 'loss_and_decoding_over_encoder')}), "
                    f"a dev batch {other['dev_pass_over_encoder_forward']:.2f}x ({_verdict(other, 'dev_pass_over_encoder_forward')})."
                )
    ok = all(summary[key] <= bound for key, bound in GPU_TARGETS.items())
    lines.append(
        f"- On the path `auto` takes on CUDA where Triton runs ({summary['crf_path']}), the larger of the encoders' "
        f"ratios (`gpu` in `benchmarks/speed_report.json`): EER loss + decoding "
        f"{summary['loss_and_decoding_over_encoder']:.2f}x the encoder's forward+backward, a dev batch "
        f"{summary['dev_pass_over_encoder_forward']:.2f}x its forward: both targets {'met' if ok else 'NOT met'}."
    )
    return lines + [""]


def gpu_summary(rows):
    """The ``gpu`` key of issue 52: each encoder's target ratios on the path ``auto`` takes on CUDA where
    Triton runs (the fused kernels where a row measured them, else the row's own path), and the larger of
    the encoders' figures (each target must hold for every encoder)."""
    encoders = {}
    for b in rows:
        path, figures = ("fused", b["fused_path"]) if "fused_path" in b else (b["crf_path"], b)
        encoders[b["encoder"]] = {
            "crf_path": path,
            "loss_and_decoding_over_encoder": figures["loss_and_decoding_over_encoder"],
            "dev_pass_over_encoder_forward": figures["dev_pass_over_encoder_forward"],
            "date": b["measured"]["date"],
        }
    first = rows[0]
    return {
        "device": first["device_name"],
        "torch": first["torch"],
        "cuda": first["cuda"],
        "crf_path": "/".join(sorted({e["crf_path"] for e in encoders.values()})),
        **{key: max(e[key] for e in encoders.values()) for key in GPU_TARGETS},
        "encoders": encoders,
    }


def scan_variant_lines(v):
    """``benchmarks/gpu/scan_variants.py``'s measurement: the scan's CRF work as it is, compiled, graphed."""
    parts = []
    for name, text in (
        ("eager", "as it is"),
        ("compiled", "products compiled by torch.compile"),
        ("graphed", "captured as CUDA graphs"),
        *((f"fused_{w}", f"fused kernels ({w} warp{'s' if w > 1 else ''})") for w in (1, 2, 4, 8)),
    ):
        r = v.get(name, {})
        if "loss_ms" in r:
            same = "same results" if r["grad_max_abs_diff"] < 1e-6 and r["same_tags"] else "RESULTS DIFFER"
            parts.append(f"{text}: loss {r['loss_ms']:.1f} ms, decoding {r['decoding_ms']:.1f} ms ({same})")
    return [
        f"Where the scan's time goes on {v['device_name']} (torch {v['torch']}, CUDA {v['cuda']}; "
        f"`benchmarks/gpu/scan_variants.py`, {v['lattice']}, EER loss forward+backward and Viterbi): "
        + "; ".join(parts)
        + ". Graphs remove the launches and cut the decoding most; the loss moves less: much of it is the "
        "float64 K^3 work of the semiring products (a second try, the restricted lattice's log Z in a pass of "
        "its own: `benchmarks/gpu/README.md`). The fused kernels remove both: one launch per recursion and "
        f"the sequential path's K^2 work per position ({v['measured']['runs']}).",
        "",
    ]


def write_block(doc: Path, lines):
    """Replaces the generated block of the Markdown file ``doc`` (between the markers) by ``lines``,
    atomically; a file without the markers is left as it is (with a message on stderr)."""
    text = doc.read_text()
    if BEGIN not in text or END not in text:
        print(f"{doc}: no {BEGIN} ... {END} block; not rewritten", file=sys.stderr)
        return
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    block = (
        f"{BEGIN}\n<!-- written by benchmarks/speed_report.py (make bench); do not edit by hand -->\n"
        + "\n".join(lines).rstrip()
        + f"\n{END}"
    )
    atomic_write_text(str(doc), head + block + tail)


# ---------------------------------------------------------------------- 4. the Label Studio ML backend
def bench_serve(concurrency=20, tasks_per_request=10, batch_size=8):
    """``eer-ner serve`` (the Label Studio ML backend, a uvicorn process with the same torch threads) holding
    ``concurrency`` concurrent ``/predict`` requests of ``tasks_per_request`` tasks (paragraphs of CoNLL dev
    documents, or generated text): errors, request latencies and the time per task, next to the Python API's
    per task on the same texts (``pipe``, and ``pipe`` + ``rank``: the work of one prediction with its score)."""
    import concurrent.futures
    import socket
    import subprocess
    import tempfile
    import urllib.request

    from eer_plugin.api import Tagger

    load = os.getloadavg()[0]
    model, reader, _ = build_minilm_tagger()
    docs, source = conll_documents(tasks_per_request)
    texts = [d["text"][: d["text"].find(" . ", 250) + 2] if d["text"].find(" . ", 250) > 0 else d["text"] for d in docs]
    config = (
        '<View><Text name="text" value="$text"/><Labels name="label" toName="text">'
        + "".join(f'<Label value="{t}"/>' for t in ("PER", "LOC", "ORG", "MISC"))
        + "</Labels></View>"
    )
    body = json.dumps(
        {"tasks": [{"id": i, "data": {"text": t}} for i, t in enumerate(texts)], "label_config": config}
    ).encode()
    with tempfile.TemporaryDirectory(prefix="eer-serve-speed-") as temporary:
        archive, _ = archive_and_export(model, reader, Path(temporary))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        env = dict(
            os.environ, OMP_NUM_THREADS=str(torch.get_num_threads()), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"
        )
        command = [
            sys.executable,
            "-m",
            "eer_plugin.cli",
            "serve",
            str(archive),
            "--port",
            str(port),
            "--work-dir",
            f"{temporary}/work",
        ]
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(url + "/health", timeout=2)
                    break
                except OSError:
                    if process.poll() is not None:
                        raise RuntimeError(f"eer-ner serve exited with {process.returncode}") from None
                    time.sleep(1)

            def predict(_):
                start = time.perf_counter()
                request = urllib.request.Request(url + "/predict", body, {"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(request, timeout=600) as answer:
                        ok = answer.status == 200 and len(json.loads(answer.read())["results"]) == tasks_per_request
                except OSError:
                    ok = False
                return ok, time.perf_counter() - start

            predict(0)  # warm up
            start = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
                answers = list(pool.map(predict, range(concurrency)))
            wall = time.perf_counter() - start
        finally:
            process.terminate()
            process.wait(30)
        tagger = Tagger.load(archive)
    all_texts = texts * concurrency
    list(tagger.pipe(texts, batch_size=batch_size))  # warm up
    pipe_s = crf_speed.timed(lambda: list(tagger.pipe(all_texts, batch_size=batch_size)))
    rank_s = crf_speed.timed(lambda: tagger.rank(all_texts, batch_size=batch_size))
    tasks = concurrency * tasks_per_request
    latencies = sorted(seconds for _, seconds in answers)
    return {
        "concurrency": concurrency,
        "tasks_per_request": tasks_per_request,
        "requests": concurrency,
        "source": source,
        "words_per_task": sum(len(t.split()) for t in texts) / len(texts),
        "errors": sum(not ok for ok, _ in answers),
        "wall_s": wall,
        "serve_ms_per_task": 1000 * wall / tasks,
        "request_median_s": statistics.median(latencies),
        "request_max_s": latencies[-1],
        "api_pipe_ms_per_task": 1000 * pipe_s / tasks,
        "api_pipe_rank_ms_per_task": 1000 * (pipe_s + rank_s) / tasks,
        "batch_size": batch_size,
        "load": load,
        "date": time.strftime("%Y-%m-%d"),
        "threads": torch.get_num_threads(),
    }


def merge_breakdown(report, other):
    """Adds ``other``'s step-time breakdown rows (per encoder and device) to ``report``'s, replacing rows
    of the same encoder and device; ``other``'s ``measured`` (the facts of its CPU rows) replaces
    ``report``'s only where ``other`` has CPU rows."""
    rows = report.setdefault("step_breakdown", {})
    for encoder, devices in other.get("step_breakdown", {}).items():
        if encoder == "measured":
            continue
        rows.setdefault(encoder, {}).update(devices)
    measured = other.get("step_breakdown", {}).get("measured")
    if measured and any("cpu" in d for e, d in other["step_breakdown"].items() if e != "measured"):
        rows["measured"] = measured
    gpu_rows = [d["gpu"] for e, d in rows.items() if e != "measured" and "gpu" in d]
    if gpu_rows:
        report["gpu"] = gpu_summary(gpu_rows)


def issue52_parts(report, parts, args):
    """Measures the parts of :mod:`step_breakdown` that ``parts`` names into ``report``."""
    measures = []
    on_gpu = args.breakdown_device.startswith("cuda")
    if "ops" in parts:
        measures.append(("sequential_ops", step_breakdown.sequential_ops))
    if "breakdown" in parts:

        def breakdown():
            found = {}
            for encoder in args.breakdown_encoders.split(","):
                entry = step_breakdown.step_breakdown(encoder, device=args.breakdown_device)
                if on_gpu:  # this row's own facts: the part's "measured" describes the CPU rows
                    entry["measured"] = {
                        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                        "machine": report["machine"],
                        "weights": args.breakdown_weights,
                    }
                found.setdefault(entry["encoder"], {})["gpu" if on_gpu else "cpu"] = entry
            return found

        measures.append(("step_breakdown", breakdown))
    if "int8" in parts:
        if args.int8_model:
            measures.append(("int8", lambda: step_breakdown.int8_tagging(args.int8_model)))
        else:
            report["errors"].append("int8: no trained model given (--int8-model or EER_INT8_MODEL)")
    for name, fn in measures:
        try:
            load = os.getloadavg()[0]
            report[name] = fn()
            if name == "step_breakdown" and on_gpu:
                print(f"  {name}: done", flush=True)
                continue
            report[name]["measured"] = {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "machine": report["machine"],
                "torch": report["torch"],
                "threads": report["threads"],
                "load": load,
            }
            print(f"  {name}: done", flush=True)
        except Exception as err:  # a benchmark never fails the build
            traceback.print_exc()
            report["errors"].append(f"{name}: {err}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=9, help="CRF timed repetitions (>= 7)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: on a shared machine 2 threads measure contention, not code)",
    )
    parser.add_argument("--lattices", default=",".join("x".join(map(str, l)) for l in crf_speed.LATTICES))
    parser.add_argument(
        "--parts",
        default="crf,predictor,bf16,dictionary,serve,ops,breakdown,int8",
        help="comma-separated subset of crf,predictor,bf16,dictionary,serve,ops,breakdown,int8 (serve: needs the serve extra)",
    )
    parser.add_argument(
        "--breakdown-encoders",
        default="all-MiniLM-L6-v2",
        help="encoders of the step-time breakdown (comma-separated; all-mpnet-base-v2 if installed)",
    )
    parser.add_argument(
        "--breakdown-device",
        default="cpu",
        help="device of the step-time breakdown (cpu, or cuda / cuda:N for its `gpu` rows) (default: %(default)s)",
    )
    parser.add_argument(
        "--breakdown-weights",
        default="pretrained",
        help="what the breakdown's encoders hold, recorded with GPU rows (e.g. 'random init of the same "
        "architecture': timing does not depend on the weights) (default: %(default)s)",
    )
    parser.add_argument(
        "--int8-model",
        default=os.environ.get("EER_INT8_MODEL", ""),
        help="trained model (model.tar.gz or export) for int8 tagging (default $EER_INT8_MODEL; none: not measured)",
    )
    parser.add_argument("--docs", type=int, default=24, help="documents for the prediction benchmark")
    parser.add_argument("--json", help="write the report to this JSON file")
    parser.add_argument("--doc", help="rewrite the generated block of this Markdown file (docs/speed.md)")
    parser.add_argument(
        "--update",
        action="store_true",
        help="with --json: keep that file's other parts, replace only those measured now (--parts)",
    )
    parser.add_argument("--render", help="do not measure: render this saved JSON report (with --doc)")
    parser.add_argument(
        "--merge",
        help="do not measure: add the step-time breakdown rows of this report, measured on another machine "
        "(a GPU's, benchmarks/gpu/README.md), to the --json report, then render it (with --doc)",
    )
    args = parser.parse_args()
    if args.merge:
        if not args.json:
            parser.error("--merge needs --json (the report the rows are added to)")
        report = json.loads(Path(args.json).read_text())
        merge_breakdown(report, json.loads(Path(args.merge).read_text()))
        args.render = args.json  # written below like a measured report
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    elif args.render:
        report = json.loads(Path(args.render).read_text())
    else:
        torch.set_num_threads(args.threads)
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        report = {
            "date": time.strftime("%Y-%m-%d"),
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "machine": f"{os.cpu_count()}-core {platform.machine()} ({torch.backends.cpu.get_cpu_capability()})",
            "load": os.getloadavg()[0],
            "errors": [],
        }
        parts = set(args.parts.split(","))
        print(
            f"speed report: {report['machine']}, torch {report['torch']}, threads {report['threads']}, "
            f"load {report['load']:.1f}",
            flush=True,
        )
        if "crf" in parts:
            report["crf"] = []
            for spec in args.lattices.split(","):
                try:
                    batch, n, k = (int(x) for x in spec.lower().split("x"))
                    report["crf"].append(crf_speed.bench_lattice(batch, n, k, max(args.reps, 7), 2))
                    print(f"  crf {spec}: ratio {report['crf'][-1]['ratio']:.3f}", flush=True)
                except Exception as err:  # a benchmark never fails the build
                    traceback.print_exc()
                    report["errors"].append(f"crf {spec}: {err}")
            with contextlib.suppress(Exception):
                report["float32_marginals"] = float32_marginal_accuracy()
            with contextlib.suppress(Exception):
                report["op_counts"] = crf_speed.op_counts(*crf_speed.LATTICES[0])
        for name, fn in (
            ("predictor", lambda: bench_predictor(args.docs)),
            ("bf16", bench_bf16_step),
            ("serve", bench_serve),
        ):
            if name in parts:
                try:
                    report[name] = fn()
                    extra = "".join(
                        f", {k} {report[name][k + '_ratio']:.3f}"
                        for k in ("api", "exported")
                        if k + "_ratio" in report[name]
                    )
                    main_number = (
                        f"ratio {report[name]['ratio']:.3f}"
                        if "ratio" in report[name]
                        else f"{report[name]['serve_ms_per_task']:.0f} ms per task"
                    )
                    print(f"  {name}: {main_number}{extra}", flush=True)
                except Exception as err:
                    traceback.print_exc()
                    report["errors"].append(f"{name}: {err}")
        if "dictionary" in parts:  # issue 48: labelling speed against the encoder, and a 1M-entry dictionary's memory
            try:
                import dictionary_speed

                report["dictionary"] = dictionary_speed.bench(build_minilm_tagger)
                print(f"  dictionary: {report['dictionary']['ratio']:.0f}x MiniLM tagging", flush=True)
            except Exception as err:
                traceback.print_exc()
                report["errors"].append(f"dictionary: {err}")
        issue52_parts(report, parts, args)
        if args.update and args.json and Path(args.json).exists():  # keep the parts not measured now
            saved = json.loads(Path(args.json).read_text())
            header = ("date", "torch", "threads", "machine", "load", "errors")
            if "step_breakdown" in report and "step_breakdown" in saved:  # rows per encoder and device
                merge_breakdown(saved, {"step_breakdown": report.pop("step_breakdown")})
            saved.update({key: value for key, value in report.items() if key not in header})
            saved["errors"] = saved.get("errors", []) + report["errors"]
            report = saved
    lines = report_lines(report)
    print("\n".join(lines))
    if args.json and not args.render:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    if args.doc:
        write_block(Path(args.doc), lines)
    return 0


if __name__ == "__main__":
    crf_speed.never_fail(main)
