"""`POST /v1/chat/completions`: OpenAI's Chat Completions API on the server, audio in user messages.

    curl -s http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \\
      -d '{"model": "gemma-3n-E4B-it", "messages": [{"role": "user", "content": [
            {"type": "input_audio", "input_audio": {"data": "<base64>", "format": "flac"}},
            {"type": "text", "text": "What is said?"}]}]}'

Synchronous, as OpenAI's (or streamed: `chat.completion.chunk` events, then `data: [DONE]`).  A request takes
the same way as a transcription (serve/openai_routes.py) through the same limits: 429 before its body is
read when the decoder's queue is full; the body's reservation in the memory budget, its size (the server's
body limit: base64 makes the largest audio about 3/4 of it) and time limits (413, 408); then, before anything
runs, the request is validated (`serve/openai_chat.py`: 400 naming the field), each audio part's header
is probed (400 naming the part for what is not audio, 413 for audio over --max-seconds) and the conversation
is rendered and tokenized with each audio part's clip count: a prompt the prefill stage or the decoder cannot
hold, or a completion limit beyond what the context leaves, is refused with 400 `context_length_exceeded`
naming its length and the limit.  Only then are the audio parts encoded, concurrently, through the scheduler's
encode path (decoding, 30 s clips, batched encoder calls with every other request's clips), and the prompt
goes to the `TranscriptionService` as one sequence (`submit_chat`): its decoder calls are shared with every
transcription's windows and every other chat (one engine, continuous batching).  Stop strings end the
sequence as soon as one is decided (its slot is freed at once); a client that disconnects has its sequence
cancelled the same way.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import numpy as np
from aiohttp import web

from ..model.audio_config import AUDIO_SOFT_TOKENS_PER_CLIP
from ..runtime.audio.decode import AudioError, probe_audio
from ..runtime.audio.frontend import MAX_CLIP_SAMPLES, SAMPLE_RATE
from ..runtime.text.generate import LENGTH, STOP, Generation, TokenEvent
from ..runtime.text.tokens import ContextCapacityError, PromptError, render_chat
from . import openai_chat as chat
from .errors import ServeError
from .jobs import ENCODE
from .openai_audio import OpenAIError, error_event, sse
from .openai_routes import (
    SERVICE,
    _encode,
    _error,
    _failure,
    add_transcription_routes,
    decoder_refusal,
    openai_error,
)
from .scheduler import Scheduler
from .server import SCHEDULER
from .transcription import ChatHandle, TranscriptionService
from .uploads import CHUNK, Body

JSON_TYPES = ("application/json",)


def _respond(exc: OpenAIError | ServeError, scheduler: Scheduler | None = None) -> web.Response:
    retry = exc.retry_after if isinstance(exc, ServeError) else None
    if isinstance(exc, ServeError):
        exc = openai_error(exc, None)
    if scheduler is not None and retry is None and exc.status == 429:
        retry = scheduler.limits.retry_after_s
    return _error(exc, retry)


async def _read_json(request: web.Request, scheduler: Scheduler) -> Any:
    limits = scheduler.limits
    if request.content_type.lower() not in JSON_TYPES:
        raise OpenAIError(
            f"the request must be application/json, got {request.content_type or '(none)'!r}",
            None,
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
    raw = await body.read(lambda: request.content.read(CHUNK), limits.max_body_bytes, "the request body")
    return chat.parse_body(raw)


def _clips(audio: chat.AudioInput, max_seconds: float) -> int:
    """The 30 s clips an audio part becomes, from its header (refused here when it is not audio or too long)."""
    try:
        info = probe_audio(audio.data, audio.param)
    except AudioError as exc:
        raise OpenAIError(str(exc), audio.param, code="bad_audio") from None
    if info.seconds > max_seconds:
        raise OpenAIError(
            f"{audio.param}: {info.seconds:.1f} s of audio exceeds this server's limit of {max_seconds:g} s",
            audio.param,
            status=413,
            code="too_long",
        )
    return max(1, math.ceil(round(info.seconds * SAMPLE_RATE) / MAX_CLIP_SAMPLES))


def _prompt(service: TranscriptionService, req: chat.ChatRequest, clips: list[int]) -> tuple[Any, int]:
    """The prompt ids and the new tokens they may have, or the refusal naming the length and the limit."""
    try:
        ids = service.chat_ids(render_chat(req.turns, req.system), clips)
    except ContextCapacityError as exc:
        raise OpenAIError(
            f"your messages make a prompt longer than this server takes: {exc}",
            "messages",
            code="context_length_exceeded",
        ) from None
    except PromptError as exc:
        raise OpenAIError(f"messages: {exc}", "messages") from None
    room = service.chat_room(len(ids))
    decoder = service.decoder
    refusal = chat.context_refusal(len(ids), room, decoder.max_prompt_tokens, decoder.capacity, req)
    if refusal is not None:
        raise refusal
    service.prepare_chat(ids, sum(clips))
    return ids, room


async def _encode_all(
    scheduler: Scheduler, audio: tuple[chat.AudioInput, ...], client: str, slot: Any
) -> list[np.ndarray]:
    """Every audio part through the scheduler's encode path at once (their clips share encoder calls); the
    body's reservation goes to the first. A part that fails fails the request, naming the part."""

    async def one(k: int, part: chat.AudioInput) -> np.ndarray:
        try:
            features, _ = await _encode(scheduler, bytearray(part.data), part.param, client, slot if k == 0 else None)
        except ServeError as exc:
            raise openai_error(exc, part.param) from None
        return features

    tasks = [asyncio.ensure_future(one(k, part)) for k, part in enumerate(audio)]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


class _Pipe:
    """Hands the decode thread's callbacks to the event loop: token events, then None when the sequence ended."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue = asyncio.Queue()
        self.error: Exception | None = None

    def _call(self, fn: Any, *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:  # pragma: no cover - the loop is closing
            pass

    def on_token(self, event: TokenEvent) -> None:
        self._call(self.queue.put_nowait, event)

    def on_done(self, _result: Generation | None, error: Exception | None) -> None:
        def settle() -> None:
            self.error = error
            self.queue.put_nowait(None)

        self._call(settle)


class _Completion:
    """One request's answer as its tokens arrive: the text cut at a stop string, the tokens counted, their
    log probabilities, why it ended."""

    def __init__(self, req: chat.ChatRequest, tokenizer: Any) -> None:
        self.req, self.tokenizer = req, tokenizer
        self.stop = chat.StopText(req.stop)
        self.tokens = 0
        self.text: list[str] = []
        self.logprobs: list[dict[str, Any]] | None = [] if req.logprobs else None
        self.finish_reason: str | None = None

    def add(self, event: TokenEvent) -> tuple[str, list[dict[str, Any]]]:
        """The text this token made final (after the stop strings) and its log-probability entry."""
        self.tokens += 1
        entries = []
        if self.logprobs is not None and event.logprob is not None:
            entries.append(chat.logprob_entry(self.tokenizer, event.token, event.logprob, event.top_logprobs))
            self.logprobs += entries
        delta = self.stop.push(event.text)
        if self.stop.stopped:
            self.finish_reason = STOP
        elif event.finish_reason is not None:
            delta += self.stop.finish()
            self.finish_reason = STOP if event.finish_reason == STOP else LENGTH
        self.text.append(delta)
        return delta, entries


async def chat_completions(request: web.Request) -> web.StreamResponse:
    received = time.perf_counter()  # the request's time to first token counts from here
    refusal = decoder_refusal(request, "chat completions")
    if refusal is not None:
        return refusal
    service: TranscriptionService = request.app[SERVICE]
    scheduler: Scheduler = request.app[SCHEDULER]
    client = request.remote or ""
    try:
        slot = scheduler.open_upload(ENCODE, client, request.content_length)  # room for the body, before a byte
    except ServeError as exc:
        return _respond(exc)
    limits = scheduler.limits
    try:
        doc = await _read_json(request, scheduler)
        req = chat.parse_chat_request(doc, [service.model], service.special_tokens, limits.max_upload_bytes)
        del doc
        if req.top_logprobs > service.decoder.top_k:
            raise OpenAIError(
                f"top_logprobs must be at most {service.decoder.top_k} on this server (its decoder program "
                f"computes {service.decoder.top_k} top tokens per step), got {req.top_logprobs}",
                "top_logprobs",
            )
        clips = await asyncio.to_thread(lambda: [_clips(a, limits.max_seconds) for a in req.audio])
        ids, room = await asyncio.to_thread(_prompt, service, req, clips)
    except (OpenAIError, ServeError) as exc:
        slot.release()
        scheduler.count_rejection(getattr(exc, "code", None) or "bad_request")
        return _respond(exc, scheduler)
    except BaseException:
        slot.release()
        raise
    if not req.audio:
        slot.release()
        features = None
    else:
        try:
            parts = await _encode_all(scheduler, req.audio, client, slot)
            encoded = [len(f) for f in parts]
            if encoded != clips:  # a header's length at a 30 s boundary: the encoder's count decides
                ids, room = await asyncio.to_thread(_prompt, service, req, encoded)
        except (OpenAIError, ServeError) as exc:
            return _respond(exc, scheduler)
        features = np.concatenate(parts)
    max_new = req.max_tokens if req.max_tokens is not None else room
    usage = chat.Usage(len(ids), AUDIO_SOFT_TOKENS_PER_CLIP * (0 if features is None else len(features)), 0)
    pipe = _Pipe(asyncio.get_running_loop())
    try:
        handle = service.submit_chat(
            ids,
            features,
            max_new,
            logprobs=req.logprobs,
            top_logprobs=req.top_logprobs,
            sampling=req.sampling(),
            received=received,
            on_token=pipe.on_token,
            on_done=pipe.on_done,
        )
    except ValueError as exc:  # GenerationError: checked above, so a bug if it comes
        return _error(OpenAIError(str(exc), "messages"))
    completion = _Completion(req, service.tokenizer)
    if req.stream:
        return await _stream(request, service, handle, pipe, completion, usage)
    try:
        while completion.finish_reason is None:
            event = await pipe.queue.get()
            if event is None:
                raise pipe.error or RuntimeError("the sequence ended without its last token")
            completion.add(event)
    except asyncio.CancelledError:
        service.cancel(handle)  # the client went away: its sequence leaves the decoder now
        raise
    except Exception as exc:
        return _error(_failure(exc))
    service.cancel(handle, answered=True)  # a stop string ended it early: free its slot (a finished one stays)
    body = chat.completion_body(
        req,
        chat.new_completion_id(),
        int(time.time()),
        "".join(completion.text),
        completion.finish_reason,
        chat.Usage(usage.prompt_tokens, usage.audio_tokens, completion.tokens),
        completion.logprobs,
    )
    return web.json_response(body)


async def _stream(
    request: web.Request,
    service: TranscriptionService,
    handle: ChatHandle,
    pipe: _Pipe,
    completion: _Completion,
    usage: chat.Usage,
) -> web.StreamResponse:
    req = completion.req
    completion_id, created = chat.new_completion_id(), int(time.time())
    response = web.StreamResponse(status=200, headers={"Cache-Control": "no-store"})
    response.content_type = "text/event-stream"
    try:
        await response.prepare(request)
        await response.write(sse(chat.chunk(req, completion_id, created, {"role": "assistant", "content": ""})))
        pending: list[dict[str, Any]] = []
        failed: Exception | None = None
        while completion.finish_reason is None:
            event = await pipe.queue.get()
            if event is None:
                failed = pipe.error or RuntimeError("the sequence ended without its last token")
                break
            delta, entries = completion.add(event)
            pending += entries
            if delta:
                logprobs = pending if req.logprobs else None
                await response.write(sse(chat.chunk(req, completion_id, created, {"content": delta}, None, logprobs)))
                pending = []
        if failed is None:
            service.cancel(handle, answered=True)  # a stop string ended it early: free its slot
        if failed is not None:
            await response.write(error_event(_failure(failed)))
        else:
            logprobs = pending if req.logprobs else None
            await response.write(sse(chat.chunk(req, completion_id, created, {}, completion.finish_reason, logprobs)))
            if req.include_usage:
                final = chat.Usage(usage.prompt_tokens, usage.audio_tokens, completion.tokens)
                await response.write(sse(chat.usage_chunk(req, completion_id, created, final)))
        await response.write(chat.DONE)
        await response.write_eof()
        return response
    except (asyncio.CancelledError, ConnectionResetError):
        service.cancel(handle)
        raise


def add_decoder_routes(
    app: web.Application, service: TranscriptionService | None, unavailable: str | None = None
) -> None:
    """Every endpoint the decoder serves: /v1/audio/transcriptions and /translations (with the decoder's report,
    `serve.openai_routes.add_transcription_routes`) and /v1/chat/completions, one `service` for all; without
    one they answer 501 with `unavailable` (why)."""
    add_transcription_routes(app, service, unavailable)
    app.router.add_post("/v1/chat/completions", chat_completions)
