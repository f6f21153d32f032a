"""The spaCy pipeline component ``eer_ner``: a trained eer-ner model inside a spaCy pipeline.

::

    nlp = spacy.blank("en")
    nlp.add_pipe("eer_ner", config={"model": "runs/eer_short/model.tar.gz"})
    doc = nlp("Fischler met Loyola de Palacio in Brussels.")
    doc.ents                                 # the model's entities
    doc.spans["eer_ner"]                     # every scored span ...
    doc.spans["eer_ner"].attrs["probabilities"]   # ... and its CRF probability, in the same order
    doc.ents[0]._.eer_probability            # the probability of one entity

The factory :func:`make_eer_ner` is registered through the ``spacy_factories`` entry point (``setup.py``);
spaCy imports this module whenever it builds a pipeline, and the module imports spaCy only (no AllenNLP:
the model is loaded, through :mod:`eer_plugin.api`, when the first doc is tagged). Config: ``model`` (a model archive ``model.tar.gz``, a serialization
directory, or the directory of an exported model (``eer-ner eer-export-model``), which tags without
AllenNLP; required), ``batch_size`` (at most this many documents per model call, default 8),
``spans_key`` (the ``doc.spans`` key, default: the component's name, ``"eer_ner"`` unless ``add_pipe`` names it
otherwise, so that two components with two models keep their own spans).

**Tagging.** Each doc's text is tagged as ``Tagger(doc.text)`` tags it (:mod:`eer_plugin.api`:
the predictor's tokenizer, the one ``eer-import`` uses on the training text, so the model sees
the words it was trained on), and the character spans become spaCy spans over the doc's own
tokens (``alignment_mode="expand"``: a span that ends inside a spaCy token covers that token).
``doc.spans[spans_key]`` holds every decoded span with its probability; ``doc.ents`` is set to
them (replacing entities set before), minus any that overlapped another after expansion (the
longer one is kept, :func:`spacy.util.filter_spans`). A doc without any word gets no spans.

**Serialization.** ``nlp.to_disk(path)`` copies the model (hard link when possible) into the
component's directory, ``path/<name>/model.tar.gz`` (a serialization directory: ``.../model/``);
``spacy.load(path)`` tags with that copy, so the saved pipeline does not depend on the original
path (a pipeline saved inside the model's own directory is left out of that copy). The model is loaded on first use (the first doc), not when the pipeline is built.
``nlp.to_bytes()`` / ``nlp.from_bytes(data)`` carry the model itself (the archive file, or a tar of
the directory): :meth:`EntityTaggerComponent.from_bytes` writes it to a temporary directory, loads
it there at once and removes the directory again; the component keeps the bytes for a later
``to_bytes`` or ``to_disk``.
"""

import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional

from spacy.language import Language

ARCHIVE_FILE = "model.tar.gz"
MODEL_DIRECTORY = "model"
PROBABILITY = "eer_probability"


@Language.factory(
    "eer_ner",
    default_config={"batch_size": 8, "spans_key": None},
    assigns=["doc.ents", "doc.spans"],
)
def make_eer_ner(
    nlp: Language, name: str, model: str, batch_size: int, spans_key: Optional[str]
) -> "EntityTaggerComponent":
    """``nlp.add_pipe("eer_ner", config={"model": "model.tar.gz"})``: see the module docstring."""
    return EntityTaggerComponent(nlp, name, model=model, batch_size=batch_size, spans_key=spans_key)


class EntityTaggerComponent:
    """The ``eer_ner`` pipeline component (see the module docstring)."""

    def __init__(self, nlp: Any, name: str, model: str, batch_size: int = 8, spans_key: Optional[str] = None) -> None:
        from spacy.tokens import Span

        if not Span.has_extension(PROBABILITY):
            Span.set_extension(PROBABILITY, default=None)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"eer_ner: config 'batch_size' must be an integer of at least 1, got {batch_size!r}")
        self.name = name
        self.model = str(model)
        self.batch_size = batch_size
        #: the component's name unless set: two components (two models) never write over each other's spans
        self.spans_key = name if spans_key is None else spans_key
        self._tagger = None
        #: the model as :meth:`to_bytes` writes it, once it came from :meth:`from_bytes` (then no file is behind it)
        self._model_bytes: Optional[bytes] = None

    @property
    def tagger(self):
        """The loaded :class:`eer_plugin.api.Tagger` (loaded on first use)."""
        if self._tagger is None:
            from eer_plugin.api import Tagger

            self._tagger = Tagger.load(self.model)
        return self._tagger

    def __call__(self, doc):
        return next(self.pipe([doc], batch_size=1))

    def pipe(self, stream: Iterable[Any], *, batch_size: Optional[int] = None) -> Iterator[Any]:
        """Tags the docs of ``stream`` in order, at most the config's ``batch_size`` per model call
        (``nlp.pipe(batch_size=...)`` is how many docs spaCy hands over at once; it passes it here,
        where it does not raise the model's batch: 1000 long documents in one forward would not fit)."""
        from spacy.util import minibatch

        for docs in minibatch(stream, size=self.batch_size):
            for doc, tagged in zip(docs, self._tag(docs)):
                self.set_annotations(doc, tagged)
                yield doc

    def _tag(self, docs: List[Any]) -> List[Optional[Dict[str, Any]]]:
        """The tagger's output per doc, one model call for the batch; None for a doc without words."""
        texts = [doc.text for doc in docs if doc.text.strip()]
        tagged = iter(self.tagger.pipe(texts, batch_size=max(len(texts), 1)))
        return [next(tagged) if doc.text.strip() else None for doc in docs]

    def set_annotations(self, doc: Any, tagged: Optional[Dict[str, Any]]) -> None:
        from spacy.tokens import SpanGroup
        from spacy.util import filter_spans

        spans, probabilities = [], []
        for predicted in (tagged or {}).get("spans", []):
            span = doc.char_span(
                predicted["char_start"], predicted["char_end"], label=predicted["type"], alignment_mode="expand"
            )
            if span is None:  # pragma: no cover - "expand" finds the tokens of any non-empty character range
                continue
            span._.set(PROBABILITY, predicted["probability"])
            spans.append(span)
            probabilities.append(predicted["probability"])
        doc.spans[self.spans_key] = SpanGroup(
            doc, name=self.spans_key, spans=spans, attrs={"probabilities": probabilities}
        )
        doc.ents = filter_spans(spans)

    # ------------------------------------------------------------------ serialization (spaCy's conventions)
    def to_disk(self, path: Any, *, exclude: Iterable[str] = ()) -> None:
        """Copies the model into ``path`` (hard link when possible), atomically."""
        from eer_plugin.common.atomic import atomic_link_or_copy
        from eer_plugin.common.outputs import temporary_name

        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        if self._model_bytes is not None:  # from bytes: unpack them into the component's directory
            with tempfile.TemporaryDirectory(prefix=".eer-ner-", dir=path) as temporary:
                _unpack(self._model_bytes, Path(temporary))
                for name in (ARCHIVE_FILE, MODEL_DIRECTORY):
                    if (Path(temporary) / name).exists():
                        shutil.rmtree(path / name, ignore_errors=True)
                        os.replace(Path(temporary) / name, path / name)
            return
        source = Path(self.model)
        target = path / (MODEL_DIRECTORY if source.is_dir() else ARCHIVE_FILE)
        if not source.exists():
            raise FileNotFoundError(
                f"{source}: no such model (the eer_ner component's config 'model'); nothing to save"
            )
        if target.exists() and os.path.samefile(source, target):
            return  # saved again where it was loaded from
        if source.is_dir():
            temporary = Path(temporary_name(path / MODEL_DIRECTORY))
            shutil.rmtree(temporary, ignore_errors=True)
            pipeline = path.resolve().parent  # spaCy saves this component in the pipeline's directory

            def not_the_pipeline(directory: str, names: List[str]) -> List[str]:
                # the pipeline saved inside the model's own directory (runs/x/spacy) is not copied into itself
                return [name for name in names if pipeline.is_relative_to((Path(directory) / name).resolve())]

            try:
                shutil.copytree(source, temporary, ignore=not_the_pipeline)
                shutil.rmtree(target, ignore_errors=True)
                os.replace(temporary, target)
            finally:
                shutil.rmtree(temporary, ignore_errors=True)
        else:
            atomic_link_or_copy(str(source), str(target))

    def from_disk(self, path: Any, *, exclude: Iterable[str] = ()) -> "EntityTaggerComponent":
        """Tags with the model that :meth:`to_disk` saved in ``path`` (loaded on first use)."""
        for candidate in (Path(path) / ARCHIVE_FILE, Path(path) / MODEL_DIRECTORY):
            if candidate.exists():
                self.model, self._tagger = str(candidate), None
                return self
        raise FileNotFoundError(f"{path}: no {ARCHIVE_FILE} (or {MODEL_DIRECTORY}/) in this saved eer_ner component")

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        """The model as bytes: a tar holding ``model.tar.gz`` (an archive) or ``model/`` (a directory)."""
        if self._model_bytes is not None:
            return self._model_bytes
        source = Path(self.model)
        if not source.exists():
            raise FileNotFoundError(
                f"{source}: no such model (the eer_ner component's config 'model'); nothing to serialize"
            )
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            archive.add(str(source), arcname=MODEL_DIRECTORY if source.is_dir() else ARCHIVE_FILE)
        return buffer.getvalue()

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = ()) -> "EntityTaggerComponent":
        """Tags with the model of :meth:`to_bytes`'s ``data``, loaded now (from a temporary directory, removed after)."""
        from eer_plugin.api import Tagger

        with tempfile.TemporaryDirectory(prefix="eer-ner-spacy-") as temporary:
            _unpack(data, Path(temporary))
            model = next(
                Path(temporary) / name for name in (ARCHIVE_FILE, MODEL_DIRECTORY) if (Path(temporary) / name).exists()
            )
            self._tagger = Tagger.load(model)
        self.model, self._model_bytes = f"<{self.name}: from bytes>", bytes(data)
        return self


def _unpack(data: bytes, directory: Path) -> None:
    """Extracts :meth:`EntityTaggerComponent.to_bytes`'s tar into ``directory`` (checked members only)."""
    from eer_plugin.runtime.archive import check_members

    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as archive:
        members = check_members(archive, "eer_ner component bytes", directory)
        archive.extractall(directory, members=members, filter="data")
    if not any((directory / name).exists() for name in (ARCHIVE_FILE, MODEL_DIRECTORY)):
        raise ValueError(f"eer_ner component bytes: no {ARCHIVE_FILE} or {MODEL_DIRECTORY}/ in them")
