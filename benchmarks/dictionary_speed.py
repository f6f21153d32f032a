"""Labelling speed and memory of the dictionary matcher (``eer-dictionary``), a part of ``make bench``.

1. **Speed.** CoNLL-2003 text (the dev set as raw text, tokens joined by spaces, when ``../shared`` has it;
   else the fixtures) labelled with a realistic dictionary: every distinct gold entity form of CoNLL-2003 train
   (its most frequent type; the fixture's forms without the data) plus 100,000 synthetic names, so that most
   words hit the trie's first level. Documents and words per second of the matcher alone (pre-split words)
   and of raw text in (tokenizer + matcher + provenance), the median of ``reps`` passes; against the words
   per second of tagging a sample of the same documents with the packaged MiniLM (the ``eer_tagger``
   predictor, untrained head, same process and threads). Goal: labelling at least 20x faster.
2. **Memory.** The peak resident memory of building a :class:`~eer_plugin.annotation.dictionary.Matcher` of
   one million synthetic entries (1-4 words each from a vocabulary of 300,000 words, 4 types), in a fresh
   process (its peak, VmHWM, after the build minus before it: the interpreter and the package's imports), and the
   build time.

``python benchmarks/dictionary_speed.py`` prints both as JSON (``--entries`` to change the size).
"""

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]
CONLL = REPO.parent / "shared" / "data" / "conll2003-en"
TARGET_RATIO = 20.0
SYNTHETIC_ENTRIES = 100_000
TYPES = ("PER", "LOC", "ORG", "MISC")


def synthetic_entries(count: int, vocabulary: int = 300_000, seed: int = 0):
    """``count`` (words, type) names of 1-4 capitalised pseudo-words (lengths 20/50/25/5%); a form's type
    follows from its words, so a form drawn twice is a duplicate, never ambiguous."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))).title() for _ in range(vocabulary)]
    for _ in range(count):
        picks = [rng.randrange(vocabulary) for _ in range(rng.choices((1, 2, 3, 4), (20, 50, 25, 5))[0])]
        yield [words[i] for i in picks], TYPES[sum(picks) % len(TYPES)]


def corpus():
    """(raw-text documents, gold documents for the dictionary, description)."""
    from eer_plugin.corpus.formats import read_conll

    if (CONLL / "dev.txt").exists():
        text_docs, train, what = (
            read_conll(CONLL / "dev.txt"),
            read_conll(CONLL / "train.txt"),
            "CoNLL-2003 dev (raw text), train's gold forms",
        )
    else:
        text_docs = train = read_conll(REPO / "fixtures" / "conll2003_tiny.txt") + read_conll(
            REPO / "fixtures" / "conll2003_tiny_dev.txt"
        )
        what = "the CoNLL-2003 fixtures (no ../shared data)"
    return [{"id": d.id, "text": " ".join(d.tokens)} for d in text_docs], train, what


def build_dictionary(train, synthetic: int = SYNTHETIC_ENTRIES):
    from eer_plugin.annotation.dictionary import Matcher
    from eer_plugin.annotation.dictionary_scenario import draw_dictionary

    entries, _ = draw_dictionary(train, 1.0, 0)
    matcher = Matcher()
    source = matcher.add_source("gold-forms")
    for form, label in entries:
        matcher.add(form, label, source)
    fake = matcher.add_source("synthetic")
    for form, label in synthetic_entries(synthetic, seed=1):
        matcher.add(form, label, fake)
    return matcher, len(entries)


def bench_labelling(build_tagger, reps: int = 5, tagger_docs: int = 8):
    """Matcher speed on the corpus and MiniLM tagging speed on a sample of it (module docstring, 1)."""
    from eer_plugin.annotation.dictionary import label_documents
    from eer_plugin.corpus.documents import Document
    from eer_plugin.corpus.tokenizer import tokenize_text

    texts, train, what = corpus()
    matcher, gold_forms = build_dictionary(train)
    tokenized = [tokenize_text(t["text"]) for t in texts]
    words = sum(len(w) for w, _, _ in tokenized)
    match_times, raw_times, matches = [], [], 0
    for _ in range(reps):
        start = time.perf_counter()
        matches = sum(len(matcher.match_entries(w, e)) for w, _, e in tokenized)
        match_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        documents, offsets = [], []
        for text in texts:
            w, o, e = tokenize_text(text["text"])
            documents.append(Document(text["id"], w, e, text=text["text"]))
            offsets.append(o)
        label_documents(documents, matcher, offsets=offsets)
        raw_times.append(time.perf_counter() - start)
    match_s, raw_s = statistics.median(match_times), statistics.median(raw_times)
    tagger = bench_tagger(texts[:tagger_docs], build_tagger)
    result = {
        "text": what,
        "documents": len(texts),
        "words": words,
        "matches": matches,
        "dictionary_entries": len(matcher),
        "gold_forms": gold_forms,
        "synthetic_entries": SYNTHETIC_ENTRIES,
        "match_s": match_s,
        "match_words_per_s": words / match_s,
        "match_documents_per_s": len(texts) / match_s,
        "raw_s": raw_s,
        "raw_words_per_s": words / raw_s,
        "raw_documents_per_s": len(texts) / raw_s,
        **tagger,
    }
    result["ratio"] = result["raw_words_per_s"] / tagger["tagger_words_per_s"]
    result["match_ratio"] = result["match_words_per_s"] / tagger["tagger_words_per_s"]
    return result


def bench_tagger(texts, build_tagger):
    """Words per second of tagging ``texts`` with the packaged MiniLM (``build_tagger``: the speed report's
    ``build_minilm_tagger``, the untrained tagger; passed in, so this module does not import the report)."""
    import torch

    from eer_plugin.corpus.tokenizer import tokenize_text

    _, _, predictor = build_tagger()
    words = sum(len(tokenize_text(t["text"])[0]) for t in texts)
    predictor.predict_batch_json(texts[:1])  # warm-up
    with torch.no_grad():
        start = time.perf_counter()
        predictor.predict_batch_json(texts)
        seconds = time.perf_counter() - start
    return {
        "tagger_documents": len(texts),
        "tagger_words": words,
        "tagger_s": seconds,
        "tagger_words_per_s": words / seconds,
    }


def peak_kb() -> int:
    """This process's peak resident memory in kB (``VmHWM``; ``ru_maxrss`` would keep the parent's peak
    across ``exec``), or ``ru_maxrss`` where there is no ``/proc``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory_of(entries: int) -> dict:
    """Peak resident memory of building a matcher of ``entries`` synthetic entries, in a fresh process."""
    code = (
        "import json, sys, time; sys.path.insert(0, %r); sys.path.insert(0, %r)\n"
        "from dictionary_speed import peak_kb, synthetic_entries\nfrom eer_plugin.annotation.dictionary import Matcher\n"
        "before = peak_kb(); start = time.perf_counter()\n"
        "m = Matcher(); s = m.add_source('synthetic')\n"
        "for form, label in synthetic_entries(%d): m.add(form, label, s)\n"
        "seconds = time.perf_counter() - start; after = peak_kb()\n"
        "print(json.dumps({'entries': len(m), 'forms': len(m) - m.duplicates, 'nodes': len(m.value), 'words': len(m.vocab), 'build_s': seconds,"
        " 'peak_rss_mb': after / 1024, 'rss_before_mb': before / 1024, 'build_peak_mb': (after - before) / 1024}))\n"
    ) % (str(REPO), str(Path(__file__).resolve().parent), entries)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench(build_tagger, entries: int = 1_000_000) -> dict:
    import os
    import platform

    import torch

    result = {
        "date": time.strftime("%Y-%m-%d"),
        "load": os.getloadavg()[0],
        "threads": torch.get_num_threads(),
        "machine": f"{os.cpu_count()}-core {platform.machine()}",
        **bench_labelling(build_tagger),
    }
    result["memory"] = memory_of(entries)
    return result


def report_lines(d: dict) -> list:
    """The speed report's lines of this part."""
    m = d.get("memory", {})
    verdict = "met" if d["ratio"] >= TARGET_RATIO else "NOT met"
    lines = [
        f"Dictionary labelling (`eer-dictionary`, measured {d.get('date', '?')} on the {d.get('machine', '?')} CPU, "
        f"{d.get('threads', '?')} torch thread{'' if d.get('threads') == 1 else 's'}, load {d.get('load', float('nan')):.1f}; "
        f"{d['text']}; {d['documents']} documents, {d['words']:,} words; "
        f"{d['dictionary_entries']:,} entries: {d['gold_forms']:,} gold forms + {d['synthetic_entries']:,} synthetic; {d['matches']:,} matches):",
        "",
        "| | documents/s | words/s | / MiniLM tagging |",
        "|---|---:|---:|---:|",
        f"| raw text in (tokenizer + matcher + offsets) | {d['raw_documents_per_s']:,.0f} | {d['raw_words_per_s']:,.0f} | {d['ratio']:,.0f}x |",
        f"| matcher alone (pre-split words) | {d['match_documents_per_s']:,.0f} | {d['match_words_per_s']:,.0f} | {d['match_ratio']:,.0f}x |",
        f"| MiniLM tagging (`eer_tagger` predictor, {d['tagger_documents']} of the documents) | | {d['tagger_words_per_s']:,.0f} | 1x |",
        "",
        f"Goal: labelling raw text at least {TARGET_RATIO:.0f}x faster than tagging it: {d['ratio']:,.0f}x ({verdict}).",
    ]
    if m:
        lines += [
            "",
            f"Memory: a matcher of {m['entries']:,} synthetic entries ({m['forms']:,} distinct forms, {m['nodes']:,} trie nodes, {m['words']:,} distinct words) "
            f"built in {m['build_s']:.1f} s; peak resident memory {m['peak_rss_mb']:.0f} MB ({m['build_peak_mb']:.0f} MB "
            "over the interpreter and imports).",
            "",
        ]
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--memory-only", action="store_true")
    args = parser.parse_args()
    result = {"memory": memory_of(args.entries)} if args.memory_only else bench(args.entries)
    print(json.dumps(result, indent=1))
    if not args.memory_only:
        print("\n".join(report_lines(result)))
