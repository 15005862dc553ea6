"""OpenAI's audio API (`POST /v1/audio/transcriptions`, `/v1/audio/translations`) as pure functions.

Request form fields in -> a validated `AudioRequest` or an `OpenAIError`; a transcript in -> the response body
of the asked `response_format`; stream events -> server-sent-event bytes.  Shapes follow OpenAI's OpenAPI
description as published with its Python SDK (github.com/openai/openai-python,
`api_reference/openapi.transformed.yml`: `CreateTranscriptionRequest`, `CreateTranslationRequest`,
`CreateTranscriptionResponseJson` / `...VerboseJson`, `CreateTranslationResponseJson` / `...VerboseJson`,
`TranscriptionSegment`, `TranscriptTextDeltaEvent`, `TranscriptTextDoneEvent`, `TranscriptTextUsageTokens` /
`...Duration`, `ErrorResponse`; its streaming example: one `data: {json}` line per event, no `[DONE]`).

What is served and what is refused (400 unless said, with OpenAI's error object naming the parameter):

* `file` (required, non-empty); `model` (required; an unknown model is 404 `model_not_found`);
* `response_format`: `json` (text + token usage; translations: text only, as OpenAI's schema), `text`,
  `verbose_json` (one segment per 30 s window, the transcription strategy's unit: `runtime/text/transcribe.py`),
  `srt` and `vtt` (one cue per window); `diarized_json` is refused (no speaker diarization);
* `temperature`: 0 only (greedy decoding; OpenAI's range is [0, 1], anything else there is refused as
  unsupported, outside it as invalid);
* `language` (transcriptions): an ISO 639-1 code; its name goes into the model's instruction;
* `prompt`: appended to the instruction on its own line (OpenAI: text to guide style or continue a previous
  segment); it may not contain the tokenizer's special tokens (they would rewrite the chat turn);
* `stream` (transcriptions; `true`/`false`): `transcript.text.delta` events then one `transcript.text.done`;
  only with `json` or `text` (the other formats have no streamed form);
* `include[]=logprobs` (transcriptions, `json` only, as OpenAI): each token's log probability;
* `timestamp_granularities[]`: `segment` (with `verbose_json`, as OpenAI requires); `word` is refused;
* `chunking_strategy`, and every field OpenAI does not define, are refused by name.

`verbose_json` segment fields without a Whisper counterpart are defined here: `avg_logprob` is the mean of
the window's token log probabilities, `compression_ratio` Whisper's (UTF-8 bytes / zlib-compressed bytes),
and `no_speech_prob` the probability that the window's first token ends the turn (a stop id: the model says
nothing); `seek` is the window's start in centiseconds, as Whisper's.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..runtime.text.transcribe import TRANSCRIBE, TRANSLATE, instruction
from .languages import LANGUAGES

RESPONSE_FORMATS = ("json", "text", "srt", "verbose_json", "vtt")
STREAM_FORMATS = ("json", "text")
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"
EVENT_STREAM = "text/event-stream"

#: Fields OpenAI defines for each task (array fields as the SDK sends them, `name[]`, or bare).
FIELDS = {
    TRANSCRIBE: (
        "file",
        "model",
        "language",
        "prompt",
        "response_format",
        "temperature",
        "stream",
        "include[]",
        "include",
        "timestamp_granularities[]",
        "timestamp_granularities",
        "chunking_strategy",
    ),
    TRANSLATE: ("file", "model", "prompt", "response_format", "temperature"),
}
ARRAY_FIELDS = ("include", "timestamp_granularities")


class OpenAIError(Exception):
    """A refused request, as OpenAI reports it: HTTP status and `{"error": {message, type, param, code}}`."""

    def __init__(
        self,
        message: str,
        param: str | None = None,
        *,
        status: int = 400,
        type: str = "invalid_request_error",
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.param, self.status, self.type, self.code = message, param, status, type, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class UploadedFile:
    filename: str | None
    content_type: str | None
    size: int


@dataclass(frozen=True)
class AudioRequest:
    task: str  # "transcribe" | "translate"
    model: str
    file: UploadedFile
    response_format: str = "json"
    language: str | None = None  # ISO 639-1
    prompt: str | None = None
    temperature: float = 0.0
    stream: bool = False
    logprobs: bool = False

    @property
    def language_name(self) -> str | None:
        return LANGUAGES[self.language] if self.language else None

    def model_prompt(self) -> str:
        """The text given to the model with the audio: the task's instruction, then the client's prompt."""
        text = instruction(self.task, self.language_name)
        return f"{text}\n{self.prompt}" if self.prompt else text

    @property
    def needs_logprobs(self) -> bool:
        """Whether the generation must report log probabilities (logprobs, or verbose_json's statistics)."""
        return self.logprobs or self.response_format == "verbose_json"


# ---------------------------------------------------------------------------------------------- requests
def _single(fields: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = fields.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise OpenAIError(f"'{name}' was given {len(values)} times; give it once", name)
    return values[0]


def _array(fields: Mapping[str, Sequence[str]], name: str) -> list[str]:
    return [*fields.get(name + "[]", ()), *fields.get(name, ())]


def parse_audio_request(
    task: str,
    fields: Mapping[str, Sequence[str]],
    file: UploadedFile | None,
    models: Collection[str],
    reserved: Collection[str] = (),
) -> AudioRequest:
    """Validate a transcription (`task="transcribe"`) or translation request's form fields (name -> values, in
    order) and its `file` part; `models`: the model ids served; `reserved`: strings a prompt may not contain
    (the tokenizer's special tokens)."""
    unknown = sorted(set(fields) - set(FIELDS[task]) - {"file"})
    if unknown:
        what = "transcriptions" if task == TRANSCRIBE else "translations"
        raise OpenAIError(
            f"Unrecognized request argument supplied: {', '.join(unknown)} (not supported for {what})", unknown[0]
        )
    if file is None:
        raise OpenAIError("No audio file: send the audio as the multipart file field 'file'", "file")
    if file.size == 0:
        raise OpenAIError(f"The audio file{f' {file.filename!r}' if file.filename else ''} is empty", "file")
    model = _single(fields, "model")
    if not model:
        raise OpenAIError("You must provide a model parameter", "model")
    if model not in models:
        raise OpenAIError(
            f"The model `{model}` does not exist; this server serves {', '.join(sorted(models))}",
            "model",
            status=404,
            code="model_not_found",
        )
    response_format = _single(fields, "response_format") or "json"
    if response_format not in RESPONSE_FORMATS:
        why = " (speaker diarization is not supported)" if response_format == "diarized_json" else ""
        raise OpenAIError(
            f"response_format must be one of {', '.join(RESPONSE_FORMATS)}, got {response_format!r}{why}",
            "response_format",
        )
    temperature = _temperature(_single(fields, "temperature"))
    language = _single(fields, "language")
    if language is not None:
        language = language.strip().lower()
        if language not in LANGUAGES:
            raise OpenAIError(f"language must be an ISO 639-1 code such as 'en' or 'fr', got {language!r}", "language")
    prompt = _single(fields, "prompt")
    if prompt is not None:
        found = sorted(t for t in reserved if t in prompt)
        if found:
            raise OpenAIError(f"prompt must not contain the special token(s) {', '.join(found)}", "prompt")
        prompt = prompt.strip() or None
    stream = _boolean(_single(fields, "stream"), "stream")
    if stream and response_format not in STREAM_FORMATS:
        raise OpenAIError(
            f"stream=true needs response_format json or text (a {response_format} body has no streamed form)", "stream"
        )
    include = _array(fields, "include")
    if any(v != "logprobs" for v in include):
        raise OpenAIError(f"include[] may only be 'logprobs', got {include}", "include[]")
    if include and response_format != "json":
        raise OpenAIError("include[]=logprobs needs response_format json", "include[]")
    granularities = _array(fields, "timestamp_granularities")
    if granularities:
        if "word" in granularities:
            raise OpenAIError(
                "word timestamps are not supported (segments are the 30 s windows)", "timestamp_granularities[]"
            )
        if any(g != "segment" for g in granularities):
            raise OpenAIError(
                f"timestamp_granularities[] must be 'segment' or 'word', got {granularities}",
                "timestamp_granularities[]",
            )
        if response_format != "verbose_json":
            raise OpenAIError(
                "timestamp_granularities[] needs response_format verbose_json", "timestamp_granularities[]"
            )
    if _single(fields, "chunking_strategy") is not None:
        raise OpenAIError(
            "chunking_strategy is not supported: audio is always transcribed in consecutive 30 s windows",
            "chunking_strategy",
        )
    return AudioRequest(task, model, file, response_format, language, prompt, temperature, stream, bool(include))


def _temperature(value: str | None) -> float:
    if value is None:
        return 0.0
    try:
        t = float(value)
    except ValueError:
        raise OpenAIError(f"temperature must be a number, got {value!r}", "temperature") from None
    if not (math.isfinite(t) and 0.0 <= t <= 1.0):
        raise OpenAIError(f"temperature must be between 0 and 1, got {value!r}", "temperature")
    if t != 0.0:
        raise OpenAIError(f"only temperature 0 (greedy decoding) is supported, got {value!r}", "temperature")
    return t


def _boolean(value: str | None, name: str) -> bool:
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise OpenAIError(f"{name} must be true or false, got {value!r}", name)
    return lowered == "true"


# ---------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class TokenLogprob:
    token: str  # the token's own text
    logprob: float

    def body(self) -> dict[str, Any]:
        return {"token": self.token, "logprob": self.logprob, "bytes": list(self.token.encode("utf-8"))}


@dataclass(frozen=True)
class Segment:
    """One window's part of a transcript."""

    start_s: float
    end_s: float
    text: str
    tokens: tuple[int, ...]
    logprobs: tuple[float, ...] | None = None  # each token's
    no_speech_prob: float | None = None  # probability that the first token is a stop id


@dataclass(frozen=True)
class Transcript:
    text: str
    duration_s: float
    segments: tuple[Segment, ...]
    text_tokens: int  # the prompts' text tokens (every window's)
    audio_tokens: int  # 188 per window
    logprobs: tuple[TokenLogprob, ...] | None = None

    @property
    def output_tokens(self) -> int:
        return sum(len(s.tokens) for s in self.segments)

    def usage_tokens(self) -> dict[str, Any]:
        inputs = self.text_tokens + self.audio_tokens
        return {
            "type": "tokens",
            "input_tokens": inputs,
            "input_token_details": {"text_tokens": self.text_tokens, "audio_tokens": self.audio_tokens},
            "output_tokens": self.output_tokens,
            "total_tokens": inputs + self.output_tokens,
        }


def compression_ratio(text: str) -> float:
    """Whisper's: UTF-8 bytes over zlib-compressed bytes (repetitive text compresses well: a high ratio)."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def _segment_body(i: int, s: Segment) -> dict[str, Any]:
    if s.logprobs is None or s.no_speech_prob is None:
        raise ValueError("verbose_json segments need their tokens' log probabilities and no-speech probability")
    return {
        "id": i,
        "seek": int(round(s.start_s * 100)),
        "start": s.start_s,
        "end": s.end_s,
        "text": s.text,
        "tokens": list(s.tokens),
        "temperature": 0.0,
        "avg_logprob": sum(s.logprobs) / len(s.logprobs) if s.logprobs else 0.0,
        "compression_ratio": compression_ratio(s.text),
        "no_speech_prob": s.no_speech_prob,
    }


def _timestamp(seconds: float, separator: str) -> str:
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{separator}{ms:03d}"


def subtitles(segments: Sequence[Segment], vtt: bool) -> str:
    """SubRip or WebVTT cues, one per segment with text."""
    cues = [s for s in segments if s.text.strip()]
    sep = "." if vtt else ","
    blocks = [f"{_timestamp(s.start_s, sep)} --> {_timestamp(s.end_s, sep)}\n{s.text.strip()}\n" for s in cues]
    if vtt:
        return "WEBVTT\n\n" + "\n".join(blocks)
    return "\n".join(f"{i}\n{b}" for i, b in enumerate(blocks, 1))


def response_body(request: AudioRequest, result: Transcript) -> tuple[str, bytes]:
    """(content type, body) of a finished request in its response_format."""
    fmt = request.response_format
    if fmt == "text":
        return TEXT, result.text.encode("utf-8")
    if fmt in ("srt", "vtt"):
        return TEXT, subtitles(result.segments, fmt == "vtt").encode("utf-8")
    if fmt == "json":
        body: dict[str, Any] = {"text": result.text}
        if request.task == TRANSCRIBE:
            if request.logprobs:
                body["logprobs"] = [t.body() for t in result.logprobs or ()]
            body["usage"] = result.usage_tokens()
        return JSON, _json(body)
    language = "english" if request.task == TRANSLATE else (request.language_name or "unknown").lower()
    body = {
        "task": request.task,
        "language": language,
        "duration": result.duration_s,
        "text": result.text,
        "segments": [_segment_body(i, s) for i, s in enumerate(result.segments)],
    }
    if request.task == TRANSCRIBE:
        body["usage"] = {"type": "duration", "seconds": result.duration_s}
    return JSON, _json(body)


def _json(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# ---------------------------------------------------------------------------------------------- streaming
def sse(event: Mapping[str, Any]) -> bytes:
    """One server-sent event: `data: {json}` and a blank line."""
    return b"data: " + _json(event) + b"\n\n"


def delta_event(delta: str, logprobs: Sequence[TokenLogprob] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "transcript.text.delta", "delta": delta}
    if logprobs is not None:
        event["logprobs"] = [t.body() for t in logprobs]
    return event


def done_event(request: AudioRequest, result: Transcript) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "transcript.text.done", "text": result.text}
    if request.logprobs:
        event["logprobs"] = [t.body() for t in result.logprobs or ()]
    event["usage"] = result.usage_tokens()
    return event


def error_event(error: OpenAIError) -> bytes:
    """A failure after the stream started: an event carrying OpenAI's error object (the SDK raises it)."""
    return sse(error.body())


def transcript_from(file: Any, tokenizer: Any, audio_tokens_per_window: int = 188) -> Transcript:
    """The API's view of a `runtime.text.transcribe.FileTranscript` (log probabilities when it was generated with them)."""
    with_logprobs = all(w.logprobs is not None for w in file.windows)
    segments = tuple(
        Segment(
            w.window.start_s,
            w.window.end_s,
            w.text,
            tuple(w.tokens),
            tuple(w.logprobs) if w.logprobs is not None else None,
            w.first_stop_probability,
        )
        for w in file.windows
    )
    logprobs = (
        tuple(
            TokenLogprob(tokenizer.decode([t], skip_special_tokens=False), lp)
            for w in file.windows
            for t, lp in zip(w.tokens, w.logprobs)
        )
        if with_logprobs
        else None
    )
    audio = audio_tokens_per_window * len(file.windows)
    return Transcript(
        file.text, file.duration_s, segments, sum(w.prompt_tokens for w in file.windows) - audio, audio, logprobs
    )
