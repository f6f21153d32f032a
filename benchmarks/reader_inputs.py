"""Generated inputs of every corpus command, for ``benchmarks/reader_memory.sh`` (the peak memory of each command
on them, and the same outputs from two versions of the package).

``python benchmarks/reader_inputs.py DIR [SIZE_MB]`` writes, seeded, about SIZE_MB (default 10) megabytes of
words per kind of file into DIR (the files are larger: markup, offsets, probabilities): partial JSON lines, a
CoNLL file with and one without ``-DOCSTART-`` lines, doccano, Prodigy (a tenth of the inputs a second time, a
binary decision), Label Studio and brat exports, a spaCy DocBin, ``predict`` output with error records, raw-text
JSON lines, a dictionary and a ``--complete-ids`` file. Documents are 3-12 sentences of 9-26 words, an eighth of
them entities of four types.
"""

import json
import random
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

WORDS = (
    "the of and to in a is that for it as was with be by on not he I this are or his from at which but have an they "
    "you were her she there been one all we their has would when if so what no more out up said into do can time "
    "only market board report week year company talks price shares government plan city police team game season"
).split()
ENTITIES = {
    "LOC": ["New York", "Paris", "Berlin", "Lake Victoria", "Buenos Aires", "Tokyo"],
    "MISC": ["German", "World Cup", "Olympic", "French", "Euro"],
    "ORG": ["Siemens", "European Union", "Reuters", "Real Madrid", "United Nations", "Apple"],
    "PER": ["Angela Merkel", "John Smith", "Peter Blackburn", "Maria Garcia", "Li Wei", "Ahmed Khan"],
}
Span = Tuple[int, int, str]


def _sentence(rng: random.Random) -> Tuple[List[str], List[Span]]:
    tokens: List[str] = []
    spans: List[Span] = []
    for _ in range(rng.randint(8, 25)):
        if rng.random() < 0.12:
            label = rng.choice(sorted(ENTITIES))
            words = rng.choice(ENTITIES[label]).split()
            spans.append((len(tokens), len(tokens) + len(words), label))
            tokens.extend(words)
        else:
            tokens.append(rng.choice(WORDS))
    return tokens + ["."], spans


def documents(size: float, seed: int = 0) -> Iterator[Tuple[int, random.Random, List[str], List[int], List[Span]]]:
    """``(index, the generator, tokens, sentence ends, word spans)`` until ``size`` characters of words."""
    rng = random.Random(seed)
    written = index = 0
    while written < size:
        tokens: List[str] = []
        ends: List[int] = []
        spans: List[Span] = []
        for _ in range(rng.randint(3, 12)):
            words, found = _sentence(rng)
            spans += [(len(tokens) + s, len(tokens) + e, t) for s, e, t in found]
            tokens += words
            ends.append(len(tokens))
        yield index, rng, tokens, ends, spans
        written += sum(len(t) + 1 for t in tokens)
        index += 1


def text_of(tokens: List[str], ends: List[int], spans: List[Span]) -> Tuple[str, List[Span]]:
    """The raw text (a space between words, a line break between sentences) and the spans' character offsets."""
    starts, position, breaks = [], 0, set(ends)
    for token in tokens:
        starts.append(position)
        position += len(token) + 1
    text = "".join(token + ("\n" if i + 1 in breaks else " ") for i, token in enumerate(tokens))[:-1]
    return text, [(starts[s], starts[e - 1] + len(tokens[e - 1]), t) for s, e, t in spans]


def _lines(path: Path, records) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")


def partial(path: Path, size: float) -> None:
    def records():
        for i, rng, tokens, ends, spans in documents(size):
            complete = rng.random() < 0.3
            kept = spans if complete else [s for s in spans if rng.random() < 0.5]
            yield {"id": f"d{i}", "tokens": tokens, "sentence_ends": ends, "spans": kept, "is_complete": complete}

    _lines(path, records())


def conll(path: Path, size: float, docstart: bool = True) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for _, _, tokens, ends, spans in documents(size):
            tags = ["O"] * len(tokens)
            for s, e, t in spans:
                tags[s:e] = [f"B-{t}"] + [f"I-{t}"] * (e - s - 1)
            out.write("-DOCSTART- -X- -X- O\n\n" if docstart else "")
            for start, end in zip([0] + ends, ends):
                out.write("".join(f"{tokens[k]} NN O {tags[k]}\n" for k in range(start, end)) + "\n")


def doccano(path: Path, size: float) -> None:
    def records():
        for i, _, tokens, ends, spans in documents(size):
            text, chars = text_of(tokens, ends, spans)
            yield {"id": i, "text": text, "label": chars}

    _lines(path, records())


def prodigy(path: Path, size: float) -> None:
    def records():
        for i, rng, tokens, ends, spans in documents(size):
            text, chars = text_of(tokens, ends, spans)
            task = {"text": text, "_input_hash": i, "_task_hash": i, "_view_id": "ner_manual", "answer": "accept"}
            yield dict(task, spans=[{"start": s, "end": e, "label": t} for s, e, t in chars])
            if rng.random() < 0.1 and chars:  # a binary decision on the same input
                s, e, t = chars[0]
                binary = {"text": text, "_input_hash": i, "_task_hash": -i - 1, "_view_id": "ner", "answer": "accept"}
                yield dict(binary, spans=[{"start": s, "end": e, "label": t}])

    _lines(path, records())


def label_studio(path: Path, size: float) -> None:
    tasks = []
    for i, _, tokens, ends, spans in documents(size):
        text, chars = text_of(tokens, ends, spans)
        result = [
            {"id": f"r{k}", "from_name": "label", "to_name": "text", "type": "labels", "value": value}
            for k, value in enumerate({"start": s, "end": e, "text": text[s:e], "labels": [t]} for s, e, t in chars)
        ]
        tasks.append({"id": i, "data": {"text": text}, "annotations": [{"id": i, "result": result}]})
    path.write_text(json.dumps(tasks, indent=1), encoding="utf-8")


def brat(path: Path, size: float) -> None:
    path.mkdir(exist_ok=True)
    for i, _, tokens, ends, spans in documents(size):
        text, chars = text_of(tokens, ends, spans)
        (path / f"doc{i:06d}.txt").write_text(text, encoding="utf-8")
        lines = (f"T{k}\t{t} {s} {e}\t{text[s:e]}\n" for k, (s, e, t) in enumerate(chars, 1))
        (path / f"doc{i:06d}.ann").write_text("".join(lines), encoding="utf-8")


def docbin(path: Path, size: float) -> None:
    from spacy.tokens import Doc, DocBin, Span
    from spacy.vocab import Vocab

    vocab, docs = Vocab(), DocBin()
    for i, _, tokens, _, spans in documents(size):
        doc = Doc(vocab, words=tokens)  # every other document complete, the others with missing tokens
        doc.set_ents([Span(doc, s, e, label=t) for s, e, t in spans], default="outside" if i % 2 else "missing")
        docs.add(doc)
    docs.to_disk(path)


def predictions(path: Path, size: float) -> None:
    def records():
        for i, rng, tokens, ends, spans in documents(size):
            text, chars = text_of(tokens, ends, spans)
            spans = [
                {
                    "start": s,
                    "end": e,
                    "type": t,
                    "probability": round(rng.random(), 4),
                    "char_start": c[0],
                    "char_end": c[1],
                }
                for (s, e, t), c in zip(spans, chars)
            ]
            yield {
                "id": f"p{i}",
                "text": text,
                "tokens": tokens,
                "sentence_ends": ends,
                "tags": ["O"] * len(tokens),
                "spans": spans,
            }
            if i % 997 == 5:
                yield {"line": i, "id": None, "error": "a generated error record"}

    _lines(path, records())


def raw_text(path: Path, size: float) -> None:
    _lines(
        path,
        ({"id": f"r{i}", "text": text_of(tokens, ends, spans)[0]} for i, _, tokens, ends, spans in documents(size)),
    )


KINDS = {
    "partial.jsonl": partial,
    "corpus.conll": conll,
    "grouped.conll": lambda path, size: conll(path, size, docstart=False),
    "doccano.jsonl": doccano,
    "prodigy.jsonl": prodigy,
    "labelstudio.json": label_studio,
    "brat": brat,
    "docbin.spacy": docbin,
    "predictions.jsonl": predictions,
    "raw.jsonl": raw_text,
}


def main(directory: str, size_mb: float = 10) -> None:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for name, write in KINDS.items():
        write(out / name, size_mb * 1e6)
    documents_written = sum(1 for _ in documents(size_mb * 1e6))
    (out / "ids.txt").write_text("".join(f"{i}\n" for i in range(0, documents_written, 10)), encoding="utf-8")
    (out / "names.tsv").write_text("Angela Merkel\tPER\nNew York\tLOC\nSiemens\tORG\nReuters\tORG\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], *map(float, sys.argv[2:3]))
