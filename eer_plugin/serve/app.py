"""The HTTP layer of ``eer-ner serve``: FastAPI routes onto :class:`eer_plugin.serve.backend.Backend`, run by
uvicorn. The only module of the package that imports them (the ``serve`` extra)."""

import json
import logging
from typing import Any, Dict, Optional

#: where the backend listens (only this machine, unless --host says otherwise); Label Studio's usual backend port
HOST = "127.0.0.1"
PORT = 9090
#: the largest request body the backend reads, in MB (``--max-body-mb``); a larger one is a 413 before it is read
MAX_BODY_MB = 20.0
#: the routes that run the model (their requests wait for turns at it, :mod:`eer_plugin.serve.turns`)
MODEL_ROUTES = ("/predict", "/rank")
#: threads for the requests of :data:`MODEL_ROUTES`, apart from those of the other POST routes (anyio's default
#: pool, 40): requests waiting for the model never hold up /setup, /train or /webhook; more wait for a thread
MODEL_THREADS = 40
MISSING_EXTRA = "eer-ner serve needs the serve extra: pip install 'eer-ner[serve]' (FastAPI and uvicorn)"


def _framework():
    try:
        import fastapi
        import uvicorn
    except ImportError:
        from eer_plugin.common.errors import UserError

        raise UserError(MISSING_EXTRA) from None
    return fastapi, uvicorn


async def _body(request: Any, limit: int) -> Optional[bytes]:
    """The request's body, or None when it is larger than ``limit`` bytes (said by its Content-Length, or found
    while reading it: no more than ``limit`` bytes are held)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(backend, max_body_mb: float = MAX_BODY_MB) -> Any:
    """The ASGI app of ``backend`` (:class:`~eer_plugin.serve.backend.Backend`); request bodies over ``max_body_mb``
    MB are answered 413 unread."""
    fastapi, _ = _framework()
    from fastapi.responses import JSONResponse

    class ExactJSONResponse(JSONResponse):
        """JSON in UTF-8; text with a lone surrogate (which a task's text may hold, and a result's ``text`` slices)
        as ``\\ud800`` escapes, which JSON parsers read back to the same string, instead of a 500."""

        def render(self, content: Any) -> bytes:
            try:
                return super().render(content)
            except UnicodeEncodeError:
                return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")

    app = fastapi.FastAPI(title="eer-ner Label Studio ML backend")

    def answer(result) -> JSONResponse:
        status, content = result
        return ExactJSONResponse(content, status_code=status)

    # /health answers in the event loop: no thread, no lock, so a backend busy with predictions still answers at
    # once (Label Studio takes a /health that does not answer for a backend that is down)
    @app.get("/")
    @app.get("/health")
    async def health():
        return answer(backend.health())

    import anyio

    limiters: Dict[str, Any] = {}  # made in the event loop, on first use

    def threads(path: str) -> Any:
        """The threads of ``path``'s requests: :data:`MODEL_THREADS` of their own for the model's routes, else
        anyio's default pool."""
        if path not in MODEL_ROUTES:
            return None
        if "model" not in limiters:
            limiters["model"] = anyio.CapacityLimiter(MODEL_THREADS)
        return limiters["model"]

    def route(path: str):
        async def endpoint(request: fastapi.Request):
            raw = await _body(request, int(max_body_mb * 1_000_000))
            if raw is None:
                return answer(backend.too_large(path, max_body_mb))
            # model calls and Label Studio calls block, and so does writing a long answer: all in a thread
            return await anyio.to_thread.run_sync(lambda: answer(backend.handle(path, raw)), limiter=threads(path))

        app.post(path)(endpoint)

    for path in ("/setup", "/predict", "/webhook", "/train", "/rank"):
        route(path)

    @app.get("/versions")
    async def versions():
        return answer((200, {"versions": [backend.store.current.version]}))

    from starlette.exceptions import HTTPException

    @app.exception_handler(HTTPException)
    async def no_such_route(request: fastapi.Request, error: HTTPException):  # 404, 405: {"error": one line}
        return answer((error.status_code, {"error": backend.no_route(request.method, request.url.path)}))

    @app.exception_handler(Exception)
    async def failed(request: fastapi.Request, error: Exception):  # a bug: one line here, the traceback in the log
        return answer(backend.failed(request.method, request.url.path, error))

    return app


def serve(backend, host: str, port: int, log_level: Optional[str] = "info", max_body_mb: float = MAX_BODY_MB) -> None:
    """Runs the backend's app with uvicorn until Ctrl-C / SIGTERM, then stops a running training. The requests
    under way end at their next model call (:meth:`~eer_plugin.serve.backend.Backend.stopping`): uvicorn waits for
    them before it stops."""
    _, uvicorn = _framework()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            backend.stopping()
            super().handle_exit(sig, frame)

    server = Server(uvicorn.Config(create_app(backend, max_body_mb), host=host, port=port, log_level=log_level))
    try:
        server.run()
    finally:
        backend.trainer.stop()
    if not server.started:  # as uvicorn.run: it could not start (it said why)
        raise SystemExit(3)
