"""One prompt about audio in, its answer out: what `gemma3n-iree generate` runs.

Transcription asks one fixed question of each 30 s window on its own; here the prompt is the user's and the
audio is all of it at once: every file's consecutive 30 s clips (never truncated) stand adjacent where that
file's `<audio_soft_token>` marker is (or, with no marker, first), in Gemma 3n's chat format with an optional
system instruction. `prepare` reads the audio and sizes the prompt before anything heavy runs (so a prompt
that cannot fit the model is refused first); `answer` encodes, runs the prefill stage and decodes (greedily,
or drawing each token with `SamplingParams` on a backend that samples) on a decoder backend, handing each token's newly final text to `on_token` as it is decided.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...contracts.sampling import SamplingParams
from .generate import LENGTH, DecoderBackend, GenerationRequest, TokenEvent, generate
from .transcribe import read_samples


@dataclass(frozen=True)
class PreparedPrompt:
    """A prompt's token ids and its audio, read and checked but not yet encoded: every file's 16 kHz samples,
    cut into `clips_per_file` 30 s clips when encoded."""

    ids: np.ndarray
    samples: tuple[np.ndarray, ...]
    clips_per_file: tuple[int, ...]


@dataclass
class Answer:
    """The generated tokens and text, why generation stopped ("stop": a stop id; "length": the limit), and
    seconds per stage (encode, prefill, first_token from the start, generate, total)."""

    token_ids: list[int]
    text: str
    finish_reason: str
    prompt_tokens: int
    clips_per_file: tuple[int, ...]
    timings: dict[str, float] = field(default_factory=dict)


def prepare(
    prefill: Any,
    prompt: str,
    files: Sequence[str | Path],
    system: str | None = None,
    max_seconds: float | None = None,
) -> PreparedPrompt:
    """Decode `files` and expand the prompt around their clips, checked against the prefill stage's largest
    capacity; nothing is compiled here (the tokenizer is the only part of `prefill` it reads)."""
    from ..audio.frontend import split_clips

    samples = [read_samples(path, max_seconds) for path in files]
    per_file = tuple(len(split_clips(s)) for s in samples)
    ids = prefill.expand(prompt, per_file, True, system)
    prefill.capacity_for(len(ids), sum(per_file))  # ContextCapacityError names the length and the limit
    return PreparedPrompt(ids, tuple(samples), per_file)


def answer(
    prefill: Any,
    decoder: DecoderBackend,
    stop_ids: frozenset[int],
    prepared: PreparedPrompt,
    max_new_tokens: int,
    on_token: Callable[[TokenEvent], None] | None = None,
    sampling: SamplingParams | None = None,
) -> Answer:
    """Encode the prompt's clips, prefill it and decode: greedily, or drawn with `sampling` (module docstring)."""
    started = time.perf_counter()
    encoder = prefill.encoder if prepared.samples else None
    clips = [c for i, audio in enumerate(prepared.samples) for c in encoder.clips_from_samples(audio, i)]
    features = encoder.encode_clips(clips).audio_features if clips else None
    encoded = time.perf_counter()
    rows = prefill.run(prepared.ids, features)
    prefilled = time.perf_counter()
    request = GenerationRequest(rows.inputs_embeds, rows.per_layer_inputs, max_new_tokens, stop_ids, sampling=sampling)
    tokens: list[int] = []
    pieces: list[str] = []
    reason, first = LENGTH, None
    for event in generate(decoder, prefill.tokenizer, request):
        first = first if first is not None else time.perf_counter()
        tokens.append(event.token)
        pieces.append(event.text)
        reason = event.finish_reason or reason
        if on_token is not None:
            on_token(event)
    done = time.perf_counter()
    timings = {
        "encode": encoded - started,
        "prefill": prefilled - encoded,
        "first_token": (first or done) - started,
        "generate": done - prefilled,
        "total": done - started,
    }
    return Answer(tokens, "".join(pieces), reason, len(prepared.ids), prepared.clips_per_file, timings)
