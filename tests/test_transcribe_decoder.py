"""The transcription decoder program's shape (`runtime/text/transcribe_decoder.py`): pure policies, property-tested,
and the GPU script's build commands held to them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemma3n_iree.model.decoder_config import builtin_decoder_config
from gemma3n_iree.runtime.text.generate import GenerationError
from gemma3n_iree.runtime.text.transcribe_decoder import (
    PROMPT_ROUND,
    TARGET_WIDTHS,
    decode_widths,
    prompt_bucket,
    transcription_buckets,
)

ROOT = Path(__file__).resolve().parent.parent


@given(st.sampled_from(sorted(TARGET_WIDTHS)), st.integers(1, 300))
def test_decode_widths_are_the_targets_up_to_the_slots(target, slots):
    widths = decode_widths(target, slots)
    assert list(widths) == sorted(set(widths)) and widths[0] == 1
    assert widths[-1] == min(slots, TARGET_WIDTHS[target][-1])  # a call never wider than the slots
    assert set(widths[:-1]) <= set(TARGET_WIDTHS[target])


@settings(max_examples=300)
@given(
    st.integers(1, 5000),
    st.integers(1, 2000),
    st.integers(1, 40000),
    st.sampled_from(sorted(TARGET_WIDTHS)),
    st.integers(1, 128),
)
def test_every_window_fits_the_program_it_sizes(prompt, new, positions, target, slots):
    if prompt + new - 1 > positions:
        with pytest.raises(GenerationError, match="more than the model's context"):
            transcription_buckets(prompt, new, positions, target, slots)
        return
    b = transcription_buckets(prompt, new, positions, target, slots)
    [bucket] = b.prompts
    assert prompt <= bucket <= b.capacity <= positions  # the prompt fits its entry, the entry the cache
    assert prompt + new - 1 <= b.capacity  # GenerationEngine's rule: the last token is never decoded
    assert bucket in (prompt, prompt_bucket(prompt)) and prompt_bucket(prompt) % PROMPT_ROUND == 0
    assert b.contexts == (b.capacity,) and b.batches == decode_widths(target, slots) and b.slots == slots
    assert all(2 <= p <= slots for p in b.prompt_batches)  # batched prefill entries the spec accepts


@settings(max_examples=300)
@given(st.integers(1, 400), st.integers(1, 300), st.integers(1, 5000), st.integers(0, 6000))
def test_a_chat_of_chat_tokens_fits_beside_the_windows(prompt, new, positions, chat):
    """`chat_tokens` past the windows' capacity adds one prompt bucket and one decode context of exactly that
    size (a chat's prompt of up to `chat` tokens and its answer fit); the windows keep their bucket and
    context; anything within the windows' capacity changes nothing; more than the model holds is refused."""
    if prompt + new - 1 > positions:
        return
    windows = transcription_buckets(prompt, new, positions, "cuda", 8)
    if chat > positions:
        with pytest.raises(GenerationError, match=f"a chat of {chat} positions is more than the model's context"):
            transcription_buckets(prompt, new, positions, "cuda", 8, chat)
        return
    b = transcription_buckets(prompt, new, positions, "cuda", 8, chat)
    if chat <= windows.capacity:
        assert b == windows
        return
    assert b.prompts == (*windows.prompts, chat) and b.contexts == (windows.capacity, chat) and b.capacity == chat
    assert (b.batches, b.prompt_batches, b.slots) == (windows.batches, windows.prompt_batches, windows.slots)


def test_the_gpu_scripts_decoder_program_is_the_one_transcription_sizes():
    """scripts/gpu_transcribe.sh builds its decoder with emit-gemma3n: the same buckets as
    `transcription_buckets` gives the bench's windows (the default prompt: 208 tokens, 64 new, 64 slots)."""
    header = (ROOT / "scripts" / "gpu_transcribe.sh").read_text()
    command = re.search(r"--stage decoder(.*?)-o \S*decoder\.vmfb", header, re.S).group(1)

    def values(flag: str) -> list[int]:
        return [int(v) for v in re.findall(rf"--{flag} (\d+)", command)]

    b = transcription_buckets(208, 64, builtin_decoder_config("e4b").max_position_embeddings, "cuda", 64)
    assert values("slots") == [b.slots] and values("capacity") == [b.capacity]
    assert tuple(values("prompt")) == b.prompts and tuple(values("batch")) == b.batches
    assert tuple(values("context")) == b.contexts and tuple(values("prompt-batch")) == b.prompt_batches == (8,)
