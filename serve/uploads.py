"""Streamed uploads: a request's body read within the server's limits -- each piece in time, the whole in time,
never more bytes than allowed -- into one buffer, from a multipart form or a raw audio body.

Why a module of its own: both HTTP layers read bodies this way (the server's `/v1/encode` and `/v1/prefill`,
serve/server.py, and OpenAI's `/v1/audio/*` forms, serve/openai_routes.py), and what a slow, oversized or broken
body ends in (408, 413, 400) is decided here once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.multipart import BodyPartReader

from .admission import Limits
from .errors import BadInput, ServeError

#: bytes read per piece of a body
CHUNK = 1 << 16
RAW_AUDIO_TYPES = ("application/octet-stream",)


class Body:
    """Reads one request body within the server's limits: every piece within `upload_idle_s` of the
    last, the whole within `upload_total_s`, and at most `max_body_bytes` in all -- counted on the bytes
    that arrived (`StreamReader.total_bytes`), so it holds for chunked bodies and for every form field."""

    def __init__(self, request: web.Request, limits: Limits) -> None:
        self.content, self.limits = request.content, limits
        self.deadline = asyncio.get_running_loop().time() + limits.upload_total_s

    async def wait(self, step: Any) -> Any:
        left = self.deadline - asyncio.get_running_loop().time()
        try:
            if left <= 0:
                raise asyncio.TimeoutError
            result = await asyncio.wait_for(step, min(self.limits.upload_idle_s, left))
        except asyncio.TimeoutError:
            total = left <= self.limits.upload_idle_s
            raise BadInput(
                f"the upload took longer than this server's limit of {self.limits.upload_total_s:g} s"
                if total
                else f"the upload stalled: nothing arrived for {self.limits.upload_idle_s:g} s",
                code="upload_timeout",
                status=408,
            ) from None
        if self.content.total_bytes > self.limits.max_body_bytes:
            raise BadInput(
                f"the body is larger than this server's limit of {self.limits.max_body_bytes} bytes "
                f"(audio up to {self.limits.max_upload_bytes} bytes plus form fields)",
                code="too_large",
                status=413,
            )
        return result

    async def read(self, read_chunk: Callable[[], Any], limit: int, what: str) -> bytearray:
        """One part (or the raw body) into one buffer; the pieces are appended, never copied again."""
        buf = bytearray()
        while True:
            chunk = await self.wait(read_chunk())
            if not chunk:
                return buf
            buf += chunk
            if len(buf) > limit:
                raise BadInput(
                    f"{what} is larger than this server's limit of {limit} bytes", code="too_large", status=413
                )


async def read_upload(request: web.Request, limits: Limits) -> tuple[bytearray, str, str | None, str | None]:
    """(audio bytes, name, prompt, chat flag text) from a multipart form or a raw audio body."""
    try:
        return await _read_upload_unchecked(request, limits)
    except (ConnectionResetError, asyncio.IncompleteReadError) as exc:
        # the client went away mid-upload: nothing was admitted
        raise BadInput(f"the upload did not arrive complete: {exc}", code="client_disconnected") from None
    except HttpProcessingError as exc:  # broken framing inside the body (e.g. a multipart part's headers)
        raise BadInput(f"malformed request body: {exc.message}", code="bad_form") from None
    except (UnicodeDecodeError, LookupError) as exc:
        raise BadInput(
            f"a text form field (prompt, chat) is not valid text in its charset: {exc}", code="bad_form"
        ) from None
    except ValueError as exc:  # aiohttp's multipart parser: no boundary, bad part headers, ...
        raise BadInput(f"malformed multipart form: {exc}", code="bad_form") from None


async def _read_upload_unchecked(request: web.Request, limits: Limits) -> tuple[bytearray, str, str | None, str | None]:
    declared = request.content_length
    if declared is not None and declared > limits.max_body_bytes:
        raise BadInput(
            f"the body ({declared} bytes) is larger than this server's limit of {limits.max_body_bytes} "
            f"bytes (audio up to {limits.max_upload_bytes} bytes plus form fields)",
            code="too_large",
            status=413,
        )
    ctype = request.content_type.lower()
    prompt, chat = request.query.get("prompt"), request.query.get("chat")
    name = request.query.get("filename") or "upload"
    body = Body(request, limits)
    if ctype == "multipart/form-data":
        reader = await request.multipart()
        data: bytearray | None = None
        while True:
            part = await body.wait(reader.next())
            if part is None:
                break
            if not isinstance(part, BodyPartReader):
                raise BadInput("nested multipart bodies are not supported", code="bad_form")
            if part.name == "audio" or (part.name not in ("prompt", "chat") and part.filename and data is None):
                if data is not None:
                    raise BadInput("one audio file per request (the form has several)", code="bad_form")
                data = await body.read(lambda p=part: p.read_chunk(CHUNK), limits.max_upload_bytes, "the audio upload")
                name = part.filename or name
            elif part.name == "prompt":
                raw = await body.read(lambda p=part: p.read_chunk(CHUNK), 4 * limits.max_prompt_chars, "the prompt")
                prompt = raw.decode(part.get_charset(default="utf-8"), errors="strict")
            elif part.name == "chat":
                chat = (await body.read(lambda p=part: p.read_chunk(CHUNK), 64, "the chat field")).decode()
            else:  # read and dropped; its bytes still count against the body's limit
                await body.read(
                    lambda p=part: p.read_chunk(CHUNK), limits.max_body_bytes, f"the form field {part.name!r}"
                )
        if data is None:
            raise BadInput("the form has no audio file: send it as the file field 'audio'", code="bad_form")
        return data, name, prompt, chat
    if ctype.startswith("audio/") or ctype in RAW_AUDIO_TYPES:
        data = await body.read(lambda: request.content.read(CHUNK), limits.max_upload_bytes, "the audio body")
        return data, name, prompt, chat
    raise ServeError(
        f"unsupported content type {ctype or '(none)'!r}: send audio as multipart/form-data (file "
        f"field 'audio') or as the body with an audio/* or application/octet-stream content type",
        code="unsupported_media_type",
        status=415,
    )
