"""OpenAI's Chat Completions API (`POST /v1/chat/completions`) as pure functions.

A request body (parsed JSON) in -> a validated `ChatRequest` or an `OpenAIError` naming the field (`param`, as
OpenAI names it: `messages[1].content[0].input_audio.data`); a finished generation in -> the `chat.completion`
body; tokens as they are decided -> `chat.completion.chunk` events.  Shapes follow OpenAI's OpenAPI description
as published with its Python SDK (github.com/openai/openai-python, `api_reference/openapi.transformed.yml`:
`CreateChatCompletionRequest`, `ChatCompletionRequestMessage` and its content parts
`ChatCompletionRequestMessageContentPartText` / `...PartAudio`, `CreateChatCompletionResponse`,
`CreateChatCompletionStreamResponse`, `ChatCompletionTokenLogprob`, `CompletionUsage`, `ErrorResponse`).

The conversation becomes Gemma 3n's chat format (`runtime/text/tokens.py`'s `render_chat`, the checkpoint's
chat template): a `system` (or `developer`) message, first only, opens the first user turn; `user` and
`assistant` turns then alternate, starting with a user turn (the template refuses anything else); a user
turn's content is a string or a list of `text` and `input_audio` parts, each audio where its part stands
(every 30 s clip of it, adjacent: nothing is truncated).  What is served and what is refused (400 unless said):

* `model` (an unknown model is 404 `model_not_found`); `messages` as above; `name` on a message is accepted
  (the template has no place for it); images, files, tool calls and tool messages are refused by name;
* `input_audio.data`: base64 of a file in any container the server decodes (`runtime/audio/decode.py`: the
  bytes decide how it decodes); `input_audio.format`: one of `AUDIO_FORMATS`; containers libsndfile cannot
  decode (m4a, aac, webm, ...) are refused by name;
* `max_completion_tokens` (or the older `max_tokens`; not both): default, what the context leaves; a prompt or
  a limit that the context cannot hold is refused before anything runs (`context_length_exceeded`);
* `temperature` [0, 2] (default 1, OpenAI's), `top_p` [0, 1] (default 0.95, Gemma's `generation_config.json`),
  `seed`: temperature 0 (or top_p 0) is greedy decoding; otherwise `SamplingParams(temperature, top_k=64
  (Gemma's), top_p, seed)`, the seed drawn by the server when not given;
* `stop`: a string or up to 4; the text ends before the first one found (finish_reason "stop");
* `n`: 1 only; `logprobs`, `top_logprobs` (0-20, needs `logprobs`; at most what the decoder program computes);
* `stream`, `stream_options.include_usage`: `chat.completion.chunk` events, then `data: [DONE]`;
* `frequency_penalty` / `presence_penalty` 0, `response_format` `{"type": "text"}`, `modalities` `["text"]`,
  `parallel_tool_calls`, `user`, `store` false, `metadata`, `service_tier` are accepted; other values of
  those, and every other field (tools, logit_bias, audio output, ...), are refused by name.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..contracts.sampling import GEMMA_TOP_K, GEMMA_TOP_P, SamplingParams
from ..runtime.text.tokens import AUDIO_ITEM, MODEL, USER
from .openai_audio import OpenAIError

#: OpenAI's default temperature.
DEFAULT_TEMPERATURE = 1.0
MAX_STOPS = 4
MAX_TOP_LOGPROBS = 20  # OpenAI's range for top_logprobs
#: input_audio formats accepted: the containers the server decodes (the bytes are sniffed; the name is a label).
AUDIO_FORMATS = ("wav", "mp3", "flac", "ogg", "opus", "aiff", "aif", "au", "caf", "w64", "rf64")
#: formats in containers libsndfile cannot decode (`runtime/audio/containers.py`: extent None)
UNDECODABLE_FORMATS = ("m4a", "mp4", "aac", "webm", "mka", "amr", "wma", "pcm16", "pcm", "g711_ulaw", "g711_alaw")

#: Fields served (with the values the module docstring says), and OpenAI's fields accepted and ignored.
FIELDS = (
    "model",
    "messages",
    "max_completion_tokens",
    "max_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "n",
    "logprobs",
    "top_logprobs",
    "stream",
    "stream_options",
    "frequency_penalty",
    "presence_penalty",
    "response_format",
    "modalities",
    "parallel_tool_calls",
    "user",
    "store",
    "metadata",
    "service_tier",
)
ROLES = ("system", "developer", "user", "assistant")


# ---------------------------------------------------------------------------------------------- requests
@dataclass(frozen=True)
class AudioInput:
    """One `input_audio` part: its decoded bytes and where it was (`param`, for errors about it)."""

    data: bytes
    format: str
    param: str


@dataclass(frozen=True)
class ChatRequest:
    model: str
    #: (role, items) turns for `render_chat`: `user`/`model`, items a text or `AUDIO_ITEM` (in `audio`'s order)
    turns: tuple[tuple[str, tuple[str | None, ...]], ...]
    system: str | None = None
    audio: tuple[AudioInput, ...] = ()
    max_tokens: int | None = None  # None: what the context leaves
    max_tokens_param: str = "max_completion_tokens"  # the field it came from (for errors)
    temperature: float = DEFAULT_TEMPERATURE
    top_p: float = GEMMA_TOP_P
    seed: int | None = None
    stop: tuple[str, ...] = ()
    logprobs: bool = False
    top_logprobs: int = 0
    stream: bool = False
    include_usage: bool = False

    def sampling(self, draw_seed: Any = None) -> SamplingParams | None:
        """The engine's sampling for this request: None (greedy) at temperature 0 or top_p 0 (only the most
        likely token stays); otherwise Gemma's top-k with the request's temperature, top_p and seed, or
        `draw_seed()` (a random 32-bit seed, the server's) when it gives none."""
        if self.temperature == 0.0 or self.top_p == 0.0:
            return None
        seed = self.seed if self.seed is not None else (draw_seed or (lambda: secrets.randbits(32)))()
        return SamplingParams(self.temperature, GEMMA_TOP_K, self.top_p, seed)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(doc: Mapping[str, Any], name: str, lo: float, hi: float, default: float) -> float:
    value = doc.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise OpenAIError(f"{name} must be a number, got {value!r}", name)
    if not lo <= value <= hi:
        raise OpenAIError(f"{name} must be between {lo:g} and {hi:g}, got {value!r}", name)
    return float(value)


def _bool(doc: Mapping[str, Any], name: str) -> bool:
    value = doc.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise OpenAIError(f"{name} must be true or false, got {value!r}", name)
    return value


def _string(value: Any, param: str, what: str = "a string") -> str:
    if not isinstance(value, str):
        raise OpenAIError(f"{param} must be {what}, got {type(value).__name__}", param)
    return value


def _check_text(text: str, param: str, reserved: Collection[str]) -> str:
    found = sorted(t for t in reserved if t in text)
    if found:
        raise OpenAIError(f"{param} must not contain the special token(s) {', '.join(found)}", param)
    return text


def _audio_part(part: Mapping[str, Any], param: str, budget: list[int]) -> AudioInput:
    audio = part.get("input_audio")
    where = f"{param}.input_audio"
    if not isinstance(audio, Mapping):
        raise OpenAIError(f"{where} must be an object with 'data' (base64) and 'format'", where)
    unknown = sorted(set(audio) - {"data", "format"})
    if unknown:
        raise OpenAIError(f"Unrecognized argument {where}.{unknown[0]}", f"{where}.{unknown[0]}")
    fmt = audio.get("format")
    if not isinstance(fmt, str) or not fmt:
        raise OpenAIError(f"{where}.format is required: one of {', '.join(AUDIO_FORMATS)}", f"{where}.format")
    fmt = fmt.lower()
    if fmt in UNDECODABLE_FORMATS:
        raise OpenAIError(
            f"audio format {fmt!r} is not supported: this server decodes {', '.join(AUDIO_FORMATS)}", f"{where}.format"
        )
    if fmt not in AUDIO_FORMATS:
        raise OpenAIError(f"{where}.format must be one of {', '.join(AUDIO_FORMATS)}, got {fmt!r}", f"{where}.format")
    raw = audio.get("data")
    if not isinstance(raw, str) or not raw:
        raise OpenAIError(f"{where}.data is required: the audio file as base64", f"{where}.data")
    if len(raw) // 4 * 3 > budget[0]:  # refused before decoding: the decoded size is at least this
        raise OpenAIError(
            f"{where}.data: the audio is larger than this server's limit of {budget[1]} bytes (all audio parts "
            f"together)",
            f"{where}.data",
            status=413,
            code="too_large",
        )
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise OpenAIError(f"{where}.data is not valid base64: {exc}", f"{where}.data") from None
    if not data:
        raise OpenAIError(f"{where}.data is empty", f"{where}.data")
    budget[0] -= len(data)
    if budget[0] < 0:
        raise OpenAIError(
            f"{where}.data: the audio is larger than this server's limit of {budget[1]} bytes (all audio parts "
            f"together)",
            f"{where}.data",
            status=413,
            code="too_large",
        )
    return AudioInput(data, fmt, f"{where}.data")


def _content(
    message: Mapping[str, Any], param: str, role: str, reserved: Collection[str], budget: list[int]
) -> tuple[list[str | None], list[AudioInput]]:
    """A message's content as `render_chat` items (and its audio parts)."""
    content = message.get("content")
    where = f"{param}.content"
    if isinstance(content, str):
        return [_check_text(content, where, reserved)], []
    if content is None:
        raise OpenAIError(f"{where} is required", where)
    if not isinstance(content, list) or not content:
        raise OpenAIError(f"{where} must be a string or a non-empty array of content parts", where)
    items: list[str | None] = []
    audio: list[AudioInput] = []
    allowed = ("text", "input_audio") if role == "user" else ("text",)
    for j, part in enumerate(content):
        at = f"{where}[{j}]"
        if not isinstance(part, Mapping):
            raise OpenAIError(f"{at} must be an object with a 'type'", at)
        kind = part.get("type")
        if kind not in allowed:
            why = {
                "image_url": "images are not supported (audio and text only)",
                "file": "files are not supported (send audio as input_audio)",
                "input_audio": f"{role} messages cannot carry audio",
                "refusal": "refusal parts are not supported",
            }.get(kind, f"the part type must be one of {', '.join(allowed)}")
            raise OpenAIError(f"{at}.type is {kind!r}: {why}", f"{at}.type")
        if kind == "text":
            unknown = sorted(set(part) - {"type", "text"})
            if unknown:
                raise OpenAIError(f"Unrecognized argument {at}.{unknown[0]}", f"{at}.{unknown[0]}")
            items.append(_check_text(_string(part.get("text"), f"{at}.text"), f"{at}.text", reserved))
        else:
            unknown = sorted(set(part) - {"type", "input_audio"})
            if unknown:
                raise OpenAIError(f"Unrecognized argument {at}.{unknown[0]}", f"{at}.{unknown[0]}")
            audio.append(_audio_part(part, at, budget))
            items.append(AUDIO_ITEM)
    return items, audio


def parse_chat_request(
    doc: Any, models: Collection[str], reserved: Collection[str] = (), max_audio_bytes: int = 100 << 20
) -> ChatRequest:
    """Validate a chat completion request body (parsed JSON); `models`: the model ids served; `reserved`:
    strings no text may contain (the tokenizer's special tokens: they would rewrite the turns);
    `max_audio_bytes`: the decoded audio of all `input_audio` parts together (413 beyond)."""
    if not isinstance(doc, Mapping):
        raise OpenAIError("the request body must be a JSON object", None)
    unknown = sorted(set(doc) - set(FIELDS))
    if unknown:
        raise OpenAIError(f"Unrecognized request argument supplied: {', '.join(unknown)}", unknown[0])
    model = doc.get("model")
    if not isinstance(model, str) or not model:
        raise OpenAIError("You must provide a model parameter", "model")
    if model not in models:
        raise OpenAIError(
            f"The model `{model}` does not exist; this server serves {', '.join(sorted(models))}",
            "model",
            status=404,
            code="model_not_found",
        )
    turns, system, audio = _messages(doc.get("messages"), reserved, max_audio_bytes)
    max_tokens, max_param = _max_tokens(doc)
    temperature = _number(doc, "temperature", 0.0, 2.0, DEFAULT_TEMPERATURE)
    top_p = _number(doc, "top_p", 0.0, 1.0, GEMMA_TOP_P)
    seed = doc.get("seed")
    if seed is not None and not (_is_int(seed) and 0 <= seed < 2**32):
        raise OpenAIError(f"seed must be an integer in [0, 2^32) (the sampler's 32-bit seed), got {seed!r}", "seed")
    stop = _stop(doc.get("stop"), reserved)
    n = doc.get("n")
    if n is not None and not (_is_int(n) and n == 1):
        raise OpenAIError(f"n must be 1 (one choice per request), got {n!r}", "n")
    logprobs = _bool(doc, "logprobs")
    top_logprobs = doc.get("top_logprobs")
    if top_logprobs is None:
        top_logprobs = 0
    elif not (_is_int(top_logprobs) and 0 <= top_logprobs <= MAX_TOP_LOGPROBS):
        raise OpenAIError(
            f"top_logprobs must be an integer between 0 and {MAX_TOP_LOGPROBS}, got {top_logprobs!r}", "top_logprobs"
        )
    elif not logprobs:
        raise OpenAIError("top_logprobs needs logprobs set to true", "top_logprobs")
    stream = _bool(doc, "stream")
    include_usage = False
    options = doc.get("stream_options")
    if options is not None:
        if not stream:
            raise OpenAIError("stream_options is only allowed when stream is true", "stream_options")
        if not isinstance(options, Mapping) or set(options) - {"include_usage", "include_obfuscation"}:
            raise OpenAIError("stream_options may only hold include_usage", "stream_options")
        include_usage = _bool(options, "include_usage")
    _accepted_only(doc)
    return ChatRequest(
        model,
        turns,
        system,
        audio,
        max_tokens,
        max_param,
        temperature,
        top_p,
        seed,
        stop,
        logprobs,
        top_logprobs,
        stream,
        include_usage,
    )


def _messages(
    messages: Any, reserved: Collection[str], max_audio_bytes: int
) -> tuple[tuple[tuple[str, tuple[str | None, ...]], ...], str | None, tuple[AudioInput, ...]]:
    if not isinstance(messages, list) or not messages:
        raise OpenAIError("messages must be a non-empty array of messages", "messages")
    budget = [max_audio_bytes, max_audio_bytes]  # bytes left, limit
    system: str | None = None
    turns: list[tuple[str, tuple[str | None, ...]]] = []
    audio: list[AudioInput] = []
    for i, message in enumerate(messages):
        param = f"messages[{i}]"
        if not isinstance(message, Mapping):
            raise OpenAIError(f"{param} must be an object with a role and content", param)
        role = message.get("role")
        if role not in ROLES:
            why = "tool calls are not supported" if role in ("tool", "function") else f"one of {', '.join(ROLES)}"
            raise OpenAIError(f"{param}.role is {role!r}: {why}", f"{param}.role")
        allowed = {"role", "content", "name"} | ({"refusal"} if role == "assistant" else set())
        unknown = sorted(set(message) - allowed)
        if unknown:
            why = " (tool calls are not supported)" if unknown[0] in ("tool_calls", "function_call") else ""
            raise OpenAIError(f"Unrecognized argument {param}.{unknown[0]}{why}", f"{param}.{unknown[0]}")
        if message.get("name") is not None:
            _string(message["name"], f"{param}.name")
        if role in ("system", "developer"):
            if i != 0:
                raise OpenAIError(
                    f"{param}.role: a {role} message must come first (Gemma 3n's chat template puts it at the start "
                    f"of the first user turn)",
                    f"{param}.role",
                )
            items, _ = _content(message, param, role, reserved, budget)
            system = "".join(item for item in items if item is not None)  # the template takes the text as given
            continue
        want = "user" if len(turns) % 2 == 0 else "assistant"
        if role != want:
            raise OpenAIError(
                f"{param}.role is {role!r} where a {want} message must come: after an optional system message, "
                f"user and assistant messages must alternate, starting with user (Gemma 3n's chat template)",
                f"{param}.role",
            )
        items, parts = _content(message, param, role, reserved, budget)
        turns.append((USER if role == "user" else MODEL, tuple(items)))
        audio += parts
    if not turns:
        raise OpenAIError("messages must hold at least one user message", "messages")
    return tuple(turns), system, tuple(audio)


def _max_tokens(doc: Mapping[str, Any]) -> tuple[int | None, str]:
    given = [name for name in ("max_completion_tokens", "max_tokens") if doc.get(name) is not None]
    if len(given) == 2:
        raise OpenAIError("give max_completion_tokens or the older max_tokens, not both", "max_tokens")
    if not given:
        return None, "max_completion_tokens"
    name = given[0]
    value = doc[name]
    if not _is_int(value) or value < 1:
        raise OpenAIError(f"{name} must be a positive integer, got {value!r}", name)
    return value, name


def _stop(value: Any, reserved: Collection[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or not 1 <= len(stops) <= MAX_STOPS:
        raise OpenAIError(f"stop must be a string or an array of 1 to {MAX_STOPS} strings", "stop")
    for stop in stops:
        if not isinstance(stop, str) or not stop:
            raise OpenAIError(f"stop must hold non-empty strings, got {stop!r}", "stop")
    return tuple(dict.fromkeys(stops))


def _accepted_only(doc: Mapping[str, Any]) -> None:
    """OpenAI's fields accepted only with the values that change nothing here."""
    for name in ("frequency_penalty", "presence_penalty"):
        value = doc.get(name)
        if value is not None and (isinstance(value, bool) or value != 0):
            raise OpenAIError(f"{name} is not supported (only 0), got {value!r}", name)
    fmt = doc.get("response_format")
    if fmt is not None and fmt != {"type": "text"}:
        raise OpenAIError("response_format may only be {'type': 'text'} (no JSON mode or schemas)", "response_format")
    modalities = doc.get("modalities")
    if modalities is not None and modalities != ["text"]:
        raise OpenAIError(f"modalities may only be ['text'] (no audio output), got {modalities!r}", "modalities")
    if doc.get("store") not in (None, False):
        raise OpenAIError("store is not supported (completions are not stored)", "store")
    for name, kinds in (("parallel_tool_calls", bool), ("user", str), ("metadata", Mapping), ("service_tier", str)):
        value = doc.get(name)
        if value is not None and not isinstance(value, kinds):
            raise OpenAIError(f"{name} has the wrong type: {type(value).__name__}", name)


def context_refusal(
    prompt_tokens: int, room: int, max_prompt_tokens: int, capacity: int, request: ChatRequest
) -> OpenAIError | None:
    """Why the prompt or the asked completion cannot fit this server's decoder (None: it fits); `room`: the new
    tokens the decoder leaves this prompt (0: the prompt itself does not fit)."""
    if room < 1:
        return OpenAIError(
            f"This server's maximum context length is {capacity} tokens with prompts of up to {max_prompt_tokens} "
            f"tokens; your messages resulted in {prompt_tokens} tokens (each 30 s of audio is 188 tokens and "
            f"a few around them). Please reduce the length of the messages.",
            "messages",
            code="context_length_exceeded",
        )
    if request.max_tokens is not None and request.max_tokens > room:
        return OpenAIError(
            f"This server's maximum context length is {capacity} tokens. However, you requested "
            f"{prompt_tokens + request.max_tokens - 1} tokens ({prompt_tokens} in the messages, "
            f"{request.max_tokens} in the completion, the last never fed back). Please reduce the length of the "
            f"messages or {request.max_tokens_param} (at most {room} here).",
            request.max_tokens_param,
            code="context_length_exceeded",
        )
    return None


# ---------------------------------------------------------------------------------------------- stop strings
class StopText:
    """Text as it is decided, cut before the first of the `stop` strings (OpenAI's `stop`).

    The text ends as soon as it contains a stop string, as if it grew one character at a time: at the first
    position where some stop string is complete, cut before the earliest stop string found there.  `push(piece)`
    returns the text now final: a tail that may still become a stop string is held back until the next piece
    tells; once a stop string is found, `stopped` is set and nothing after it is ever returned.
    `finish()` returns what is held when the sequence ends without one."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(stops)
        self.held = ""
        self.stopped = False

    def push(self, piece: str) -> str:
        if self.stopped:
            return ""
        text = self.held + piece
        ends = [i + len(s) for s, i in ((s, text.find(s)) for s in self.stops) if i >= 0]
        if ends:  # the text so far ends where the first stop string is complete; it starts the cut there
            decided = text[: min(ends)]
            self.stopped, self.held = True, ""
            return decided[: min(i for i in (decided.find(s) for s in self.stops) if i >= 0)]
        keep = 0  # the longest tail that is a proper prefix of a stop string
        for stop in self.stops:
            for n in range(min(len(stop) - 1, len(text)), keep, -1):
                if text.endswith(stop[:n]):
                    keep = n
                    break
        self.held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def finish(self) -> str:
        held, self.held = self.held, ""
        return "" if self.stopped else held


# ---------------------------------------------------------------------------------------------- results
def new_completion_id() -> str:
    return "chatcmpl-" + secrets.token_urlsafe(18)


def _token_body(tokenizer: Any, token: int, logprob: float) -> dict[str, Any]:
    text = tokenizer.decode([token], skip_special_tokens=False)
    return {"token": text, "logprob": logprob, "bytes": list(text.encode("utf-8"))}


def logprob_entry(
    tokenizer: Any, token: int, logprob: float, top: Sequence[tuple[int, float]] | None = None
) -> dict[str, Any]:
    """One generated token's `ChatCompletionTokenLogprob`: its text, log probability, UTF-8 bytes and the
    step's most likely tokens (empty when none were asked)."""
    return {
        **_token_body(tokenizer, token, logprob),
        "top_logprobs": [_token_body(tokenizer, t, lp) for t, lp in (top or ())],
    }


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    audio_tokens: int  # of the prompt: 188 per 30 s clip
    completion_tokens: int

    def body(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"audio_tokens": self.audio_tokens, "cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        }


def completion_body(
    request: ChatRequest,
    completion_id: str,
    created: int,
    text: str,
    finish_reason: str,
    usage: Usage,
    logprobs: Sequence[Mapping[str, Any]] | None,
) -> dict[str, Any]:
    """The `chat.completion` object of a finished request."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None, "annotations": []},
                "logprobs": {"content": list(logprobs), "refusal": None} if logprobs is not None else None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": usage.body(),
        "system_fingerprint": None,
    }


def chunk(
    request: ChatRequest,
    completion_id: str,
    created: int,
    delta: Mapping[str, Any],
    finish_reason: str | None = None,
    logprobs: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """One `chat.completion.chunk` of the one choice (`usage` null while `include_usage` asks for it last)."""
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "delta": dict(delta),
                "logprobs": {"content": list(logprobs), "refusal": None} if logprobs is not None else None,
                "finish_reason": finish_reason,
            }
        ],
        "system_fingerprint": None,
    }
    if request.include_usage:
        body["usage"] = None
    return body


def usage_chunk(request: ChatRequest, completion_id: str, created: int, usage: Usage) -> dict[str, Any]:
    """The last chunk with `stream_options.include_usage`: no choices, the whole request's usage."""
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": request.model,
        "choices": [],
        "usage": usage.body(),
        "system_fingerprint": None,
    }


DONE = b"data: [DONE]\n\n"


def parse_body(raw: bytes | bytearray) -> Any:
    """The request body as JSON (400 naming what is wrong)."""
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OpenAIError(f"the request body is not valid JSON: {exc}", None) from None
