"""The HTTP layer of ``eer-ner serve``: FastAPI routes onto :class:`eer_plugin.serve.backend.Backend`, run by
uvicorn. The only module of the package that imports them (the ``serve`` extra)."""

import json
import logging
from typing import Any, Optional

#: where the backend listens (only this machine, unless --host says otherwise); Label Studio's usual backend port
HOST = "127.0.0.1"
PORT = 9090
#: the largest request body the backend reads, in MB (``--max-body-mb``); a larger one is a 413 before it is read
MAX_BODY_MB = 20.0
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

    # model calls and Label Studio calls block: each runs in the thread pool (a plain def does)
    @app.get("/")
    @app.get("/health")
    def health():
        return answer(backend.health())

    def route(path: str):
        async def endpoint(request: fastapi.Request):
            raw = await _body(request, int(max_body_mb * 1_000_000))
            if raw is None:
                return answer(backend.too_large(path, max_body_mb))
            return answer(await fastapi.concurrency.run_in_threadpool(backend.handle, path, raw))

        app.post(path)(endpoint)

    for path in ("/setup", "/predict", "/webhook", "/train", "/rank"):
        route(path)

    @app.get("/versions")
    def versions():
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
    """Runs the backend's app with uvicorn until Ctrl-C / SIGTERM, then stops a running training."""
    _, uvicorn = _framework()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        uvicorn.run(create_app(backend, max_body_mb), host=host, port=port, log_level=log_level)
    finally:
        backend.trainer.stop()
