"""`gemma3n-iree serve`: an asynchronous HTTP server in front of the continuous-batching scheduler.

    gemma3n-iree serve --checkpoint DIR --target cuda --port 8080

    curl -s -F audio=@talk.wav http://127.0.0.1:8080/v1/encode          # -> 202 {"id", "token", ...}
    curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:8080/v1/requests/$ID/result?wait=30" -o talk.npz

Endpoints (JSON unless noted; errors are ``{"error": {"code", "message"}}``):

==========================================  =====================================================================
``POST /v1/encode``                         audio as ``multipart/form-data`` (file field ``audio``) or as the raw
                                            body with an ``audio/*`` or ``application/octet-stream`` content type
                                            (``?filename=`` names it in messages).  202 with ``id``, ``token``
                                            (shown once), ``status`` and links.
``POST /v1/prefill``                        the same plus the prompt (form field or ``?prompt=``; ``chat=0`` to use
                                            it without the chat template).  501 when this server has no prefill
                                            stage (no text tensors or tokenizer in the checkpoint, or disabled).
``GET /v1/requests/{id}``                   metadata: status, clips, buckets, timings, result shapes or the error.
                                            ``?wait=S`` (at most 60) waits for the request to finish first.
``GET /v1/requests/{id}/result``            the result as ``.npz`` (``application/octet-stream``; the same arrays
                                            as the ``encode`` / ``prefill`` CLI commands write, streamed from the
                                            arrays), freed once sent (one fetch wins);
                                            ``?format=npy&array=NAME`` one array as ``.npy`` (not freed).  202 while
                                            running (``?wait=S`` to wait), the request's own 4xx/5xx when it failed.
``DELETE /v1/requests/{id}``                cancel at whatever stage it is, or discard a result not yet fetched.
``GET /health``                             200 when the device thread is running, 503 otherwise.
``GET /metrics``                            queue depth, batch occupancy, latency percentiles, rejections, memory;
                                            ``?format=prometheus`` for the text exposition format.
==========================================  =====================================================================

The ``/v1/requests`` endpoints need ``Authorization: Bearer <token>`` (401 without it); an unknown id and a
wrong token are the same 404.  Backpressure, decided before a body is read (`Scheduler.open_upload`, by
the policy of `serve/admission.py`): 429 (queue full, or this client holds too many unfetched results)
or 503 (no upload slot free, memory budget in use, shutting down) with ``Retry-After``; 408 for a body
that stalls or takes too long; 413 for a body, audio or prompt over the limits; 415 for a body that is
not audio or a form; 400 for audio that cannot be decoded (not audio, truncated, empty, below 8 kHz: the
CLI's message for the same bytes) or a bad prompt; 409 for a fetch while another fetch of the same
result is streaming it.

Why aiohttp: a single, mature, actively maintained dependency (client and server in one package, used
by the test and the benchmark too) with streaming request bodies and multipart parsing built in, so an
upload's size is enforced while it arrives and a client that disconnects mid-upload costs nothing but
the bytes read.  Starlette needs uvicorn plus python-multipart (three packages) for the same, and its
form parser spools files by itself; nothing here benefits from ASGI.  All model work happens off the
event loop (`serve/scheduler.py`): the loop only moves bytes and waits on futures.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from ..runtime.encoder.npz_stream import Pieces, npy_pieces, npz_pieces
from .admission import Limits
from .errors import BadInput, NotFound, Rejected, ServeError, Unavailable
from .jobs import ENCODE, PREFILL, Job, State
from .scheduler import Scheduler
from .uploads import read_upload

log = logging.getLogger("gemma3n_iree.server")

SCHEDULER = web.AppKey("scheduler", Scheduler)
INFO = web.AppKey("info", dict)
#: name -> function of the app giving a JSON-able report, merged into /health and /metrics (the decoder's)
REPORTS = web.AppKey("reports", dict)
#: functions that add routes to the app (serve/chat_routes.py's `add_decoder_routes`)
Extension = Callable[[web.Application], None]
MAX_WAIT_S = 60.0
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
# ---------------------------------------------------------------------------------------------- helpers


class OneLineBadRequests(logging.Filter):
    """aiohttp logs a full traceback for every malformed request (a bad request line, `Content-Length:
    -5`, broken chunking): anyone could flood the log with them.  They are the client's mistake, not
    the server's, so each becomes one warning line naming the peer and the problem."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            detail = " ".join(str(exc.message).split())  # aiohttp quotes the bad line over several lines
            record.msg = f"{record.getMessage()}: malformed request ({type(exc).__name__}: {detail})"
            record.args, record.exc_info, record.exc_text = (), None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_ONE_LINE = OneLineBadRequests()


def _error_response(exc: ServeError) -> web.Response:
    headers = {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    if exc.status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="gemma3n-iree"'
    return web.json_response({"error": {"code": exc.code, "message": exc.message}}, status=exc.status, headers=headers)


@web.middleware
async def _errors(request: web.Request, handler: Callable) -> web.StreamResponse:
    try:
        return await handler(request)
    except ServeError as exc:
        return _error_response(exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return web.json_response(
            {"error": {"code": exc.reason.lower().replace(" ", "_"), "message": exc.text or exc.reason}},
            status=exc.status,
            headers={k: v for k, v in exc.headers.items() if k.lower() in ("allow", "retry-after")},
        )
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except Exception as exc:  # pragma: no cover - a bug: one request fails, the server keeps serving
        log.exception("unhandled error for %s %s", request.method, request.path)
        return web.json_response({"error": {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}}, status=500)


def _token(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise ServeError(
            "this endpoint needs the request's owner token: 'Authorization: Bearer <token>'",
            code="unauthorized",
            status=401,
        )
    return value.strip()


def _flag(value: str | None, default: bool, what: str) -> bool:
    if value is None or value == "":
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise BadInput(f"{what} must be one of 1/0, true/false, yes/no, on/off; got {value!r}", code="bad_parameter")


def _wait_param(request: web.Request) -> float:
    raw = request.query.get("wait")
    if raw is None:
        return 0.0
    try:
        wait = float(raw)
    except ValueError:
        raise BadInput(f"wait must be a number of seconds, got {raw!r}", code="bad_parameter") from None
    if not math.isfinite(wait) or wait < 0:
        raise BadInput(f"wait must be a non-negative number of seconds, got {raw!r}", code="bad_parameter")
    return min(wait, MAX_WAIT_S)


async def _wait_finished(scheduler: Scheduler, job: Job, timeout: float) -> None:
    if timeout <= 0:
        return
    loop = asyncio.get_running_loop()
    event = asyncio.Event()

    def wake() -> None:
        try:
            loop.call_soon_threadsafe(event.set)
        except RuntimeError:  # pragma: no cover - the loop is closing
            pass

    if not scheduler.add_listener(job, wake):
        return
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except asyncio.TimeoutError:
        pass
    finally:
        scheduler.remove_listener(job, wake)


def _pieces(job: Job, fmt: str, array: str | None) -> tuple[Pieces, str]:
    """The result as `.npz` (or one array as `.npy`) pieces over the arrays themselves."""
    result = job.result
    if result is None:
        raise NotFound("no such request for this token")
    if fmt == "npz":
        return npz_pieces(result), f"{job.id}.npz"
    if array not in result:
        raise BadInput(f"format=npy needs array=NAME, one of {', '.join(result)}", code="bad_parameter")
    return npy_pieces(result[array]), f"{job.id}.{array}.npy"


async def _send(
    request: web.Request, status: int, body: bytes | Pieces, content_type: str, headers: dict[str, str] | None = None
) -> web.StreamResponse:
    """Write a whole response now, a slice at a time; raises ConnectionResetError when the client has
    gone away (so a result is only freed after it was handed to the connection)."""
    pieces = body if isinstance(body, Pieces) else Pieces([body])
    response = web.StreamResponse(status=status, headers=headers or {})
    response.content_type = content_type
    response.content_length = pieces.size
    await response.prepare(request)
    for chunk in pieces.chunks():
        await response.write(chunk)
    await response.write_eof()
    return response


# ---------------------------------------------------------------------------------------------- handlers


def _links(job: Job) -> dict[str, str]:
    base = f"/v1/requests/{job.id}"
    return {"self": base, "result": base + "/result"}


async def _receive(request: web.Request, scheduler: Scheduler, kind: str) -> tuple[bytearray, str, str | None, bool]:
    """The body's audio, name, prompt and chat flag (read within the limits; refusals counted)."""
    try:
        data, name, prompt, chat_text = await read_upload(request, scheduler.limits)
        chat = _flag(chat_text, True, "chat")
        if kind == ENCODE and prompt is not None:
            raise BadInput("an encode request takes no prompt (use /v1/prefill)", code="bad_form")
        return data, name, prompt, chat
    except ServeError as exc:
        scheduler.count_rejection(exc.code)
        raise
    except asyncio.CancelledError:  # the client disconnected mid-upload: nothing was admitted
        scheduler.count_rejection("client_disconnected")
        raise


async def admitted(scheduler: Scheduler, kind: str, data: bytearray, **fields: Any) -> tuple[Job, str]:
    """`scheduler.submit` on a worker thread: (the job, its owner token).  When the client goes away while its
    request is being admitted, nobody can ever fetch or cancel it, so it is cancelled as soon as admission
    completes."""
    admission = asyncio.ensure_future(asyncio.to_thread(scheduler.submit, kind, data, **fields))
    try:
        return await asyncio.shield(admission)
    except asyncio.CancelledError:

        def orphaned(done: asyncio.Future) -> None:
            if not done.cancelled() and done.exception() is None:
                orphan, orphan_token = done.result()
                try:
                    scheduler.cancel(orphan.id, orphan_token)
                except NotFound:
                    pass

        admission.add_done_callback(orphaned)
        raise


async def _submit(request: web.Request, kind: str) -> web.Response:
    scheduler = request.app[SCHEDULER]
    client = request.remote or ""
    slot = scheduler.open_upload(kind, client, request.content_length)  # room for the body, before a byte is read
    try:
        data, name, prompt, chat = await _receive(request, scheduler, kind)
    except BaseException:
        slot.release()
        raise
    # `submit` turns the slot into the request's reservation (or releases it when it refuses)
    job, token = await admitted(scheduler, kind, data, name=name, prompt=prompt, chat=chat, client=client, slot=slot)
    body = {"id": job.id, "token": token, "kind": kind, "status": job.state.value, "links": _links(job)}
    return web.json_response(body, status=202, headers={"Location": _links(job)["self"]})


async def submit_encode(request: web.Request) -> web.Response:
    return await _submit(request, ENCODE)


async def submit_prefill(request: web.Request) -> web.Response:
    return await _submit(request, PREFILL)


async def describe(request: web.Request) -> web.Response:
    scheduler = request.app[SCHEDULER]
    job = scheduler.get(request.match_info["id"], _token(request))
    await _wait_finished(scheduler, job, _wait_param(request))
    if job.gone:
        raise NotFound("no such request for this token")
    return web.json_response(scheduler.describe(job), headers={"Cache-Control": "no-store"})


async def result(request: web.Request) -> web.StreamResponse:
    scheduler = request.app[SCHEDULER]
    job = scheduler.get(request.match_info["id"], _token(request))
    fmt = request.query.get("format", "npz").lower()
    if fmt not in ("npz", "npy"):
        raise BadInput(f"format must be npz or npy, got {fmt!r}", code="bad_parameter")
    await _wait_finished(scheduler, job, _wait_param(request))
    if job.gone:
        raise NotFound("no such request for this token")
    if job.state.active:
        return web.json_response(
            scheduler.describe(job), status=202, headers={"Retry-After": "1", "Cache-Control": "no-store"}
        )
    if fmt == "npy" and job.state is State.DONE:  # one array, not freed: any number of these may run
        pieces, filename = _pieces(job, fmt, request.query.get("array"))
        return await _send(request, 200, pieces, "application/octet-stream", _download_headers(job, filename))
    if not scheduler.claim(job):  # exactly one fetch delivers (and frees) a result
        if job.gone:
            raise NotFound("no such request for this token")
        raise ServeError("this result is being sent to another request right now", code="conflict", status=409)
    try:
        if job.state is State.FAILED:
            error = job.error or ServeError("failed")
            body = json.dumps(
                {"error": {"code": error.code, "message": error.message}, "id": job.id, "status": "failed"}
            ).encode()
            response = await _send(request, error.status, body, "application/json")
        else:
            pieces, filename = _pieces(job, fmt, None)
            response = await _send(request, 200, pieces, "application/octet-stream", _download_headers(job, filename))
    except BaseException:
        scheduler.unclaim(job)  # not delivered: kept for a retry
        raise
    scheduler.release(job)  # delivered in full: freed
    return response


def _download_headers(job: Job, filename: str) -> dict[str, str]:
    return {
        "Content-Disposition": f'attachment; filename="{filename}"',
        "Cache-Control": "no-store",
        "X-Gemma3n-Kind": job.kind,
    }


async def cancel(request: web.Request) -> web.Response:
    scheduler = request.app[SCHEDULER]
    before = scheduler.cancel(request.match_info["id"], _token(request))
    status = "cancelled" if State(before).active else "discarded"
    return web.json_response({"id": request.match_info["id"], "status": status, "was": before})


async def health(request: web.Request) -> web.Response:
    scheduler = request.app[SCHEDULER]
    body = dict(request.app[INFO])
    body["status"] = "ok" if scheduler.healthy else "unavailable"
    if scheduler.device_error:
        body["device_error"] = scheduler.device_error
    body["prefill"] = {"available": scheduler.prefill is not None, "reason": scheduler.prefill_unavailable}
    body.update({name: report(request.app) for name, report in request.app[REPORTS].items()})
    return web.json_response(body, status=200 if scheduler.healthy else 503)


def _prometheus(metrics: dict[str, Any], prefix: str = "gemma3n") -> str:
    lines: list[str] = []

    def walk(value: Any, name: str) -> None:
        if isinstance(value, bool):
            lines.append(f"{name} {int(value)}")
        elif isinstance(value, (int, float)):
            lines.append(f"{name} {value}")
        elif isinstance(value, dict):
            for key, sub in value.items():
                walk(sub, f"{name}_{''.join(c if c.isalnum() else '_' for c in str(key))}")

    walk(metrics, prefix)
    return "\n".join(lines) + "\n"


async def metrics(request: web.Request) -> web.Response:
    data = request.app[SCHEDULER].metrics()
    data.update({name: report(request.app) for name, report in request.app[REPORTS].items()})
    if request.query.get("format") == "prometheus":
        return web.Response(text=_prometheus(data), content_type="text/plain")
    return web.json_response(data, headers={"Cache-Control": "no-store"})


def create_app(
    scheduler: Scheduler, info: dict[str, Any] | None = None, extensions: Sequence[Extension] = ()
) -> web.Application:
    """The aiohttp application for a started scheduler (`info` is merged into /health; `extensions` add
    their routes)."""
    server_log = logging.getLogger("aiohttp.server")
    if _ONE_LINE not in server_log.filters:
        server_log.addFilter(_ONE_LINE)
    app = web.Application(middlewares=[_errors], client_max_size=scheduler.limits.max_body_bytes)
    app[SCHEDULER] = scheduler
    app[INFO] = dict(info or {})
    app[REPORTS] = {}
    app.router.add_post("/v1/encode", submit_encode)
    app.router.add_post("/v1/prefill", submit_prefill)
    app.router.add_get("/v1/requests/{id}", describe)
    app.router.add_get("/v1/requests/{id}/result", result)
    app.router.add_delete("/v1/requests/{id}", cancel)
    app.router.add_get("/health", health)
    app.router.add_get("/metrics", metrics)
    for extension in extensions:
        extension(app)
    return app


__all__ = [
    "create_app",
    "Limits",
    "Scheduler",
    "ServeError",
    "BadInput",
    "Rejected",
    "NotFound",
    "Unavailable",
]
