"""``eer-ner serve``'s run: the model store, the trainer and the backend of a served model, then the HTTP server
(:mod:`eer_plugin.serve.app`, the ``serve`` extra). The defaults of the command's options are this signature's."""

import json
import math
import os
import socket
from typing import Callable, Optional

from eer_plugin.common.errors import UserError
from eer_plugin.serve.app import HOST, MAX_BODY_MB, PORT
from eer_plugin.serve.backend import MAX_WORDS
from eer_plugin.serve.models import TRAIN_CONFIG, WORK_DIR

#: the environment variable that holds the Label Studio API key when none is given
API_KEY_VARIABLE = "LABEL_STUDIO_API_KEY"


def check_address(host: str, port: int) -> None:
    """:class:`UserError` unless the backend can listen at ``host:port``: a port number, an address of this machine,
    and a port no other program (an earlier ``eer-ner serve``) listens on; checked before the model loads."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise UserError(f"--port must be a port number from 0 to 65535, got {port!r}")
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as error:
        raise UserError(f"--host {host}: no address of this machine ({error}); use 127.0.0.1 or 0.0.0.0") from None
    with socket.socket(family, kind, protocol) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a closed port is free
        try:
            probe.bind(address)
        except OSError as error:
            raise UserError(
                f"cannot listen at {host}:{port} ({error.strerror or error}): another program (an eer-ner serve "
                "started before?) listens there, or it is no address of this machine; stop it, or choose another "
                "--port / --host"
            ) from None


def launch(
    model: str,
    host: str = HOST,
    port: int = PORT,
    label_studio_url: Optional[str] = None,
    api_key: Optional[str] = None,
    work_dir: str = WORK_DIR,
    train_config: str = TRAIN_CONFIG,
    train_overrides: str = "{}",
    encoder: Optional[str] = None,
    announce: Callable[[str], None] = lambda line: None,
    max_body_mb: float = MAX_BODY_MB,
    max_words: int = MAX_WORDS,
) -> None:
    """Serves ``model`` at ``http://host:port`` until stopped: a Label Studio ML backend whose trainings use
    ``train_config`` with the ``-o`` overrides ``train_overrides`` (JSON object text) and ``encoder`` (None: the
    served model's) in ``work_dir``. ``api_key`` None: ``$LABEL_STUDIO_API_KEY``, else the token Label Studio sends
    at setup. ``announce`` gets the lines that say what is served where. Request bodies over ``max_body_mb`` MB
    are answered 413 unread, /predict requests of more than ``max_words`` words 413."""
    from eer_plugin.serve import app
    from eer_plugin.serve.backend import Backend
    from eer_plugin.serve.models import ModelStore, Trainer

    app._framework()  # the extra's message before a model loads
    check_address(host, port)
    if isinstance(max_body_mb, bool) or not isinstance(max_body_mb, (int, float)) or not 0 < max_body_mb < math.inf:
        raise UserError(f"--max-body-mb must be a number of megabytes above 0, got {max_body_mb!r}")
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise UserError(f"--max-words must be a number of words of at least 1, got {max_words!r}")
    try:
        overrides = json.loads(train_overrides)
        assert isinstance(overrides, dict)
    except (ValueError, AssertionError):
        raise UserError(f"--train-overrides is no JSON object: {train_overrides!r}") from None
    from eer_plugin.api import Tagger

    store = ModelStore(model, work_dir, Tagger.load, exclusive=True)
    backend = Backend(
        store,
        Trainer(store, train_config, overrides, encoder),
        label_studio_url,
        api_key or os.environ.get(API_KEY_VARIABLE),
        max_words=max_words,
    )
    served = store.current
    announce(f"serving {served.version} ({served.path}, {store.source}): types {', '.join(served.entity_types)}")
    announce(f"Label Studio ML backend at http://{host}:{port} (work dir {store.work_dir})")
    app.serve(backend, host, port, max_body_mb=max_body_mb)
