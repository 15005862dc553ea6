"""`POST /v1/audio/transcriptions` and `/v1/audio/translations`: OpenAI's audio API on the server.

    curl -s http://127.0.0.1:8080/v1/audio/transcriptions -F file=@talk.wav -F model=gemma-3n-E4B-it
    # -> {"text": "...", "usage": {...}}       (response_format json; text, verbose_json, srt, vtt; stream=true)

Synchronous, as OpenAI's: the response carries the transcript (no polling), so the server scales behind any
HTTP load balancer.  A request goes through the scheduler's own front end for what it shares with
/v1/encode -- the upload's reservation before a byte is read (`open_upload`: 429 / 503 + Retry-After), the
body's size and time limits (413, 408), decoding and probing (400 for what is not audio, 413 for audio over
--max-seconds), the 30 s clips and the batched encoder calls (`submit` of an encode job, whose result is
taken at once) -- then its windows go to the `TranscriptionService` (serve/transcription.py): prefill stage
and greedy decoding, continuously batched with every other request's windows.  Request validation, bodies
and stream events are `serve/openai_audio.py`'s; errors are OpenAI's error object, with the scheduler's
status, code and Retry-After.  A client that disconnects (aiohttp cancels its handler) has its encode job or
its windows cancelled at once: their slots go to the next windows.

With `stream=true` the body is server-sent events: a `transcript.text.delta` for each piece of text as it is
final, in the file's order although its windows decode concurrently (`WindowJoiner`), then one
`transcript.text.done` (a failure after the stream started is an error event).
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.multipart import BodyPartReader

from ..runtime.text.generate import GenerationError, TokenEvent
from ..runtime.text.transcribe import TRANSCRIBE, TRANSLATE, FileTranscript, WindowJoiner
from . import openai_audio as api
from .errors import ServeError
from .jobs import ENCODE, State
from .scheduler import Scheduler
from .server import REPORTS, SCHEDULER, admitted
from .transcription import TranscriptionService
from .uploads import CHUNK, Body

SERVICE = web.AppKey("transcription_service", TranscriptionService)
UNAVAILABLE = web.AppKey("transcription_unavailable", str)
#: Largest text form field (the prompt is bounded by the scheduler's max_prompt_chars instead).
MAX_FIELD_BYTES = 1024


def add_transcription_routes(
    app: web.Application, service: TranscriptionService | None, unavailable: str | None = None
) -> None:
    """Register the two endpoints and the decoder's report in /health and /metrics; `service` is started and
    stopped with the app.  Without a service they answer 501 with `unavailable` (why).  (A server registers
    them through `serve.chat_routes.add_decoder_routes`, with the chat endpoint on the same decoder.)"""
    app[REPORTS]["transcription"] = transcription_metrics
    if service is not None:
        app[SERVICE] = service

        async def start(_app: web.Application) -> None:
            service.start()

        async def stop(_app: web.Application) -> None:
            await asyncio.to_thread(service.stop)

        app.on_startup.append(start)
        app.on_cleanup.append(stop)
    else:
        app[UNAVAILABLE] = unavailable or "this server has no decoder"
    app.router.add_post("/v1/audio/transcriptions", transcriptions)
    app.router.add_post("/v1/audio/translations", translations)


def transcription_metrics(app: web.Application) -> dict[str, Any]:
    """The decoder's part of /health and /metrics."""
    service = app.get(SERVICE)
    if service is None:
        return {"available": False, "reason": app.get(UNAVAILABLE)}
    return {"available": True, **service.metrics()}


async def transcriptions(request: web.Request) -> web.StreamResponse:
    return await _handle(request, TRANSCRIBE)


async def translations(request: web.Request) -> web.StreamResponse:
    return await _handle(request, TRANSLATE)


# ---------------------------------------------------------------------------------------------- errors
def _error(exc: api.OpenAIError, retry_after: float | None = None) -> web.Response:
    headers = {"Retry-After": str(max(1, math.ceil(retry_after)))} if retry_after is not None else None
    return web.json_response(exc.body(), status=exc.status, headers=headers)


def openai_error(exc: ServeError, audio_param: str | None) -> api.OpenAIError:
    """A scheduler refusal as OpenAI's error object, naming `audio_param` (the field holding the audio) when the
    refusal is about the audio."""
    kind = "invalid_request_error" if 400 <= exc.status < 500 and exc.status != 429 else "server_error"
    if exc.status == 429:
        kind = "rate_limit_error"
    param = audio_param if exc.code in ("bad_audio", "too_long", "too_large") else None
    return api.OpenAIError(exc.message, param, status=exc.status, type=kind, code=exc.code)


def _from_serve_error(exc: ServeError) -> web.Response:
    return _error(openai_error(exc, "file"), exc.retry_after)


# ---------------------------------------------------------------------------------------------- the form
@dataclass
class _Form:
    fields: dict[str, list[str]]
    data: bytearray | None
    file: api.UploadedFile | None


async def _read_form(request: web.Request, scheduler: Scheduler) -> _Form:
    """The multipart form within the server's body limits: the `file` part's bytes, every other field as text."""
    limits = scheduler.limits
    if request.content_type.lower() != "multipart/form-data":
        raise api.OpenAIError(
            f"the request must be multipart/form-data with the audio as the file field 'file', got "
            f"{request.content_type or '(none)'!r}",
            "file",
            status=415 if request.content_type else 400,
        )
    declared = request.content_length
    if declared is not None and declared > limits.max_body_bytes:
        raise ServeError(
            f"the body ({declared} bytes) is larger than this server's limit of {limits.max_body_bytes} bytes",
            code="too_large",
            status=413,
        )
    body = Body(request, limits)
    try:
        reader = await request.multipart()
    except ValueError as exc:
        raise api.OpenAIError(f"malformed multipart form: {exc}", None) from None
    form = _Form({}, None, None)
    while True:
        try:
            part = await body.wait(reader.next())
        except ValueError as exc:
            raise api.OpenAIError(f"malformed multipart form: {exc}", None) from None
        if part is None:
            return form
        if not isinstance(part, BodyPartReader) or not part.name:
            raise api.OpenAIError("nested or unnamed multipart parts are not supported", None)
        if part.name == "file":
            if form.data is not None:
                raise api.OpenAIError("one audio file per request (the form has several 'file' parts)", "file")
            form.data = await body.read(lambda p=part: p.read_chunk(CHUNK), limits.max_upload_bytes, "the audio upload")
            form.file = api.UploadedFile(part.filename, part.headers.get("Content-Type"), len(form.data))
            continue
        limit = 4 * limits.max_prompt_chars if part.name == "prompt" else MAX_FIELD_BYTES
        raw = await body.read(lambda p=part: p.read_chunk(CHUNK), limit, f"the form field {part.name!r}")
        try:
            text = raw.decode(part.get_charset(default="utf-8"), errors="strict")
        except (UnicodeDecodeError, LookupError) as exc:
            raise api.OpenAIError(f"the form field {part.name!r} is not valid text: {exc}", part.name) from None
        form.fields.setdefault(part.name, []).append(text)


# ---------------------------------------------------------------------------------------------- the handler
def decoder_refusal(request: web.Request, what: str) -> web.Response | None:
    """The answer before a decoder endpoint reads its body, or None to go on: 501 when this server has no
    decoder (`what` is the endpoint's work, e.g. "transcription"), 429 + Retry-After when its queue is full (as
    the scheduler's own refusals)."""
    app = request.app
    service: TranscriptionService | None = app.get(SERVICE)
    if service is None:
        return _error(
            api.OpenAIError(
                f"{what} is not available on this server: {app.get(UNAVAILABLE)}",
                None,
                status=501,
                type="server_error",
                code="not_implemented",
            )
        )
    busy = service.busy()
    if busy is None:
        return None
    scheduler: Scheduler = app[SCHEDULER]
    scheduler.count_rejection("decoder_busy")
    return _error(
        api.OpenAIError(busy, None, status=429, type="rate_limit_error", code="decoder_busy"),
        scheduler.limits.retry_after_s,
    )


async def _handle(request: web.Request, task: str) -> web.StreamResponse:
    received = time.perf_counter()  # the request's time to first token counts from here
    refusal = decoder_refusal(request, "transcription")
    if refusal is not None:
        return refusal
    service: TranscriptionService = request.app[SERVICE]
    scheduler: Scheduler = request.app[SCHEDULER]
    client = request.remote or ""
    try:
        slot = scheduler.open_upload(ENCODE, client, request.content_length)  # room for the body, before a byte
    except ServeError as exc:
        return _from_serve_error(exc)
    try:
        form = await _read_form(request, scheduler)
        req = api.parse_audio_request(task, form.fields, form.file, [service.model], reserved=service.special_tokens)
        ids = await asyncio.to_thread(service.prompt_ids, req.model_prompt())
    except api.OpenAIError as exc:
        slot.release()
        scheduler.count_rejection("bad_request")
        return _error(exc)
    except ServeError as exc:
        slot.release()
        scheduler.count_rejection(exc.code)
        return _from_serve_error(exc)
    except ValueError as exc:  # the prompt (PromptError, GenerationError)
        slot.release()
        scheduler.count_rejection("bad_prompt")
        return _error(api.OpenAIError(f"prompt: {exc}", "prompt"))
    except BaseException:
        slot.release()
        raise
    assert form.data is not None and form.file is not None
    try:
        features, duration = await _encode(scheduler, form.data, form.file.filename or "upload", client, slot)
    except ServeError as exc:
        return _from_serve_error(exc)
    name = form.file.filename or "upload"
    if req.stream:
        return await _stream(request, service, req, ids, features, duration, name, received)
    try:
        transcript = await _transcribe(service, req, ids, features, duration, name, received)
    except api.OpenAIError as exc:
        return _error(exc)
    content_type, body = api.response_body(req, api.transcript_from(transcript, service.tokenizer))
    return web.Response(body=body, content_type=content_type.split(";")[0], charset="utf-8")


async def _encode(scheduler: Scheduler, data: bytearray, name: str, client: str, slot: Any) -> tuple[Any, float]:
    """The scheduler's encode path for the upload: (audio_features [clips, 188, hidden], seconds of audio).
    The result is taken (and freed in the scheduler) at once; a disconnect cancels the job."""
    job, token = await admitted(scheduler, ENCODE, data, name=name, client=client, slot=slot)
    loop = asyncio.get_running_loop()
    finished = asyncio.Event()

    def wake() -> None:
        try:
            loop.call_soon_threadsafe(finished.set)
        except RuntimeError:  # pragma: no cover - the loop is closing
            pass

    try:
        if scheduler.add_listener(job, wake):
            await finished.wait()
        if job.state is State.FAILED:
            raise job.error or ServeError("the encoder failed")
        if job.result is None:
            raise ServeError("the request was dropped before it was encoded", code="cancelled")
        return job.result["audio_features"], job.audio_seconds
    finally:
        scheduler.remove_listener(job, wake)
        try:
            scheduler.cancel(job.id, token)  # cancels it if still running; frees the held result otherwise
        except ServeError:
            pass


class _Pipe:
    """Hands the decode thread's callbacks to the event loop: token events and the final result."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue = asyncio.Queue()
        self.done: asyncio.Future = loop.create_future()

    def _call(self, fn: Any, *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # pragma: no cover - the loop is closing
            pass

    def on_token(self, window: int, event: TokenEvent) -> None:
        self._call(self.queue.put_nowait, (window, event))

    def on_done(self, transcript: FileTranscript | None, error: Exception | None) -> None:
        def settle() -> None:
            if not self.done.done():
                if error is not None:
                    self.done.set_exception(error)
                else:
                    self.done.set_result(transcript)
            self.queue.put_nowait(None)

        self._call(settle)


def _submit(
    service: TranscriptionService,
    req: api.AudioRequest,
    ids: Any,
    features: Any,
    duration: float,
    name: str,
    pipe: _Pipe,
    stream: bool,
    received: float,
) -> Any:
    return service.submit(
        name,
        features,
        duration,
        ids,
        received=received,
        logprobs=req.needs_logprobs,
        on_token=pipe.on_token if stream else None,
        on_done=pipe.on_done,
    )


def _failure(exc: BaseException) -> api.OpenAIError:
    if isinstance(exc, GenerationError):
        return api.OpenAIError(str(exc), None)
    return api.OpenAIError(
        f"transcription failed: {type(exc).__name__}: {exc}", None, status=500, type="server_error", code="device_error"
    )


async def _transcribe(
    service: TranscriptionService,
    req: api.AudioRequest,
    ids: Any,
    features: Any,
    duration: float,
    name: str,
    received: float,
) -> FileTranscript:
    pipe = _Pipe(asyncio.get_running_loop())
    handle = _submit(service, req, ids, features, duration, name, pipe, False, received)
    try:
        return await pipe.done
    except asyncio.CancelledError:
        service.cancel(handle)  # the client went away: its windows leave the decoder now
        raise
    except Exception as exc:
        raise _failure(exc) from None


async def _stream(
    request: web.Request,
    service: TranscriptionService,
    req: api.AudioRequest,
    ids: Any,
    features: Any,
    duration: float,
    name: str,
    received: float,
) -> web.StreamResponse:
    pipe = _Pipe(asyncio.get_running_loop())
    handle = _submit(service, req, ids, features, duration, name, pipe, True, received)
    joiner = WindowJoiner(len(features))
    response = web.StreamResponse(status=200, headers={"Cache-Control": "no-store"})
    response.content_type = api.EVENT_STREAM
    try:
        await response.prepare(request)
        while True:
            item = await pipe.queue.get()
            if item is None:
                break
            window, event = item
            delta = joiner.add(window, event.text)
            if event.finish_reason is not None:
                delta += joiner.finish(window)
            if delta:
                await response.write(api.sse(api.delta_event(delta)))
        try:
            transcript = pipe.done.result()
        except Exception as exc:
            await response.write(api.error_event(_failure(exc)))
        else:
            await response.write(api.sse(api.done_event(req, api.transcript_from(transcript, service.tokenizer))))
        await response.write_eof()
        return response
    except (asyncio.CancelledError, ConnectionResetError):
        service.cancel(handle)
        raise
