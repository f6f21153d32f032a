"""Tag schemes: BILUO tags over entity types, conversions from IOB1 / IOB2 (BIO) / BIOUL / BIOES input,
spans <-> tags, and the grammar of valid BILUO sequences used by the constrained CRF.

BIOES (alias IOBES: flair's and many toolkits' output) is BIOUL with ``S-`` for ``U-`` and ``E-`` for ``L-``.

Spans are ``(start, end, type)`` with ``end`` exclusive, over whatever unit the tags are over
(words or subwords).

The BILUO grammar has no start/end states (paper, "Tagging Model"): the transformer's bookend
tokens ([CLS]/[SEP], <s>/</s>) are always ``O``, so besides the transition rules a valid sequence
may not *start* with ``I-``/``L-`` nor *end* with ``B-``/``I-``.

The tag conversions are plain Python, so the corpus readers that use them (and the commands built on those
alone, ``eer-ner eer-dictionary`` among them) import no torch; :class:`BiluoScheme`'s tensors import it when
they are made.
"""

from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Tuple

if TYPE_CHECKING:
    import torch

Span = Tuple[int, int, str]

OUTSIDE = "O"
ENCODINGS = ("IOB1", "BIO", "BIOUL", "BIOES")
_ENCODING_ALIASES = {
    "IOB1": "IOB1",
    "BIO": "BIO",
    "IOB2": "BIO",
    "BIOUL": "BIOUL",
    "BILOU": "BIOUL",
    "BILUO": "BIOUL",
    "BIOES": "BIOES",
    "IOBES": "BIOES",
}


def _scheme_names() -> str:
    """``IOB1, BIO (alias IOB2), ...``: the schemes and their aliases as messages list them."""
    named = []
    for scheme in ENCODINGS:
        aliases = [alias for alias, name in _ENCODING_ALIASES.items() if name == scheme and alias != scheme]
        named.append(scheme + (f" (alias {', '.join(aliases)})" if aliases else ""))
    return ", ".join(named)


SCHEME_NAMES = _scheme_names()
#: a tag scheme setting (``EER_TAG_SCHEME``, ``--tag-scheme``, ``dataset_reader.tag_scheme``) that leaves the scheme to
#: the tags of each column file
AUTO_SCHEME = "auto"
#: what a tag scheme setting may be, as messages say it
SCHEME_SETTINGS = f"{AUTO_SCHEME}, or one of {SCHEME_NAMES} in any case"
#: the prefixes each scheme writes, besides ``O``
PREFIXES = {"IOB1": "BI", "BIO": "BI", "BIOUL": "BILU", "BIOES": "BIES"}
#: every entity tag prefix of the schemes (``BILUES``)
TAG_PREFIXES = "".join(dict.fromkeys("".join(PREFIXES.values())))
#: BIOES's prefixes as BIOUL's: single ``S-`` is ``U-``, end ``E-`` is ``L-``
_AS_BIOUL = {"S": "U", "E": "L"}
#: BIOUL's prefixes as BIOES's, and as BIO's (single and end become begin and inside)
_AS_BIOES = {bioul: bioes for bioes, bioul in _AS_BIOUL.items()}
_AS_BIO = {"U": "B", "L": "I"}


class TagSequenceError(ValueError):
    """A tag sequence that is not valid in its encoding. ``position`` is the offending index."""

    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.position = position


def normalize_encoding(encoding: str) -> str:
    """Returns the canonical name (``IOB1``, ``BIO``, ``BIOUL`` or ``BIOES``) of an encoding name or alias."""
    key = _alias_key(encoding)
    if key not in _ENCODING_ALIASES:
        raise ValueError(f"unknown tag encoding {encoding!r}; expected one of {SCHEME_NAMES}")
    return _ENCODING_ALIASES[key]


def is_scheme_setting(value) -> bool:
    """Whether ``value`` is a tag scheme setting: ``auto`` or a scheme's name or alias (:data:`SCHEME_SETTINGS`)."""
    return value == AUTO_SCHEME or _alias_key(value) in _ENCODING_ALIASES


def _alias_key(name) -> Optional[str]:
    """The key of a scheme's name or alias in ``_ENCODING_ALIASES`` (any case, hyphens left out); None for a value
    that is no text."""
    return name.upper().replace("-", "") if isinstance(name, str) else None


def _split(tag: str, position: int) -> Tuple[str, Optional[str]]:
    if tag == OUTSIDE:
        return OUTSIDE, None
    if len(tag) < 3 or tag[1] != "-" or tag[0] not in TAG_PREFIXES:
        raise TagSequenceError(f"tag {tag!r} at position {position} is not 'O' nor of the form X-TYPE", position)
    return tag[0], tag[2:]


def tags_to_spans(tags: Sequence[str], encoding: str) -> List[Span]:
    """Decodes a tag sequence in ``encoding`` into spans, raising :class:`TagSequenceError` on
    sequences that are invalid in that encoding (for example an ``I-`` that cannot continue)."""
    encoding = normalize_encoding(encoding)
    spans: List[Span] = []
    start: Optional[int] = None
    current: Optional[str] = None

    def close(end: int) -> None:
        nonlocal start, current
        if current is not None:
            spans.append((start, end, current))
        start, current = None, None

    for i, tag in enumerate(tags):
        prefix, label = _split(tag, i)
        if prefix != OUTSIDE and prefix not in PREFIXES[encoding]:
            raise TagSequenceError(f"tag {tag!r} at position {i} is not allowed in {encoding}", i)
        prefix = _AS_BIOUL.get(prefix, prefix)
        if prefix == OUTSIDE:
            if encoding in ("BIOUL", "BIOES") and current is not None:
                raise TagSequenceError(f"entity {current} opened at {start} is not closed before 'O' at {i}", i)
            close(i)
        elif prefix == "B":
            if encoding in ("BIOUL", "BIOES") and current is not None:
                raise TagSequenceError(f"entity {current} opened at {start} is not closed before {tag!r} at {i}", i)
            # (IOB1 reserves B- for an entity right after one of the same type; a B- elsewhere is
            # accepted there too, as every IOB1 reader does.)
            close(i)
            start, current = i, label
        elif prefix == "I":
            if current == label:
                continue
            if encoding != "IOB1":
                raise TagSequenceError(
                    f"tag {tag!r} at position {i} cannot continue {tags[i - 1] if i else 'the start'}", i
                )
            close(i)  # IOB1: an I- after O or another type starts an entity
            start, current = i, label
        elif prefix == "L":
            if current != label:
                raise TagSequenceError(
                    f"tag {tag!r} at position {i} cannot continue {tags[i - 1] if i else 'the start'}", i
                )
            close(i + 1)
        else:  # U
            if current is not None:
                raise TagSequenceError(f"entity {current} opened at {start} is not closed before {tag!r} at {i}", i)
            spans.append((i, i + 1, label))
    if current is not None:
        if encoding in ("BIOUL", "BIOES"):
            raise TagSequenceError(f"entity {current} opened at {start} is not closed at the end", len(tags))
        close(len(tags))
    return spans


def spans_to_biluo(spans: Iterable[Span], length: int, fill: str = OUTSIDE) -> List[str]:
    """Encodes non-overlapping spans as BILUO tags; positions outside every span get ``fill``."""
    tags = [fill] * length
    for start, end, label in sorted(spans):
        if not 0 <= start < end <= length:
            raise ValueError(f"span ({start}, {end}, {label}) is out of range for length {length}")
        if any(t != fill for t in tags[start:end]):
            raise ValueError(f"span ({start}, {end}, {label}) overlaps another span")
        if end - start == 1:
            tags[start] = f"U-{label}"
        else:
            tags[start] = f"B-{label}"
            tags[start + 1 : end - 1] = [f"I-{label}"] * (end - start - 2)
            tags[end - 1] = f"L-{label}"
    return tags


def spans_to_tags(spans: Iterable[Span], length: int, encoding: str) -> List[str]:
    """Encodes non-overlapping spans as tags of ``encoding`` (IOB1, BIO/IOB2, BIOUL or BIOES, or an alias):
    :func:`tags_to_spans` of the result in ``encoding`` gives the spans back. IOB1 writes ``B-`` only where an
    entity directly follows one of its type. The prefix alone is rewritten, so a type that holds ``L-`` or
    ``U-`` (``NATIONAL-PARK``) stays as it was."""
    encoding = normalize_encoding(encoding)
    tags = spans_to_biluo(spans, length)
    if encoding == "BIOUL":
        return tags
    written = []
    for i, tag in enumerate(tags):
        prefix, label = tag[0], tag[2:]
        if encoding == "BIOES":
            prefix = _AS_BIOES.get(prefix, prefix)
        else:
            prefix = _AS_BIO.get(prefix, prefix)
            if encoding == "IOB1" and prefix == "B":
                follows_its_type = i > 0 and tags[i - 1][0] in "LU" and tags[i - 1][2:] == label
                prefix = "B" if follows_its_type else "I"
        written.append(tag if tag == OUTSIDE else f"{prefix}-{label}")
    return written


def one_word_type(label: str) -> str:
    """The entity type ``label`` as a format whose types are one word writes it (a CoNLL tag column): its spaces as
    ``_`` (``Product Name``, a label of an annotation tool, is ``Product_Name``). brat takes fewer characters still
    (``eer_plugin.corpus.brat_names.storage_form``)."""
    return label.replace(" ", "_")


def biluo_to_spans(tags: Sequence[str]) -> List[Span]:
    """Decodes valid BILUO tags into spans."""
    return tags_to_spans(tags, "BIOUL")


def to_biluo(tags: Sequence[str], encoding: str) -> List[str]:
    """Converts a tag sequence in ``encoding`` (IOB1, BIO/IOB2, BIOUL or BIOES) into BILUO."""
    return spans_to_biluo(tags_to_spans(tags, encoding), len(tags))


def i_chunk_starts(tags: Sequence[str]) -> List[int]:
    """Positions where an ``I-`` tag starts a chunk by conlleval's rule: after ``O``, after a tag of
    another type, or at the start of the sentence (IOB1 writes every such chunk so; in IOB2/BIO they
    are stray tags)."""
    starts = []
    previous = OUTSIDE
    for i, tag in enumerate(tags):
        prefix, label = _split(tag, i)
        if prefix == "I" and (previous == OUTSIDE or previous[2:] != label):
            starts.append(i)
        previous = tag
    return starts


def ending_scheme(tag: str) -> Optional[str]:
    """``BIOUL`` for an ``L-``/``U-`` tag, ``BIOES`` for an ``S-``/``E-`` tag, else None: the tags that only
    one scheme writes."""
    if len(tag) > 2 and tag[1] == "-":
        return "BIOUL" if tag[0] in "LU" else "BIOES" if tag[0] in "SE" else None
    return None


def detect_encoding(sentences: Iterable[Sequence[str]]) -> str:
    """Guesses the encoding of a corpus from its tags: ``BIOUL`` if ``L-``/``U-`` occurs first, ``BIOES`` if
    ``S-``/``E-`` does, ``IOB1`` if some entity starts with ``I-`` (after ``O``, another type, or at a sentence
    start; see :func:`i_chunk_starts`), otherwise ``BIO`` (a corpus with no entity starting in ``I-`` reads
    the same in IOB1 and BIO)."""
    saw_iob1 = False
    for tags in sentences:
        for tag in tags:
            scheme = ending_scheme(tag)
            if scheme is not None:
                return scheme
        saw_iob1 = saw_iob1 or bool(i_chunk_starts(tags))
    return "IOB1" if saw_iob1 else "BIO"


class BiluoScheme:
    """BILUO tags over a fixed, ordered list of entity types.

    Index 0 is always ``O``; type ``t`` (0-based, in the given order) owns indices
    ``1 + 4t .. 4 + 4t`` for ``B-, I-, L-, U-``. ``K = 1 + 4 * len(entity_types)`` tags in all.
    """

    PREFIXES = ("B", "I", "L", "U")

    def __init__(self, entity_types: Sequence[str]):
        types = list(entity_types)
        if len(set(types)) != len(types) or any(not t or t == OUTSIDE for t in types):
            raise ValueError(f"entity types must be distinct, non-empty and not 'O': {types}")
        self.entity_types: List[str] = types
        self.labels: List[str] = [OUTSIDE] + [f"{p}-{t}" for t in types for p in self.PREFIXES]
        self.index: Dict[str, int] = {label: i for i, label in enumerate(self.labels)}
        self.outside_index = 0

    @classmethod
    def from_labels(cls, labels: Sequence[str]) -> "BiluoScheme":
        """Builds the scheme whose label list equals ``labels`` (as stored in a vocabulary)."""
        types = []
        for label in labels:
            if label != OUTSIDE and label[2:] not in types:
                types.append(label[2:])
        scheme = cls(types)
        if list(labels) != scheme.labels:
            raise ValueError(f"labels {list(labels)} are not in BiluoScheme order {scheme.labels}")
        return scheme

    @property
    def num_tags(self) -> int:
        return len(self.labels)

    def __repr__(self) -> str:
        return f"BiluoScheme({self.entity_types!r})"

    def allowed_transitions(self) -> "torch.Tensor":
        """``(K, K)`` bool matrix: ``[i, j]`` is True when tag ``j`` may follow tag ``i``."""
        import torch

        allowed = torch.zeros(self.num_tags, self.num_tags, dtype=torch.bool)
        for i, a in enumerate(self.labels):
            for j, b in enumerate(self.labels):
                allowed[i, j] = self._may_follow(a, b)
        return allowed

    @staticmethod
    def _may_follow(a: str, b: str) -> bool:
        a_prefix, a_type = (a[0], a[2:]) if a != OUTSIDE else (OUTSIDE, None)
        b_prefix, b_type = (b[0], b[2:]) if b != OUTSIDE else (OUTSIDE, None)
        if a_prefix in (OUTSIDE, "L", "U"):
            return b_prefix in (OUTSIDE, "B", "U")
        return b_prefix in ("I", "L") and a_type == b_type  # inside an entity: continue or close it

    def allowed_start(self) -> "torch.Tensor":
        """``(K,)`` bool: tags a sequence may start with (``O``, ``B-``, ``U-``)."""
        import torch

        return torch.tensor([label == OUTSIDE or label[0] in "BU" for label in self.labels])

    def allowed_end(self) -> "torch.Tensor":
        """``(K,)`` bool: tags a sequence may end with (``O``, ``L-``, ``U-``)."""
        import torch

        return torch.tensor([label == OUTSIDE or label[0] in "LU" for label in self.labels])

    def entity_mask(self) -> "torch.Tensor":
        """``(K,)`` bool: True for every non-``O`` tag."""
        import torch

        mask = torch.ones(self.num_tags, dtype=torch.bool)
        mask[self.outside_index] = False
        return mask

    def is_valid(self, tags: Sequence[str]) -> bool:
        """True when ``tags`` is a valid BILUO sequence under this scheme."""
        if any(t not in self.index for t in tags):
            return False
        if not tags:
            return True
        if not (self._may_start(tags[0]) and self._may_end(tags[-1])):
            return False
        return all(self._may_follow(a, b) for a, b in zip(tags, tags[1:]))

    @staticmethod
    def _may_start(tag: str) -> bool:
        return tag == OUTSIDE or tag[0] in "BU"

    @staticmethod
    def _may_end(tag: str) -> bool:
        return tag == OUTSIDE or tag[0] in "LU"

    def encode(self, tags: Sequence[str]) -> List[int]:
        return [self.index[t] for t in tags]

    def decode(self, indices: Iterable[int]) -> List[str]:
        return [self.labels[i] for i in indices]
